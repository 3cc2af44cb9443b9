"""Regenerates the report of every committed sitting: the one list of the committed sittings, of the folders each
plot.py report is made from, and of the command sets' report modules.

    python tools/regenerate_reports.py                 # regenerate every report in place, under results/
    python tools/regenerate_reports.py --out DIR       # write each into DIR/<name> instead (results/ untouched)
    python tools/regenerate_reports.py --check         # regenerate into a temporary folder; exit 1, one error line per
                                                       # difference, when a REPORT.md differs from the committed one
                                                       # or when plot.py warned of a chart problem
    python tools/regenerate_reports.py --only cpu-2core-exp9 gpu-nvidia-h200/vs-cpu-2core-exp7   # some of them

plot.py runs from the repository root on the committed folders (summary.csv's path column holds the paths of the event
files as given: results/...), with --out naming where the report goes. A chart problem is a `warning: chart problem:`
line of plot.py (report/charts.py, chart_problems: a point outside its axes or beyond the outermost labelled tick, a
legend over a label). A command set's sitting (tools/exp10.sh, tools/exp11.py ... tools/exp15.py) holds the records its
report is made from: `python -m report.<module> FOLDER` remakes it there (with --out or --check, in a copy of the
folder). Left out, as nothing but its measurement writes it: results/cpu-2core-exp9-env-throughput
(tools/env_throughput.py measures and writes it in one go).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # the planner's package, when run as tools/regenerate_reports.py

from sweep.experiments import BY_NAME  # noqa: E402 (after the path)

PROBLEM = "warning: chart problem: "


class Report(NamedTuple):
    """One committed report: where it lies under results/ and what plot.py reads to make it, or the report module of
    its command set."""
    name: str  # its folder under results/
    inputs: tuple = ()  # plot.py's arguments before --out: sweep folders (the first is the sitting), or a --compare
    module: str = ""  # a command set's: report/<module>.py, which remakes the report in the sitting's folder


# committed reports that only their measurement writes
NOT_REGENERATED = ("cpu-2core-exp9-env-throughput",)

REPORTS = (
    Report("cpu-2core-exp1-small", ("results/cpu-2core-exp1-small",)),
    Report("cpu-2core-exp4", ("results/cpu-2core-exp4",)),
    Report("cpu-2core-exp4-epyc", ("results/cpu-2core-exp4-epyc",)),
    Report("cpu-2core-exp4-native", ("results/cpu-2core-exp4-native",)),
    Report("cpu-2core-exp5", ("results/cpu-2core-exp5",)),
    Report("cpu-2core-exp5-epyc", ("results/cpu-2core-exp5-epyc",)),
    Report("cpu-2core-exp5-native", ("results/cpu-2core-exp5-native",)),
    Report("cpu-2core-exp6", ("results/cpu-2core-exp6",)),
    Report("cpu-2core-exp7", ("results/cpu-2core-exp7",)),
    # exp8 read beside exp4's PPO cells of the same machine kind (the DQN section sets its spread beside PPO's)
    Report("cpu-2core-exp8", ("results/cpu-2core-exp8", "results/cpu-2core-exp4-epyc")),
    Report("cpu-2core-exp8-family", ("results/cpu-2core-exp8-family", "results/cpu-2core-exp4-native")),
    Report("cpu-2core-exp9", ("results/cpu-2core-exp9",)),
    Report("cpu-quick", ("results/cpu-quick",)),
    Report("gpu-nvidia-h200", ("results/gpu-nvidia-h200",)),
    Report("gpu-nvidia-h200/vs-cpu-2core-exp7",
           ("--compare", "results/cpu-2core-exp7", "--vs", "results/gpu-nvidia-h200")),
    # the command sets' sittings, each remade from its own records by its command set's report module
    Report("cpu-2core-exp10", module=BY_NAME["exp10"].report_module),
    Report("cpu-2core-exp10-repeats", module=BY_NAME["exp10"].report_module),
    Report("cpu-2core-exp11", module=BY_NAME["exp11"].report_module),
    Report("cpu-2core-exp12", module=BY_NAME["exp12"].report_module),
    Report("cpu-2core-exp13", module=BY_NAME["exp13"].report_module),
    Report("cpu-2core-exp14", module=BY_NAME["exp14"].report_module),
    Report("cpu-2core-exp15", module=BY_NAME["exp15"].report_module),
)


def fail(message):
    """One error line and exit status 2."""
    print(f"regenerate_reports.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def plot_command(report, out_root):
    """The command line that writes the report into out_root/<name> (run from the repository root): plot.py's, or a
    command set's report module on its folder there."""
    if report.module:
        return [sys.executable, "-m", f"report.{report.module}", os.path.join(out_root, report.name)]
    return [sys.executable, "plot.py", *report.inputs, "--out", os.path.join(out_root, report.name)]


def regenerate(reports, out_root):
    """Runs plot.py for each report into out_root/<name>; returns the error lines: a plot.py that failed, and each
    chart problem plot.py warned of."""
    errors = []
    for report in reports:
        started = time.perf_counter()
        folder = os.path.join(out_root, report.name)
        if report.module and os.path.realpath(folder) != os.path.realpath(os.path.join(ROOT, "results", report.name)):
            shutil.rmtree(folder, ignore_errors=True)
            shutil.copytree(os.path.join(ROOT, "results", report.name), folder)  # its records, which its module reads
        result = subprocess.run(plot_command(report, out_root), cwd=ROOT, capture_output=True, text=True)
        print(f"{report.name}: {time.perf_counter() - started:.1f} s", flush=True)
        if result.returncode:
            last = (result.stderr.strip().splitlines() or ["no output"])[-1]
            errors.append(f"{report.name}: {report.module or 'plot.py'} exited with status {result.returncode}: {last}")
        errors += [f"{report.name}: chart problem: {line.removeprefix(PROBLEM)}"
                   for line in result.stderr.splitlines() if line.startswith(PROBLEM)]
    return errors


def differences(reports, out_root):
    """One error line per report whose REPORT.md under out_root differs from the committed one under results/."""
    errors = []
    for report in reports:
        committed = os.path.join(ROOT, "results", report.name, "REPORT.md")
        made = os.path.join(out_root, report.name, "REPORT.md")
        if not os.path.isfile(made):
            continue  # plot.py failed: regenerate() said so
        with open(committed) as file:
            old = file.read().splitlines()
        with open(made) as file:
            new = file.read().splitlines()
        if old != new:
            line = next((number for number, (a, b) in enumerate(zip(old, new), 1) if a != b),
                        min(len(old), len(new)) + 1)
            errors.append(f"results/{report.name}/REPORT.md differs from the regenerated one from line {line} "
                          f"(committed: {len(old)} lines, regenerated: {len(new)})")
    return errors


def check(reports):
    """Regenerates the reports into a temporary folder; the error lines (chart problems, failures, differences)."""
    with tempfile.TemporaryDirectory(prefix="regenerate_reports_") as out_root:
        errors = regenerate(reports, out_root)
        return errors + differences(reports, out_root)


def main(argv=None):
    """Regenerates the reports in place or into --out, or checks them (--check)."""
    parser = argparse.ArgumentParser(prog="regenerate_reports.py", description=__doc__.splitlines()[0])
    parser.add_argument("--out", metavar="DIR", help="write each report into DIR/<name>, not in place")
    parser.add_argument("--check", action="store_true", help="regenerate into a temporary folder; exit 1 when a "
                        "REPORT.md differs from the committed one or a chart problem was warned")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these reports (their folders under results/)")
    args = parser.parse_args(argv)
    names = [report.name for report in REPORTS]
    unknown = [name for name in args.only or [] if name not in names]
    if unknown:
        fail(f"no committed report {', '.join(unknown)} (known: {', '.join(names)})")
    if args.check and args.out:
        fail("give --check or --out, not both")
    reports = [report for report in REPORTS if not args.only or report.name in args.only]
    if args.check:
        errors = check(reports)
    else:
        out_root = os.path.abspath(args.out) if args.out else os.path.join(ROOT, "results")
        errors = regenerate(reports, out_root)
    for error in errors:
        print(f"regenerate_reports.py: error: {error}", file=sys.stderr)
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
