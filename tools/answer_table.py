"""The README's answer tables, one per metric: per iteration, a search's wall time, continuous control, CNNs.

Each table has one metric, and each row names the scripts measured in that table. Each column is one question measured
in one committed sweep (its summary.csv, written by plot.py): a model size, a
number of envs, DQN, a GPU. A cell is the design's steady iteration (summary.csv's iter8_99_median_s: the median of
iterations 8 on) relative to the fastest design of the same sweep and selection, by the report's rule
(report/standings.py's fastest_label and relative_to, imported): the fastest is the smallest geometric mean over the
(env, seed) pairs every design ran, and a design's ratio is the geometric mean of its ratios to the fastest, paired by
env and seed. A cell marked † comes from a sitting of its own (named under the table), relative to the fastest design
of that sitting; in the continuous-action columns, one marked = is level with the fastest (their ranges over repeats
overlap: report/continuous.py's rule). The search table's metric is the wall time of the same random search, each
column against one baseline that its caption names: DQN on Doors from exp10's repeats (tools/exp10.sh: its part a, one
env, one worker, the median over the study seeds of the ratio seed by seed, against report/search.py's baseline, the
fastest at one worker and its script's own flags, = where level with it by that report's rule), PPO on CartPole-v1
from exp11's (tools/exp11.py: trials in processes two at a time, or ppo_linen_scan.py's populations, against the
population size that finished first; one study a way, no range). A convolutional agent's cell is report/cnn.py's one
statistic: the median over the repeats of the ratio repeat by repeat, their range in brackets. The last row names each
column's machine (a CPU's
generation where its sitting recorded it): ratios from different CPUs are never set side by side without saying so.

    python tools/answer_table.py            # print the tables (markdown)
    python tools/answer_table.py --check README.md   # exit 1 if README.md does not hold the tables as printed
    python tools/answer_table.py --write README.md   # put the tables as printed in place of README.md's
"""
import argparse
import csv
import json
import math
import os
import statistics
import sys
from typing import Callable, NamedTuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # the report's package, when run as tools/answer_table.py

from report import cnn  # noqa: E402 (after the path)
from report.cnn import repeat_ratios  # noqa: E402
from report.continuous import read_plan  # noqa: E402
from report.envshare import cells as exp12_cells, lead, steady  # noqa: E402
from report.machines import cpu_generation, cpu_name, gpu_model  # noqa: E402
from report.search import baseline_of, by_label, level_with, seed_ratios, seed_walls  # noqa: E402
from report.standings import fastest_label, relative_to  # noqa: E402
from report.studies import load_entry  # noqa: E402
from report.study import wall_seconds  # noqa: E402
from report.types import Condition  # noqa: E402
from report.stats import geometric_mean, metric_values, paired_labels, where  # noqa: E402
from sweep import variants  # noqa: E402
from sweep.variants import Variant  # noqa: E402
from search import Refused  # noqa: E402
from search.storage import load  # noqa: E402

STEADY = "iter8_99_median_s"  # summary.csv's steady iteration: the median of iterations 8 on


class Column(NamedTuple):
    """One question: the sweep that measured it and the runs of that sweep that answer it."""
    title: str
    sweep: str  # a folder under results/
    family: str  # "ppo" or "dqn" (the registry's algorithm): which variant of a design the column reads
    exp: str
    size: str
    envs: tuple  # env ids; empty: every env of the selection
    num_envs: int
    extra_sweep: str = ""  # a sitting of its own, for the designs the main sweep lacks (its cells marked †)


class Design(NamedTuple):
    """One way to write the agent (the registry's `design`): its PPO, DQN and continuous-action PPO variant
    (sweep/variants.py), or None."""
    name: str
    ppo: Variant | None
    dqn: Variant | None
    continuous: Variant | None


COLUMNS = (
    Column("small model, CPU", "cpu-2core-exp7", "ppo", "exp7", "small", (), 32),
    Column("large model, CPU", "cpu-2core-exp7", "ppo", "exp7", "large", (), 32),
    Column("8 envs, CPU", "cpu-2core-exp5-epyc", "ppo", "exp5", "small", ("CartPole-v1",), 8,
           "cpu-2core-exp5-native"),
    Column("2,048 envs, CPU", "cpu-2core-exp5-epyc", "ppo", "exp5", "small", ("CartPole-v1",), 2048,
           "cpu-2core-exp5-native"),
    Column("DQN, CPU", "cpu-2core-exp8-family", "dqn", "exp8", "small", ("CartPole-v1",), 1),
    Column("small model, GPU", "gpu-nvidia-h200", "ppo", "exp7", "small", ("CartPole-v1",), 32),
    Column("large model, GPU", "gpu-nvidia-h200", "ppo", "exp7", "large", ("CartPole-v1",), 32),
)
SEARCH = Column("DQN search, CPU", "cpu-2core-exp10-repeats", "dqn", "exp10", "small", ("doors:Doors-v0",), 1)
POPULATION = Column("PPO search, CPU", "cpu-2core-exp11", "ppo", "exp11", "small", ("CartPole-v1",), 16)
# continuous control on an expensive env (exp12's sitting, tools/exp12.py): Brax's hopper in JAX, MuJoCo's in C
CONTINUOUS = (Column("Brax hopper, CPU", "cpu-2core-exp12", "ppo-continuous", "exp12", "small", ("hopper",), 8),
              Column("MuJoCo Hopper-v5, CPU", "cpu-2core-exp12", "ppo-continuous", "exp12", "small", ("Hopper-v5",), 8))


# convolutional agents (exp14's sitting, tools/exp14.py): its cases, and the framework rows with their scripts in it
CNN_SWEEP = "cpu-2core-exp14"
CNN_CASES = (("MinAtar CNN, small", "MinAtar CNN small, JAX env, CPU"), ("MinAtar CNN, wide",
             "MinAtar CNN wide, JAX env, CPU"), ("Nature CNN", "Atari Nature CNN, C++ env, CPU"))
CNN_ROWS = (("Flax Linen", (variants.LINEN, variants.ATARI_LINEN)),
            ("Flax NNX, `cached_partial`", (variants.NNX_CACHED,)),
            ("Flax NNX, tree mode", (variants.NNX_TREE, variants.ATARI_NNX)),
            ("Equinox", (variants.EQUINOX, variants.ATARI_EQUINOX)),
            ("PyTorch", (variants.TORCH, variants.ATARI_TORCH)),
            ("torch.compile", (variants.TORCH_COMPILE, variants.ATARI_TORCH_COMPILE)))
CNN_CAPTION = ("**Convolutional agents:** steady iteration (the median of iterations 2 on; exp14) relative to the "
               "fastest script of each column (its least median over 3 repeats): the median over the repeats of the "
               "ratio repeat by repeat (each repeat's run against the fastest's of the same repeat), their range in "
               "brackets (= level with the fastest: their steady iterations' ranges over the repeats overlap):")


class Ratio(NamedTuple):
    """A design's ratio to the fastest of one column, with the range it spans over the seeds or repeats that pair it
    with the fastest (NaN where the column has none), and whether it comes from a sitting of its own (†) or is level
    with the fastest (=)."""
    value: float
    low: float = math.nan
    high: float = math.nan
    own_sitting: bool = False
    level: bool = False

    def text(self) -> str:
        """The table's cell: '1', '2.57×', with † or = where marked."""
        return ratio_text(self.value, self.own_sitting) + "=" * self.level


class Table(NamedTuple):
    """One metric's table: its caption, its columns, and its row of the fastest's seconds; a caption that names its
    columns' baselines is made from the sittings (caption_of(results))."""
    caption: str
    columns: tuple
    fastest: str
    caption_of: Callable | None = None


TABLES = (
    Table("**Per iteration:** steady iteration (the median of iterations 8 on) relative to the fastest design of each "
          "column (– not measured; † a sitting of its own):", COLUMNS, "*the fastest's steady iteration*"),
    Table("**A search:**", (SEARCH, POPULATION), "*the fastest's wall time*", lambda results: search_caption(results)),
    Table("**Continuous control:** steady iteration (the median of iterations 2–5 of exp12's continuous-action "
          "scripts) relative to the fastest design of each column (= level with the fastest: their ranges over "
          "repeats overlap):", CONTINUOUS, "*the fastest's steady iteration*"),
)

# the table's rows in this order (each named by one of its variants; the registry's designs not named here follow, in
# the registry's order): the JAX designs, the torch ones on the JAX env, on envs in torch, then on NumPy envs
ORDER = (variants.LINEN, variants.NNX_CACHED, variants.NNX_TREE, variants.EQUINOX, variants.LINEN_SCAN, variants.TORCH,
         variants.TORCH_COMPILE, variants.TORCH_COMPILE_CUDAGRAPHS, variants.TORCH_NATIVE, variants.TORCH_NATIVE_COMPILE,
         variants.TORCH_GYMNASIUM_VECTOR, variants.LINEN_GYMNASIUM_VECTOR)


def designs() -> tuple:
    """One Design per design name of the registry: its PPO and DQN rows (at most one each), in ORDER's order."""
    names = dict.fromkeys([row.design for row in ORDER] + [row.design for row in variants.VARIANTS if row.design])
    rows = {(row.design, row.algorithm): row for row in variants.VARIANTS if row.design}
    return tuple(Design(name, rows.get((name, variants.PPO)), rows.get((name, variants.DQN)),
                        rows.get((name, variants.PPO_CONTINUOUS))) for name in names)


DESIGNS = designs()


def fail(message):
    """One error line and exit status 2."""
    print(f"answer_table.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def read_rows(results, sweep):
    """The sweep's summary.csv rows, steady iteration as a float."""
    path = os.path.join(results, sweep, "summary.csv")
    if not os.path.isfile(path):
        fail(f"{path} is missing: run plot.py on the sweep first")
    with open(path, newline="") as file:
        rows = list(csv.DictReader(file))
    for row in rows:
        row[STEADY] = float(row[STEADY] or "nan")
    return rows


def selection(rows, column):
    """The column's runs (asynchronous timing only) as the report's rows: the (variant, mode) as their label, env,
    seed, condition (what pairs two runs: one per env here) and steady iteration; runs without one left out."""
    selected = []
    for row in rows:
        if (row["exp"], row["size"], row["timing"], int(row["num_envs"])) != (column.exp, column.size, "async",
                                                                              column.num_envs):
            continue
        if (column.envs and row["env"] not in column.envs) or math.isnan(row[STEADY]):
            continue
        selected.append({"label": (row["variant"], row["compile_mode"]), "env": row["env"], "seed": row["seed"],
                         "condition": Condition(column.exp, row["env"], column.size, "async", ()), STEADY: row[STEADY]})
    return selected


def relatives(rows, own_sitting=False):
    """({(variant, mode): Ratio to the fastest}, the fastest's geometric-mean seconds), by report/standings.py's rule;
    a Ratio's range is the least and greatest of its paired (env, seed) ratios."""
    labels = list(dict.fromkeys(row["label"] for row in rows))
    fastest = fastest_label(rows, labels, STEADY)
    ratios = {}
    for label in labels:
        pairs = [pair.speedup for pair in paired_labels(rows, fastest, label, STEADY)]
        ratios[label] = Ratio(relative_to(rows, fastest, label, STEADY)[0], min(pairs, default=math.nan),
                              max(pairs, default=math.nan), own_sitting)
    return ratios, geometric_mean(metric_values(where(rows, label=fastest), STEADY))


def ratio_text(ratio, marked):
    """'1', '2.57×', with † for a cell from a sitting of its own."""
    text = "1" if round(ratio, 2) == 1 and ratio <= 1 else f"{ratio:.2f}×"
    return text + ("†" if marked else "")


def column_ratios(results, column):
    """{design name: Ratio} and the fastest's seconds, for one column."""
    chosen = {design.name: design.ppo if column.family == variants.PPO else design.dqn for design in DESIGNS}
    keys = {name: (row.script, row.mode) for name, row in chosen.items() if row}
    wanted = set(keys.values())
    main = [row for row in selection(read_rows(results, column.sweep), column) if row["label"] in wanted]
    if not main:
        fail(f"results/{column.sweep} holds no run of the column '{column.title}'")
    ratios, fastest_s = relatives(main)
    found = {name: ratios[key] for name, key in keys.items() if key in ratios}
    if column.extra_sweep:
        extra_ratios, _ = relatives(selection(read_rows(results, column.extra_sweep), column), own_sitting=True)
        found.update({name: extra_ratios[key] for name, key in keys.items() if name not in found and key in extra_ratios})
    return found, fastest_s


def read_studies(folder: str, exp: str, tool: str) -> list:
    """The studies a command set's plan lists (EXP.json in its folder, which `tool` writes)."""
    plan = os.path.join(folder, f"{exp}.json")
    try:
        with open(plan) as file:
            return json.load(file)["studies"]
    except (OSError, ValueError, KeyError):
        fail(f"{plan} is missing or unreadable: run {tool} into {folder} first")


def relative_ratios(seconds: dict) -> tuple:
    """{name: Ratio} of each name's seconds to the least (no range), and the least."""
    fastest = min(seconds.values())
    return {name: Ratio(wall / fastest) for name, wall in seconds.items()}, fastest


def search_entries(results, column) -> tuple:
    """exp10's part (a) studies of one env and one worker, loaded ({design name: {study seed: Entry}}), and its plan."""
    folder = os.path.join(results, column.sweep)
    by_script = {f"{design.dqn.script}.py": design.name for design in DESIGNS if design.dqn}
    studies = read_studies(folder, column.exp, "tools/exp10.sh")
    chosen = [study for study in studies if study["part"] == "a" and study["workers"] == 1 and not study["flags"]]
    groups = by_label([load_entry(folder, study) for study in chosen])
    names = {label: by_script[next(study["script"] for study in chosen if study["label"] == label)] for label in groups}
    with open(os.path.join(folder, f"{column.exp}.json")) as file:
        plan = json.load(file)
    return {names[label]: group for label, group in groups.items()}, plan


def search_ratios(results, column):
    """{design name: Ratio of its wall time to the baseline's} for exp10's part (a) studies of one env and one worker,
    by the report's rule (report/search.py, imported): the baseline is the design of least median wall time over the
    study seeds, a design's ratio the median of its ratios to the baseline, seed by seed (their range its range),
    marked = where its wall times' range over the seeds overlaps the baseline's; and the baseline's median seconds."""
    groups, _ = search_entries(results, column)
    base = baseline_of(groups)
    level = level_with(groups, base)
    ratios = {}
    for name, group in groups.items():
        values = seed_ratios(group, groups[base])
        ratios[name] = Ratio(statistics.median(values), min(values), max(values), level=name in level)
    return ratios, statistics.median(seed_walls(groups[base]))


def population_ratios(results, column):
    """{design name: Ratio of its study's wall time to the baseline's} for exp11's studies on the column's env (the
    scan design: its populations of the size that finished first, the baseline where it is the fastest), and the
    baseline's seconds."""
    ratios, fastest, _ = population_baseline(results, column)
    return ratios, fastest


def population_baseline(results, column):
    """population_ratios' ratios and seconds, and the baseline in words: a design's script, and for the scan design
    its population's size."""
    folder = os.path.join(results, column.sweep)
    by_script = {f"{design.ppo.script}.py": design.name for design in DESIGNS if design.ppo}
    seconds, sizes, scripts = {}, {}, {}
    for study in read_studies(folder, column.exp, "tools/exp11.py"):
        if study["part"] in column.envs:
            wall = wall_seconds(load(os.path.join(folder, study["folder"]))[1].trials)
            name = by_script[study["script"]]
            if wall < seconds.get(name, math.inf):
                seconds[name], sizes[name], scripts[name] = wall, study.get("population", 0), study["script"]
    ratios, fastest = relative_ratios(seconds)
    first = min(seconds, key=seconds.get)
    named = (f"`{scripts[first]}`'s populations of {sizes[first]} agents a process" if sizes[first] else
             f"`{scripts[first]}`'s trials")
    return ratios, fastest, named


def search_caption(results) -> str:
    """The search table's caption: each column's workload and its one baseline, named from the sittings."""
    groups, plan = search_entries(results, SEARCH)
    base = baseline_of(groups)
    script = f"`{next(iter(groups[base].values())).settings.script}`"
    seeds = len({seed for group in groups.values() for seed in group})
    folder = os.path.join(results, POPULATION.sweep)
    with open(os.path.join(folder, f"{POPULATION.exp}.json")) as file:
        population = json.load(file)
    iterations = population.get("workload", "").split("--num-iterations ")[-1].split()[0]
    _, _, named = population_baseline(results, POPULATION)
    return (f"**A search:** its wall time relative to one baseline per column, named here. DQN on Doors (exp10's part "
            f"(a): {plan['trials']} configurations of a seeded random sampler, {plan['total_timesteps']:,} env steps a "
            f"trial, one env and one worker a trial; the median over {seeds} study seeds of the ratio seed by seed) "
            f"against {base} ({script}), the fastest there (= level with it: their wall times' ranges over the seeds "
            f"overlap). PPO on {', '.join(POPULATION.envs)} (exp11: {population['trials']} configurations of "
            f"{iterations} iterations, the trials two at a time) against {named}, the fastest; one study a way, so no "
            "range and no level marker:")


def continuous_ratios(results, column):
    """{design name: Ratio of its steady iteration to the fastest script's} on the column's env in exp12's sitting
    (report/continuous.py's medians over repeats, no range), and the fastest's seconds. By the report's rule, a design whose
    range over repeats overlaps the fastest's is marked level with it ('='): no design is crowned within noise."""
    folder = os.path.join(results, column.sweep)
    try:
        plan = read_plan(folder)
    except Refused as error:
        fail(f"{error}: run tools/exp12.py into {folder} first")
    by_label = {design.continuous.label: design.name for design in DESIGNS if design.continuous}
    ratios, fastest = {}, math.nan
    for (env, _), labels in exp12_cells(folder, plan).items():
        if env in column.envs:
            level = {by_label[label] for label in lead(labels).level}
            ratios, fastest = relative_ratios({by_label[label]: steady(runs)[0] for label, runs in labels.items()})
            ratios = {name: ratio._replace(level=name in level) for name, ratio in ratios.items()}
    return ratios, fastest


def ratios_of(results, column):
    """{design name: Ratio} and the fastest's seconds of one column, read as its metric is."""
    if column is SEARCH:
        return search_ratios(results, column)
    if column is POPULATION:
        return population_ratios(results, column)
    if column.family == variants.PPO_CONTINUOUS:
        return continuous_ratios(results, column)
    return column_ratios(results, column)


def cells_of(results, column):
    """{design name: cell text} and the fastest's seconds of one column."""
    ratios, fastest = ratios_of(results, column)
    return {name: ratio.text() for name, ratio in ratios.items()}, fastest


def variant_of(design: Design, column: Column) -> Variant | None:
    """The design's variant that a column reads (its PPO, DQN or continuous-action PPO script)."""
    return {variants.PPO: design.ppo, variants.DQN: design.dqn, variants.PPO_CONTINUOUS: design.continuous}[
        column.family]


def table_lines(results, table: Table = TABLES[0]):
    """One table in markdown: a row per design measured in it, named with the scripts measured there, then the
    fastest's seconds and the machine of each column."""
    columns = [cells_of(results, column) for column in table.columns]
    header = ["design (the scripts measured)", *(column.title for column in table.columns)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    for design in DESIGNS:
        row = [cells.get(design.name, "–") for cells, _ in columns]
        measured = [variant_of(design, column) for column, cell in zip(table.columns, row) if cell != "–"]
        if measured:
            scripts = " / ".join(f"`{file}`" for file in dict.fromkeys(variant.file for variant in measured))
            lines.append("| " + " | ".join([f"{design.name} ({scripts})", *row]) + " |")
    seconds = [f"{fastest_s:.3g} s" for _, fastest_s in columns]
    lines.append("| " + " | ".join([table.fastest, *seconds]) + " |")
    cpus = [column_cpu(results, column) for column in table.columns]
    lines.append("| " + " | ".join(["*the machine (a GPU column: its GPU)*", *cpus]) + " |")
    return lines


def cnn_ratios(results) -> tuple:
    """exp14's ratios: {case: {variant label: Ratio}} against each case's fastest script (its least median over the
    repeats), by report/cnn.py's rule (imported): the median over the repeats of the ratio repeat by repeat, and the
    range of those ratios, level where level with it; each case's fastest label and seconds; and the sitting's plan."""
    folder = os.path.join(results, CNN_SWEEP)
    try:
        plan = cnn.read_plan(folder)
    except Refused as error:
        fail(f"{error}: run tools/exp14.py into {folder} first")
    table = exp12_cells(folder, plan, key=lambda item: item["case"])
    found, fastest = {}, {}
    for case, runs_of in table.items():
        first, ratios = repeat_ratios(runs_of)
        level = set(lead(runs_of).level)
        found[case] = {label: Ratio(median, low, high, level=label in level)
                       for label, (median, low, high) in ratios.items()}
        fastest[case] = first, steady(runs_of[first])[0]
    return found, fastest, plan


def cnn_cells(results) -> tuple:
    """exp14's cells: {case: {variant label: 'ratio [low–high]'}} (cnn_ratios', the fastest's without a range), each
    case's fastest seconds, and the sitting's plan."""
    ratios, fastest, plan = cnn_ratios(results)
    cells = {case: {label: ratio.text() if label == fastest[case][0] else
                    f"{ratio.text()} [{ratio.low:.2f}–{ratio.high:.2f}]" for label, ratio in by_label.items()}
             for case, by_label in ratios.items()}
    return cells, {case: seconds for case, (_, seconds) in fastest.items()}, plan


def cnn_lines(results) -> list:
    """The convolutional agents' table: a row per framework, named with the scripts measured in it."""
    cells, fastest, plan = cnn_cells(results)
    header = ["framework (the scripts measured)", *(title for _, title in CNN_CASES)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    for name, rows in CNN_ROWS:
        row = [next((cells.get(case, {})[row.label] for row in rows if row.label in cells.get(case, {})), "–")
               for case, _ in CNN_CASES]
        files = [row.file for row in rows if any(row.label in cells.get(case, {}) for case, _ in CNN_CASES)]
        if files:
            lines.append("| " + " | ".join([f"{name} ({' / '.join(f'`{file}`' for file in files)})", *row]) + " |")
    lines.append("| " + " | ".join(["*the fastest's steady iteration*",
                                     *(f"{fastest[case]:.3g} s" if case in fastest else "–" for case, _ in CNN_CASES)])
                 + " |")
    machine = cpu_text({"cpu": plan.get("machine"), "cpu_details": plan.get("cpu_details")})
    lines.append("| " + " | ".join(["*the machine*", *(machine for _ in CNN_CASES)]) + " |")
    return lines


def answer_lines(results):
    """The tables, each under its caption: what the README's answer holds."""
    lines = []
    for table in TABLES:
        caption = table.caption_of(results) if table.caption_of else table.caption
        lines += [caption, "", *table_lines(results, table), ""]
    return lines + [CNN_CAPTION, "", *cnn_lines(results)]


def column_cpu(results: str, column: Column) -> str:
    """The CPU of the column's sitting: its system.json's, with the generation where recorded (report/machines.py),
    or its GPU; a command set's folder without one gives its plan's machine (generation unknown)."""
    folder = os.path.join(results, column.sweep)
    try:
        with open(os.path.join(folder, "system.json")) as file:
            system = json.load(file)
    except OSError:
        with open(os.path.join(folder, f"{column.exp}.json")) as file:
            plan = json.load(file)
        system = {"cpu": plan.get("machine"), "cpu_details": plan.get("cpu_details")}
    return gpu_model(system) or cpu_text(system)


def cpu_text(system: dict) -> str:
    """A CPU's name, with its generation where the record has it (report/machines.py), else that it has not."""
    return cpu_name(system) + ("" if cpu_generation(system) else ", generation not recorded")


def replaced(text: str, table: str) -> str:
    """text with its answer tables (from the line that opens the first table's heading to the last row of the table
    under the last heading) replaced by table."""
    headings = [line.split(":**")[0] + ":**" for line in table.splitlines() if line.startswith("**")]
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if line.startswith(headings[0])), None)
    last = next((i for i, line in enumerate(lines) if line.startswith(headings[-1])), None)
    if first is None or last is None or last < first:
        fail(f"the file holds no answer tables to replace (no line opening with {headings[0]} then {headings[-1]}); "
             "paste the printed tables in once")
    end = last + 2  # the heading, a blank line, then the table's rows
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join(lines[:first] + table.split("\n") + lines[end:])


def main(argv=None):
    """Prints the table, checks that a file holds it, or writes it into the file."""
    parser = argparse.ArgumentParser(prog="answer_table.py", description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=os.path.join(ROOT, "results"), help="the folder of committed sweeps")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--check", metavar="FILE", help="exit 1 if FILE does not hold the table as printed")
    action.add_argument("--write", metavar="FILE", help="replace FILE's tables by the tables as printed")
    args = parser.parse_args(argv)
    table = "\n".join(answer_lines(args.results))
    path = args.check or args.write
    if not path:
        print(table)
        return
    if not os.path.isfile(path):
        fail(f"{path} is not a file")
    with open(path) as file:
        text = file.read()
    if args.write:
        if table not in text:
            with open(path, "w") as file:
                file.write(replaced(text, table))
            print(f"wrote {path}")
        return
    if table not in text:
        print(f"answer_table.py: {path} does not hold the table that `python tools/answer_table.py` prints now",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
