"""tune.py --mlflow (search/tracking.py): a synthetic study folder (no script run) logged to a local SQLite tracking
store and to an `mlflow server`; skipped where MLflow (requirements-mlflow.txt) is not installed."""
import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

mlflow = pytest.importorskip("mlflow", reason="MLflow, tune.py --mlflow's optional extra, is not installed: "
                                               "pip install -r requirements-mlflow.txt")
pytest.importorskip("optuna")  # tune.py's; search/storage.py imports it

from optuna.distributions import FloatDistribution
from optuna.trial import TrialState, create_trial

from search import Refused
from search.storage import Settings, create, save_settings
from search.tracking import log_study

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
                       "AAAABJRU5ErkJggg==")  # 1x1 pixel
DISTRIBUTIONS = {"learning_rate": FloatDistribution(1e-4, 1e-2, log=True), "gamma": FloatDistribution(0.9, 0.999)}
# number: (state, value, params, intermediate values, reason, retried)
TRIALS = {
    0: (TrialState.COMPLETE, 150.0, {"learning_rate": 1e-3, "gamma": 0.99}, {1: 20.0, 2: 150.0}, "", False),
    1: (TrialState.PRUNED, None, {"learning_rate": 5e-3, "gamma": 0.95}, {1: 9.0, 2: 11.0}, "pruned after iteration 2",
        False),
    2: (TrialState.FAIL, None, {"learning_rate": 2e-4, "gamma": 0.92}, {1: 30.0}, "lost: its worker is gone; retried",
        True),
}
STATE_TAGS = {TrialState.COMPLETE: "complete", TrialState.PRUNED: "pruned", TrialState.FAIL: "failed"}
EVAL_VALUES = [140.0, 160.0]


@pytest.fixture
def study_dir(tmp_path):
    """A study folder as tune.py leaves it: study.json, the journal with three trials (complete, pruned, failed and
    retried), evaluation.json, REPORT.md and a chart; no trials.csv."""
    folder = str(tmp_path / "study")
    settings = Settings(script="dqn_linen.py", script_flags=[], algorithm="dqn", seed=1, study_name="synthetic",
                        space={"learning_rate": {"type": "float", "low": 1e-4, "high": 1e-2, "log": True},
                               "gamma": {"type": "float", "low": 0.9, "high": 0.999}},
                        sampler="random", pruner="none")
    save_settings(folder, settings)
    study = create(folder, settings, 1)
    for state, value, params, intermediate, reason, retried in TRIALS.values():
        study.add_trial(create_trial(state=state, value=value, params=params, distributions=DISTRIBUTIONS,
                                     intermediate_values=intermediate, user_attrs={"reason": reason},
                                     system_attrs={"retried": True} if retried else {}))
    with open(os.path.join(folder, "evaluation.json"), "w") as f:
        json.dump({"trial": 0, "value": 150.0, "params": TRIALS[0][2],
                   "runs": [{"seed": 100_001 + k, "value": v, "reason": ""} for k, v in enumerate(EVAL_VALUES)]}, f)
    with open(os.path.join(folder, "REPORT.md"), "w") as f:
        f.write("# synthetic\n")
    os.makedirs(os.path.join(folder, "charts"))
    with open(os.path.join(folder, "charts", "returns.png"), "wb") as f:
        f.write(PNG)
    return folder


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def active_runs(client, experiment_name: str) -> tuple[list, list]:
    """The experiment's active parent runs and nested runs."""
    experiment = client.get_experiment_by_name(experiment_name)
    runs = client.search_runs([experiment.experiment_id])
    parents = [run for run in runs if "mlflow.parentRunId" not in run.data.tags]
    return parents, [run for run in runs if "mlflow.parentRunId" in run.data.tags]


def check_logged(client, study_dir: str, parent_id: str):
    """One parent (the study's tags, best params, counts, re-evaluation, report and chart) and one nested run per
    trial (its params, return per iteration, objective and tags)."""
    parents, nested = active_runs(client, "synthetic")
    assert [run.info.run_id for run in parents] == [parent_id]
    parent = parents[0]
    assert parent.data.tags["study_dir"] == os.path.abspath(study_dir)
    assert {key: parent.data.tags[key] for key in ("script", "sampler", "pruner", "seed")} == {
        "script": "dqn_linen.py", "sampler": "random", "pruner": "none", "seed": "1"}
    assert parent.data.params == {name: str(value) for name, value in TRIALS[0][2].items()}
    assert parent.data.metrics == pytest.approx({
        "best_value": 150.0, "trials_complete": 1, "trials_pruned": 1, "trials_failed": 1, "eval_mean": 150.0,
        "eval_sd": 14.142135623730951})
    assert sorted(a.path for a in client.list_artifacts(parent_id)) == ["REPORT.md", "charts"]
    assert [a.path for a in client.list_artifacts(parent_id, "charts")] == ["charts/returns.png"]
    assert sorted(run.info.run_name for run in nested) == ["trial_0000", "trial_0001", "trial_0002"]
    for run in nested:
        state, value, params, intermediate, reason, retried = TRIALS[int(run.info.run_name[-4:])]
        assert run.data.tags["mlflow.parentRunId"] == parent_id
        assert run.data.params == {name: str(v) for name, v in params.items()}
        history = client.get_metric_history(run.info.run_id, "episodic_return")
        assert sorted((m.step, m.value) for m in history) == sorted(intermediate.items())
        assert run.data.metrics.get("objective") == value
        assert (run.data.tags["state"], run.data.tags["reason"], run.data.tags["retried"]) == (
            STATE_TAGS[state], reason, str(retried))


@pytest.mark.slow
def test_a_study_logged_twice_to_a_sqlite_store_leaves_one_parent_run_and_one_nested_run_per_trial(
        study_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a local store's artifacts go to ./mlruns
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    client = mlflow.tracking.MlflowClient(tracking_uri=uri)
    first = log_study(study_dir, uri)
    check_logged(client, study_dir, first)
    second = log_study(study_dir, uri)
    assert second != first
    check_logged(client, study_dir, second)
    assert client.get_run(first).info.lifecycle_stage == "deleted"


@pytest.fixture
def server(tmp_path):
    """An `mlflow server` on a free local port (SQLite backend, artifacts served from tmp_path); its URI."""
    port = free_port()
    log = open(tmp_path / "server.log", "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", f"sqlite:///{tmp_path}/server.db",
         "--artifacts-destination", str(tmp_path / "artifacts"), "--host", "127.0.0.1", "--port", str(port),
         "--workers", "1"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for_health(f"http://127.0.0.1:{port}", process, tmp_path / "server.log")
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)
        log.close()


def wait_for_health(uri: str, process: subprocess.Popen, log_path, deadline_s: float = 60):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        assert process.poll() is None, f"mlflow server ended:\n{log_path.read_text()[-3000:]}"
        try:
            with urllib.request.urlopen(f"{uri}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"mlflow server did not answer /health in {deadline_s} s:\n{log_path.read_text()[-3000:]}")


def stop(process: subprocess.Popen):
    """SIGTERM to the server's process group (it starts its workers as children), SIGKILL after 10 s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
            process.wait(10)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.mark.slow
def test_a_study_logged_twice_through_an_mlflow_server_leaves_one_parent_run_and_one_nested_run_per_trial(
        study_dir, server):
    client = mlflow.tracking.MlflowClient(tracking_uri=server)
    check_logged(client, study_dir, log_study(study_dir, server))
    check_logged(client, study_dir, log_study(study_dir, server))
    assert "MLFLOW_HTTP_REQUEST_MAX_RETRIES" not in os.environ  # the call's limits do not outlive it


def test_an_unreachable_tracking_server_is_refused_in_one_line_within_seconds(study_dir):
    uri = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    start = time.monotonic()
    with pytest.raises(Refused) as refused:
        log_study(study_dir, uri)
    assert time.monotonic() - start < 15
    assert str(refused.value).startswith(f"--mlflow {uri}: cannot reach it")
    assert "\n" not in str(refused.value)


def test_a_tracking_store_that_is_not_a_database_is_refused_in_one_line(study_dir, tmp_path):
    (tmp_path / "notes.db").write_text("not a database\n")
    with pytest.raises(Refused, match=r"^--mlflow sqlite:///\S+notes.db: [^\n]*not a database[^\n]*$"):
        log_study(study_dir, f"sqlite:///{tmp_path}/notes.db")


def test_without_mlflow_installed_the_log_is_refused_with_the_install_command(study_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, "mlflow", None)  # `import mlflow` raises ImportError
    with pytest.raises(Refused, match=r"^--mlflow needs MLflow: pip install -r requirements-mlflow.txt$"):
        log_study(study_dir, "sqlite:///unused.db")
