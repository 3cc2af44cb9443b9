"""benchmark.sh's command line (sweep/help.txt says what each option does): parsed and checked here, each bad value
refused with one line."""
import datetime
import os
import re
import socket
from dataclasses import dataclass, field

from sweep import experiments, grids
from sweep.workload import Workload

HELP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "help.txt")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VALUE_OPTIONS = ("--out", "--grid", "--repeats", "--only", "--filter", "--shard", "--iterations", "--eager-iterations",
                 "--exp5-iterations", "--exp7-large-iterations", "--timeout", "--max-minutes", "--slurm")
COUNT = re.compile(r"[1-9][0-9]*")
# POSIX bracket classes of --filter's extended regular expressions, as Python's re spells them
POSIX_CLASSES = {"[:digit:]": r"0-9", "[:alpha:]": r"a-zA-Z", "[:alnum:]": r"a-zA-Z0-9", "[:upper:]": r"A-Z",
                 "[:lower:]": r"a-z", "[:space:]": r"\s", "[:punct:]": r"!-/:-@\[-`{-~", "[:xdigit:]": r"0-9A-Fa-f"}


class Refused(Exception):
    """Nothing was run: one line for the user (benchmark.sh: ...), exit status 2."""


class HelpAsked(Exception):
    """-h or --help."""


@dataclass
class Options:
    dry_run: bool = False
    quick: bool = False
    grid: str = "default"
    out: str = ""
    repeats: int = 1
    only: str = ""
    filter: str = ""
    shard: tuple = (1, 1)
    iterations: int | None = None
    eager_iterations: int | None = None
    exp5_iterations: int | None = None
    exp7_large_iterations: int | None = None
    timeout: int = 0
    max_minutes: int = 0  # start no run that the estimate ends after this many minutes of the invocation (0: no limit)
    slurm: int | None = None
    sbatch_options: list = field(default_factory=list)
    command_line: str = ""  # the user's command, as benchmark.sh was called
    out_given: bool = False  # whether --out was given (--slurm needs it)

    @property
    def workload(self) -> Workload:
        return Workload.of(self.quick, self.iterations, self.eager_iterations, self.exp5_iterations,
                           self.exp7_large_iterations, self.grid)

    @property
    def pattern(self) -> re.Pattern | None:
        return filter_regex(self.filter) if self.filter else None

    @property
    def choices(self) -> experiments.Choices:
        return experiments.Choices(self.grid, self.quick, self.workload.num_envs)


def filter_regex(pattern: str) -> re.Pattern:
    """--filter's POSIX extended regular expression as a Python pattern; re.error where it is invalid."""
    for posix, python in POSIX_CLASSES.items():
        pattern = pattern.replace(posix, python)
    return re.compile(pattern)


def count(option, value, what="a positive integer"):
    if not COUNT.fullmatch(value):
        raise Refused(f"{option} needs {what}, not '{value}'")
    return int(value)


def set_option(options, option, value):
    """Checks VALUE and stores it."""
    if option == "--out":
        options.out = value
    elif option == "--grid":
        if value not in grids.GRIDS:
            raise Refused(f"--grid needs study, default, gpu or reference, not '{value}'")
        options.grid = value
    elif option == "--repeats":
        options.repeats = count(option, value)
    elif option == "--only":
        if value not in experiments.ONLY + tuple(grids.SELECTIONS):
            raise Refused(f"--only needs one of {' '.join(experiments.ONLY + tuple(grids.SELECTIONS))}, not '{value}'")
        options.only = value
    elif option == "--filter":
        try:
            filter_regex(value)
        except re.error:
            raise Refused(f"--filter: invalid regular expression '{value}'") from None
        options.filter = value
    elif option == "--shard":
        match = re.fullmatch(r"([1-9][0-9]*)/([1-9][0-9]*)", value)
        if not match or int(match[1]) > int(match[2]):
            raise Refused(f"--shard needs K/N with 1 <= K <= N, not '{value}'")
        options.shard = int(match[1]), int(match[2])
    elif option == "--timeout":
        options.timeout = count(option, value, "a positive number of seconds")
    elif option == "--max-minutes":
        options.max_minutes = count(option, value, "a positive number of minutes")
    elif option == "--slurm":
        options.slurm = count(option, value, "a positive number of tasks")
    else:  # the iterations
        setattr(options, option.removeprefix("--").replace("-", "_"), count(option, value))


def parse(argv, command_line="benchmark.sh", cwd=None) -> Options:
    """The options of `benchmark.sh ARGV` (--opt=value is --opt value; the words after -- go to sbatch), OUT made
    absolute from the caller's folder `cwd` (default: results/<date>-<hostname> in the repository)."""
    options, args = Options(command_line=command_line), list(argv)
    while args:
        word = args.pop(0)
        if word.startswith("--") and "=" in word:
            args[:0] = word.split("=", 1)
        elif word in ("-h", "--help"):
            raise HelpAsked
        elif word == "--dry-run":
            options.dry_run = True
        elif word == "--quick":
            options.quick = True
        elif word == "--":
            options.sbatch_options = args
            break
        elif word in VALUE_OPTIONS:
            if not args or not args[0]:
                raise Refused(f"{word} needs a value (see --help)")
            set_option(options, word, args.pop(0))
        else:
            raise Refused(f"unknown option '{word}' (see --help)")
    check_grid(options)
    options.out_given = bool(options.out)
    out = options.out or f"{ROOT}/results/{datetime.date.today().isoformat()}-{socket.gethostname()}"
    options.out = out if out.startswith("/") else f"{cwd or os.getcwd()}/{out}"
    return options


def check_grid(options: Options):
    """Refuses what the chosen grid cannot take: --quick of the reference grid, a selection of another grid's parts."""
    if options.quick and options.grid == "reference":
        raise Refused("--grid reference has no --quick: its runs are the README's columns (--quick is the default "
                      "grid's smoke test)")
    grid = grids.SELECTIONS.get(options.only, (options.grid,))[0]
    if grid != options.grid:
        raise Refused(f"--only {options.only} selects parts of --grid {grid}, not of --grid {options.grid}")


def help_text() -> str:
    with open(HELP) as f:
        return f.read()
