"""Writes docs/ease-of-use.md: per PPO and DQN script, its lines, diff to its sibling, timings and framework notes."""
import argparse
import csv
import difflib
import glob
import json
import os
import statistics
import sys
from typing import NamedTuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # the registry's package, when run as tools/ease_of_use.py

from sweep import variants  # noqa: E402 (after the path)

PROG = "ease_of_use.py"
PAGE = os.path.join("docs", "ease-of-use.md")
BANNER = "# BENCHMARK HARNESS"
FAMILIES = {"PPO": variants.PPO, "DQN": variants.DQN, "PPO, continuous actions": variants.PPO_CONTINUOUS,  # page
            "PPO, Atari": variants.PPO_ATARI}
# section: the registry's algorithm


class InputError(Exception):
    """The repository is not as the tool expects: one line for the user."""


COLUMNS = ("variant", "compile_mode", "seed", "num_iterations", "iter0_s", "iter8_99_median_s")


class Measure(NamedTuple):
    iteration0: float  # median over the seeds
    steady: float
    seeds: list
    iterations: list  # num_iterations of the runs


class Sweep(NamedTuple):
    folder: str  # under results/
    cell: dict  # summary.csv column -> the value every row taken from this sweep has


SWEEPS = {
    "exp7": Sweep("cpu-2core-exp7", {"exp": "exp7", "env": "CartPole-v1", "size": "small", "timing": "async",
                                     "num_envs": "32"}),
    "exp4-native": Sweep("cpu-2core-exp4-native", {"exp": "exp4", "env": "CartPole-v1", "size": "small",
                                                   "timing": "async", "num_envs": "32"}),
    "exp5-native": Sweep("cpu-2core-exp5-native", {"exp": "exp5", "env": "CartPole-v1", "size": "small",
                                                   "timing": "async", "num_envs": "32"}),
    "exp8-family": Sweep("cpu-2core-exp8-family", {"exp": "exp8", "env": "CartPole-v1", "size": "small",
                                                   "timing": "async", "num_envs": "1"}),
}


class Mode(NamedTuple):
    mode: str  # compile_mode in summary.csv (the registry row's mode)
    note: str  # what the framework made the code do (the registry row's note)
    label: str  # the registry's label, e.g. 'linen (jit)'


class Script(NamedTuple):
    sibling: str | None  # the file it is written beside (the registry's sibling); None for the family's reference
    modes: tuple
    algorithm: str  # the registry's: "ppo" or "dqn"


# why a listed mode has no timings, where one is known: by the registry's label, else by its algorithm ("no sweep"
# alone where neither is here)
UNTIMED = {
    "nnx (jit)": "only the smoke test `results/cpu-quick`",
    "linen_pbt (pbt)": "a search, not a timing: tests/test_pbt.py checks its exploit, explore and replay",
    "dqn_linen_vmap (vmap)": "exp11's populations are PPO's; its tests check each agent against `dqn_linen.py`",
    variants.PPO_CONTINUOUS: "exp12's sitting, `tools/exp12.py`; its figures in docs/results.md",
    variants.PPO_ATARI: "exp14's sitting, `tools/exp14.py`; its figures in docs/results.md",
}


def scripts_of(rows: tuple) -> dict:
    """{file: Script}: the script of each registry row with a note (the family's reference first, then the registry's
    order), its sibling from the registry and its noted modes."""
    scripts = {}
    noted = [row for row in rows if row.note]
    for row in sorted(noted, key=lambda row: row.sibling is not None):
        sibling = f"{row.sibling}.py" if row.sibling else None
        script = scripts.get(row.file, Script(sibling, (), row.algorithm))
        scripts[row.file] = script._replace(modes=script.modes + (Mode(row.mode, row.note, row.label),))
    return scripts


SCRIPTS = scripts_of(variants.VARIANTS)


def untimed(mode: Mode, algorithm: str) -> str:
    reason = UNTIMED.get(mode.label, UNTIMED.get(algorithm))
    return f"no sweep ({reason})" if reason else "no sweep"


# SCRIPTS: lines and diffs
def algorithm_part(path: str) -> tuple[list[str], int]:
    """The lines above the harness banner and the number of lines of the whole file."""
    with open(path) as f:
        lines = f.read().splitlines()
    banner = next((index for index, line in enumerate(lines) if line.startswith(BANNER)), None)
    if banner is None:
        raise InputError(f"{os.path.basename(path)} has no line starting '{BANNER}'")
    return lines[:banner], len(lines)


def code_lines(lines: list[str]) -> int:
    """Lines that are neither blank nor only a comment (docstrings and other strings count)."""
    return sum(1 for line in lines if line.strip() and not line.strip().startswith("#"))


def diff_counts(old: list[str], new: list[str]) -> tuple[int, int]:
    """Lines added and removed from old to new, as a unified diff marks them (difflib, autojunk off)."""
    opcodes = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    added = sum(j2 - j1 for tag, i1, i2, j1, j2 in opcodes if tag in ("insert", "replace"))
    removed = sum(i2 - i1 for tag, i1, i2, j1, j2 in opcodes if tag in ("delete", "replace"))
    return added, removed


def check_scripts(root: str, scripts: dict):
    """Every ppo_*.py and dqn_*.py at the top of root has a noted row in the registry, and every such row a file."""
    found = {os.path.basename(path) for algorithm in FAMILIES.values()
             for path in glob.glob(os.path.join(root, f"{algorithm}_*.py"))}
    unlisted, missing = sorted(found - set(scripts)), sorted(set(scripts) - found)
    if unlisted:
        raise InputError(f"{', '.join(unlisted)}: no row of sweep/variants.py with a note (what the framework made "
                         "the code do)")
    if missing:
        raise InputError(f"{', '.join(missing)}, noted in sweep/variants.py: not found in {root}")


# SWEEPS: timings from summary.csv
def read_sweep(root: str, sweep: Sweep) -> tuple[list[dict], dict]:
    """The sweep's summary rows of its cell and its system.json."""
    folder = os.path.join(root, "results", sweep.folder)
    try:
        with open(os.path.join(folder, "summary.csv")) as f:
            reader = csv.DictReader(f)
            rows = [row for row in reader if all(row.get(k) == v for k, v in sweep.cell.items())]
        with open(os.path.join(folder, "system.json")) as f:
            system = json.load(f)
    except (OSError, json.JSONDecodeError) as error:
        raise InputError(f"results/{sweep.folder}: {error}") from None
    absent = [column for column in COLUMNS if column not in (reader.fieldnames or [])]
    if absent:
        raise InputError(f"results/{sweep.folder}/summary.csv has no column {', '.join(absent)}")
    return rows, system


def measure(rows: list[dict], variant: str, mode: str, label: str) -> Measure:
    """The median over the seeds of one variant and mode's iteration 0 and steady iteration."""
    runs = [row for row in rows if row["variant"] == variant and row["compile_mode"] == mode]
    if not runs:
        raise InputError(f"no run of {variant} ({mode}) in {label}'s cell {SWEEPS[label].cell}")
    try:
        return Measure(statistics.median(float(row["iter0_s"]) for row in runs),
                       statistics.median(float(row["iter8_99_median_s"]) for row in runs),
                       sorted(int(row["seed"]) for row in runs), sorted({int(row["num_iterations"]) for row in runs}))
    except ValueError as error:
        raise InputError(f"{variant} ({mode}) in {label}: a run without its timings ({error})") from None


# ROWS
class Row(NamedTuple):
    script: str
    sibling: str | None
    mode: Mode
    sweep: str | None  # the first of SWEEPS with runs of the mode; None where none has
    lines: int
    total: int
    diff: tuple | None  # (added, removed) against the sibling
    measured: Measure | None
    reference: tuple | None  # (the family reference's script, its Measure) in the same sweep


def timed_in(sweeps: dict, variant: str, mode: str) -> str | None:
    """The first sweep (in the order of SWEEPS) with runs of variant (mode) in its cell."""
    return next((label for label in SWEEPS if any(row["variant"] == variant and row["compile_mode"] == mode
                                                  for row in sweeps[label][0])), None)


def script_rows(root: str, name: str, scripts: dict, reference: str, sweeps: dict) -> list[Row]:
    """One row per mode of one script, timed in the first sweep that ran it."""
    part, total = algorithm_part(os.path.join(root, name))
    sibling = scripts[name].sibling
    diff = diff_counts(algorithm_part(os.path.join(root, sibling))[0], part) if sibling else None
    rows = []
    for mode in scripts[name].modes:
        measured = base = None
        sweep = timed_in(sweeps, name[:-len(".py")], mode.mode)
        if sweep:
            summary = sweeps[sweep][0]
            measured = measure(summary, name[:-len(".py")], mode.mode, sweep)
            base = (reference, measure(summary, reference[:-len(".py")], scripts[reference].modes[0].mode, sweep))
        rows.append(Row(name, sibling, mode, sweep, code_lines(part), total, diff, measured, base))
    return rows


def collect(root: str, scripts: dict) -> tuple[dict, dict]:
    """The rows of each family and the sweeps read ({label: (summary rows, system.json)})."""
    check_scripts(root, scripts)
    sweeps = {label: read_sweep(root, sweep) for label, sweep in SWEEPS.items()}
    families = {}
    for family, algorithm in FAMILIES.items():
        names = [name for name in scripts if scripts[name].algorithm == algorithm]
        reference = next(name for name in names if scripts[name].sibling is None)
        families[family] = [row for name in names for row in script_rows(root, name, scripts, reference, sweeps)]
    return families, sweeps


# THE PAGE
def seconds(value: float) -> str:
    """3 significant digits, trailing zeros kept: 0.120, 3.10."""
    return f"{value:#.3g}".rstrip(".")


def seeds_text(seeds: list[int]) -> str:
    """"seed 1", "seeds 1–3" (consecutive) or "seeds 1, 3"."""
    if len(seeds) == 1:
        return f"seed {seeds[0]}"
    if seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"seeds {seeds[0]}–{seeds[-1]}"
    return "seeds " + ", ".join(map(str, seeds))


def row_cells(row: Row) -> list[str]:
    diff = "reference" if row.diff is None else f"{sum(row.diff)} (+{row.diff[0]} −{row.diff[1]})"
    timing = ["–", "–", "–", untimed(row.mode, variants.algorithm_of(row.script))]
    if row.measured:
        ratio = row.measured.steady / row.reference[1].steady
        timing = [seconds(row.measured.iteration0), seconds(row.measured.steady), f"{ratio:.2f}",
                  f"{row.sweep}, {seeds_text(row.measured.seeds)}"]
    return [f"`{row.script}`", row.mode.mode, str(row.lines), str(row.total),
            f"`{row.sibling}`" if row.sibling else "–", diff, *timing, row.mode.note]


def table(rows: list[Row]) -> str:
    header = ["script", "mode", "algorithm lines", "total lines", "sibling", "diff against the sibling",
              "iteration 0 (s)", "steady iteration (s)", "steady ÷ reference's, same sitting", "sitting",
              "what the framework made the code do"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row_cells(row)) + " |" for row in rows])


def observations(family: str, rows: list[Row]) -> list[str]:
    """Neutral facts computed from the family's rows: the range of algorithm lines, the largest and smallest diff."""
    sizes = {row.script: row.lines for row in rows}
    fewest, most = min(sizes, key=sizes.get), max(sizes, key=sizes.get)
    diffs = {row.script: (sum(row.diff), row.sibling) for row in rows if row.diff is not None}
    largest, smallest = max(diffs, key=diffs.get), min(diffs, key=diffs.get)
    reference = next(row.script for row in rows if row.sibling is None)
    return [f"- {family}: algorithm lines from {sizes[fewest]} (`{fewest}`) to {sizes[most]} (`{most}`); the "
            f"reference `{reference}` has {sizes[reference]}.",
            f"- {family}: the largest diff against a sibling is `{largest}`'s, {diffs[largest][0]} lines against "
            f"`{diffs[largest][1]}`; the smallest `{smallest}`'s, {diffs[smallest][0]} against `{diffs[smallest][1]}`."]


def sittings(rows: list[Row]) -> dict:
    """{sweep label: (the family reference's script, its steady iteration, the runs' iterations)} of the rows timed."""
    found = {}
    for row in sorted((row for row in rows if row.measured), key=lambda row: row.sweep):
        iterations = found.get(row.sweep, (None, None, set()))[2]
        found[row.sweep] = (row.reference[0], row.reference[1].steady, iterations | set(row.measured.iterations))
    return found


def sitting_lines(found: dict, sweeps: dict) -> list[str]:
    """One line per sweep used: folder, cell, seeds, machine, date, commit and the family reference's steady."""
    lines = []
    for label, (reference, steady, iterations) in found.items():
        sweep, system = SWEEPS[label], sweeps[label][1]
        cell = sweep.cell
        lines.append(
            f"- **{label}**: `results/{sweep.folder}/summary.csv`, {cell['exp']}, {cell['env']}, size {cell['size']}, "
            f"{cell['num_envs']} env(s), timing {cell['timing']}, runs of {'/'.join(map(str, sorted(iterations)))} "
            f"iterations; {system.get('cpu', '?')}, "
            f"{system.get('cpus_usable', '?')} cores, {str(system.get('date', '?'))[:10]}, scripts at commit "
            f"{str(system.get('git_commit', '?'))[:7]}{' (working tree dirty)' if system.get('git_dirty') else ''}; "
            f"`{reference}`'s steady iteration there: {seconds(steady)} s.")
    return lines


def sitting_observation(found: dict, sweeps: dict) -> str:
    cpus = sorted({f"{sweeps[label][1].get('cpu', '?')} ({sweeps[label][1].get('cpus_usable', '?')} cores)"
                   for label in found})
    steady = ", ".join(f"`{reference}` {seconds(value)} s in {label}" for label, (reference, value, _)
                       in found.items())
    return (f"- The sittings differ: the family reference's steady iteration is {steady}. Compare rows of different "
            f"sittings by the ratio column, not by the seconds. CPU of the sittings: {'; '.join(cpus)}.")


def page(root: str, scripts: dict) -> str:
    families, sweeps = collect(root, scripts)
    found = sittings([row for rows in families.values() for row in rows])
    facts = [line for family, rows in families.items() for line in observations(family, rows)]
    references = ", ".join(f"`{next(row.script for row in rows if row.sibling is None)}`" for rows in families.values())
    return "\n\n".join([
        "# Ease of use: the evidence, script by script",
        "What each framework asked of the code, for the reader to weigh: per PPO (discrete, continuous actions, Atari) "
        "and DQN script, how many lines its algorithm takes, how far it is from the script it was written beside, what "
        "its first and its steady iteration cost in a committed sweep, and what the framework made the code do. No "
        "verdict is given.\n"
        "Generated: `python tools/ease_of_use.py` regenerates this page from the registry's rows "
        "(`sweep/variants.py`: each listed mode's note), the scripts and the sweeps' `summary.csv` (a mode's timings "
        "from the first of the tool's sweeps that ran it); `tests/test_ease_of_use.py` fails when it differs from "
        "what the tool writes now (`python tools/ease_of_use.py --check`).",
        "\n".join(facts + [sitting_observation(found, sweeps)]),
        "## What is counted\n\n"
        f"- **algorithm lines**: the lines above the `{BANNER}` banner (the algorithm and `main`; below it comes "
        "the benchmark harness) that are neither blank nor only a comment; docstrings and other strings count. "
        "**total lines**: the whole file (`wc -l`).\n"
        "- **diff against the sibling**: lines added + removed from the sibling's lines above the banner to the "
        "script's (the harness excluded; blank and comment lines included), as a unified diff marks them with + and "
        "− (Python's `difflib`, autojunk off). The sibling is the script it is written beside, as "
        "[variants.md](variants.md) describes it (\"what it changes relative to …\").\n"
        "- **iteration 0** holds tracing and compilation (and, for DQN, the 10,000 learning-starts transitions); "
        "**steady iteration** is a run's median of iterations 8 to its last; each is the median over the sitting's "
        "seeds. A DQN iteration is 10,000 transitions; a PPO iteration one rollout of every env and its update.\n"
        f"- **steady ÷ reference's, same sitting**: the steady iteration over the family reference's ({references}) "
        "in the same sweep: the column to compare across sittings.\n"
        "- **mode**: the `compile_mode` of the runs; a script with several measured modes has a row for each. Modes "
        "that change the env rather than the framework (the Gymnasium scripts' `-async`, `-vector`) are left out.",
        "## PPO\n\n" + table(families["PPO"]),
        "## DQN\n\n" + table(families["DQN"]),
        "## PPO, continuous actions\n\n" + table(families["PPO, continuous actions"]),
        "## PPO, Atari\n\n" + table(families["PPO, Atari"]),
        "## Sittings\n\nEach sweep is one sitting: its runs alternated on one machine. The timings are of the "
        "scripts at the sweep's commit; the lines and diffs of the scripts as they are now.\n\n"
        + "\n".join(sitting_lines(found, sweeps))]) + "\n"


# COMMAND LINE
class Parser(argparse.ArgumentParser):
    """Bad input: one `error:` line on stderr and exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{PROG}: error: {message}\n")


def main():
    parser = Parser(prog=PROG, description=__doc__)
    parser.add_argument("--check", action="store_true",
                        help="write nothing: exit 1 with one line if the page differs from what the tool would write")
    parser.add_argument("--page", help=f"the page to write or check (default: ROOT/{PAGE})")
    parser.add_argument("--root", default=ROOT, help="the repository whose scripts and results/ are read "
                                                     "(default: the one holding this tool)")
    args = parser.parse_args()
    path = args.page or os.path.join(args.root, PAGE)
    try:
        text = page(args.root, SCRIPTS)
    except InputError as error:
        parser.error(str(error))
    if not args.check:
        with open(path, "w") as f:
            f.write(text)
        print(f"wrote {path}")
        return
    try:
        with open(path) as f:
            current = f.read()
    except OSError:
        current = None
    if current != text:
        sys.exit(f"{PROG}: {path} differs from what the tool writes now: run python tools/ease_of_use.py")
    print(f"{path} is up to date")


if __name__ == "__main__":
    main()
