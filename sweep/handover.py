"""benchmark.sh --only EXP where EXP is a command set's (its object's command_set) and the grid holds no run of it: the
invocation is handed over to that command set, which plans its folder, estimates itself, and resumes the folder when
rerun with the same settings. --out is its folder, --dry-run its dry run (its estimate, nothing written), and the
words after -- its own options (its --help lists them); no other option of the sweep applies."""
import dataclasses
import os
import shlex
import subprocess
import sys

from sweep import grids
from sweep.experiments import Experiment
from sweep.options import ROOT, Options, Refused

# what a hand-over reads of the sweep's options; any other given is refused
USED = {"only", "out", "out_given", "dry_run", "grid", "sbatch_options", "command_line"}


def handed_over(options: Options, experiment: Experiment) -> bool:
    """Whether --only's experiment goes to its command set: it has one and the grid holds no run of it."""
    return bool(experiment.command_set) and not any(
        config.exp == experiment.name for config in grids.build_grid(options.choices))


def command(options: Options, experiment: Experiment) -> list:
    """The command set's command line: its tool, the folder, its own options, and --dry-run for a dry run."""
    tool = os.path.join(ROOT, experiment.command_set)
    interpreter = [sys.executable] if tool.endswith(".py") else []
    return [*interpreter, tool, options.out, *options.sbatch_options, *(["--dry-run"] if options.dry_run else [])]


def hand_over(options: Options, experiment: Experiment) -> int:
    """Runs the command set: its exit status."""
    given = [field.name for field in dataclasses.fields(Options)
             if field.name not in USED and getattr(options, field.name) != getattr(Options(), field.name)]
    if given:
        raise Refused(f"--only {experiment.name} hands the invocation over to its command set, "
                      f"{experiment.command_set}, which takes --out, --dry-run and its own options after --, not "
                      f"--{given[0].replace('_', '-')} (its options: {experiment.command_set} --help)")
    argv = command(options, experiment)
    line = shlex.join(os.path.relpath(word, ROOT) if word.startswith(os.path.join(ROOT, "tools")) else word
                      for word in argv)
    print(f"{experiment.name} is a command set of its own, run as: {line}", flush=True)
    return subprocess.run(argv, cwd=ROOT).returncode
