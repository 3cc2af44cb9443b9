"""The command line, the sections run in parallel, REPORT.md."""

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

from report.agents import section_agents
from report.compare import section_compare
from report.compile_modes import section_compile_modes
from report.doors import section_doors
from report.dqn import section_dqn
from report.details import (
    section_duration_vs_complexity, section_memory, section_overhead, section_pairwise_speedups, section_sync,
)
from report.env_backend import section_env_backend
from report.header import definitions_section, env_section, header_section
from report.learning import learning_curve_groups, section_final_returns, section_learning_curves
from report.load import InProcess, fail, load_sweep
from report.ranking import section_ranking
from report.scaling import section_scaling
from report.settings import ChartFolder, WORKERS
from report.sizes import section_sizes
from report.stats import where
from report.summary import write_summary_csv


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
    """The sections after the answers, for one sweep (or the part of one machine kind), in report order."""
    return [
        (section_duration_vs_complexity, sweep, out),
        (section_pairwise_speedups, sweep, out, "total_s", "speedups_total.png"),
        (section_overhead, sweep, out, "exp1"),
        (section_overhead, sweep, out, "exp3"),
        (section_pairwise_speedups, sweep, out, "iter8_99_median_s", "speedups_steady_state.png"),
        (section_sync, sweep, out, "exp2", "env"),
        (section_sync, sweep, out, "exp3", "size"),
        (section_memory, sweep, out),
        (section_final_returns, sweep),
        *[(section_learning_curves, sweep, out, exp, size) for exp, size in learning_curve_groups(sweep)],
    ]


def report_tasks(sweep, folder):
    """The report's sections in order, as (function, *arguments) calls that draw their charts and return markdown.

    The answers of the experiments come first (ranking, ranking per model size, env backend, compile modes, scaling,
    many agents, DQN); a section whose experiment the sweep does not hold returns no lines. A sweep of several machine
    kinds gets each answer once per kind, then the details kind by kind: runs are ranked and paired only within one
    kind.
    """
    parts = machine_parts(sweep, folder)
    answers = [(section, part, out) for section in (section_ranking, section_sizes, section_env_backend,
                                                    section_compile_modes, section_scaling, section_agents,
                                                    section_dqn, section_doors)
               for part, out in parts]
    details = [task for part, out in parts for task in detail_tasks(part, out)]
    return [*answers, (definitions_section, sweep), (env_section, sweep), *details]


def section_name(task):
    """A report task's name for messages: 'overhead (exp3)', 'ranking (machine 2: …)'."""
    function, sweep, *arguments = task
    details = [argument for argument in arguments if isinstance(argument, str)] + [sweep.machine] * bool(sweep.machine)
    return function.__name__.removeprefix("section_") + (f" ({', '.join(details)})" if details else "")


def run_sections(pool, tasks):
    """Each report task's markdown lines, run in the pool, and one error line per task that failed.

    A failed section leaves a line in its place; the other sections are written as usual.
    """
    futures = [pool.submit(*task) for task in tasks]
    sections, errors = [], []
    for task, future in zip(tasks, futures):
        try:
            sections.append(future.result())
        except Exception as error:  # any failure of one section: the report keeps the others
            cause = f"{type(error).__name__}: {error}"
            errors.append(f"section {section_name(task)} failed: {cause}")
            sections.append([f"## Failed section: {section_name(task)}", "", f"This section failed ({cause}).", ""])
    return sections, errors


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
            report = ["# PPO framework benchmark: comparison of two sweeps", ""] + section_compare(sides, sweeps,
                                                                                                ChartFolder(out))
        else:
            sweep = load_sweep(args.dirs, pool, args.workers)
            out.mkdir(parents=True, exist_ok=True)
            write_summary_csv(sweep.rows, out / "summary.csv")
            print("drawing charts", flush=True)
            sections, errors = run_sections(pool, report_tasks(sweep, out))
            report = ["# PPO framework benchmark report", ""] + header_section(sweep)
            report += [line for section in sections for line in section]
    (out / "REPORT.md").write_text("\n".join(report))
    print(f"wrote {out / 'REPORT.md'} in {time.perf_counter() - started:.1f} s", flush=True)
    for error in errors:
        print(f"plot.py: error: {error}", file=sys.stderr, flush=True)
    if errors:
        sys.exit(1)
