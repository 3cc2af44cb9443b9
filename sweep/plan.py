"""A sweep's plan: the options, the grid and the runs they select, what this machine allows (cores, memory), the runs
left to do and the command of each (what OUT already holds is its ledger's: sweep/ledger.py). benchmark.sh keeps one
plan folder per invocation: the planner writes it before the loop (the plan, and what the loop needs of each run) and
reads it back after."""
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

from sweep import estimate, grids, groups, options as cli_options, records
from sweep.ledger import Ledger
from sweep.runs import Run, command, describe, dry_run_line, select


@dataclass
class Plan:
    argv: list  # benchmark.sh's arguments
    command_line: str  # the user's command line, quoted
    cwd: str  # the caller's folder (a relative --out is taken from there)
    python: str  # PYTHON, which runs the scripts
    parallel: int  # the cores usable here: how many of a group's processes run at a time
    cpu_count: int
    refused: dict = field(default_factory=dict)  # run name -> why it was refused (memory), decided once
    out: str = ""  # OUT, made absolute once
    todo_names: list = None  # the runs this invocation runs, in order, once OUT's finished runs are known

    def __post_init__(self):
        self.options = cli_options.parse(self.argv, self.command_line, self.cwd)
        self.out = self.out or self.options.out
        self.options.out = self.out
        self.workload = self.options.workload
        self.grid = grids.build_grid(self.options.choices)
        self.selected = self.select()
        self.estimator = estimate.Estimator(self.prior_ms)
        self.ledger = Ledger(self.out, self.workload, self.parallel, self.cpu_count, self.options.timeout)
        self.folder = None  # the plan folder, once saved or loaded

    @classmethod
    def load(cls, folder):
        with open(os.path.join(folder, "plan.json")) as f:
            plan = cls(**json.load(f))
        plan.folder = folder
        return plan

    def save(self, folder):
        """The plan, in FOLDER/plan.json; and what benchmark.sh's loop needs once, in FOLDER/sweep: OUT and
        --max-minutes (0: none), NUL-separated."""
        fields = ("argv", "command_line", "cwd", "python", "parallel", "cpu_count", "refused", "out", "todo_names")
        with open(os.path.join(folder, "plan.json"), "w") as f:
            json.dump({name: getattr(self, name) for name in fields}, f)
        with open(os.path.join(folder, "sweep"), "w") as f:
            f.write(f"{self.out}\0{self.options.max_minutes or 0}\0")
        self.folder = folder

    def select(self, shard=None):
        options = self.options
        runs = select(self.grid, options.repeats, self.min_seeds, grids.kept(options.only, options.choices),
                      options.pattern, shard or options.shard)
        return [run for run in runs if run.name not in self.refused]

    @property
    def machine_kind(self) -> str:
        """What the built-in estimates are for."""
        return "one H100 GPU" if self.options.grid == "gpu" else "a 2-core CPU"

    def min_seeds(self, config):
        return grids.min_seeds(config, self.options.choices)

    def prior_ms(self, config):
        gpu = self.options.grid == "gpu"
        if config.dqn:
            return estimate.dqn_prior_ms(config, self.workload.iterations_of(config),
                                         self.workload.dqn(config.env).iteration_steps, gpu)
        return estimate.prior_ms(config, self.workload.iterations_of(config), self.workload.num_steps_of(config),
                                 self.workload.update_of(config)[0], self.parallel, gpu)

    def check_selection(self):
        """One line for a selection that holds nothing to run."""
        options, exps = self.options, {run.config.exp for run in self.selected}
        if not self.selected:
            raise cli_options.Refused("no run of the grid matches the selection (--only, --filter, --shard)")
        if options.only and options.only not in grids.SELECTIONS and options.only not in exps:
            raise cli_options.Refused(f"--only {options.only}: no run of {options.only} in this grid and selection "
                                      "(see --help for what each grid holds)")
        if options.shard != (1, 1) and all(run.config.experiment.prepares for run in self.selected):
            raise cli_options.Refused(f"--shard {options.shard[0]}/{options.shard[1]}: this shard holds no run "
                                      "besides the warm-up runs")

    def refuse_oversized(self, environ):
        """Refuses the selected runs whose estimated peak memory exceeds what is available: one line each."""
        try:
            available = estimate.available_memory_kb(environ)
        except ValueError as error:
            raise cli_options.Refused(str(error)) from None
        if available is None:
            return
        for run in self.selected:
            buffer_size = self.workload.dqn(run.config.env).buffer_size if run.config.dqn else 0
            peak = estimate.peak_memory_kb(run.config, self.workload.num_steps_of(run.config), self.parallel,
                                           buffer_size)
            if peak > available:
                self.refused[run.name] = f"estimated peak memory {peak // 1024} MiB, {available // 1024} MiB available"
                print(f"benchmark.sh: refusing {run.name}: {self.refused[run.name]}", file=sys.stderr)
        self.selected = self.select()
        if not self.selected:
            raise cli_options.Refused("no selected run fits in the memory available (see the lines above)")

    def dry_run_lines(self):
        return [dry_run_line(run, self.workload, self.python, self.out, self.parallel) for run in self.selected]

    def check_prerequisites(self):
        """What a real sweep needs besides bash: GNU timeout, flock, and the packages the selected scripts import."""
        version = subprocess.run(["timeout", "--version"], capture_output=True, text=True) \
            if shutil.which("timeout") else None
        if not version or "GNU" not in version.stdout:
            raise cli_options.Refused("needs GNU timeout (coreutils) on the PATH to stop runs; install coreutils")
        if not shutil.which("flock"):
            raise cli_options.Refused("needs flock (util-linux) on the PATH to lock OUT; install util-linux")
        scripts = list(dict.fromkeys(f"{run.config.script}.py" for run in self.selected))
        problems = records.import_problems(os.path.join(cli_options.ROOT, script) for script in scripts)
        if problems:
            raise cli_options.Refused(f"PYTHON: {sys.executable} cannot run the scripts: {', '.join(problems)}; "
                                      "install requirements.txt into it or set PYTHON")

    # WHAT OUT HOLDS (its ledger: sweep/ledger.py)
    def todo(self):
        """The selected runs OUT has not finished, in order."""
        finished = self.ledger.finished_names()
        return [run for run in self.selected if run.name not in finished]

    def observe_durations(self):
        """Feeds the estimator the durations of the runs OUT holds finished."""
        for config, ms in self.ledger.durations():
            self.estimator.observe(config, ms)

    # EACH RUN
    def run_command(self, run: Run) -> list:
        """What benchmark.sh starts for a run: the script under GNU timeout (its own process group, which a signal to
        timeout reaches whole); for a group of processes, this package's group runner."""
        if run.config.processes:
            return [self.python, "-m", "sweep", "group", self.folder, run.name]
        return ["timeout", f"--kill-after={groups.KILL_GRACE_SECONDS}", str(self.options.timeout),
                *command(run, self.workload, self.python, self.out)]

    def todo_line(self, run: Run) -> str:
        """benchmark.sh's line for a run to do, tab-separated: its name, its estimated milliseconds and cost group
        (the ETA's and --max-minutes's), its run folder and log (relative to OUT), and the progress line's words."""
        c = run.config
        return "\t".join([run.name, str(self.estimator.ms(c)), "/".join(map(str, estimate.cost_group(c))),
                          os.path.join("runs", c.exp, run.name), os.path.join("logs", c.exp, f"{run.name}.log"),
                          describe(run, self.workload, self.parallel)])

    def write_todo(self, todo):
        """What benchmark.sh needs of the runs to do, in the plan folder: todo, a line per run (todo_line), and
        <N>.argv, run N's command as NUL-separated words (bash reads them with mapfile -d '', no eval)."""
        with open(os.path.join(self.folder, "todo"), "w") as f:
            f.write("".join(f"{self.todo_line(run)}\n" for run in todo))
        for number, run in enumerate(todo, 1):
            with open(os.path.join(self.folder, f"{number}.argv"), "w") as f:
                f.write("".join(f"{word}\0" for word in self.run_command(run)))
