"""OUT's ledger: what a sweep folder holds of its runs. OUT/records.txt, one line per run end (a group's: one line):
"<run_name> <verdict> <exit status> <milliseconds> <1-minute load average, - where unknown> <log, relative to OUT>";
benchmark.sh appends it with the verdict "-", which judge_records replaces. Sweep folders of earlier versions hold
finished.txt and durations.txt instead (and load.txt, failed.txt): read as they are, never written. Also the folder's
workload (workload.json) and a group's record (group.json). The plan (sweep/plan.py) selects the runs; this says which
of them OUT holds and how each ended."""
import json
import os

from sweep import groups, options as cli_options, records
from sweep.runs import Run, config_of
from sweep.workload import Workload


class Ledger:
    """OUT's records read and judged: the finished runs and their durations, each ended run's verdict, the folder's
    workload and a group's group.json."""

    def __init__(self, out: str, workload: Workload, parallel: int, cpu_count: int, timeout: int):
        self.out = out
        self.workload = workload
        self.parallel = parallel  # the cores usable: how many of a group's processes ran at a time
        self.cpu_count = cpu_count
        self.timeout = timeout  # --timeout: an exit past it is a timeout

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

    def durations(self) -> list:
        """[(config, milliseconds)] of the finished runs: their records', and those that durations.txt ("<name> <ms>",
        an earlier version's record) holds of the runs finished.txt lists."""
        durations = [(name, ms) for name, verdict, _, ms, *_ in self.records() if verdict == "finished"]
        legacy = self.legacy_finished()
        try:
            with open(self.path("durations.txt")) as f:
                durations += [fields for fields in map(str.split, f) if len(fields) == 2 and fields[0] in legacy]
        except FileNotFoundError:
            pass
        return [(config_of(name, self.workload.num_envs), int(ms)) for name, ms in durations if ms.isdigit()]

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
        if status in (124, 137) and self.timeout and ms // 1000 >= self.timeout:
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
