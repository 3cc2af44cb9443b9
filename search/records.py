"""trials.csv: one row per trial, as a spreadsheet reads a study."""
import csv
import os

import optuna


def write_trials_csv(study: optuna.Study, study_dir: str, space: dict, seeds_per_trial: int = 1) -> str:
    """number, state, one column per parameter, value (several seeds per trial: their aggregate, then each seed's
    value_seedK), start, end, duration (s), reason."""
    seed_columns = [f"value_seed{k}" for k in range(seeds_per_trial if seeds_per_trial > 1 else 0)]
    path = os.path.join(study_dir, "trials.csv")
    with open(path + ".tmp", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["number", "state", *space, "value", *seed_columns, "start", "end", "duration_s", "reason"])
        for trial in study.get_trials(deepcopy=False):
            writer.writerow([
                trial.number, trial.state.name.lower(), *(trial.params.get(name, "") for name in space),
                "" if trial.value is None else trial.value,
                *(trial.user_attrs.get("seed_values", []) + [""] * len(seed_columns))[:len(seed_columns)],
                trial.datetime_start.isoformat(timespec="seconds") if trial.datetime_start else "",
                trial.datetime_complete.isoformat(timespec="seconds") if trial.datetime_complete else "",
                f"{trial.duration.total_seconds():.1f}" if trial.duration else "",
                trial.user_attrs.get("reason", ""),
            ])
    os.replace(path + ".tmp", path)
    return path
