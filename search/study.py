"""The workers of a study: their trial loop (each trial's seeds run as processes, their values aggregated and told to
the study), their heartbeats and the retry of a lost worker's trial. What they run on, the folder's settings and
storage, the sampler and the pruner, is search/storage.py's.

A folder's layout: study.json, journal.log (the default storage), runs/trial_NNNN and runs/eval_K (each a
TensorBoard run), logs/ (each process's output), trials.csv, evaluation.json, REPORT.md and charts/."""
import fcntl
import math
import os
import socket
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import optuna
import scipy.stats
from optuna.trial import TrialState

from search import trial as trial_process
from search.space import flags, suggest
from search.storage import Settings
from sweep.estimate import duration_text
from sweep.groups import threads

HEARTBEAT_SECONDS = float(os.environ.get("BENCHBACK_TUNE_HEARTBEAT", 10))
LOST_AFTER = 6  # heartbeats missed before a trial of a worker on another machine counts as lost
EVAL_SEED = 100_000  # the re-evaluation's seeds start here: no trial's seed (the study's --seed + its number) is one
REFUSALS = 3  # trials in a row that the script refuses with one error line (exit 2) stop the study: no trial can run
# how a CleanRL-style script fails under tune.py's interpreter where it wants its own packages' versions
FOREIGN_FAILURES = ("no episode ended", "exit 1: ModuleNotFoundError", "exit 1: ImportError")
OWN_INTERPRETER = ("; a script written for other versions of its packages (CleanRL's: gymnasium 0.29) runs under its "
                   "own interpreter with tune.py --python PATH")


def trial_seeds(settings: Settings, number: int) -> list:
    """Trial n's seeds: the study's --seed + n K + k for k < K (K = 1: --seed + n)."""
    return [settings.seed + number * settings.seeds_per_trial + k for k in range(settings.seeds_per_trial)]


def seed_runs(runs_dir: str, run_name: str, seeds: list) -> list:
    """(log dir, run name) of each seed's run: runs/trial_NNNN for one seed, runs/trial_NNNN/seed_S for several."""
    if len(seeds) == 1:
        return [(runs_dir, run_name)]
    return [(os.path.join(runs_dir, run_name), f"seed_{seed}") for seed in seeds]


def aggregate(values: list, how: str) -> float:
    """The trial's objective from its seeds' values: their mean, or their interquartile mean (the mean of the middle
    half, a quarter cut from each end, as rliable defines it)."""
    return float(scipy.stats.trim_mean(values, 0.25)) if how == "iqm" else statistics.fmean(values)


class Reports:
    """The pruner's view of a trial of K runs: an iteration's value goes to it as the aggregate of the K runs' values,
    once every run reached that iteration; from the pruner's no on, every run is told to stop."""

    def __init__(self, trial: optuna.Trial, runs: int, how: str):
        self.trial, self.runs, self.how = trial, runs, how
        self.values, self.lock = {}, threading.Lock()
        self.pruned, self.last = False, 0

    def __call__(self, iteration: int, value: float) -> bool:
        with self.lock:
            self.values.setdefault(iteration, []).append(value)
            if len(self.values[iteration]) == self.runs and not self.pruned:
                self.trial.report(aggregate(self.values.pop(iteration), self.how), iteration)
                self.last, self.pruned = iteration, self.trial.should_prune()
            return self.pruned


# TRIALS: who runs what, and when a worker is lost
def process_start(pid: int) -> str | None:
    """The start time of a live process (/proc), which tells it from a later one of the same pid; None if none."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def lost(frozen: optuna.trial.FrozenTrial, now: float) -> str | None:
    """Why a running trial's worker is gone (its process ended, on this machine, or its heartbeat stopped), or None.
    Called under the folder's lock, which a worker holds from asking for a trial to naming itself its worker: a
    running trial without a worker lost it in between."""
    worker, heartbeat = frozen.system_attrs.get("worker"), frozen.system_attrs.get("heartbeat")
    if not worker:
        return "its worker ended as it started the trial"
    if worker and worker["host"] == socket.gethostname() and process_start(worker["pid"]) != worker["start"]:
        return f"its worker (pid {worker['pid']}) is gone"
    last = heartbeat or (frozen.datetime_start.timestamp() if frozen.datetime_start else now)
    if now - last > LOST_AFTER * HEARTBEAT_SECONDS:
        return f"its worker's heartbeat stopped {now - last:.0f} s ago"
    return None


def fail_lost_trials(study: optuna.Study) -> list:
    """Marks the trials of lost workers failed, with the reason, and enqueues their configurations again."""
    retried = []
    for frozen in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        why = lost(frozen, time.time())
        if not why:
            continue
        try:  # two workers may find the same lost trial: only the first one's change of state goes through
            study._storage.set_trial_user_attr(frozen._trial_id, "reason", f"lost: {why}; retried")
            study._storage.set_trial_system_attr(frozen._trial_id, "retried", True)
            study._storage.set_trial_state_values(frozen._trial_id, TrialState.FAIL)
        except (RuntimeError, optuna.exceptions.UpdateFinishedTrialError):
            continue
        study.enqueue_trial(frozen.params, user_attrs={"retry_of": frozen.number}, skip_if_exists=False)
        retried.append(frozen.number)
    return retried


def counted(study: optuna.Study) -> int:
    """Trials toward --trials: all asked but the failed ones that were retried (their retry counts instead, once a
    worker asks for it: an enqueued configuration waits for the next ask)."""
    return sum(not frozen.system_attrs.get("retried") and frozen.state != TrialState.WAITING
               for frozen in study.get_trials(deepcopy=False))


def completed_by_value(study: optuna.Study) -> list:
    """The completed trials with a value, the highest first (the first of equal values first)."""
    done = [trial for trial in study.get_trials(deepcopy=False) if trial.state == TrialState.COMPLETE
            and trial.value is not None]
    return sorted(done, key=lambda trial: -trial.value)


def finished(study: optuna.Study) -> list:
    return study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL))


class Search:
    """The workers of one tune.py process: threads that each run one trial process at a time until the study holds
    its --trials, sharing one sampler; their heartbeat; their stop on SIGINT or SIGTERM."""

    def __init__(self, study_dir: str, settings: Settings, study: optuna.Study, trials: int):
        self.study_dir, self.settings, self.study, self.trials = study_dir, settings, study, trials
        self.runs_dir, self.logs_dir = os.path.join(study_dir, "runs"), os.path.join(study_dir, "logs")
        self.python = settings.python or sys.executable  # the trials' interpreter
        self.lock = threading.Lock()  # the sampler and the count, in this process
        self.stopping = threading.Event()
        self.running = {}  # trial id -> its process
        self.durations = [t.duration.total_seconds() for t in finished(study) if t.duration]
        self.started_at = time.time()
        self.deadline = math.inf  # tune.py --minutes: no trial starts from then on
        self.refusals, self.refused = [], ""  # the last trials' refusals (exit 2); the one that stopped the study
        # torch's intra-op threads of trials side by side: the cores shared among them (as the sweep's groups do)
        processes = settings.workers * (1 if settings.population else settings.seeds_per_trial)
        each = threads(processes, len(os.sched_getaffinity(0)))
        self.environment = {"OMP_NUM_THREADS": str(each)} if each and "OMP_NUM_THREADS" not in os.environ else {}
        os.makedirs(self.logs_dir, exist_ok=True)
        if not os.path.isdir(self.runs_dir):
            os.makedirs(self.runs_dir)
            trial_process.write_experiment(self.runs_dir, settings.space, settings.seeds_per_trial)

    def command(self, params_flags: list, seed: int, log_dir: str, run_name: str) -> tuple[list, str | None]:
        """A run's argv (under the study's interpreter) and working folder: ours get their run folder as --log-dir and
        --run-name; a CleanRL-style script runs in that folder (created), where it writes runs/<its run name>/."""
        if self.settings.contract != "cleanrl":
            return trial_process.command(self.settings.script, self.settings.script_flags, params_flags, seed,
                                         log_dir, run_name, self.python), None
        folder = os.path.join(log_dir, run_name)
        os.makedirs(folder, exist_ok=True)
        return [self.python, os.path.abspath(self.settings.script), *self.settings.script_flags, *params_flags,
                "--seed", str(seed)], folder

    def ask(self, count: int = 1) -> list:
        """The next `count` trials, fewer where the study would then hold more than its --trials (none: it holds them
        all, or its --minutes have run); across processes under the folder's lock."""
        with self.lock, open(os.path.join(self.study_dir, ".ask.lock"), "w") as lock_file:
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            retried = fail_lost_trials(self.study)
            if retried:
                print(f"trial(s) {', '.join(map(str, retried))} lost their worker: failed, and retried", flush=True)
            if self.stopping.is_set() or time.time() >= self.deadline:
                return []
            trials = [self.study.ask() for _ in range(min(count, self.trials - counted(self.study)))]
            for trial in trials:
                suggest(trial, self.settings.space)
                trial.storage.set_trial_system_attr(trial._trial_id, "worker", {
                    "host": socket.gethostname(), "pid": os.getpid(), "start": process_start(os.getpid())})
                trial.storage.set_trial_system_attr(trial._trial_id, "heartbeat", time.time())
            return trials

    def work(self):
        while not self.stopping.is_set():
            trials = self.ask()
            if not trials:
                return
            self.run_trial(trials[0])

    def run_trial(self, trial: optuna.Trial):
        run_name = f"trial_{trial.number:04d}"
        seeds = trial_seeds(self.settings, trial.number)
        runs = seed_runs(self.runs_dir, run_name, seeds)
        logs = [os.path.join(self.logs_dir, f"{run_name}.log" if len(seeds) == 1 else f"{run_name}_{name}.log")
                for _, name in runs]
        start, reports = time.time(), Reports(trial, len(seeds), self.settings.aggregate)

        def run(k: int) -> trial_process.Ended:
            argv, cwd = self.command(flags(trial.params), seeds[k], *runs[k])
            ended = trial_process.run(argv, logs[k], reports, lambda process: self.running.__setitem__(
                (trial._trial_id, k), process), self.environment, cwd)
            self.running.pop((trial._trial_id, k), None)
            return ended

        with ThreadPoolExecutor(len(seeds)) as pool:
            endings = list(pool.map(run, range(len(seeds))))
        stopped = [ended for ended in endings if not ended.pruned and ended.status != 0]
        if self.stopping.is_set() and stopped:
            self.give_back(trial, "stopped: tune.py was interrupted; retried at the next start")
            return
        values = []
        if any(ended.pruned for ended in endings):
            state, reason = TrialState.PRUNED, f"pruned after iteration {reports.last}"
        elif stopped:
            k = endings.index(stopped[0])
            state, reason = TrialState.FAIL, trial_process.failure_reason(stopped[0], logs[k])
        else:
            found = [trial_process.objective(trial_process.event_folder(os.path.join(*run_dir))) for run_dir in runs]
            values = [value for value, _ in found]
            reason = next((why for value, why in found if value is None), "")
            state = TrialState.FAIL if reason else TrialState.COMPLETE
        if self.settings.contract == "cleanrl" and not reports.values and reports.last == 0:
            trial.set_user_attr("no_iteration_line", True)  # nothing for the pruner: the report says so
        if self.settings.contract == "cleanrl" and not self.settings.python and reason.startswith(FOREIGN_FAILURES):
            reason += OWN_INTERPRETER
        self.finish(trial, state, values, reason, os.path.join(self.runs_dir, run_name), start, time.time() - start)

    def finish(self, trial: optuna.Trial, state: TrialState, values: list, reason: str, run_dir: str, start: float,
               duration: float):
        """Tells the trial's outcome: its seeds' values (several: kept as its user_attr seed_values) and their
        aggregate, in the study, in its HParams session and on the progress line (its duration: the estimate's)."""
        value = aggregate(values, self.settings.aggregate) if state == TrialState.COMPLETE else None
        trial.set_user_attr("reason", reason)
        if len(values) > 1:
            trial.set_user_attr("seed_values", values)
        trial_process.write_session(run_dir, trial.params, value, state == TrialState.COMPLETE, start, time.time(),
                                    values if len(values) > 1 else [])
        self.study.tell(trial, value, state=state)
        self.durations.append(duration)
        self.progress(trial.number, state, value, reason)
        with self.lock:  # the same refusal REFUSALS times in a row: a flag every trial shares, not a sampled value
            self.refusals = self.refusals + [reason] if reason.startswith("exit 2: ") else []
            if len(self.refusals) >= REFUSALS and len(set(self.refusals[-REFUSALS:])) == 1:
                self.refused = reason
                self.stopping.set()

    def give_back(self, trial: optuna.Trial, reason: str):
        """A trial cut short by tune.py's own stop: failed, with its configuration enqueued for the next start."""
        trial.set_user_attr("reason", reason)
        trial.storage.set_trial_system_attr(trial._trial_id, "retried", True)
        self.study.tell(trial, state=TrialState.FAIL)
        self.study.enqueue_trial(trial.params, user_attrs={"retry_of": trial.number}, skip_if_exists=False)

    def progress(self, number: int, state: TrialState, value: float | None, reason: str):
        """One line per trial: how it ended, the study's count, the best so far and the time left."""
        done = len(finished(self.study)) - sum(bool(t.system_attrs.get("retried")) for t in finished(self.study))
        outcome = f"{value:.4g}" if value is not None else reason
        try:
            best = f"best {self.study.best_value:.4g} (trial {self.study.best_trial.number})"
        except ValueError:
            best = "no trial completed yet"
        left = max(self.trials - done, 0)
        eta = statistics.median(self.durations) * left / max(self.settings.workers, 1) if self.durations else 0
        eta = min(eta, max(self.deadline - time.time(), 0))  # --minutes: the budget's end first
        print(f"trial {number} {state.name.lower()}: {outcome}; {done}/{self.trials} trials, {best}"
              + (f", about {duration_text(round(eta))} left" if left else ""), flush=True)

    def heartbeat(self):
        """Every HEARTBEAT_SECONDS, each running trial of this process says it is alive."""
        while not self.stopping.wait(HEARTBEAT_SECONDS):
            running = {key if isinstance(key, int) else key[0] for key in list(self.running)}
            for trial_id in [key for key in running if isinstance(key, int)]:  # not the re-evaluation
                try:
                    self.study._storage.set_trial_system_attr(trial_id, "heartbeat", time.time())
                except (RuntimeError, optuna.exceptions.UpdateFinishedTrialError):
                    pass  # it ended meanwhile

    def run(self, workers: int):
        threads = [threading.Thread(target=self.work, name=f"worker-{k}") for k in range(workers)]
        beat = threading.Thread(target=self.heartbeat, daemon=True)
        beat.start()
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)  # the main thread stays free for the signal handlers

    def stop(self):
        """SIGINT or SIGTERM to tune.py: no new trial; the running ones get SIGTERM (they end as the scripts do)."""
        self.stopping.set()
        for process in list(self.running.values()):
            if process.poll() is None:
                process.terminate()
