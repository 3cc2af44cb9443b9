"""A report of a folder of its own (one study, or a command set's studies or runs): its JSON plan file, its charts
folder, its REPORT.md and its command line. No search library here: the continuous-action command set's report, which
a sweep's report also reads, stands on this module alone."""
import argparse
import json
import math
import os
import sys

from search import Refused

CHARTS = "charts"
DPI = 100


def read_json_file(directory: str, plan_file: str):
    """DIR/plan_file's JSON, its path; a folder without it, or a file that is not JSON, is refused."""
    path = os.path.join(directory, plan_file)
    try:
        with open(path) as f:
            return json.load(f), path
    except OSError:
        raise Refused(f"{directory} holds no {plan_file}: not {plan_file.split('.')[0]}'s folder") from None
    except json.JSONDecodeError as error:
        raise Refused(f"{path} is not JSON: {error}") from None


def ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, NaN where the denominator is 0 or NaN."""
    return numerator / denominator if denominator else math.nan


def write_markdown(directory: str, lines: list) -> str:
    """DIRECTORY/REPORT.md with the lines; its path."""
    path = os.path.join(directory, "REPORT.md")
    with open(path, "w") as f:
        f.write("\n".join(lines).rstrip() + "\n")
    return path


def run_command(argv: list | None, prog: str, description: str, folder_help: str, write) -> int:
    """A report's command line: one folder, write(folder)'s path printed; bad input: one error line, exit 2."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("folder", help=folder_help)
    args = parser.parse_args(argv)
    try:
        print(write(args.folder))
    except Refused as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
