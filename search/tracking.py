"""tune.py --mlflow URI: the study logged to an MLflow tracking server or store. One parent run for the study (its
settings, best configuration, counts, re-evaluation, report and charts) and one nested run per trial (its parameters,
its return per iteration, its objective). Logging the same study folder again replaces its runs.

MLflow is optional (requirements-mlflow.txt): it is imported only here, when --mlflow is given."""
import contextlib
import glob
import hashlib
import os
import socket
import statistics
import time
from urllib.parse import urlparse

from optuna.trial import TrialState

from search import Refused, evaluation, storage

REACH_SECONDS = 5  # the quick check that an http(s) server listens, before MLflow's own retries
HTTP_LIMITS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_TIMEOUT": "20"}  # unless set already
RUN_STATUS = {TrialState.FAIL: "FAILED", TrialState.PRUNED: "KILLED"}  # the others end FINISHED
COUNTED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)
METRICS_PER_BATCH = 1000  # MLflow's log_batch limit


def log_study(study_dir: str, uri: str) -> str:
    """Logs the study in study_dir to the MLflow tracking URI uri, replacing the runs of an earlier log of the same
    folder; returns the parent run's id. Refused when MLflow is missing or the URI does not answer. The client is
    this call's own (no active run is left behind); MLflow's HTTP limits are set in os.environ during the call. A local
    store (sqlite:///FILE) keeps the artifacts where MLflow does: under ./mlruns of the working directory."""
    try:
        import mlflow
    except ImportError:
        raise Refused("--mlflow needs MLflow: pip install -r requirements-mlflow.txt") from None
    settings, study = storage.load(study_dir)
    check_reachable(uri)
    try:
        with http_limits():
            return log_runs(mlflow.tracking.MlflowClient(tracking_uri=uri), os.path.abspath(study_dir), settings,
                            study)
    except Exception as error:  # each store has its own errors (MLflow's, SQLAlchemy's, a missing driver...)
        lines = str(error).strip().splitlines() or [type(error).__name__]
        raise Refused(f"--mlflow {uri}: {lines[0]}") from None


def check_reachable(uri: str):
    """An http(s) URI whose host does not accept a connection within REACH_SECONDS is refused at once."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("http", "https"):
        return
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        socket.create_connection((parsed.hostname, port), timeout=REACH_SECONDS).close()
    except OSError as error:
        raise Refused(f"--mlflow {uri}: cannot reach it: {error.strerror or error}") from None


@contextlib.contextmanager
def http_limits():
    """MLflow's HTTP retries and timeout cut to HTTP_LIMITS for the call (a user's own settings stand)."""
    added = [name for name in HTTP_LIMITS if name not in os.environ]
    os.environ.update({name: HTTP_LIMITS[name] for name in added})
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def log_runs(client, folder: str, settings: storage.Settings, study) -> str:
    """The parent run and its nested runs, after deleting those of an earlier log of the same folder."""
    experiment = client.get_experiment_by_name(settings.study_name)
    experiment_id = experiment.experiment_id if experiment else client.create_experiment(settings.study_name)
    key = hashlib.sha1(folder.encode()).hexdigest()  # a tag that a search filter can quote whatever the path
    delete_earlier(client, experiment_id, key)
    tags = {"script": settings.script, "sampler": settings.sampler, "pruner": settings.pruner,
            "seed": str(settings.seed), "study_dir": folder, "study_key": key}
    parent = client.create_run(experiment_id, run_name=settings.study_name, tags=tags).info.run_id
    trials = study.get_trials(deepcopy=False)
    for trial in trials:
        log_trial(client, experiment_id, parent, trial)
    best = [t for t in trials if t.state == TrialState.COMPLETE]
    best_trial = max(best, key=lambda t: t.value) if best else None
    log_batch(client, parent, parent_metrics(trials, best_trial, folder), best_trial.params if best_trial else {})
    log_artifacts(client, parent, folder)
    client.set_terminated(parent, "FINISHED")
    return parent


def delete_earlier(client, experiment_id: str, key: str):
    """Deletes the parent runs tagged with the folder's key and their nested runs."""
    for parent in search_all(client, experiment_id, f"tags.study_key = '{key}'"):
        for nested in search_all(client, experiment_id, f"tags.mlflow.parentRunId = '{parent.info.run_id}'"):
            client.delete_run(nested.info.run_id)
        client.delete_run(parent.info.run_id)


def search_all(client, experiment_id: str, filter_string: str) -> list:
    """Every active run of the experiment that matches filter_string, page after page."""
    runs = client.search_runs([experiment_id], filter_string)
    found = list(runs)
    while runs.token:
        runs = client.search_runs([experiment_id], filter_string, page_token=runs.token)
        found += runs
    return found


def log_trial(client, experiment_id: str, parent: str, trial):
    """One nested run: the trial's parameters, its return per iteration, its objective, its state and reason."""
    tags = {"mlflow.parentRunId": parent, "state": state_name(trial.state), "number": str(trial.number),
            "reason": trial.user_attrs.get("reason", ""), "retried": str(bool(trial.system_attrs.get("retried")))}
    run = client.create_run(experiment_id, start_time=milliseconds(trial.datetime_start), tags=tags,
                            run_name=f"trial_{trial.number:04d}").info.run_id
    metrics = [("episodic_return", value, step) for step, value in sorted(trial.intermediate_values.items())]
    if trial.state == TrialState.COMPLETE:
        metrics.append(("objective", trial.value, 0))
    log_batch(client, run, metrics, trial.params)
    client.set_terminated(run, RUN_STATUS.get(trial.state, "FINISHED"), milliseconds(trial.datetime_complete))


def state_name(state: TrialState) -> str:
    return "failed" if state == TrialState.FAIL else state.name.lower()


def parent_metrics(trials: list, best_trial, folder: str) -> list:
    """(key, value, step): the best value, the trials per state and the re-evaluation's mean and sd."""
    metrics = [(f"trials_{state_name(state)}", sum(t.state == state for t in trials), 0) for state in COUNTED]
    metrics += [("best_value", best_trial.value, 0)] if best_trial else []
    values = evaluation.values(evaluation.read(folder))
    metrics += [("eval_mean", statistics.mean(values), 0)] if values else []
    metrics += [("eval_sd", statistics.stdev(values), 0)] if len(values) > 1 else []
    return metrics


def log_batch(client, run_id: str, metrics: list, params: dict):
    """Logs params and (key, value, step) metrics in batches within MLflow's limits."""
    from mlflow.entities import Metric, Param

    now = milliseconds(None)
    entities = [Metric(key, float(value), now, step) for key, value, step in metrics]
    settings = [Param(name, str(value)) for name, value in params.items()]
    for start in range(0, max(len(entities), 1), METRICS_PER_BATCH):
        client.log_batch(run_id, metrics=entities[start:start + METRICS_PER_BATCH], params=[] if start else settings)


def log_artifacts(client, run_id: str, folder: str):
    """REPORT.md, trials.csv and the charts (charts/*.png), those that exist."""
    for name in ("REPORT.md", "trials.csv"):
        if os.path.isfile(os.path.join(folder, name)):
            client.log_artifact(run_id, os.path.join(folder, name))
    for chart in sorted(glob.glob(os.path.join(folder, "charts", "*.png"))):
        client.log_artifact(run_id, chart, artifact_path="charts")


def milliseconds(moment) -> int:
    """A datetime (now for None) as MLflow's milliseconds since the epoch."""
    return int((moment.timestamp() if moment else time.time()) * 1000)
