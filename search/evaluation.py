"""The best configuration rerun on --eval-seeds fresh seeds (evaluation.json): what its value is worth beyond the
seed it was found with. Resumable: the seeds already run for the same best trial are kept."""
import json
import os
from concurrent.futures import ThreadPoolExecutor


from search import trial as trial_process
from search.space import flags
from search.study import EVAL_SEED, Search

EVALUATION_FILE = "evaluation.json"


def read(study_dir: str) -> dict | None:
    try:
        with open(os.path.join(study_dir, EVALUATION_FILE)) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError):
        return None


def evaluate(search: Search, seeds: int, workers: int) -> dict | None:
    """Reruns the best trial's configuration on `seeds` fresh seeds, `workers` at a time; None without a best."""
    try:
        best = search.study.best_trial
    except ValueError:
        return None
    previous = read(search.study_dir) or {}
    same = previous.get("trial") == best.number and previous.get("params") == best.params
    done = {run["seed"]: run for run in previous.get("runs", [])} if same else {}
    wanted = [EVAL_SEED + search.settings.seed + k for k in range(seeds)]

    def run(seed: int) -> dict:
        if seed in done and done[seed]["value"] is not None:
            return done[seed]
        run_name = f"eval_{seed}"
        argv = trial_process.command(search.settings.script, search.settings.script_flags, flags(best.params), seed,
                                     search.runs_dir, run_name)
        log_path = os.path.join(search.logs_dir, f"{run_name}.log")
        ended = trial_process.run(argv, log_path, lambda iteration, value: False,
                                  lambda process: search.running.__setitem__(("eval", seed), process),
                                  search.environment)
        search.running.pop(("eval", seed), None)
        if ended.status != 0:
            return {"seed": seed, "value": None, "reason": trial_process.failure_reason(ended, log_path)}
        value, reason = trial_process.objective(os.path.join(search.runs_dir, run_name))
        return {"seed": seed, "value": value, "reason": reason}

    print(f"re-evaluating trial {best.number}'s configuration on {seeds} fresh seeds", flush=True)
    with ThreadPoolExecutor(max(1, min(workers, seeds))) as pool:
        runs = list(pool.map(run, wanted))
    evaluation = {"trial": best.number, "value": best.value, "params": best.params, "runs": runs}
    path = os.path.join(search.study_dir, EVALUATION_FILE)
    with open(path + ".tmp", "w") as f:
        json.dump(evaluation, f, indent=1)
    os.replace(path + ".tmp", path)
    return evaluation


def values(evaluation: dict | None) -> list:
    return [run["value"] for run in (evaluation or {}).get("runs", []) if run["value"] is not None]
