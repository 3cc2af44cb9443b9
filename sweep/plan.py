"""A sweep's plan: the options, the grid and the runs they select, what this machine allows (cores, memory), and what
OUT already holds (its records: finished runs, their durations; the workload). benchmark.sh keeps one plan folder per
invocation: the planner writes it before the loop (the plan, and what the loop needs of each run) and reads it back
after."""
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

from sweep import estimate, experiments, groups, options as cli_options, records
from sweep.runs import Run, command, config_of, describe, dry_run_line, select


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
        self.grid = experiments.build_grid(self.options.choices)
        self.selected = self.select()
        self.estimator = estimate.Estimator(self.prior_ms)
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
        if options.only and options.only not in exps:
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

    # WHAT OUT HOLDS
    # OUT/records.txt, one line per run end (a group's: one line): "<run_name> <verdict> <exit status> <milliseconds>
    # <1-minute load average, - where unknown> <log, relative to OUT>"; benchmark.sh appends it with the verdict "-",
    # which judge_records replaces. Sweep folders of earlier versions hold finished.txt and durations.txt instead (and
    # load.txt, failed.txt): read as they are, never written.
    def path(self, *parts):
        return os.path.join(self.out, *parts)

    def records(self) -> list:
        """OUT/records.txt's records in order, each the list of its six fields."""
        try:
            with open(self.path("records.txt")) as f:
                return [fields for fields in map(str.split, f) if len(fields) == 6]
        except FileNotFoundError:
            return []

    def legacy_finished(self) -> set:
        """The runs that finished.txt (an earlier version's record: one name per finished run) lists."""
        try:
            with open(self.path("finished.txt")) as f:
                return {line.strip() for line in f if line.strip()}
        except FileNotFoundError:
            return set()

    def finished_names(self) -> set:
        """The runs OUT holds finished: those whose latest record says so, and those finished.txt lists."""
        latest = {name: verdict for name, verdict, *_ in self.records()}
        return self.legacy_finished() | {name for name, verdict in latest.items() if verdict == "finished"}

    def todo(self):
        """The selected runs OUT has not finished, in order."""
        finished = self.finished_names()
        return [run for run in self.selected if run.name not in finished]

    def observe_durations(self):
        """Feeds the estimator the durations of the finished runs: their records', and those that durations.txt
        ("<name> <ms>", an earlier version's record) holds of the runs finished.txt lists."""
        durations = [(name, ms) for name, verdict, _, ms, *_ in self.records() if verdict == "finished"]
        legacy = self.legacy_finished()
        try:
            with open(self.path("durations.txt")) as f:
                durations += [fields for fields in map(str.split, f) if len(fields) == 2 and fields[0] in legacy]
        except FileNotFoundError:
            pass
        for name, ms in durations:
            if ms.isdigit():
                self.estimator.observe(config_of(name, self.workload.num_envs), int(ms))

    def judge_records(self) -> list:
        """Gives every record that benchmark.sh appended (verdict "-") its verdict, writes them back and returns every
        record: "finished" (exit status 0 and the time/total scalar in the run's event file; a group's in every agent's,
        and then its group.json is written if its runner has not), "incomplete" (exit status 0 without it: a note is
        appended to the log), "timeout" (exit status 124 or 137 at or past --timeout) or "failed" (any other exit
        status); a failed group of processes records the log of the process that failed."""
        lines = self.records()
        unjudged = [fields for fields in lines if fields[1] == "-"]
        for fields in unjudged:
            fields[1], fields[5] = self.verdict(fields[0], int(fields[2]), int(fields[3]), fields[5])
        if unjudged:  # written whole, then renamed: an interruption leaves the old file or the new one
            with open(self.path("records.txt.new"), "w") as f:
                f.write("".join(" ".join(fields) + "\n" for fields in lines))
            os.replace(self.path("records.txt.new"), self.path("records.txt"))
        return lines

    def verdict(self, name, status, ms, log) -> tuple:
        """The verdict of a run that ended with exit status `status` after `ms` milliseconds, and the log to read (see
        judge_records)."""
        c = config_of(name, self.workload.num_envs)
        run, run_dir = Run(c, int(name.rsplit("__", 1)[1]), 0), self.path("runs", c.exp, name)
        folders = [os.path.join(run_dir, f"agent__seed{seed}") for seed in run.seeds] if c.grouped else [run_dir]
        unfinished = None if status else next((folder for folder in folders if not records.run_finished(folder)), None)
        if not status and unfinished is None:
            if c.grouped and not os.path.isfile(os.path.join(run_dir, "group.json")):
                self.write_group_json(run, ms)
            return "finished", log
        if c.processes and status:  # the group runner's last line names the log of the process that failed
            with open(self.path(log)) as f:
                named = (f.read().split() or [""])[-1]
            log = named if named.startswith("logs/") and os.path.isfile(self.path(named)) else log
        if status in (124, 137) and self.options.timeout and ms // 1000 >= self.options.timeout:
            return "timeout", log
        if status:
            return "failed", log
        if c.processes:
            log = os.path.join("logs", c.exp, name, f"{os.path.basename(unfinished)}.log")
        with open(self.path(log), "a") as f:
            f.write(f"benchmark.sh: exit status 0 but no time/total scalar in {unfinished}\n")
        return "incomplete", log

    def write_group_json(self, run, ms):
        """A group's group.json, the report's record of it (report/load.py, read_groups): variant, env, agents, the
        processes (how many, at most how many at a time, the threads of each), the wall time and the machine's
        cores."""
        c = run.config
        processes, parallel = (c.agents, self.parallel) if c.processes else (1, 1)
        threads = groups.threads(c.agents, self.parallel) if c.processes else None
        data = {"script": c.script, "mode": c.mode, "env_id": c.env, "agents": c.agents, "processes": processes,
                "parallel": parallel, "threads": threads, "wall_seconds": ms / 1000, "cores": self.cpu_count}
        with open(self.path("runs", c.exp, run.name, "group.json"), "w") as f:
            f.write(json.dumps(data) + "\n")

    def check_workload(self):
        """A folder holds one workload: written by the first invocation, checked by the rest (a folder from before
        some experiments joined the grid gains their fields: Workload.accepts)."""
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
