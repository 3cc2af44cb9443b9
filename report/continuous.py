"""exp12's report: `python -m report.continuous DIR` writes DIR/REPORT.md and DIR/charts/ from DIR/exp12.json (the
machine, the load at the start, the date, the commit, the workload, each env's step costs, and the runs: env, what
steps it, label, repeat, run folder) and the run folders under DIR/runs.

Does the framework matter less when the env is expensive? Per env it gives each script's steady iteration (the
median of iterations 2 onwards, then the median over the repeats, with their range), its ratio to the fastest script
on the same env, the env's share of that iteration (its steps alone, timed in the same regime by
tools/continuous_env_cost.py, over the steady iteration), start-up and iteration 0 (compilation). The answer sets the
framework spread (slowest over fastest script) beside the env's share, env by env: the published study's
hypothesis, measured at the heavy end.

In a sweep's report (plot.py), section_continuous gives exp12's runs there (--grid gpu: the continuous-action
scripts on Brax's envs) the same per-env ratios."""
import math
import os
import statistics
import sys

from matplotlib.figure import Figure

from report import envshare
from report.envshare import STEADY_FROM, cells, env_rows, env_seconds, lead
from report.folder import CHARTS, DPI, ratio, run_command, write_markdown
from report.machines import plan_machine
from report.palette import other_colors
from report.stats import rows_of, where
from report.summary import ordered
from report.text import Answer, heading, listed, markdown_table, number_text, percent_text, speedup_text
from search import Refused
from sweep.experiments import EXP12
from sweep.variants import BY_LABEL

PLAN_FILE = "exp12.json"


def read_plan(directory: str) -> dict:
    """DIR/exp12.json; refused where it is missing, not JSON, or lists no runs."""
    return envshare.read_plan(directory, PLAN_FILE)


def answer_line(name: str, by_label: dict, spread: float, shares: tuple) -> str:
    """One env's answer: the env's share of the fastest iteration with its range over the env's processes, the
    fastest script (with those level with it), the slowest's ratio."""
    share, low, high = shares
    first = lead(by_label)
    level = f", level with {listed(first.level)} (ranges over repeats overlap)" if first.level else ""
    beyond = ", beyond the whole iteration: the env timed alone, not inside it" if high > 1 else ""
    return (f"- **{name}**: the env's steps alone take {percent_text(share, sign='')} of the fastest script's steady "
            f"iteration [{percent_text(low, sign='')}–{percent_text(high, sign='')} over the env's processes"
            f"{beyond}]; fastest {first.first}{level}; the slowest takes {speedup_text(spread)} the fastest's.")


def spread_chart(points: list, path: str):
    """Each env's framework spread against its share of the fastest script's iteration."""
    figure = Figure(figsize=(6, 4), layout="constrained")
    axes = figure.subplots()
    colors = other_colors([name for name, _, _ in points])
    for name, share, spread in points:
        axes.scatter([100 * share], [spread], s=40, color=colors[name], label=name)
    axes.axhline(1.0, color="grey", linewidth=1)
    axes.set_xlabel("the env's share of the fastest script's steady iteration (%)")
    axes.set_ylabel("slowest / fastest script (steady iteration)")
    axes.legend(fontsize=8)
    figure.savefig(path, dpi=DPI)


def backend_lines(plan: dict) -> list:
    """Brax's envs on each of its backends: the steps per iteration and the compile seconds (one process each)."""
    entries = plan.get("brax_backends", [])
    if not entries:
        return []
    rows = [[entry["env"], entry["brax_backend"], number_text(statistics.median(entry["seconds"])),
             number_text(entry["reset_compile_seconds"] + entry["first_call_seconds"]
                         - statistics.median(entry["seconds"]))] for entry in entries]
    return ["## Brax's backends", "", "Each env's steps alone on each backend, in the same regime (one process each): "
            "the scripts run MJX (`--brax-backend`, MuJoCo's physics in JAX).", ""] + markdown_table(
        ["env", "backend", "steps per iteration, s", "compile, s"], rows)


def write_report(directory: str) -> str:
    """Writes DIR/REPORT.md and DIR/charts/ from DIR/exp12.json and its runs; returns REPORT.md's path."""
    plan = read_plan(directory)
    table = cells(directory, plan)
    if not table:
        raise Refused(f"{directory}/runs holds none of the finished runs {PLAN_FILE} lists")
    os.makedirs(os.path.join(directory, CHARTS), exist_ok=True)
    sections, points, answer = [], [], []
    for (env, backend), by_label in table.items():
        rows, spread, share = env_rows(plan, env, backend, by_label)
        env_time, (low, high), compile_seconds = env_seconds(plan, env, backend)
        name = f"{env} ({backend})"
        points.append((name, share, spread))
        fastest = env_time / share
        answer.append(answer_line(name, by_label, spread, (share, low / fastest, high / fastest)))
        compiled = "" if math.isnan(compile_seconds) else (
            f"; compiling its reset and steps takes {number_text(compile_seconds)} s")
        sections += [f"### {name}", "",
                     f"The env's steps alone: {number_text(env_time)} s an iteration [{number_text(low)}–"
                     f"{number_text(high)} over processes]{compiled}.", ""]
        sections += markdown_table(["script (mode)", "steady iteration, s [range]", "runs", "vs fastest",
                                    "env share", "iteration 0, s: cold", "warm cache", "start-up, s", "last return"],
                                   rows)
    spread_chart(points, os.path.join(directory, CHARTS, "spread_by_env_share.png"))
    lines = ["# exp12: does the framework matter less when the env is expensive?", "", "## The answer", ""]
    lines += answer + ["", f"![framework spread against env share]({CHARTS}/spread_by_env_share.png)", ""]
    lines += [f"*The numbers:* {plan_machine(plan)}, load average {plan.get('load', '–')} at "
              f"the start, {plan.get('date', '–')} to {plan.get('end', '–')}, commit {plan.get('commit', '–')}; "
              f"every run `{plan.get('workload', '–')}`, {plan.get('iterations', '–')} iterations, the small model; "
              f"the steady iteration is the median of iterations {STEADY_FROM} onwards, then the median over the "
              "repeats (alternated: each repeat runs every script once, in the same order). The env share is the "
              "env's steps alone (the median of 3 processes, timed in processes of their own) over the steady "
              "iteration, at most 100 % in the tables; the answer gives its range over those processes. Iteration 0 "
              "*cold* is the first repeat's, " + cache_words(plan) + "; *warm cache* the median of the later "
              "repeats', which read the compilations the first left in the sitting's persistent cache: a fresh "
              "search trial, with no such cache, pays the cold figure.", ""]
    lines += ["## Per env", ""] + sections + backend_lines(plan)
    known = [label for label in {label for by_label in table.values() for label in by_label} if label in BY_LABEL]
    lines += [f"*Scripts:* {', '.join(sorted({BY_LABEL[label].file for label in known}))}.", ""]
    return write_markdown(directory, lines)


def cache_words(plan: dict) -> str:
    """Whether the first repeat compiled cold: the sitting's compilation cache was empty at its start (recorded since
    tools/exp12.py records it; an older sitting's plan does not say)."""
    empty = plan.get("cache_empty_at_start")
    if empty is None:
        return "compiled into the sitting's compilation cache (empty at its start, which this plan does not record)"
    return "compiled cold (the sitting's compilation cache was empty at its start)" if empty else (
        "not cold: the sitting's compilation cache already held compilations at its start (a resumed sitting)")


def section_continuous(sweep, out):
    """exp12's runs in a sweep: per env, each script's steady iteration (the median over its seeds) and its ratio to
    the fastest script's."""
    rows = rows_of(sweep.rows, EXP12.name)
    if not rows:
        return Answer([], [])
    envs = ordered((row["env"] for row in rows), sweep.env_order)
    table, spreads = envshare.sweep_cases(rows, [(env, where(rows, env=env)) for env in envs])
    bullets = [(f"{EXP12.name} · {spread.case}", f"on {spread.case} the slowest continuous-action script takes "
                f"{speedup_text(ratio(spread.slowest, spread.fastest))} the fastest's steady iteration")
               for spread in spreads]
    return Answer([heading(sweep, f"Continuous control on Brax's envs ({EXP12.name})"), ""] + table, bullets)


def main(argv: list | None = None) -> int:
    """`python -m report.continuous DIR`: writes exp12's REPORT.md."""
    return run_command(argv, "python -m report.continuous", __doc__.split("\n\n")[0],
                       f"exp12's folder (it holds {PLAN_FILE} and runs/)", write_report)


if __name__ == "__main__":
    sys.exit(main())
