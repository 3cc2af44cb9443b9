"""Every file derived from the code and the committed sittings, written anew by one command; --check names the stale.

    python tools/derive.py                    # write every derived file anew, in the order below
    python tools/derive.py --check            # write nothing: exit 1, one line per stale file
    python tools/derive.py --only help windows   # some of them

The derived files, each with what writes it (the order matters: the scripts' harness before the pages that count
their lines, the reports before the tables read from their summary.csv):

    harness   the shared harness section of every script     tools/sync_harness.py
    help      sweep/help.txt's run counts and estimates       here, from the planner
    windows   docs/running.md's tables of --grid gpu's and      here, from the planner
              --grid reference's parts
    spaces    docs/tuning.md's default search spaces          here, from search/space.py
    variants  docs/method.md's table of variants and modes    here, from the registry (sweep/variants.py)
    suite     README.md's sentence of the suite's figures      here, from docs/running.md's table of them
    golden    tests/golden/dry_runs.json.gz                   tests/test_golden_dry_runs.py (on 2 cores)
    reports   every committed sitting's report                tools/regenerate_reports.py
    answer    README.md's answer tables                       tools/answer_table.py
    figure    docs/img/answer.png, the README's figure        tools/answer_figure.py
    ease      docs/ease-of-use.md                             tools/ease_of_use.py

The Dockerfile copies the whole tree (less .dockerignore's), so it lists no file to derive. Each has its own test
too, which fails while it is stale; this command is the one way to bring them all up to date.
"""
import argparse
import math
import os
import re
import subprocess
import sys
from collections import Counter
from typing import Callable, NamedTuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # the planner's package, when run as tools/derive.py

from search.space import spaces_table  # noqa: E402 (after the path)
from sweep import grids, variants  # noqa: E402
from sweep.plan import Plan  # noqa: E402

PROG = "derive.py"
HELP, RUNNING, TUNING, METHOD = (os.path.join("sweep", "help.txt"), os.path.join("docs", "running.md"),
                                 os.path.join("docs", "tuning.md"), os.path.join("docs", "method.md"))
CPU_CORES, GPU_CORES = 2, 16  # the help's estimates are for a 2-core CPU, and one GPU with a 16-core host
FIGURE = r"about \d+ (?:s|min|h \d\d min|days \d+ h)"  # sweep/estimate.py's duration_text, after "about"
WINDOW_MINUTES = 8  # of runs in a window of `tools/gpu_sitting.sh run 9` (its preparation and packing left out)


class InputError(Exception):
    """The repository is not as the tool expects: one line for the user."""


def plan(args: list) -> Plan:
    cores = GPU_CORES if "gpu" in args else CPU_CORES
    return Plan(list(args), "benchmark.sh", ROOT, "python", cores, cores)


# HELP: the run counts of each grid's lines and the How long figures
def count_lines(text: str) -> str:
    """help.txt with each grid's lines counting the runs (groups) the planner selects: a line of a grid of parts
    (--grid gpu, --grid reference) with a part's letter counts that part's runs of its experiment, another line its
    experiment's; a grid's header that gives its total ("...'s 231 runs:"), the total."""
    lines, grid, counts, parts = text.split("\n"), None, Counter(), Counter()
    for i, line in enumerate(lines):
        header = re.match(r"--grid (\w+)", line)
        if header:
            grid, sweep = header[1], plan(["--grid", header[1]])
            counts = Counter(run.config.exp for run in sweep.selected)
            letters = {config: part.letter for part in grids.PARTS.get(header[1], ())
                       for config in part.runs(sweep.options.choices)}
            parts = Counter((letters.get(run.config), run.config.exp) for run in sweep.selected)
            lines[i] = re.sub(r"\d+ runs:$", f"{len(sweep.selected)} runs:", line)
        elif line and not line.startswith(" "):
            grid = None
        elif grid:
            lines[i] = recount(line, counts, parts)
    return "\n".join(lines)


def recount(line: str, counts: Counter, parts: Counter) -> str:
    """A grid's line with its count the planner's, right-aligned where the old one stood ("1 run " as wide as
    "2 runs")."""
    match = re.match(r"  (warmup|exp\d+)( +)(\d+) (runs|run |groups)( +\(([a-h])\))?", line)
    if not match:
        return line
    count = parts[(match[6], match[1])] if match[6] else counts[match[1]]
    number = str(count).rjust(len(match[2]) + len(match[3]) - 1)
    noun = match[4] if match[4] == "groups" else "run " if count == 1 else "runs"
    return f"  {match[1]} {number} {noun}{line[match.end(4):]}"


def selection_args(selection: str) -> list:
    """The planner's arguments for a selection the How long block names: a grid, --quick or one experiment (without
    the warm-up runs)."""
    if selection == "the default grid":
        return []
    if selection == "--quick" or re.fullmatch(r"--grid \w+", selection):
        return selection.split()
    if re.fullmatch(r"exp\d+", selection):
        return ["--only", selection, "--filter", f"^{selection}__"]
    raise InputError(f"{HELP}'s How long block names '{selection}', which is not a grid, --quick or an experiment")


def figures(text: str) -> str:
    """help.txt with each How long figure the planner's estimate of its selection, the columns kept where the new
    figure fits."""
    block = text.split("\nHow long, by the built-in cost model")[1].split("\nMeasured")[0]
    for selection in re.findall(rf"(?:^|  )(\S.*?)  {FIGURE}", block, re.M):
        sweep = plan(selection_args(selection.strip()))
        figure = sweep.estimator.left(run.config for run in sweep.selected)

        def replace(match: re.Match) -> str:  # a column's padding shrinks or grows; a sentence's space stays
            spaces = match[3] if len(match[3]) < 2 else " " * max(len(match[2]) + len(match[3]) - len(figure), 3)
            return f"{match[1]}{figure}{spaces}"

        text = re.sub(rf"((?:^|  ){re.escape(selection.strip())}  )({FIGURE})( *)", replace, text, count=1,
                      flags=re.M)
    return text


def help_text(text: str) -> str:
    return figures(count_lines(text))


# THE WINDOWS' PLAN: per part of --grid gpu, its runs, minutes, minutes to its end and the window that ends it
def windows_rows() -> list:
    sweep = plan(["--grid", "gpu"])
    selected = {run.config for run in sweep.selected}
    rows, end = [], 0.0
    for part in grids.GPU_PARTS:
        configs = [config for config in part.runs(sweep.options.choices) if config in selected]
        minutes = sweep.estimator.total_ms(configs) / 60000
        end += minutes
        rows.append(f"| ({part.letter}) | {part.answers} | {len(configs)} | {minutes:.1f} | {end:.1f} | "
                    f"{math.ceil(end / WINDOW_MINUTES)} |")
    return rows


def reference_rows() -> list:
    """Per part of --grid reference: what it answers, its runs (all seeds), the steady window of its runs (iterations
    8 on, of how many) and its minutes by the estimate for a 2-core CPU."""
    sweep = plan(["--grid", "reference"])
    rows = []
    for part in grids.REFERENCE_PARTS:
        runs = [run for run in sweep.selected if run.config in set(part.runs(sweep.options.choices))]
        iterations = sorted({sweep.workload.iterations_of(run.config) for run in runs})
        window = "–" if runs[0].config.experiment.prepares else ", ".join(
            f"8–{count - 1} of {count}" for count in iterations)
        minutes = sweep.estimator.total_ms(run.config for run in runs) / 60000
        rows.append(f"| ({part.letter}) | {part.answers} | {len(runs)} | {window} | {minutes:.1f} |")
    return rows


def table_text(text: str, header: str, rows: list) -> str:
    """text with the table under header (its first two lines) made of rows."""
    if header not in text:
        raise InputError(f"{RUNNING} holds no table with the header {header.splitlines()[0]}")
    start = text.index(header) + len(header)
    end = text.index("\n\n", start)
    return text[:start] + "\n".join(rows) + text[end:]


WINDOWS_HEADER = ("| part | what it answers | runs | minutes | minutes to its end | window |\n"
                  "|---|---|---|---|---|---|\n")
REFERENCE_HEADER = "| part | what it answers | runs | steady window (iterations) | minutes |\n|---|---|---|---|---|\n"


def windows_text(text: str) -> str:
    """docs/running.md with its tables of the parts, --grid gpu's windows' plan and --grid reference's, the
    planner's."""
    return table_text(table_text(text, WINDOWS_HEADER, windows_rows()), REFERENCE_HEADER, reference_rows())


# THE SEARCH SPACES: tune.py's default space of each algorithm
def spaces_text(text: str) -> str:
    """docs/tuning.md with its table of the default spaces (the one whose header starts "| field |") as
    search/space.py prints it."""
    table = re.compile(r"^\| field \|.*\n(?:\|.*\n)*", re.M)
    if not table.search(text):
        raise InputError(f"{TUNING} holds no table of the default spaces (a header starting '| field |')")
    return table.sub(lambda match: spaces_table(), text, count=1)


# THE VARIANTS TABLE: docs/method.md's, a row per script from its registry rows
FRAMEWORK_TEXT = {"linen": "Flax Linen + optax", "nnx": "Flax NNX + optax", "equinox": "Equinox + optax",
                  "torch": "PyTorch"}
ENV_TEXT = {variants.GYMNASIUM: "env in NumPy", variants.TORCH_ENV: "env in torch", variants.ALE: "env in C++"}
# (a gymnax or Brax env: "env in JAX" beside torch, nothing beside a JAX framework)
VARIANTS_HEADER = ("| script | framework | modes (`system` text) and their flags | what is compiled |\n"
                   "| --- | --- | --- | --- |\n")


def framework_cell(default: variants.Variant) -> str:
    """'PyTorch + `torch.compile`, env in C++': the framework, torch.compile where the default mode compiles, and
    the env where it is not the JAX one of a JAX framework."""
    text = FRAMEWORK_TEXT[default.framework] + (" + `torch.compile`" if default.mode == "compile" else "")
    env = ENV_TEXT.get(default.backend, "env in JAX" if default.framework == "torch" else None)
    return f"{text}, {env}" if env else text


def mode_item(mode: str, notes: list) -> str:
    return f"`{mode}` ({', '.join(notes)})" if notes else f"`{mode}`"


def modes_cell(script: str, default: variants.Variant) -> str:
    """'`jit` (default), `none` (`--no-jit`)': the default mode first (with the script's options), then the other
    rows with their flags, then the modes no sweep runs."""
    others = [(row.mode, row.flags, row.gpu_only) for row in variants.of_script(script) if row.flags]
    others += [(mode, flags, False) for mode, flags in default.unswept]
    first = (["default"] if others else []) + [f"`{option}`" for option in default.options]
    return ", ".join([mode_item(default.mode, first)] + [
        mode_item(mode, [f"`{' '.join(flags)}`"] + (["GPU only"] if gpu_only else [])) for mode, flags, gpu_only
        in others])


def variants_rows() -> list:
    rows = []
    for script in variants.SCRIPTS:
        default = variants.default_row(script)
        if not default.compiled:
            raise InputError(f"{script}'s row without flags in sweep/variants.py says nothing in compiled=")
        rows.append(f"| `{script}.py` | {framework_cell(default)} | {modes_cell(script, default)} | "
                    f"{default.compiled} |")
    return rows


def variants_text(text: str) -> str:
    """docs/method.md with its table of variants and compile modes the registry's."""
    if VARIANTS_HEADER not in text:
        raise InputError(f"{METHOD} holds no table of variants (its header: {VARIANTS_HEADER.splitlines()[0]})")
    start = text.index(VARIANTS_HEADER) + len(VARIANTS_HEADER)
    end = text.index("\n\n", start)
    return text[:start] + "\n".join(variants_rows()) + text[end:]


# SUITE: README's sentence of the test suite's figures, from docs/running.md's table of them (newest first)
SUITE_HEADER = "| CPU | what | time | runs | commit | date |\n| --- | --- | --- | --- | --- | --- |\n"
SUITE_START = "Measured on an idle 2-core AMD EPYC"  # the README's line of the figures begins so
SUITE_LINK = "docs/running.md#the-tests-the-fast-subset-the-full-suite-and-the-learning-tier"


def suite_rows(running: str) -> list:
    """docs/running.md's figures of the suite, as {column: cell} in the table's order (newest first)."""
    if SUITE_HEADER not in running:
        raise InputError(f"{RUNNING} holds no table of the suite's figures (its header: {SUITE_HEADER.splitlines()[0]})")
    names = [name.strip() for name in SUITE_HEADER.splitlines()[0].strip("|").split("|")]
    block = running.split(SUITE_HEADER, 1)[1].split("\n\n", 1)[0]
    return [dict(zip(names, (cell.strip() for cell in row.strip().strip("|").split("|")), strict=True))
            for row in block.splitlines()]


def suite_sentence(rows: list) -> str:
    """One line: per CPU (in the order the table first names it), the newest figure of each suite, its runs, commit
    and date."""
    newest = {}
    for row in rows:
        newest.setdefault(row["CPU"], {}).setdefault(row["what"], row)
    parts = []
    for cpu, figures in newest.items():
        items = [f"{what} {row['time']} ({row['runs']}, at {row['commit']}, {row['date']})"
                 for what, row in sorted(figures.items())]
        parts.append(f"on a {cpu}, " + ", ".join(items))
    return f"{SUITE_START} (minutes:seconds, pytest's count): {'; '.join(parts)} ([every sitting]({SUITE_LINK}))."


def suite_text(readme: str) -> str:
    """README.md with its line of the suite's figures written from docs/running.md's table."""
    if SUITE_START not in readme:
        raise InputError(f"README.md holds no line of the suite's figures (it begins: {SUITE_START})")
    with open(os.path.join(ROOT, RUNNING)) as f:
        sentence = suite_sentence(suite_rows(f.read()))
    start = readme.index(SUITE_START)
    end = readme.index("\n", start)
    return readme[:start] + sentence + readme[end:]


# THE DERIVED FILES
def rewrite(path: str, derive: Callable) -> Callable:
    """A target written here: path's text made by derive from the current one."""
    def run(check: bool) -> str | None:
        with open(os.path.join(ROOT, path)) as f:
            current = f.read()
        wanted = derive(current)
        if wanted == current:
            return None
        if check:
            return f"{path} differs from what the code gives now"
        with open(os.path.join(ROOT, path), "w") as f:
            f.write(wanted)
        print(f"wrote {path}")
        return None
    return run


def tool(path: str, write: tuple = (), check: tuple = ("--check",)) -> Callable:
    """A target written (or checked) by a command of its own, run from the repository's root: its output passes
    through when it writes; when it checks, its last line is what is stale."""
    def run(check_only: bool) -> str | None:
        result = subprocess.run([sys.executable, path, *(check if check_only else write)], cwd=ROOT,
                                capture_output=True, text=True)
        last = (result.stderr.strip() or result.stdout.strip() or f"exit status {result.returncode}").splitlines()[-1]
        if result.returncode and not (check_only and result.returncode == 1):
            raise InputError(f"{path} failed: {last}")
        if not check_only:
            print(result.stdout, end="")
        return last if result.returncode else None
    return run


class Target(NamedTuple):
    name: str
    run: Callable  # (check) -> what is stale (check), or None


TARGETS = (
    Target("harness", tool(os.path.join("tools", "sync_harness.py"))),
    Target("help", rewrite(HELP, help_text)),
    Target("windows", rewrite(RUNNING, windows_text)),
    Target("spaces", rewrite(TUNING, spaces_text)),
    Target("variants", rewrite(METHOD, variants_text)),
    Target("suite", rewrite("README.md", suite_text)),
    Target("golden", tool(os.path.join("tests", "test_golden_dry_runs.py"))),
    Target("reports", tool(os.path.join("tools", "regenerate_reports.py"))),
    Target("answer", tool(os.path.join("tools", "answer_table.py"), write=("--write", "README.md"),
                          check=("--check", "README.md"))),
    Target("figure", tool(os.path.join("tools", "answer_figure.py"), write=())),
    Target("ease", tool(os.path.join("tools", "ease_of_use.py"))),
)


class Parser(argparse.ArgumentParser):
    """Bad input: one `error:` line on stderr and exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{PROG}: error: {message}\n")


def main(argv=None) -> int:
    parser = Parser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing: exit 1, one line per stale file")
    parser.add_argument("--only", nargs="+", metavar="NAME", choices=[target.name for target in TARGETS],
                        help="only these: " + ", ".join(target.name for target in TARGETS))
    args = parser.parse_args(argv)
    stale = 0
    for target in TARGETS:
        if args.only and target.name not in args.only:
            continue
        print(f"{target.name}: {'checking' if args.check else 'writing'}", flush=True)
        try:
            problem = target.run(args.check)
        except InputError as error:
            parser.error(str(error))
        if problem:
            stale += 1
            print(f"{PROG}: {target.name}: {problem}", file=sys.stderr)
    if args.check and stale:
        print(f"{PROG}: {stale} stale: run python tools/derive.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
