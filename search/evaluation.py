"""The best configurations rerun on --eval-seeds fresh seeds (evaluation.json): what their values are worth beyond
the seeds they were found with. The best's rerun first; with --eval-top k the next k - 1 by value too, on the same
fresh seeds, so that the report can say whether the top configurations can be told apart. Resumable: the seeds
already run for the same trial are kept. A PBT study's trial is the agent of a population whose values changed as it
trained: its rerun is the replay of its lineage (its run folder's pbt_replay.json) as one agent on each fresh seed."""
import json
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.stats

from search import trial as trial_process
from search.space import flags
from search.study import EVAL_SEED, Search, completed_by_value

EVALUATION_FILE = "evaluation.json"
CONFIDENCE, RESAMPLES = 0.95, 2000


def read(study_dir: str) -> dict | None:
    try:
        with open(os.path.join(study_dir, EVALUATION_FILE)) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError):
        return None


def previous_runs(previous: dict, trial) -> dict:
    """{seed: run} of the runs evaluation.json already holds for this trial and configuration."""
    entries = [previous, *previous.get("others", [])] if previous else []
    for entry in entries:
        if entry.get("trial") == trial.number and entry.get("params") == trial.params:
            return {run["seed"]: run for run in entry.get("runs", [])}
    return {}


def replay_flags(search: Search, trial) -> list:
    """The flags that rerun a PBT trial's lineage as one agent on the --seed given beside them: its pbt_replay.json
    without its seed, written once to OUT/populations/replay_trial_NNNN.json."""
    path = os.path.join(search.study_dir, "populations", f"replay_trial_{trial.number:04d}.json")
    with open(os.path.join(search.runs_dir, f"trial_{trial.number:04d}", "pbt_replay.json")) as f:
        replay = [{key: value for key, value in agent.items() if key != "seed"} for agent in json.load(f)]
    with open(path, "w") as f:
        json.dump(replay, f)
    return ["--num-seeds", "1", "--hparams", path]


def evaluate(search: Search, seeds: int, workers: int, top: int = 1) -> dict | None:
    """Reruns the `top` best trials' configurations on `seeds` fresh seeds, `workers` runs at a time; None without a
    best."""
    ranked = completed_by_value(search.study)[:top]
    if not ranked:
        return None
    previous = read(search.study_dir) or {}
    wanted = [EVAL_SEED + search.settings.seed + k for k in range(seeds)]
    jobs = [(trial, seed) for trial in ranked for seed in wanted]
    done = {trial.number: previous_runs(previous, trial) for trial in ranked}

    def run(job: tuple) -> dict:
        trial, seed = job
        if seed in done[trial.number] and done[trial.number][seed]["value"] is not None:
            return done[trial.number][seed]
        run_name = f"eval_{seed}" if trial is ranked[0] else f"eval_trial{trial.number}_{seed}"
        configuration = replay_flags(search, trial) if search.settings.pbt else flags(trial.params)
        argv, cwd = search.command(configuration, seed, search.runs_dir, run_name)
        log_path = os.path.join(search.logs_dir, f"{run_name}.log")
        ended = trial_process.run(argv, log_path, lambda iteration, value: False,
                                  lambda process: search.running.__setitem__(("eval", run_name), process),
                                  search.environment, cwd)
        search.running.pop(("eval", run_name), None)
        if ended.status != 0:
            return {"seed": seed, "value": None, "reason": trial_process.failure_reason(ended, log_path)}
        value, reason = trial_process.objective(trial_process.event_folder(os.path.join(search.runs_dir, run_name)))
        return {"seed": seed, "value": value, "reason": reason}

    named = "trial " + ", ".join(str(trial.number) for trial in ranked)
    print(f"re-evaluating {named}'s configuration{'s' * (len(ranked) > 1)} on {seeds} fresh seeds", flush=True)
    with ThreadPoolExecutor(max(1, min(workers, len(jobs)))) as pool:
        runs = list(pool.map(run, jobs))
    entries = [{"trial": trial.number, "value": trial.value, "params": trial.params,
                "runs": runs[k * seeds:(k + 1) * seeds]} for k, trial in enumerate(ranked)]
    evaluation = {**entries[0], **({"others": entries[1:]} if len(entries) > 1 else {})}
    path = os.path.join(search.study_dir, EVALUATION_FILE)
    with open(path + ".tmp", "w") as f:
        json.dump(evaluation, f, indent=1)
    os.replace(path + ".tmp", path)
    return evaluation


def values(evaluation: dict | None) -> list:
    return [run["value"] for run in (evaluation or {}).get("runs", []) if run["value"] is not None]


def interval(found: list) -> tuple:
    """The bootstrap's 95 % interval of the mean of the values (percentile method, seeded: the same report every
    time); (NaN, NaN) below two values."""
    if len(found) < 2 or len(set(found)) < 2:
        return (float(np.mean(found)),) * 2 if found else (float("nan"),) * 2
    result = scipy.stats.bootstrap((np.asarray(found),), np.mean, confidence_level=CONFIDENCE, n_resamples=RESAMPLES,
                                   method="percentile", random_state=np.random.default_rng(0))
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def difference_interval(best: dict, other: dict) -> tuple:
    """The bootstrap's 95 % interval of the best's mean minus the other's, paired by seed (the same fresh seeds:
    each seed's difference); the seeds where both have a value."""
    theirs = {run["seed"]: run["value"] for run in other.get("runs", []) if run["value"] is not None}
    pairs = [run["value"] - theirs[run["seed"]] for run in best.get("runs", [])
             if run["value"] is not None and run["seed"] in theirs]
    return interval(pairs)
