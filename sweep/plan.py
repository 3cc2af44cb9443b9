"""A sweep's plan: the options, the grid and the runs they select, what this machine allows (cores, memory), and what
OUT already holds (finished runs, their durations, the workload). benchmark.sh keeps one plan file per invocation;
each command it calls between runs reads it back."""
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

from sweep import estimate, experiments, groups, options as cli_options, records
from sweep.grid import Run, command, config_of, describe, dry_run_line, select, shell_line


@dataclass
class Plan:
    argv: list  # benchmark.sh's arguments
    command_line: str  # the user's command line, quoted
    cwd: str  # the caller's folder (a relative --out is taken from there)
    python: str  # PYTHON, which runs the scripts
    parallel: int  # the cores usable here: how many of an exp6 group's processes run at a time
    cpu_count: int
    refused: dict = field(default_factory=dict)  # run name -> why it was refused (memory), decided once
    out: str = ""  # OUT, made absolute once
    todo_names: list = None  # the runs this invocation runs, in order, once OUT's finished runs are known

    def __post_init__(self):
        self.options = cli_options.parse(self.argv, self.command_line, self.cwd)
        self.out = self.out or self.options.out
        self.options.out = self.out
        self.workload = self.options.workload
        self.grid = experiments.build_grid(self.options.choices)
        self.selected = self.select()
        self.estimator = estimate.Estimator(self.prior_ms)
        self.file = None  # the plan file, once saved or loaded

    @classmethod
    def load(cls, path):
        with open(path) as f:
            plan = cls(**json.load(f))
        plan.file = path
        return plan

    def save(self, path):
        fields = ("argv", "command_line", "cwd", "python", "parallel", "cpu_count", "refused", "out", "todo_names")
        with open(path, "w") as f:
            json.dump({name: getattr(self, name) for name in fields}, f)
        self.file = path

    def select(self, shard=None):
        options = self.options
        runs = select(self.grid, options.repeats, self.min_seeds, options.only,
                      options.pattern, shard or options.shard)
        return [run for run in runs if run.name not in self.refused]

    @property
    def machine_kind(self) -> str:
        """What the built-in estimates are for."""
        return "one H100 GPU" if self.options.grid == "gpu" else "a 2-core CPU"

    def min_seeds(self, config):
        return experiments.min_seeds(config, self.options.choices)

    def prior_ms(self, config):
        gpu = self.options.grid == "gpu"
        if experiments.dqn(config):
            return estimate.dqn_prior_ms(config, self.workload.iterations_of(config),
                                         self.workload.dqn(config.env).iteration_steps, gpu)
        return estimate.prior_ms(config, self.workload.iterations_of(config), self.workload.num_steps_of(config),
                                 self.workload.update_epochs, self.parallel, gpu)

    def check_selection(self):
        """One line for a selection that holds nothing to run."""
        options, exps = self.options, {run.config.exp for run in self.selected}
        if not self.selected:
            raise cli_options.Refused("no run of the grid matches the selection (--only, --filter, --shard)")
        if options.only and options.only not in exps:
            raise cli_options.Refused(f"--only {options.only}: no run of {options.only} in this grid and selection "
                                      "(see --help for what each grid holds)")
        if options.shard != (1, 1) and exps <= {"warmup"}:
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
            buffer_size = self.workload.dqn(run.config.env).buffer_size if experiments.dqn(run.config) else 0
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

    # WHAT OUT HOLDS
    def path(self, *parts):
        return os.path.join(self.out, *parts)

    def finished_names(self):
        try:
            with open(self.path("finished.txt")) as f:
                return {line.strip() for line in f if line.strip()}
        except FileNotFoundError:
            return set()

    def todo(self):
        """The runs this invocation runs: those of the plan file, else the selected runs OUT has not finished."""
        if self.todo_names is not None:
            names = set(self.todo_names)
            return [run for run in self.selected if run.name in names]
        finished = self.finished_names()
        return [run for run in self.selected if run.name not in finished]

    def observe_durations(self):
        """Feeds the estimator the durations of the finished runs (durations.txt: "<name> <ms>")."""
        finished = self.finished_names()
        try:
            with open(self.path("durations.txt")) as f:
                lines = [line.split() for line in f]
        except FileNotFoundError:
            return
        for name, ms in (fields for fields in lines if len(fields) == 2):
            if name in finished and ms.isdigit():
                self.estimator.observe(config_of(name, self.workload.num_envs), int(ms))

    def check_workload(self):
        """A folder holds one workload: written by the first invocation, checked by the rest (a folder from before
        exp5, exp7, exp8 or exp8's MinAtar runs joined the grid gains their fields)."""
        path, line = self.path("workload.json"), self.workload.json()
        if os.path.isfile(path):
            with open(path) as f:
                recorded = f.read().strip()
            try:
                accepted = self.workload.accepts(json.loads(recorded))
            except ValueError:
                accepted = False
            if not accepted:
                raise cli_options.Refused(f"{self.out} holds runs of another workload, {recorded}, not {line}; use "
                                          "another --out or that folder's options")
        elif self.finished_names():
            raise cli_options.Refused(f"{self.out} holds finished runs but no workload.json, so their workload is "
                                      "unknown; use another --out")
        with open(path, "w") as f:
            f.write(line + "\n")

    # EACH RUN
    def run_command(self, run: Run) -> list:
        """What benchmark.sh starts for a run: the script under GNU timeout (its own process group, which a signal to
        timeout reaches whole); for an exp6 group of processes, this package's group runner."""
        if run.config.processes:
            return [self.python, "-m", "sweep", "group", self.file, run.name]
        return ["timeout", f"--kill-after={groups.KILL_GRACE_SECONDS}", str(self.options.timeout),
                *command(run, self.workload, self.python, self.out)]

    def todo_line(self, run: Run) -> str:
        """benchmark.sh's line for a run: name, run folder, log (relative to OUT) and command, tab-separated."""
        c = run.config
        return "\t".join([run.name, self.path("runs", c.exp, run.name), f"logs/{c.exp}/{run.name}.log",
                          shell_line(self.run_command(run))])

    def fits(self, run, elapsed_s: int) -> bool:
        """Whether `run` may start `elapsed_s` seconds into this invocation under --max-minutes: the estimate (the runs
        of its cost group timed so far, else the built-in figure) ends it within the limit."""
        limit_s = self.options.max_minutes * 60
        return not limit_s or elapsed_s + self.estimator.total_ms([run.config]) // 1000 <= limit_s

    def progress(self, number, todo):
        run = todo[number - 1]
        return (f"[{number}/{len(todo)}] {describe(run, self.workload, self.parallel)} · "
                f"{self.estimator.left(run.config for run in todo[number - 1:])} left ... ")
