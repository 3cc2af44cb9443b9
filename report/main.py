"""The command line, the sections run in parallel, REPORT.md."""

import argparse
import importlib
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

from sweep.experiments import ALL
from report.compare import compare_machine_lines, section_compare
from report.details import (
    section_duration_vs_complexity, section_memory, section_overhead, section_pairwise_speedups, section_sync,
)
from report.header import QUICK_WARNING, definitions_section, env_section, header_section, is_quick
from report.learning import learning_curve_groups, section_final_returns, section_learning_curves
from report.load import InProcess, load_sweep
from report.machines import machine_summary
from report.messages import fail
from report.settings import WORKERS
from report.stats import where
from report.summary import write_summary_csv
from report.text import Answer, heading_anchors
from report.types import ChartFolder


def parse_args(argv):
    """The command line."""
    parser = argparse.ArgumentParser(prog="plot.py", description="Reads the TensorBoard event files of benchmark "
                                     "sweeps and writes summary.csv, charts (PNG) and REPORT.md.")
    parser.add_argument("dirs", nargs="*", type=Path, metavar="DIR", help="sweep folder(s) to read together as one sweep")
    parser.add_argument("--out", type=Path, help="output folder (default: the first DIR; with --compare a new folder "
                        "compare__A__vs__B)")
    parser.add_argument("--compare", nargs="+", type=Path, metavar="DIR_A",
                        help="side A of a comparison of two sweeps (e.g. two machines); several folders = the shards "
                             "of one sweep. `--compare DIR_A DIR_B` alone compares two single folders")
    parser.add_argument("--vs", nargs="+", type=Path, metavar="DIR_B", help="side B of --compare")
    parser.add_argument("--workers", type=int, default=WORKERS,
                        help=f"processes that read and draw (default {WORKERS}); 0 does everything in this process")
    args = parser.parse_args(argv)
    if not args.dirs and not args.compare:
        fail("give at least one DIR or --compare DIR_A [...] --vs DIR_B [...]")
    if args.workers < 0:
        fail(f"--workers must be 0 or more, not {args.workers}")
    if args.vs and not args.compare:
        fail("--vs needs --compare")
    if args.compare and not args.vs:
        if len(args.compare) != 2:
            fail("--compare needs --vs DIR_B [...], or exactly two folders: --compare DIR_A DIR_B")
        args.compare, args.vs = args.compare[:1], args.compare[1:]
    for folder in [*args.dirs, *(args.compare or []), *(args.vs or [])]:
        if not folder.is_dir():
            fail(f"{folder} is not a folder")
    if args.compare and args.dirs:
        fail("give either DIR ... (one sweep's report) or --compare (a comparison), not both")
    if args.compare:
        args.out = args.out or Path(f"compare__{args.compare[0].name}__vs__{args.vs[0].name}")
        if args.out.is_dir() and next(args.out.rglob("events.out.tfevents.*"), None):
            fail(f"--out {args.out} holds a sweep: a comparison never overwrites a sweep's own REPORT.md")
    return args


def machine_parts(sweep, folder):
    """(sweep, ChartFolder) per machine kind: the sweep and the folder itself when every run ran on one kind."""
    if len(sweep.machines) < 2:
        return [(sweep, ChartFolder(folder))]
    return [(replace(sweep, rows=where(sweep.rows, machine=kind), machine=f"machine {number}: {kind}",
                     groups=[group for group in sweep.groups if group.rows[0]["machine"] == kind]),
             ChartFolder(folder, f"_machine{number}", f"machine {number}: {kind}"))
            for number, kind in enumerate(sweep.machines, 1)]


def detail_tasks(sweep, out):
    """The sections after the answers, for one sweep (or the part of one machine kind), in report order: the overhead
    windows of each experiment that asks for them (Experiment.overhead), the synchronised rollout and update of each
    synchronised one (Experiment.sync_by, the field that splits them)."""
    return [
        (section_duration_vs_complexity, sweep, out),
        (section_pairwise_speedups, sweep, out, "total_s", "speedups_total.png"),
        *[(section_overhead, sweep, out, experiment.name) for experiment in ALL if experiment.overhead],
        (section_pairwise_speedups, sweep, out, "iter8_99_median_s", "speedups_steady_state.png"),
        *[(section_sync, sweep, out, experiment.name, experiment.sync_by) for experiment in ALL if experiment.sync_by],
        (section_memory, sweep, out),
        (section_final_returns, sweep),
        *[(section_learning_curves, sweep, out, exp, size) for exp, size in learning_curve_groups(sweep)],
    ]


def sections_by(rank: str) -> tuple:
    """Every experiment's answer section (report/<section>.py's section_<section>), once, in the order of the
    experiments' rank (Experiment.answer_rank or headline_rank)."""
    names = dict.fromkeys(experiment.section for experiment in sorted(ALL, key=lambda e: getattr(e, rank))
                          if experiment.section)
    return tuple(getattr(importlib.import_module(f"report.{name}"), f"section_{name}") for name in names)


ANSWER_SECTIONS = sections_by("answer_rank")
HEADLINE_ORDER = sections_by("headline_rank")  # whose chart heads the report, first to last


def report_tasks(sweep, folder):
    """The report's sections in order, as (function, *arguments) calls that draw their charts and return markdown:
    the answers, then the rest (how to read it, env complexity, the details).

    The answers of the experiments come first, in the order of their answer_rank (ranking, ranking per model size,
    env backend, compile modes, scaling, many agents, DQN, Doors, ...); a section whose experiment the sweep does not
    hold returns no lines. A sweep of several machine kinds gets each answer once per kind, then the details kind by
    kind: runs are ranked and paired only within one kind.
    """
    parts = machine_parts(sweep, folder)
    answers = [(section, part, out) for section in ANSWER_SECTIONS for part, out in parts]
    details = [task for part, out in parts for task in detail_tasks(part, out)]
    return answers, [(definitions_section, sweep), (env_section, sweep), *details]


def section_name(task):
    """A report task's name for messages: 'overhead (<exp>)', 'ranking (machine 2: …)'."""
    function, sweep, *arguments = task
    details = [argument for argument in arguments if isinstance(argument, str)] + [sweep.machine] * bool(sweep.machine)
    return function.__name__.removeprefix("section_") + (f" ({', '.join(details)})" if details else "")


def run_sections(pool, tasks):
    """Each report task's Answer (a section that returns lines alone: with no bullets), run in the pool, and one
    error line per task that failed.

    A failed section leaves a line in its place, and a bullet saying so; the other sections are written as usual.
    """
    futures = [pool.submit(*task) for task in tasks]
    sections, errors = [], []
    for task, future in zip(tasks, futures):
        try:
            result = future.result()
            sections.append(result if isinstance(result, Answer) else Answer(result, []))
        except Exception as error:  # any failure of one section: the report keeps the others
            cause = f"{type(error).__name__}: {error}"
            errors.append(f"section {section_name(task)} failed: {cause}")
            sections.append(Answer([f"## Failed section: {section_name(task)}", "", f"This section failed ({cause}).",
                                    ""], [(section_name(task), f"the section failed ({cause})")]))
    return sections, errors


def answer_block(top, answers, body, machine, warning=(), ranks=None):
    """'The answer': one bullet per finding of each answer section that has lines, each linking to its section's
    heading in the body ('- [<exp> · small](#does-the-ranking-hold-at-every-model-size-<exp>): …'), the headline chart
    (the first chart of the answer section of the lowest rank, its place in HEADLINE_ORDER; the first on a tie), and a
    line naming the machine and the date.

    top is the title line; answers are (Answer, machine kind's name or '') pairs in report order; body is the report
    after the block, whose headings the links resolve to (anchors numbered as GitHub numbers them).
    """
    anchors = heading_anchors([top, "## The answer", *body])
    lines = ["## The answer", "", *warning]
    bullets, charts = [], []
    for (answer, kind), rank in zip(answers, ranks or [0] * len(answers)):
        if not answer.lines:
            continue
        section_heading = answer.lines[0].lstrip("#").strip()
        for label, text, *target in answer.bullets:
            anchor = anchors[(target[0].lstrip("#").strip() if target else section_heading)]
            label += f" ({kind.split(':')[0]})" if kind else ""
            bullets.append(f"- [{label}](#{anchor}): {text.removesuffix('.')}.")
        chart = next((line for line in answer.lines if re.match(r"!\[.*\]\(.*\.png\)$", line)), None)
        charts += [(rank, len(charts), chart)] if chart else []
    chart = min(charts)[2] if charts else None
    lines += bullets or ["- No experiment with an answer section is in this sweep: the sections below give its runs."]
    lines += [""] + ([chart, ""] if chart else [])
    return lines + [f"**Machine:** {machine} ([method and machine](#{anchors['Method and machine']})).", ""]


def sweep_report(sweep, out, pool, name):
    """A sweep's REPORT.md lines (the title, the answer, the answer sections, the method and machine, how to read it,
    the details) and the error lines of the sections that failed."""
    answers, rest = report_tasks(sweep, out)
    sections, errors = run_sections(pool, answers + rest)
    body = [line for section in sections[:len(answers)] for line in section.lines]
    body += ["## Method and machine", ""] + header_section(sweep)
    body += [line for section in sections[len(answers):] for line in section.lines]
    top = f"# benchback report: {name}"
    kinds = [task[1].machine for task in answers]
    ranks = [HEADLINE_ORDER.index(task[0]) for task in answers]
    warning = [QUICK_WARNING, ""] if is_quick(sweep) else []
    return [top, ""] + answer_block(top, list(zip(sections, kinds)), body, machine_summary(sweep.systems),
                                    warning, ranks) + body, errors


def compare_report(sides, sweeps, out):
    """A comparison's REPORT.md lines: the title, the answer (the steady iteration per side), the comparison, each
    side's method and machine."""
    names = [folders[0].resolve().name for folders in sides]
    top = f"# benchback comparison: {names[0]} vs {names[1]}"
    answer = section_compare(sides, sweeps, out)
    body = answer.lines + ["## Method and machine", ""] + compare_machine_lines(sides, sweeps)
    machine = "; ".join(f"{letter}: {machine_summary(sweep.systems)}" for letter, sweep in zip("AB", sweeps))
    return [top, ""] + answer_block(top, [(answer, "")], body, machine) + body


def main(argv=None):
    """Reads the sweep (or the two compared sweeps), writes summary.csv, the charts and REPORT.md."""
    started = time.perf_counter()
    args = parse_args(argv)
    errors = []
    out = args.out or args.dirs[0]
    with ProcessPoolExecutor(max_workers=args.workers) if args.workers else InProcess() as pool:
        if args.compare:
            sides = (args.compare, args.vs)
            sweeps = [load_sweep(folders, pool, args.workers) for folders in sides]
            out.mkdir(parents=True, exist_ok=True)
            report = compare_report(sides, sweeps, ChartFolder(out))
        else:
            sweep = load_sweep(args.dirs, pool, args.workers)
            out.mkdir(parents=True, exist_ok=True)
            write_summary_csv(sweep.rows, out / "summary.csv")
            print("drawing charts", flush=True)
            report, errors = sweep_report(sweep, out, pool, args.dirs[0].resolve().name)
    (out / "REPORT.md").write_text("\n".join(report))
    print(f"wrote {out / 'REPORT.md'} in {time.perf_counter() - started:.1f} s", flush=True)
    for error in errors:
        print(f"plot.py: error: {error}", file=sys.stderr, flush=True)
    if errors:
        sys.exit(1)
