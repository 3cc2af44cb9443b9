"""Hyperparameter search over any PPO or DQN script with Optuna: each trial a fresh process of the script."""
import importlib.util
import math
import os
import shlex
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from typing import Literal

import tyro

from search import Refused
from sweep import variants
from search.space import (SET_BY_POPULATION, SET_BY_TUNE, agent_fields, check_space, guess_algorithm,
                          is_benchmark_script, load_space, script_fields)

USAGE = "python tune.py [options] SCRIPT [script flags]"
DESCRIPTION = f"""{USAGE}

Searches the hyperparameters of SCRIPT (any ppo_*.py, ppo_continuous_*.py or dqn_*.py; the default space is its
algorithm's; or a script written as CleanRL's are, run in its trial's folder, with --python under its own interpreter:
docs/tuning.md) with Optuna. Each trial is a fresh process of SCRIPT with the script flags, the trial's values, its own
--seed (the study's + the trial's number) and its own run folder (OUT/runs/trial_NNNN). The objective, maximised:
the mean episodic return over the last 10 % of the trial's env steps. Each iteration's mean return goes to the pruner
as the trial runs; a pruned trial gets SIGTERM. A rerun of the same command resumes the study up to --trials; a trial
whose worker was killed is failed and its configuration retried. At the end: trials.csv, the best configuration rerun on --eval-seeds fresh seeds, and OUT/REPORT.md with its
charts (python -m report.study OUT remakes it). `tensorboard --logdir OUT/runs` shows the trials' HParams table;
in a browser, `optuna-dashboard OUT/journal.log` shows the study (pip install -r requirements-dashboard.txt).

With --population N (a SCRIPT that takes --hparams: ppo_linen_scan.py, dqn_linen_vmap.py), N trials at a time are the
agents of one process (vmapped in one compiled call), each with its own values, seed and run folder; the space's fields
that cannot differ between agents (num_minibatches, update_epochs; DQN's buffer, batch and frequencies) group them,
one process per group. No pruning there: a population's trials run to their end.

With --seeds-per-trial K, trial n trains on the seeds --seed + n K + k (k < K), as K runs side by side
(OUT/runs/trial_NNNN/seed_S) or, with --population, as K agents of its population's process; its objective is the
K values' aggregate (--aggregate: the mean, or the interquartile mean), and so is what the pruner sees at each
iteration, once all K runs reached it.

With --pbt N (a SCRIPT that trains its population with PBT: ppo_linen_pbt.py), the populations of --population N train
with population-based training inside their process: each trial is an agent that starts from the trial's values (the
space: the script's per-agent floats) and its objective is that agent's at the end, after the copies and the explored
values of the training; its run folder keeps its schedule (pbt_schedule.json) and its lineage's replay
(pbt_replay.json), which the re-evaluation reruns on the fresh seeds."""


@dataclass
class TuneArgs:
    trials: int = 40
    """the study's number of trials; a rerun resumes up to it (a retried trial counts once)"""
    out: str = ""
    """the study folder (default: studies/{script name})"""
    space: str = ""
    """a JSON search space: {"field": {"type": "float"|"int", "low": L, "high": H, "log": bool} or {"type":
    "categorical", "choices": [...]}}; default: the algorithm's space (docs/tuning.md)"""
    sampler: Literal["tpe", "random"] = "tpe"
    """TPE, or random (trial n's values drawn from --seed and n: the same configurations in every study)"""
    pruner: Literal["hyperband", "median", "none"] = "hyperband"
    """Hyperband (reduction factor 3, resources in iterations), median, or none (--population: none)"""
    seed: int = 1
    """the sampler's seed; trial n runs the script with --seed seed + n"""
    workers: int = 1
    """trials at once on this machine"""
    python: str = ""
    """the interpreter that starts each trial's process, for a script that needs its own environment (CleanRL's
    venv/bin/python, with its gymnasium 0.29); a name alone is looked up on the PATH; the study, the pruner and the
    report stay in tune.py's (default: tune.py's own)"""
    storage: str = ""
    """an Optuna storage URL (sqlite:///..., postgresql://...); default: a journal file in the study folder"""
    eval_seeds: int = 5
    """the best configuration rerun on this many fresh seeds at the end (0: none)"""
    eval_top: int = 1
    """rerun the k best configurations on those seeds, not only the best: the report says whether they can be told
    apart (bootstrap intervals)"""
    slurm: int = 0
    """submit this many workers as a SLURM job array sharing the study folder, and a job that finishes the study"""
    sbatch_options: str = ""
    """with --slurm: words for sbatch (quoted as one argument), e.g. "--time 02:00:00 --partition cpu" """
    mlflow: str = ""
    """an MLflow tracking URI: the study logged as a parent run, each trial a nested run (pip install -r
    requirements-mlflow.txt)"""
    trials_only: bool = False
    """run trials only: leave the re-evaluation, trials.csv and the report to a later run (SLURM workers)"""
    worker_index: int = 0
    """this worker's index among several processes (set by --slurm): the TPE sampler's seed is --seed + index"""
    population: int = 0
    """train N trials at a time as the agents of one process (a SCRIPT with --hparams); no pruning: they run to their
    end (--pruner is not used)"""
    seeds_per_trial: int = 1
    """K: each trial trains its configuration on K seeds (K runs side by side; with --population, K agents of its
    process) and its objective is their aggregate; trials.csv keeps each seed's value"""
    pbt: int = 0
    """train N trials at a time as the agents of one population-based-training process (ppo_linen_pbt.py): each
    starts from its trial's values; the re-evaluation reruns the best one's lineage (its pbt_replay.json)"""
    aggregate: Literal["auto", "mean", "iqm"] = "auto"
    """the K seeds' aggregate: mean, or the interquartile mean (IQM, rliable's); auto: IQM from K = 4, the mean
    below"""
    minutes: float = 0
    """a wall-time budget: no trial (or population) starts once the study has run this many minutes (its trials'
    union of intervals, a resumed study's earlier ones too); the running ones end as they would; 0: none"""


def fail(message: str, status: int = 2):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(status)


def split_argv(argv: list) -> tuple[list, str | None, list]:
    """tune.py's options, SCRIPT (the first argument ending in .py) and the script's flags."""
    for index, word in enumerate(argv):
        if word.endswith(".py") and not word.startswith("-"):
            return argv[:index], word, argv[index + 1:]
    return argv, None, []


def parse(argv: list) -> tuple[TuneArgs, str, list]:
    words, script, script_flags = split_argv(argv)
    if "-h" in words or "--help" in words:
        tyro.cli(TuneArgs, args=words, prog="tune.py", description=DESCRIPTION)
    if script is None:
        raise Refused(f"no SCRIPT: {USAGE}")
    try:
        options = tyro.cli(TuneArgs, args=words, prog="tune.py", console_outputs=False)
    except SystemExit:
        raise Refused(f"bad option in '{shlex.join(words)}': see python tune.py --help") from None
    return options, script, script_flags


def check_options(options: TuneArgs):
    if options.trials < 1 or options.workers < 1 or min(options.eval_seeds, options.slurm, options.population) < 0:
        raise Refused("--trials and --workers want at least 1, --eval-seeds, --slurm and --population at least 0")
    if options.seeds_per_trial < 1 or options.eval_top < 1:
        raise Refused("--seeds-per-trial and --eval-top want at least 1")
    if not options.minutes >= 0 or math.isinf(options.minutes):
        raise Refused(f"--minutes wants a finite number of minutes, at least 0 (0: no budget), got {options.minutes}")
    if options.pbt and (options.pbt < 2 or options.population or options.seeds_per_trial > 1):
        raise Refused("--pbt N wants N >= 2 agents a population, each one trial: no --population, no --seeds-per-trial")
    if options.slurm and options.workers != 1:
        raise Refused("--slurm runs one trial per array task: drop --workers")
    if options.mlflow and importlib.util.find_spec("mlflow") is None:
        raise Refused("--mlflow needs MLflow: pip install -r requirements-mlflow.txt")


def interpreter(path: str) -> str:
    """--python's interpreter as an absolute path (a trial may run in its own folder), not resolved (a venv's link to
    its base interpreter is what makes it the venv's); "" for tune.py's own."""
    if not path:
        return ""
    found = path if os.sep in path else shutil.which(path)
    if found is None:
        raise Refused(f"--python {path}: not found on the PATH")
    if os.path.isdir(found):
        raise Refused(f"--python {path} is a folder: give its interpreter, e.g. {os.path.join(path, 'bin', 'python')}")
    if not os.path.isfile(found):
        raise Refused(f"--python {path}: no such file")
    if not os.access(found, os.X_OK):
        raise Refused(f"--python {path}: not executable")
    return os.path.abspath(found)


def check_script(script: str, script_flags: list, population: int, space_path: str, pbt: bool = False
                 ) -> tuple[str, dict, bool]:
    """SCRIPT is ours (a ppo_*.py, ppo_continuous_*.py or dqn_*.py file: its algorithm the registry's rule, which names
    the default space) or one written as CleanRL's are (tyro's Args or argparse flags, --seed; its default space by
    its name, else --space); each of its flags is a field that tune.py does not set. Returns the algorithm, the
    fields and whether the script is ours."""
    name = os.path.basename(script)
    if not name.endswith(".py") or not os.path.isfile(script):
        raise Refused(f"unknown script {script}: want a ppo_*.py, ppo_continuous_*.py or dqn_*.py file, or a "
                      "CleanRL-style script")
    try:
        fields = script_fields(script)
    except Refused:
        raise Refused(f"unknown script {script}: want a ppo_*.py, ppo_continuous_*.py or dqn_*.py file, or a "
                      "CleanRL-style script (tyro's Args or argparse flags)") from None
    ours = is_benchmark_script(fields)
    algorithm = variants.algorithm_of(name.removesuffix(".py")) if ours else guess_algorithm(name)
    if ours and algorithm is None:
        raise Refused(f"unknown script {script}: want a ppo_*.py, ppo_continuous_*.py or dqn_*.py file")
    if not ours and "seed" not in fields:
        raise Refused(f"unknown script {script}: want a ppo_*.py, ppo_continuous_*.py or dqn_*.py file, or a "
                      "CleanRL-style script with a --seed flag")
    if algorithm is None and not space_path:
        raise Refused(f"{name}'s name names no algorithm (ppo..., dqn...) and so no default space: give --space")
    for word in script_flags:
        if not word.startswith("--"):
            continue
        field = word[2:].split("=", 1)[0].replace("-", "_")
        field = field[3:] if field.startswith("no_") and field[3:] in fields else field
        if field not in fields:
            raise Refused(f"{name} has no flag {word.split('=', 1)[0]}")
        if field in SET_BY_TUNE:
            raise Refused(f"{word.split('=', 1)[0]}: tune.py sets each trial's own (the study's --seed, --out)")
        if population and field in SET_BY_POPULATION:
            raise Refused(f"{word.split('=', 1)[0]}: --population sets each population's own")
    if population and not agent_fields(script):
        raise Refused(f"--population needs a script that trains agents with their own values in one process "
                      f"(--hparams: ppo_linen_scan.py, dqn_linen_vmap.py); {name} has none")
    if pbt and "pbt_interval" not in fields:
        raise Refused(f"--pbt needs a script that trains its population with PBT (--pbt-interval: ppo_linen_pbt.py); "
                      f"{name} does not")
    return algorithm or "custom", fields, ours


def pbt_space(space: dict, agents: set, space_path: str) -> dict:
    """A --pbt study's space: the default's per-agent fields; a --space FILE with another field is refused."""
    if not space_path:
        return {name: entry for name, entry in space.items() if name in agents}
    if others := sorted(set(space) - agents):
        raise Refused(f"--pbt: the agents of a population share {', '.join(others)}; search only their own values "
                      f"({', '.join(sorted(agents))})")
    return space


def aggregate_of(options: TuneArgs) -> str:
    """The seeds' aggregate: as asked, or (auto) IQM from 4 seeds per trial on, the mean below."""
    if options.aggregate != "auto":
        return options.aggregate
    return "iqm" if options.seeds_per_trial >= 4 else "mean"


def run_study(options: TuneArgs, settings, study_dir: str) -> int:
    """The trials of this process, then (unless --trials-only) the re-evaluation, trials.csv, the report and MLflow;
    the exit status."""
    import optuna

    from search import evaluation, records, study as study_folder
    from search.storage import create

    optuna.logging.set_verbosity(optuna.logging.WARNING)  # tune.py prints a line per trial
    study = create(study_dir, settings, settings.seed + options.worker_index)
    if settings.population:
        from search.population import PopulationSearch

        search = PopulationSearch(study_dir, settings, study, options.trials, agent_fields(settings.script))
    else:
        search = study_folder.Search(study_dir, settings, study, options.trials)
    if options.minutes:
        from report.study import wall_seconds

        search.deadline = time.time() + options.minutes * 60 - wall_seconds(study_folder.finished(study))
    stopped = []

    def on_signal(signum, frame):
        stopped.append(signum)
        print(f"{signal.Signals(signum).name}: ending the running trials; rerun the same command to resume",
              file=sys.stderr, flush=True)
        search.stop()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    search.run(options.workers)
    records.write_trials_csv(study, study_dir, settings.space, settings.seeds_per_trial)
    if search.refused:
        raise Refused(f"the script refused {study_folder.REFUSALS} trials in a row alike, so the study stopped "
                      f"(fix the command; trials.csv keeps them): {search.refused}")
    if stopped:
        return 128 + stopped[0]
    if options.trials_only:
        return 0
    if study.get_trials(deepcopy=False, states=(study_folder.TrialState.RUNNING, study_folder.TrialState.WAITING)):
        print("trials still run in other workers: the last one to end re-evaluates and writes the report")
        return 0
    if options.eval_seeds:
        evaluation.evaluate(search, options.eval_seeds, options.workers, options.eval_top)
    if stopped:
        return 128 + stopped[0]
    finish(study_dir, settings.storage, options.mlflow)
    return 0


def finish(study_dir: str, storage: str, mlflow_uri: str):
    from report.study import write_report
    from search.storage import dashboard_command

    print(f"report: {write_report(study_dir)}")
    missing = "" if importlib.util.find_spec("optuna_dashboard") else " (pip install -r requirements-dashboard.txt)"
    print(f"dashboard: {dashboard_command(study_dir, storage)}{missing}")
    if mlflow_uri:
        from search.tracking import log_study

        print(f"MLflow: the study is run {log_study(study_dir, mlflow_uri)} at {mlflow_uri}")


def main(argv: list) -> int:
    from search.storage import Settings, open_storage, save_settings

    options, script, script_flags = parse(argv)
    check_options(options)
    python = interpreter(options.python)
    population = options.population or options.pbt
    algorithm, fields, ours = check_script(script, script_flags, population, options.space, bool(options.pbt))
    space = load_space(options.space, algorithm)
    if options.pbt:  # every agent of a PBT population shares the other fields: only its own values are searched
        space = pbt_space(space, agent_fields(script), options.space)
    fixed = {word[2:].split("=", 1)[0].replace("-", "_") for word in script_flags if word.startswith("--")}
    check_space(space, fields, script, fixed)
    study_dir = options.out or os.path.join("studies", os.path.basename(script)[: -len(".py")])
    settings = Settings(script=os.path.normpath(script), script_flags=script_flags, algorithm=algorithm, space=space,
                        sampler=options.sampler, pruner="none" if population else options.pruner,
                        seed=options.seed, storage=options.storage,
                        study_name=os.path.basename(os.path.abspath(study_dir)), trials=options.trials,
                        eval_seeds=options.eval_seeds, workers=options.workers, population=population,
                        seeds_per_trial=options.seeds_per_trial, aggregate=aggregate_of(options),
                        contract="benchmark" if ours else "cleanrl", pbt=bool(options.pbt), python=python)
    if options.storage:
        open_storage(study_dir, options.storage)  # before anything is written: an unreachable one is refused
    save_settings(study_dir, settings)
    if options.slurm:
        from search.slurm import submit

        submit(options, argv, study_dir)
        return 0
    return run_study(options, settings, study_dir)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Refused as refused:
        fail(str(refused))
