"""The test suite's ledger (tests/ledger.py) of a run, or two runs side by side: the costliest processes and tests,
the totals, and each test file's seconds.

    python tools/ledger.py                          # the last run's ledger (.pytest_cache/v/benchback/ledger)
    python tools/ledger.py AFTER.json --before BEFORE.json   # two ledgers (BENCHBACK_LEDGER=FILE python -m pytest)
"""
import argparse
import json
import os
import sys
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from ledger import report  # noqa: E402 (tests/, after the path)

LAST = os.path.join(ROOT, ".pytest_cache", "v", "benchback", "ledger")


def read(path: str) -> dict:
    try:
        with open(path) as file:
            return json.load(file)
    except (OSError, ValueError) as error:
        sys.exit(f"ledger.py: error: {path}: {getattr(error, 'strerror', None) or error}")


def by_file(summary: dict) -> Counter:
    """Seconds of each test file's tests (setup, call and teardown)."""
    files = Counter()
    for nodeid, seconds in summary["tests"].items():
        files[nodeid.split("::")[0]] += seconds
    return files


def totals(summary: dict) -> list:
    processes = summary["processes"]
    background = sum(row["seconds"] for row in processes if row["test"] == "background")
    return [summary["wall_seconds"], sum(summary["tests"].values()), len(processes),
            sum(row["seconds"] for row in processes), background]


def compare(before: dict, after: dict):
    """The totals and the test files' seconds, before and after."""
    names = ["wall, s", "tests' seconds", "processes", "process seconds", "of them in the background"]
    print("| | before | after |\n|---|---|---|")
    for name, old, new in zip(names, totals(before), totals(after)):
        print(f"| {name} | {old:,.0f} | {new:,.0f} |")
    old_files, new_files = by_file(before), by_file(after)
    print("\n| test file | before, s | after, s |\n|---|---|---|")
    for name, _ in (old_files + new_files).most_common(15):
        print(f"| {name} | {old_files.get(name, 0):.0f} | {new_files.get(name, 0):.0f} |")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="ledger.py", description=__doc__.splitlines()[0])
    parser.add_argument("ledger", nargs="?", default=LAST, help="a ledger's JSON (default: the last run's)")
    parser.add_argument("--before", metavar="FILE", help="an earlier ledger to set beside it")
    args = parser.parse_args(argv)
    after = read(args.ledger)
    report(print, after)
    if args.before:
        print()
        compare(read(args.before), after)


if __name__ == "__main__":
    main()
