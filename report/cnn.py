"""exp14's report: `python -m report.cnn DIR` writes DIR/REPORT.md from DIR/exp14.json (the machine, the load at the
start, the date, the commit, its cases, each env's step costs, and the runs: case, env, what steps it, label, repeat,
run folder, and a return threshold where the run was timed to one) and the run folders under DIR/runs.

What does a CNN change? Every answer so far is an MLP's. Per case (MinAtar's CNN, small and wide, on Breakout-MinAtar
in JAX; the Nature CNN on Breakout-v5, ale-py's C++ env) it gives each script's steady iteration (the median of
iterations 2 onwards, then the median over the repeats, with their range), its ratio to the fastest (the script of
least median steady iteration) as one statistic with its bracket: the median over the repeats of the ratio repeat by
repeat, and the range of those ratios; the env's share of it (its steps alone, timed in the same regime by
tools/cnn_env_cost.py), start-up and iteration 0 (compilation), and where the case was timed to a return threshold,
the seconds of training to reach it.

In a sweep's report (plot.py), section_cnn gives exp14's runs there (--grid gpu: the same cases on a GPU) each case's
steady iterations and ratios to the fastest script."""
import math
import statistics
import sys

from report import envshare
from report.envshare import STEADY_FROM, cells, env_rows, env_seconds, lead, steady
from report.folder import ratio, run_command, write_markdown
from report.machines import plan_machine
from report.stats import rows_of, where
from report.summary import ordered_configs
from report.text import (Answer, heading, listed, markdown_table, number_text, percent_text, seconds_text,
                         speedup_text)
from search import Refused
from sweep.experiments import EXP14
from sweep.variants import BY_LABEL

PLAN_FILE = "exp14.json"
VS_FASTEST = 3  # the column of envshare.env_rows's rows that holds the ratio to the fastest


def read_plan(directory: str) -> dict:
    """DIR/exp14.json; refused where it is missing, not JSON, or lists no runs."""
    return envshare.read_plan(directory, PLAN_FILE)


def repeat_ratios(by_label: dict) -> tuple:
    """The baseline of a case's ratios, the script of least median steady iteration over the repeats, and each script's
    ratio to it as one statistic with its bracket, {label: (median, min, max)}: the median over the repeats of its
    steady iteration over the baseline's of the same repeat, and the range of those ratios (NaN where no repeat
    pairs)."""
    medians = {label: steady(runs)[0] for label, runs in by_label.items()}
    first = min(medians, key=medians.get)
    base = {run["repeat"]: run["steady"] for run in by_label[first]}
    ratios = {}
    for label, runs in by_label.items():
        values = [run["steady"] / base[run["repeat"]] for run in runs if run["repeat"] in base]
        ratios[label] = (statistics.median(values), min(values), max(values)) if values else (math.nan,) * 3
    return first, ratios


def ratio_text(value: tuple) -> str:
    """A ratio over the repeats as its median and range: '1.50× [1.25–1.73]'; '–' where there is none."""
    median, low, high = value
    return "–" if math.isnan(median) else f"{speedup_text(median)} [{low:.2f}–{high:.2f}]"


def framework_ratios(by_label: dict) -> str:
    """Each framework's best script against the fastest script, by the ratio given (the median of the ratios repeat by
    repeat), in words: 'torch 2.10× [2.00–2.20], Equinox 1.05× [0.98–1.10]'."""
    _, ratios = repeat_ratios(by_label)
    best = {}
    for label, _ in sorted(ratios.items(), key=lambda item: item[1][0]):
        framework = BY_LABEL[label].framework if label in BY_LABEL else label
        best.setdefault(framework, label)
    return ", ".join(f"{framework} {ratio_text(ratios[label])}" for framework, label in best.items())


def answer_line(case: dict, by_label: dict, share: float) -> str:
    """One case's answer: the fastest script (with those level with it), every framework's ratio, the env's share."""
    first = lead(by_label)
    level = f", level with {listed(first.level)} (ranges over repeats overlap)" if first.level else ""
    return (f"- **{case['case']}**: fastest {first.first}{level}; each framework's best against it (the median of the "
            f"ratios repeat by repeat [their range]): {framework_ratios(by_label)}; the env's steps alone take "
            f"{percent_text(share, sign='')} of the fastest script's steady iteration.")


def threshold_line(case: dict, by_label: dict) -> str:
    """The seconds of training each script took to reach the case's return threshold (median over repeats; how many
    repeats reached it)."""
    parts = []
    for label, runs in by_label.items():
        times = [run["to_threshold"] for run in runs if not math.isnan(run["to_threshold"])]
        reached = f"{len(times)} of {len(runs)}"
        parts.append(f"{label} {seconds_text(statistics.median(times)) if times else '–'} s ({reached})")
    return (f"- **{case['case']}, time to a mean return of {number_text(case['threshold'])}** (training seconds, "
            f"iteration 0's compilation included; repeats that reached it): {'; '.join(parts)}.")


def write_report(directory: str) -> str:
    """Writes DIR/REPORT.md from DIR/exp14.json and its runs; returns REPORT.md's path."""
    plan = read_plan(directory)
    table = cells(directory, plan, key=lambda item: item["case"])
    if not table:
        raise Refused(f"{directory}/runs holds none of the finished runs {PLAN_FILE} lists")
    answer, sections = [], []
    for case in plan.get("cases", []):
        by_label = table.get(case["case"])
        if not by_label:
            continue
        rows, _, share = env_rows(plan, case["env"], case["backend"], by_label)
        _, ratios = repeat_ratios(by_label)
        for row, label in zip(rows, by_label):  # env_rows's "vs fastest" (a ratio of medians): the one statistic here
            row[VS_FASTEST] = ratio_text(ratios[label])
        env_time, (low, high), compile_seconds = env_seconds(plan, case["env"], case["backend"])
        answer.append(answer_line(case, by_label, share))
        timed = case.get("threshold") is not None
        if timed:
            answer.append(threshold_line(case, by_label))
        compiled = "" if math.isnan(compile_seconds) else (
            f"; compiling its reset and steps takes {number_text(compile_seconds)} s")
        sections += [f"### {case['case']}", "", f"`{case['workload']}` on {case['env']} ({case['backend']}). The "
                     f"env's steps alone: {number_text(env_time)} s an iteration [{number_text(low)}–"
                     f"{number_text(high)} over processes]{compiled}.", ""]
        header = ["script (mode)", "steady iteration, s [range]", "runs", "vs fastest [range over repeats]",
                  "env share", "iteration 0, s: cold", "warm cache", "start-up, s"]
        header += ([f"to return {number_text(case['threshold'])}, s"] if timed else []) + ["last return"]
        sections += markdown_table(header, rows)
    lines = ["# exp14: what a CNN changes", "", "## The answer", ""] + answer + [""]
    lines += [f"*The numbers:* {plan_machine(plan)}, load average {plan.get('load', '–')} at the start, "
              f"{plan.get('date', '–')} to {plan.get('end', '–')}, commit {plan.get('commit', '–')}; "
              f"iterations a run: {plan.get('iterations', '–')}; the steady iteration is the median of iterations "
              f"{STEADY_FROM} onwards, then the median over the repeats (alternated: each repeat runs every case's "
              "scripts once, in the same order, seed = repeat). A ratio to the fastest (the script of least median "
              "steady iteration) is the median over the repeats of the ratio repeat by repeat, its range in brackets. "
              "The env share is the env's steps alone (the median of "
              "3 processes) over the steady iteration, at most 100 % in the tables. Iteration 0 *cold* is the first "
              "repeat's (the sitting's compilation cache empty at its start); *warm cache* the median of the later "
              "repeats'.", ""]
    lines += ["## Per case", ""] + sections
    known = sorted({BY_LABEL[label].file for by_label in table.values() for label in by_label if label in BY_LABEL})
    lines += [f"*Scripts:* {', '.join(known)}.", ""]
    return write_markdown(directory, lines)


def section_cnn(sweep, out):
    """exp14's runs in a sweep: per case (MinAtar's CNN small and wide, the Nature CNN), each script's steady
    iteration (the median over its seeds) and its ratio to the fastest script's."""
    rows = rows_of(sweep.rows, EXP14.name)
    if not rows:
        return Answer([], [])
    cases = [(EXP14.CASES.get((env, size), f"{env}, {size}"), where(rows, env=env, size=size))
             for env, size in ordered_configs(rows, sweep.env_order)]
    table, spreads = envshare.sweep_cases(rows, cases)
    bullets = [(f"{EXP14.name} · {spread.case}", f"{spread.case}: fastest {spread.first}; the slowest script takes "
                f"{speedup_text(ratio(spread.slowest, spread.fastest))} its steady iteration") for spread in spreads]
    lines = [heading(sweep, f"Convolutional agents ({EXP14.name})"), "", "MinAtar's CNN on Breakout-MinAtar (the "
             "env in JAX, small and wide) and the Nature CNN on Breakout-v5 (ale-py's env on the host), each at the "
             "workload of the CPU sitting (tools/exp14.py).", ""]
    return Answer(lines + table, bullets)


def main(argv: list | None = None) -> int:
    """`python -m report.cnn DIR`: writes exp14's REPORT.md."""
    return run_command(argv, "python -m report.cnn", __doc__.split("\n\n")[0],
                       f"exp14's folder (it holds {PLAN_FILE} and runs/)", write_report)


if __name__ == "__main__":
    sys.exit(main())
