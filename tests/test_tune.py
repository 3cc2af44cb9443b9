"""tune.py: bad input, a study's records (trials.csv, HParams, re-evaluation), pruning, failures, faults (SIGKILL, SIGTERM,
two workers on one storage), tiny studies of each algorithm with the real scripts, and exp10's command set.

Most studies run tests/dqn_standin.py, which follows the scripts' contract (iteration lines, event file, exit 3 on a
NaN loss, SIGTERM) in a fraction of a second per trial; the real scripts run in the end-to-end studies."""
import ast
import contextlib
import csv
import datetime
import json
import math
import os
import shutil
import signal
import site
import subprocess
import sys
import time

import optuna
import pytest
from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader
from tensorboard.plugins.hparams import metadata

import tune
from report.load import read_event_file
from search import Refused
from search.space import DEFAULT_SPACES, load_space, spaces_table
from search import evaluation, study
from search.storage import Settings, create, load, read_settings, save_settings
from sweep import variants

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STANDIN = os.path.join(ROOT, "tests", "dqn_standin.py")
POPULATION_STANDIN = os.path.join(ROOT, "tests", "ppo_population_standin.py")
TUNE = [sys.executable, os.path.join(ROOT, "tune.py")]
SLOW_ITERATIONS = ["--iteration-seconds", "0.15"]  # 5 iterations of 0.15 s: long enough to be cut mid-trial


def tune_run(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*TUNE, *args], capture_output=True, text=True, timeout=300, **kwargs)


def trials_csv(study_dir) -> list:
    with open(os.path.join(study_dir, "trials.csv")) as f:
        return list(csv.DictReader(f))


# BAD INPUT: one error line, exit 2, no study folder written
@pytest.mark.parametrize("args, expected", [
    (["--trials", "3", "nothing.py"], "unknown script nothing.py"),
    (["--trials", "3", "README.md"], "no SCRIPT"),
    (["--trials", "3", "plot.py"], "unknown script plot.py: want a ppo_"),
    (["--trials", "0", "dqn_linen.py"], "--trials and --workers want at least 1"),
    (["--tirals", "3", "dqn_linen.py"], "bad option in '--out .* --tirals 3': see python tune.py --help"),
    (["dqn_linen.py", "--learning-rat", "0.1"], "dqn_linen.py has no flag --learning-rat"),
    (["dqn_linen.py", "--seed", "3"], "--seed: tune.py sets each trial's own"),
    (["dqn_linen.py", "--learning-rate", "0.1"], "--learning-rate is both a script flag and searched"),
    (["ppo_linen.py", "--space", "x"], "ppo_linen.py has no flag --space"),
    (["--population", "4", "ppo_linen.py"], "--population needs a script that trains agents with their own values"),
    (["--population", "4", "ppo_linen_scan.py", "--num-seeds", "2"], "--num-seeds: --population sets each"),
    (["--population", "-1", "ppo_linen_scan.py"], "--population at least 0"),
    (["--minutes", "-1", "dqn_linen.py"], "--minutes wants a finite number of minutes, at least 0"),
    (["--python", "/no/such/venv/bin/python", "dqn_linen.py"], "--python /no/such/venv/bin/python: no such file"),
    (["--python", "./README.md", "dqn_linen.py"], "--python ./README.md: not executable"),
    (["--python", "./tests", "dqn_linen.py"], "--python ./tests is a folder: give its interpreter, e.g. ./tests/bin/"),
    (["--python", "no-such-python3.0", "dqn_linen.py"], "--python no-such-python3.0: not found on the PATH"),
])
def test_bad_arguments_are_refused_in_one_line(args, expected, tmp_path):
    with pytest.raises(Refused, match=expected.replace("(", r"\(")):
        tune.main(["--out", str(tmp_path / "study"), *args])
    assert not (tmp_path / "study").exists()


@pytest.mark.parametrize("space, expected", [
    ("{not json", "not JSON"),
    ('["learning_rate"]', "want a JSON object"),
    ('{"learning_rate": {"type": "float", "low": 0.1}}', "learning_rate: want float numbers low and high"),
    ('{"learning_rate": {"type": "float", "low": 0.1, "high": 0.01}}', "low 0.1 is above high 0.01"),
    ('{"learning_rate": {"type": "float", "low": 0, "high": 1, "log": true}}', "a positive low"),
    ('{"batch_size": {"type": "categorical", "choices": []}}', "non-empty list"),
    ('{"batch_size": {"type": "int", "low": 1, "high": 4, "step": 2}}', "unknown key(s) step"),
    ('{"num_steps": {"type": "int", "low": 1, "high": 4}}', "names num_steps, which .*dqn_linen.py has no flag for"),
    ('{"seed": {"type": "int", "low": 1, "high": 4}}', "tune.py sets each trial's seed itself"),
])
def test_a_malformed_space_or_one_naming_a_flag_the_script_lacks_is_refused(space, expected, tmp_path):
    path = tmp_path / "space.json"
    path.write_text(space)
    with pytest.raises(Refused, match=expected.replace("(", r"\(").replace(")", r"\)")):
        tune.main(["--out", str(tmp_path / "study"), "--space", str(path), os.path.join(ROOT, "dqn_linen.py")])


def script_defaults(path: str) -> dict:
    """{field: default} of a script's Args, read with ast (literal defaults only)."""
    with open(path) as f:
        tree = ast.parse(f.read())
    args = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Args")
    defaults = {}
    for item in args.body:
        if isinstance(item, ast.AnnAssign) and item.value is not None:
            with contextlib.suppress(ValueError):
                defaults[item.target.id] = ast.literal_eval(item.value)
    return defaults


def within(value, entry: dict) -> bool:
    if entry["type"] == "categorical":
        return value in entry["choices"]
    return entry["low"] <= value <= entry["high"]


@pytest.mark.parametrize("script", variants.SCRIPTS)
def test_every_registry_script_gets_its_algorithms_default_space_which_holds_its_own_defaults(script):
    """The space comes from the registry's algorithm (not the file name's first word): every field it searches is one of
    the script's Args, and the script's default value of each lies in its range."""
    path = os.path.join(ROOT, f"{script}.py")
    algorithm, fields, ours = tune.check_script(path, [], 0, "")
    assert ours
    assert algorithm == variants.of_script(script)[0].algorithm
    space, defaults = load_space("", algorithm), script_defaults(path)
    assert set(space) <= set(fields)
    assert {name: defaults[name] for name, entry in space.items() if not within(defaults[name], entry)} == {}


def test_docs_tuning_gives_the_default_spaces_as_search_space_prints_them():
    with open(os.path.join(ROOT, "docs", "tuning.md")) as f:
        assert spaces_table() in f.read(), "docs/tuning.md's spaces are stale: python tools/derive.py --only spaces"


@pytest.mark.slow  # a fresh process for one error line: the fast subset probes the scripts' bad input only
def test_a_missing_space_file_and_an_unreachable_storage_get_one_error_line_and_exit_2(tmp_path):
    missing = tune_run("--space", str(tmp_path / "none.json"), "--out", str(tmp_path / "a"), "dqn_linen.py", cwd=ROOT)
    unreachable = tune_run("--storage", "sqlite:////proc/no/such/dir/study.db", "--out", str(tmp_path / "b"),
                           "dqn_linen.py", cwd=ROOT)
    for result, expected in ((missing, "none.json: No such file"), (unreachable, "study.db: cannot open it")):
        assert result.returncode == 2 and result.stdout == "" and not os.path.exists(tmp_path / "b")
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ") and expected in result.stderr


def test_a_folder_holding_another_study_is_refused_and_kept(tmp_path):
    study_dir = str(tmp_path / "study")
    save_settings(study_dir, Settings("dqn_linen.py", [], "dqn", {}, "tpe", "hyperband", 1))
    with pytest.raises(Refused, match="holds another study .its script, space differ"):
        tune.main(["--out", study_dir, os.path.join(ROOT, "dqn_torch.py")])
    assert read_settings(study_dir).script == "dqn_linen.py"


# A STUDY OF THE STAND-IN: 8 trials, 2 workers, Hyperband, a NaN failure, the best re-evaluated on 2 seeds
@pytest.fixture(scope="module")
def standin_study(tmp_path_factory):
    study_dir = str(tmp_path_factory.mktemp("tune") / "standin")
    result = tune_run("--trials", "8", "--workers", "2", "--sampler", "random", "--eval-seeds", "2", "--eval-top", "2",
                      "--out", study_dir, STANDIN, *SLOW_ITERATIONS, "--nan-above", "0.004")
    assert result.returncode == 0, result.stderr
    return study_dir, result


@pytest.mark.slow
def test_a_study_records_every_trial_in_trials_csv_with_its_state_values_and_reason(standin_study):
    study_dir, result = standin_study
    rows = trials_csv(study_dir)
    assert [row["number"] for row in rows] == [str(n) for n in range(8)]
    assert list(rows[0]) == ["number", "state", "learning_rate", "buffer_size", "batch_size", "train_frequency",
                             "target_network_frequency", "gamma", "exploration_fraction", "end_e", "value", "start",
                             "end", "duration_s", "reason"]
    states = {row["state"] for row in rows}
    assert {"complete", "pruned", "fail"} <= states, states
    for row in rows:
        assert (row["value"] == "") == (row["state"] == "fail") and float(row["duration_s"]) > 0  # pruned: its last
        if row["state"] == "fail":  # the stand-in diverges above a learning rate of 0.004: exit 3, its error line
            assert float(row["learning_rate"]) > 0.004
            assert row["reason"].startswith("exit 3: error: loss is NaN at iteration 1"), row["reason"]
    assert "trial 7" in result.stdout or "8/8 trials" in result.stdout


@pytest.mark.slow
def test_trials_side_by_side_share_the_cores_as_torch_s_intra_op_threads(standin_study):
    """--workers 2: each trial's OMP_NUM_THREADS is its share of the usable cores (torch's default of one thread per
    core, twice over, makes the two wait on each other); the re-evaluation's too."""
    study_dir, _ = standin_study
    expected = max(1, len(os.sched_getaffinity(0)) // 2) if len(os.sched_getaffinity(0)) > 1 else "unset"
    for name in os.listdir(os.path.join(study_dir, "logs")):
        assert f"OMP_NUM_THREADS={expected}\n" in open(os.path.join(study_dir, "logs", name)).read(), name


@pytest.mark.slow
def test_pruning_ends_the_trials_process_with_sigterm_keeping_its_event_file(standin_study):
    study_dir, _ = standin_study
    pruned = [row for row in trials_csv(study_dir) if row["state"] == "pruned"]
    assert pruned
    for row in pruned:
        log = open(os.path.join(study_dir, "logs", f"trial_{int(row['number']):04d}.log")).read()
        assert "interrupted by SIGTERM" in log and "iteration 5/5" not in log, log
        assert row["reason"].startswith("pruned after iteration ")
        assert os.listdir(os.path.join(study_dir, "runs", f"trial_{int(row['number']):04d}"))


@pytest.mark.slow
def test_the_objective_is_the_mean_return_of_the_last_tenth_of_the_steps_and_the_best_is_reevaluated(standin_study):
    study_dir, _ = standin_study
    _, study = load(study_dir)
    best = study.best_trial
    quality = max(0.0, 1 - abs(math.log10(best.params["learning_rate"]) + 3) / 2)
    seed = 1 + best.number  # the stand-in's last iteration returns 100 * quality + seed % 7
    assert best.value == pytest.approx(100 * quality + seed % 7, rel=1e-5)
    evaluation = json.load(open(os.path.join(study_dir, "evaluation.json")))
    assert evaluation["trial"] == best.number and evaluation["params"] == best.params
    assert [run["seed"] for run in evaluation["runs"]] == [100_001, 100_002]
    assert [run["value"] for run in evaluation["runs"]] == pytest.approx(
        [100 * quality + seed % 7 for seed in (100_001, 100_002)], rel=1e-5)
    assert os.path.isfile(os.path.join(study_dir, "REPORT.md"))


@pytest.mark.slow
def test_eval_top_reruns_the_next_best_on_the_same_fresh_seeds_and_the_report_says_if_they_are_apart(standin_study):
    study_dir, _ = standin_study
    _, study = load(study_dir)
    second = sorted((t for t in study.trials if t.value is not None), key=lambda t: -t.value)[1]
    other = json.load(open(os.path.join(study_dir, "evaluation.json")))["others"][0]
    quality = max(0.0, 1 - abs(math.log10(second.params["learning_rate"]) + 3) / 2)
    assert other["trial"] == second.number and [run["seed"] for run in other["runs"]] == [100_001, 100_002]
    assert [run["value"] for run in other["runs"]] == pytest.approx([100 * quality + s % 7 for s in (100_001, 100_002)],
                                                                    rel=1e-5)
    report = open(os.path.join(study_dir, "REPORT.md")).read()
    assert "### The top configurations, rerun" in report and f"| 2 | {second.number} |" in report


@pytest.mark.slow
def test_each_trial_run_carries_hparams_summaries_that_tensorboard_reads(standin_study):
    study_dir, _ = standin_study
    _, study = load(study_dir)
    complete = next(trial for trial in study.trials if trial.state == optuna.trial.TrialState.COMPLETE)
    run_dir = os.path.join(study_dir, "runs", f"trial_{complete.number:04d}")
    tags, start, objective = set(), None, None
    for name in os.listdir(run_dir):
        for event in LegacyEventFileLoader(os.path.join(run_dir, name)).Load():
            for value in event.summary.value:
                tags.add(value.tag)
                if value.tag == metadata.SESSION_START_INFO_TAG:
                    start = metadata.parse_session_start_info_plugin_data(value.metadata.plugin_data.content)
                if value.tag == "tune/objective":
                    objective = value.simple_value
    assert {metadata.SESSION_START_INFO_TAG, metadata.SESSION_END_INFO_TAG, "charts/episodic_return"} <= tags
    assert start.hparams["learning_rate"].number_value == pytest.approx(complete.params["learning_rate"])
    assert objective == pytest.approx(complete.value)
    root_tags = {value.tag for name in os.listdir(os.path.join(study_dir, "runs")) if name.startswith("events")
                 for event in LegacyEventFileLoader(os.path.join(study_dir, "runs", name)).Load()
                 for value in event.summary.value}
    assert metadata.EXPERIMENT_TAG in root_tags


# FAULTS
def start_study(study_dir, *args):
    return subprocess.Popen([*TUNE, "--trials", "3", "--sampler", "random", "--pruner", "none", "--eval-seeds", "0",
                             "--out", study_dir, *args, STANDIN, *SLOW_ITERATIONS], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for_trial(study_dir, deadline=30):
    """Until the study's first trial has printed an iteration."""
    log = os.path.join(study_dir, "logs", "trial_0000.log")
    end = time.time() + deadline
    while time.time() < end and not (os.path.exists(log) and "iteration 1/" in open(log).read()):
        time.sleep(0.05)


def standin_processes(study_dir) -> list:
    found = subprocess.run(["pgrep", "-f", f"--log-dir {study_dir}/runs"], capture_output=True, text=True)
    return found.stdout.split()


@pytest.mark.slow
def test_a_worker_killed_mid_trial_leaves_no_process_and_its_trial_is_failed_and_retried_at_the_next_start(tmp_path):
    study_dir = str(tmp_path / "killed")
    worker = start_study(study_dir)
    wait_for_trial(study_dir)
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    time.sleep(0.5)
    assert standin_processes(study_dir) == []  # the trial's process died with its worker
    resumed = tune_run("--trials", "3", "--sampler", "random", "--pruner", "none", "--eval-seeds", "0", "--out",
                       study_dir, STANDIN, *SLOW_ITERATIONS)
    assert resumed.returncode == 0, resumed.stderr
    assert "trial(s) 0 lost their worker: failed, and retried" in resumed.stdout
    rows = trials_csv(study_dir)
    assert [row["state"] for row in rows] == ["fail", "complete", "complete", "complete"]
    assert rows[0]["reason"].startswith("lost: its worker (pid ") and rows[1]["learning_rate"] == rows[0]["learning_rate"]


def test_a_study_whose_script_refuses_its_fixed_flags_stops_after_three_trials_with_one_error_line(tmp_path):
    """exp10 once ran 40 trials that the script all refused at once (a --total-timesteps no multiple of its
    --iteration-steps): the same refusal three times in a row is a flag every trial shares, and ends the study."""
    study_dir = str(tmp_path / "refused")
    result = tune_run("--trials", "10", "--sampler", "random", "--pruner", "none", "--eval-seeds", "0",
                      "--out", study_dir, STANDIN, "--total-timesteps", "5500")
    refusal = "exit 2: error: --total-timesteps 5500 must be a multiple of --iteration-steps 1000"
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "error: the script refused 3 trials in a row alike, so the study stopped (fix the command; trials.csv keeps "
        f"them): {refusal}")
    assert [(row["state"], row["reason"]) for row in trials_csv(study_dir)] == [("fail", refusal)] * 3


@pytest.mark.slow
def test_sigterm_to_tune_ends_its_trials_and_a_rerun_resumes_the_study(tmp_path):
    study_dir = str(tmp_path / "stopped")
    worker = start_study(study_dir, "--workers", "2")
    wait_for_trial(study_dir)
    worker.send_signal(signal.SIGTERM)
    _, stderr = worker.communicate(timeout=30)
    assert worker.returncode == 128 + signal.SIGTERM and "SIGTERM: ending the running trials" in stderr
    assert standin_processes(study_dir) == []
    stopped = trials_csv(study_dir)
    assert {row["reason"] for row in stopped if row["state"] == "fail"} == {
        "stopped: tune.py was interrupted; retried at the next start"}
    resumed = tune_run("--trials", "3", "--workers", "2", "--sampler", "random", "--pruner", "none", "--eval-seeds",
                       "0", "--out", study_dir, STANDIN, *SLOW_ITERATIONS)
    assert resumed.returncode == 0, resumed.stderr
    rows = trials_csv(study_dir)
    assert sum(row["state"] == "complete" for row in rows) == 3
    retried = {row["learning_rate"] for row in stopped if row["state"] == "fail"}
    assert retried <= {row["learning_rate"] for row in rows if row["state"] == "complete"}


@pytest.mark.slow
def test_two_workers_on_one_storage_share_the_study_and_never_run_one_trial_twice(tmp_path):
    study_dir = str(tmp_path / "shared")
    args = ["--trials", "6", "--sampler", "random", "--pruner", "none", "--eval-seeds", "0", "--out", study_dir,
            "--storage", f"sqlite:///{tmp_path}/study.db", STANDIN, *SLOW_ITERATIONS]
    workers = [subprocess.Popen([*TUNE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(2)]
    outputs = [worker.communicate(timeout=120) for worker in workers]
    assert [worker.returncode for worker in workers] == [0, 0], outputs
    _, study = load(study_dir)
    assert [trial.state for trial in study.trials] == [optuna.trial.TrialState.COMPLETE] * 6
    pids = [trial.system_attrs["worker"]["pid"] for trial in study.trials]
    assert set(pids) == {worker.pid for worker in workers}
    ran = [line.split()[1] for out, _ in outputs for line in out.splitlines() if line.startswith("trial ")]
    assert sorted(ran, key=int) == [str(n) for n in range(6)]  # each trial reported by one worker, once


@pytest.mark.slow  # a study of fresh processes: the full suite runs it
def test_a_budget_of_minutes_starts_no_trial_after_it_and_a_resumed_study_counts_its_earlier_time(tmp_path):
    study_dir = str(tmp_path / "budget")
    budget = ["--minutes", "0.05", "--trials", "100", "--sampler", "random", "--pruner", "none", "--eval-seeds", "0",
              "--out", study_dir, STANDIN, "--iteration-seconds", "0.1"]  # 3 s; trials of 5 x 0.1 s and a start-up
    assert tune_run(*budget).returncode == 0
    rows = trials_csv(study_dir)
    starts = [datetime.datetime.fromisoformat(row["start"]) for row in rows]
    assert 1 <= len(rows) < 100 and all(row["state"] == "complete" for row in rows)
    assert max(starts) - min(starts) <= datetime.timedelta(seconds=3)  # none started after the budget
    again = tune_run(*budget)  # the same budget: spent by the first run
    assert again.returncode == 0 and len(trials_csv(study_dir)) == len(rows)


# POPULATIONS: --population N trains N trials as the agents of one process
@pytest.fixture(scope="module")
def population_study(tmp_path_factory):
    """10 trials, populations of 4, the default PPO space (num_minibatches and update_epochs group them); an agent
    with a learning rate above 0.002 diverges."""
    study_dir = str(tmp_path_factory.mktemp("tune") / "population")
    result = tune_run("--trials", "10", "--population", "4", "--sampler", "random", "--eval-seeds", "1", "--out",
                      study_dir, POPULATION_STANDIN, "--nan-above", "0.002")
    assert result.returncode == 0, result.stderr
    return study_dir, result


@pytest.mark.slow
def test_populations_train_the_configurations_and_seeds_a_study_of_trials_in_processes_trains(population_study,
                                                                                              tmp_path):
    study_dir, result = population_study
    trials = tune_run("--trials", "10", "--workers", "2", "--sampler", "random", "--pruner", "none", "--eval-seeds",
                      "0", "--out", str(tmp_path / "trials"), POPULATION_STANDIN, "--nan-above", "0.002")
    assert trials.returncode == 0, trials.stderr
    columns = ["number", "state", *DEFAULT_SPACES["ppo"], "value"]
    in_populations, in_processes = trials_csv(study_dir), trials_csv(str(tmp_path / "trials"))
    assert [[row[c] for c in columns] for row in in_populations] == [[row[c] for c in columns] for row in in_processes]
    failed = [row for row in in_populations if row["state"] == "fail"]
    assert failed and all(float(row["learning_rate"]) > 0.002 for row in failed)
    assert all(row["reason"] == f"exit 3: error: loss is NaN at iteration 2; partial run in "
               f"{study_dir}/runs/trial_{int(row['number']):04d}" for row in failed)
    assert sorted(os.listdir(os.path.join(study_dir, "runs")))[-10:] == [f"trial_{n:04d}" for n in range(10)]
    assert json.load(open(os.path.join(study_dir, "study.json")))["pruner"] == "none"


@pytest.mark.slow
def test_a_population_process_holds_trials_that_share_their_static_values_each_with_its_seed(population_study):
    """Each population's --hparams file: agent = trial n with seed 1 + n and its values of the script's HParams; the
    static fields (num_minibatches, update_epochs) are the same for every trial of one process."""
    study_dir, result = population_study
    rows = {int(row["number"]): row for row in trials_csv(study_dir)}
    agent_fields = ["learning_rate", "ent_coef", "clip_coef", "gamma", "gae_lambda", "vf_coef", "max_grad_norm"]
    seen = []
    for name in sorted(os.listdir(os.path.join(study_dir, "populations"))):
        agents = json.load(open(os.path.join(study_dir, "populations", name)))
        numbers = [agent["seed"] - 1 for agent in agents]
        assert name == f"population_{numbers[0]:04d}.json" and len(agents) <= 4 and set(agents[0]) == {"seed",
                                                                                                       *agent_fields}
        assert len({(rows[n]["num_minibatches"], rows[n]["update_epochs"]) for n in numbers}) == 1
        assert all(agent[field] == float(rows[n][field]) for agent, n in zip(agents, numbers) for field in agent_fields)
        seen += numbers
    assert sorted(seen) == list(range(10)) and len(os.listdir(os.path.join(study_dir, "populations"))) > 3
    assert "population of trials 0-" in result.stdout


# SCRIPTS THAT ARE NOT OURS: written as CleanRL's are (tyro or argparse, runs/{run_name} in the working folder)
CLEANRL_STANDINS = [os.path.join(ROOT, "tests", f"ppo_cleanrl_{kind}.py") for kind in ("argparse", "tyro")]


@pytest.mark.parametrize("script", CLEANRL_STANDINS)
def test_a_cleanrl_style_script_s_flags_are_read_from_its_args_or_its_argparse_calls(script):
    algorithm, fields, ours = tune.check_script(script, ["--total-timesteps", "1024"], 0, "")
    assert (algorithm, ours) == ("ppo", False) and set(DEFAULT_SPACES["ppo"]) <= set(fields)
    assert fields["learning_rate"] == "float" and "seed" in fields and "log_dir" not in fields


def test_a_cleanrl_style_script_without_seed_or_default_space_is_refused_in_one_line(tmp_path):
    unseeded = tmp_path / "ppo_unseeded.py"
    unseeded.write_text("import argparse\np = argparse.ArgumentParser()\np.add_argument('--lr', type=float)\n")
    nameless = tmp_path / "train.py"
    nameless.write_text(open(CLEANRL_STANDINS[0]).read())
    with pytest.raises(Refused, match="CleanRL-style script with a --seed flag"):
        tune.main(["--out", str(tmp_path / "a"), str(unseeded)])
    with pytest.raises(Refused, match="train.py's name names no algorithm .* give --space"):
        tune.main(["--out", str(tmp_path / "b"), str(nameless)])
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.slow
@pytest.mark.parametrize("script", CLEANRL_STANDINS)
def test_a_cleanrl_style_script_is_tuned_in_its_trial_folder_and_the_report_says_pruning_saw_nothing(script,
                                                                                                   tmp_path):
    study_dir = tmp_path / "study"
    result = tune_run("--trials", "3", "--sampler", "random", "--eval-seeds", "1", "--out", str(study_dir), script,
                      "--total-timesteps", "4096")
    assert result.returncode == 0, result.stderr
    for row in trials_csv(str(study_dir)):
        assert row["state"] == "complete", row
        quality = max(0.0, 1 - abs(math.log10(float(row["learning_rate"])) + 3) / 2)
        seed = 1 + int(row["number"])  # the last 10 % of 4096 steps: the last of 8 iterations alone
        assert float(row["value"]) == pytest.approx(100 * quality + seed % 7, rel=1e-5)
        folders = os.listdir(study_dir / "runs" / f"trial_{int(row['number']):04d}" / "runs")
        assert len(folders) == 1 and folders[0].startswith(f"CartPole-v1__ppo_cleanrl_")
    evaluation_runs = json.load(open(study_dir / "evaluation.json"))["runs"]
    assert evaluation_runs[0]["seed"] == 100_001 and evaluation_runs[0]["value"] is not None
    report = open(study_dir / "REPORT.md").read()
    assert "| pruner | hyperband, in effect none: the script printed no iteration line in 3 trials" in report
    assert "| contract | a CleanRL-style script, run in its trial's folder" in report


def second_venv(folder) -> str:
    """A venv of its own (no pip: made in a fraction of a second) holding a module that tune.py's environment lacks,
    `only_in_second_venv`; it sees our packages (tensorboard, for the stand-in's events) through a .pth file. Its
    interpreter, relative to `folder`."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder / "venv")], check=True)
    python = os.path.join("venv", "bin", "python")
    site_packages = subprocess.run([folder / python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                   capture_output=True, text=True, check=True).stdout.strip()
    with open(os.path.join(site_packages, "ours.pth"), "w") as f:
        f.write("\n".join(site.getsitepackages()) + "\n")
    with open(os.path.join(site_packages, "only_in_second_venv.py"), "w") as f:
        f.write("VERSION = '0.29.1'\n")
    return python


@pytest.mark.slow  # two studies of fresh processes: the full suite runs them
def test_python_runs_each_trial_under_the_scripts_own_interpreter_and_without_it_the_trials_say_to(tmp_path):
    """A stand-in of a CleanRL script that needs its own environment (CleanRL's pins gymnasium 0.29): it imports a
    module only a second venv holds. Under that venv's interpreter (--python, a path relative to where tune.py runs,
    though the trials run in their own folders) every trial completes; under ours each fails, and its reason names
    the module and --python."""
    python = second_venv(tmp_path)
    script = tmp_path / "ppo_own_venv.py"
    script.write_text("import only_in_second_venv  # noqa: F401\n" + open(CLEANRL_STANDINS[0]).read())
    common = ["--trials", "2", "--sampler", "random", "--trials-only"]
    own, ours = (subprocess.Popen([*TUNE, *common, *words, "--out", name, str(script), "--total-timesteps", "1024"],
                                  cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for name, words in (("own", ["--python", python]), ("ours", [])))
    for process in (own, ours):
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
    assert json.load(open(tmp_path / "own" / "study.json"))["python"] == str(tmp_path / python)
    assert [row["state"] for row in trials_csv(tmp_path / "own")] == ["complete"] * 2
    assert [(row["state"], row["reason"]) for row in trials_csv(tmp_path / "ours")] == [("fail", (
        "exit 1: ModuleNotFoundError: No module named 'only_in_second_venv'" + study.OWN_INTERPRETER))] * 2


# SEEDS PER TRIAL: a trial's objective is the aggregate of K seeds' values
def test_a_trial_s_seeds_are_distinct_across_trials_and_one_seed_is_the_study_s_seed_plus_the_number():
    one, three = Settings("s.py", [], "ppo", {}, "random", "none", seed=5), \
        Settings("s.py", [], "ppo", {}, "random", "none", seed=5, seeds_per_trial=3)
    assert [study.trial_seeds(one, n) for n in range(3)] == [[5], [6], [7]]
    assert [study.trial_seeds(three, n) for n in range(3)] == [[5, 6, 7], [8, 9, 10], [11, 12, 13]]


def test_the_aggregate_is_the_mean_or_the_interquartile_mean_as_rliable_defines_it():
    values = [7.0, 1.0, 100.0, 3.0, 4.0, 6.0, 2.0, 5.0]
    assert study.aggregate(values, "mean") == pytest.approx(16.0)
    assert study.aggregate(values, "iqm") == pytest.approx((3 + 4 + 5 + 6) / 4)  # a quarter cut from each end
    assert study.aggregate([1.0, 2.0, 6.0], "iqm") == pytest.approx(3.0)  # 3 values: nothing to cut
    assert tune.aggregate_of(tune.TuneArgs(seeds_per_trial=3)) == "mean"
    assert tune.aggregate_of(tune.TuneArgs(seeds_per_trial=4)) == "iqm"
    assert tune.aggregate_of(tune.TuneArgs(seeds_per_trial=8, aggregate="mean")) == "mean"


def test_bootstrap_intervals_match_a_hand_computed_case_and_pair_the_configurations_by_seed():
    # two values 0 and 1: the resampled means are 0, 0.5, 1 with chances 1/4, 1/2, 1/4: percentiles 2.5 and 97.5
    assert evaluation.interval([0.0, 1.0]) == (0.0, 1.0)
    assert evaluation.interval([3.0, 3.0, 3.0]) == (3.0, 3.0) and all(map(math.isnan, evaluation.interval([])))
    best = {"runs": [{"seed": s, "value": v} for s, v in ((1, 15.0), (2, 25.0), (3, 35.0))]}
    shifted = {"runs": [{"seed": s, "value": v} for s, v in ((3, 30.0), (1, 10.0), (2, 20.0))]}  # 5 below, each seed
    assert evaluation.difference_interval(best, shifted) == (5.0, 5.0)
    mixed = {"runs": [{"seed": 1, "value": 16.0}, {"seed": 2, "value": 24.0}, {"seed": 3, "value": None}]}
    low, high = evaluation.difference_interval(best, mixed)  # seed 3 has no pair: differences -1 and 1
    assert (low, high) == (-1.0, 1.0)


class FakeTrial:
    """What Reports asks of an Optuna trial: report(value, step) and should_prune(), pruning below `floor`."""

    def __init__(self, floor: float):
        self.floor, self.reported = floor, []

    def report(self, value, step):
        self.reported.append((step, value))

    def should_prune(self):
        return self.reported[-1][1] < self.floor


def test_the_pruner_sees_an_iteration_s_aggregate_once_every_seed_reached_it_and_then_stops_them_all():
    trial = FakeTrial(floor=5.0)
    reports = study.Reports(trial, 3, "mean")
    assert [reports(1, 9.0), reports(1, 6.0), reports(2, 8.0)] == [False] * 3 and trial.reported == []
    assert reports(1, 9.0) is False and trial.reported == [(1, 8.0)]  # the third seed's iteration 1: told
    assert [reports(2, 1.0), reports(2, 0.0)] == [False, True] and trial.reported[-1] == (2, 3.0)
    assert reports(3, 9.0) is True and reports.last == 2  # a seed still running is stopped at its next line


@pytest.mark.slow
def test_k_seeds_per_trial_as_runs_or_as_agents_give_each_seed_s_value_and_their_mean(tmp_path):
    """--seeds-per-trial 2, 6 trials (an agent with a learning rate above 0.002 diverges): in processes, each seed a
    run of its own under runs/trial_NNNN/seed_S; as populations of 3 trials, 6 agents a process. Both find the same
    values: each seed's as the stand-in returns it for that seed, the objective their mean; HParams keep each."""
    common = ["--trials", "6", "--sampler", "random", "--pruner", "none", "--eval-seeds", "0", "--seeds-per-trial",
              "2"]
    runs = [tune_run(*common, "--workers", "2", "--out", str(tmp_path / "runs"), POPULATION_STANDIN,
                     "--nan-above", "0.002"),
            tune_run(*common, "--population", "3", "--out", str(tmp_path / "agents"), POPULATION_STANDIN,
                     "--nan-above", "0.002")]
    assert all(run.returncode == 0 for run in runs), [run.stderr for run in runs]
    rows = [trials_csv(str(tmp_path / way)) for way in ("runs", "agents")]
    columns = ["number", "state", "learning_rate", "value", "value_seed0", "value_seed1"]
    assert [[row[c] for c in columns] for row in rows[0]] == [[row[c] for c in columns] for row in rows[1]]
    complete = [row for row in rows[0] if row["state"] == "complete"]
    assert complete and any(row["state"] == "fail" for row in rows[0])
    for row in complete:
        n, quality = int(row["number"]), max(0.0, 1 - abs(math.log10(float(row["learning_rate"])) + 3) / 2)
        seeds = [1 + 2 * n, 2 + 2 * n]
        found = [float(row["value_seed0"]), float(row["value_seed1"])]
        assert found == pytest.approx([100 * quality + seed % 7 for seed in seeds], rel=1e-5)
        assert float(row["value"]) == pytest.approx(sum(found) / 2, rel=1e-6)
        assert {f"seed_{s}" for s in seeds} <= set(os.listdir(tmp_path / "runs" / "runs" / f"trial_{n:04d}"))
        assert {f"seed_{s}" for s in seeds} <= set(os.listdir(tmp_path / "agents" / "runs" / f"trial_{n:04d}"))
    seeds = [[agent["seed"] for agent in json.load(open(path))]
             for path in sorted((tmp_path / "agents" / "populations").iterdir())]
    assert sorted(sum(seeds, [])) == list(range(1, 13))  # each trial's two seeds, agents of the same process
    assert all(seed % 2 == 0 or seed + 1 in found for found in seeds for seed in found)
    run_dir = tmp_path / "runs" / "runs" / f"trial_{int(complete[0]['number']):04d}"
    tags = {value.tag: value.simple_value for name in os.listdir(run_dir) if name.startswith("events")
            for event in LegacyEventFileLoader(str(run_dir / name)).Load() for value in event.summary.value}
    assert tags["tune/objective_seed1"] == pytest.approx(float(complete[0]["value_seed1"]))


@pytest.mark.slow
def test_a_killed_population_process_is_retried_whole_and_a_killed_worker_s_population_at_the_next_start(tmp_path):
    study_dir = str(tmp_path / "killed")
    space = tmp_path / "space.json"
    space.write_text(json.dumps({"learning_rate": DEFAULT_SPACES["ppo"]["learning_rate"]}))
    common = ["--trials", "3", "--population", "3", "--sampler", "random", "--eval-seeds", "0", "--space", str(space),
              "--out", study_dir, POPULATION_STANDIN]
    result = tune_run(*common, "--kill-once", str(tmp_path / "killed-once"))
    assert result.returncode == 0, result.stderr
    rows = trials_csv(study_dir)
    assert [row["state"] for row in rows] == ["fail"] * 3 + ["complete"] * 3
    assert all(row["reason"].startswith("killed by SIGKILL: ") and row["reason"].endswith("; its population retried")
               for row in rows[:3])
    assert [row["learning_rate"] for row in rows[:3]] == [row["learning_rate"] for row in rows[3:]]

    worker_dir = str(tmp_path / "worker")
    worker = subprocess.Popen([*TUNE, *common[:-3], "--out", worker_dir, POPULATION_STANDIN, "--iteration-seconds",
                               "0.3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = os.path.join(worker_dir, "logs", "population_0000.log")
    end = time.time() + 30
    while time.time() < end and not (os.path.exists(log) and "iteration 1/" in open(log).read()):
        time.sleep(0.05)
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    resumed = tune_run(*common[:-3], "--out", worker_dir, POPULATION_STANDIN, "--iteration-seconds", "0.3")
    assert resumed.returncode == 0, resumed.stderr
    assert "trial(s) 0, 1, 2 lost their worker: failed, and retried" in resumed.stdout
    assert [row["state"] for row in trials_csv(worker_dir)] == ["fail"] * 3 + ["complete"] * 3


# END TO END, WITH THE REAL SCRIPTS: each study a shared job, run in the background while other tests run
TINY_WORKLOAD = ["--num-iterations", "2", "--num-envs", "4", "--num-steps", "64"]
PER_AGENT_FLOATS = {name: entry for name, entry in DEFAULT_SPACES["ppo"].items() if entry["type"] == "float"}


def real_studies(shared_runs, background=False):
    """(study folder, tune.py's completed process) of the tiny study of a real script (ppo_linen.py, trials in
    processes), then of the tiny population study (ppo_linen_scan.py, the trials as the agents of one process)."""
    def trials(folder):
        return folder, tune_run("--trials", "3", "--eval-seeds", "1", "--out", folder, "ppo_linen.py", *TINY_WORKLOAD,
                                cwd=ROOT)

    def population(folder):
        os.makedirs(folder)
        space = os.path.join(folder, "space.json")
        with open(space, "w") as f:
            json.dump(PER_AGENT_FLOATS, f)
        study_dir = os.path.join(folder, "study")
        return study_dir, tune_run("--trials", "3", "--population", "3", "--eval-seeds", "1", "--space", space, "--out",
                                   study_dir, "ppo_linen_scan.py", *TINY_WORKLOAD, cwd=ROOT)

    return [shared_runs.job(("tiny study",), trials, background),
            shared_runs.job(("tiny population study",), population, background)]


@pytest.mark.slow
@pytest.mark.background.with_args(real_studies)
def test_a_tiny_study_of_a_real_script_runs_its_default_space_end_to_end(shared_runs):
    """The one study of trials in processes of a real script (the others run stand-ins; which space each script gets
    is test_every_registry_script_gets_its_algorithms_default_space_which_holds_its_own_defaults's)."""
    study_dir, result = real_studies(shared_runs)[0]
    assert result.returncode == 0, result.stderr
    rows = trials_csv(study_dir)
    assert len(rows) == 3 and all(row["state"] in ("complete", "pruned") for row in rows), rows
    assert set(json.load(open(os.path.join(study_dir, "study.json")))["space"]) == set(DEFAULT_SPACES["ppo"])
    evaluation = json.load(open(os.path.join(study_dir, "evaluation.json")))
    assert evaluation["runs"][0]["value"] is not None
    report = open(os.path.join(study_dir, "REPORT.md")).read()
    assert f"trial {evaluation['trial']}, value **" in report


@pytest.mark.slow
@pytest.mark.background.with_args(real_studies)
def test_a_tiny_population_study_of_ppo_linen_scan_trains_each_trial_as_an_agent_with_its_seed_and_values(shared_runs):
    """3 trials in one process (a space of the script's per-agent floats), the best rerun on a fresh seed."""
    study_dir, result = real_studies(shared_runs)[1]
    floats = PER_AGENT_FLOATS
    assert result.returncode == 0, result.stderr
    assert "population of trials 0-2: 3 agent(s) in one process" in result.stdout
    rows = trials_csv(study_dir)
    assert [row["state"] for row in rows] == ["complete"] * 3
    for row in rows:
        run_dir = os.path.join(study_dir, "runs", f"trial_{int(row['number']):04d}")
        (events,) = [name for name in os.listdir(run_dir) if not name.endswith(".hparams")]
        scalars, tables = read_event_file(os.path.join(run_dir, events))
        hyperparameters = tables["hyperparameters"]
        assert hyperparameters["seed"] == str(1 + int(row["number"])) and hyperparameters["num_seeds"] == "3"
        assert all(float(hyperparameters[name]) == float(row[name]) for name in floats)
    assert json.load(open(os.path.join(study_dir, "evaluation.json")))["runs"][0]["value"] is not None
    assert os.path.isfile(os.path.join(study_dir, "REPORT.md"))
    _, study = load(study_dir)  # the agents end together, when their process ends (report/study.py's clock)
    ends = {trial.user_attrs["population_end"] for trial in study.trials if trial.number < 3}
    assert len(ends) == 1 and all(trial.datetime_complete.timestamp() >= min(ends) for trial in study.trials[:3])


def standin_tree(tmp_path, scripts: list) -> str:
    """A copy of what a command set runs (tune.py, its packages, the tools) with tests/dqn_standin.py as each of the
    scripts: the command set's plan, studies and report in a fraction of a second per trial."""
    root = tmp_path / "tree"
    root.mkdir()
    for name in ("tune.py",):
        shutil.copy(os.path.join(ROOT, name), root / name)
    for folder in ("search", "report", "sweep", "tools"):
        shutil.copytree(os.path.join(ROOT, folder), root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for script in scripts:
        shutil.copy(STANDIN, root / script)
    return str(root)


@pytest.mark.slow
def test_exp10s_command_set_runs_every_part_of_a_study_seed_in_its_turned_order_and_writes_its_report_at_a_tiny_size(
        tmp_path):
    """The command set on stand-ins of its DQN scripts and the real population script (tune.py's end to end on a real
    script: the tiny study), study seed 2 alone: its designs' order is turned by one as when seeds 1 and 2 run in one
    invocation (a seed a window), and its part (b) runs on its own fastest. The report of several seeds is
    test_tune_report.py's."""
    out = str(tmp_path / "exp10")
    root = standin_tree(tmp_path, ["dqn_torch_gymnasium.py", "dqn_linen_gymnasium.py", "dqn_torch.py",
                                   "dqn_torch_compile.py", "dqn_linen.py", "dqn_nnx.py", "dqn_equinox.py"])
    for name in ("dqn_linen_vmap.py", "doors.py"):
        shutil.copy(os.path.join(ROOT, name), os.path.join(root, name))
    result = subprocess.run([os.path.join(root, "tools", "exp10.sh"), out, "--tiny", "--trials", "1", "--study-seeds",
                             "2"], capture_output=True, text=True, timeout=600,
                            env={**os.environ, "PYTHON": sys.executable})
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("exp10: parts a,b,p of study seeds 2, 1 trials a study of 1,024 transitions; about ")
    assert "`python -m pytest -m learning`" in lines[1]  # before a reference sitting
    plan = json.load(open(os.path.join(out, "exp10.json")))
    folders = [study["folder"] for study in plan["studies"]]
    designs = ["torch-gymnasium", "linen-gymnasium", "torch", "torch-compile", "linen", "nnx", "equinox",
               "linen-16envs"]
    turned = designs[1:] + designs[:1]
    assert folders[:10] == [f"a-{key}-s2" for key in turned] + ["a-linen-16envs-workers2-s2", "p-linen-vmap-s2"]
    assert "b-torch-gymnasium-s2" in folders[10:12]  # and the seed's fastest design, if another
    population = next(study for study in plan["studies"] if study["folder"] == "p-linen-vmap-s2")
    assert (population["script"], population["population"], population["seed"], population["workers"]) == (
        "dqn_linen_vmap.py", 2, 2, 2)
    assert json.load(open(os.path.join(out, "space.json"))) == {
        name: entry for name, entry in DEFAULT_SPACES["dqn"].items() if entry["type"] == "float"}
    assert [item["argv"] for item in plan["invocations"]] == [f"tools/exp10.sh {out} --tiny --trials 1 --study-seeds 2"]
    assert plan["invocations"][0]["cpu_details"] == plan["cpu_details"]  # each invocation its CPU: windows may differ
    for folder in folders:
        assert len(trials_csv(os.path.join(out, folder))) == 1, folder
    with open(os.path.join(out, "REPORT.md")) as f:
        assert "## (p) The population: the float fields only" in f.read()


def test_exp10s_command_set_prints_its_estimate_first_and_refuses_bad_flags_in_one_line(tmp_path):
    exp10 = os.path.join(ROOT, "tools", "exp10.sh")
    env = {**os.environ, "PYTHON": sys.executable}
    dry = subprocess.run([exp10, str(tmp_path / "out"), "--dry-run", "--trials", "12", "--total-timesteps", "100000",
                          "--study-seeds", "1", "--parts", "a,b"], capture_output=True, text=True, env=env)
    assert dry.returncode == 0 and not (tmp_path / "out").exists()
    minutes = int(dry.stdout.split("about ")[1].split(" min")[0])
    assert 80 <= minutes <= 140  # results/cpu-2core-exp10's 93 min for 6 of these 8 designs, plus the 3 others
    for flags, message in [(["--study-seeds", "1,x"], "--study-seeds wants positive integers separated by commas"),
                           (["--parts", "a,c"], "--parts wants some of a, b and p separated by commas"),
                           (["--population", "0"], "--trials, --total-timesteps and --population want positive "
                                                   "integers"),
                           (["--total-timesteps", "65000"], "--total-timesteps 65000: the DQN scripts want a "
                                                            "multiple of their --iteration-steps, 10000"),
                           (["--bogus"], "unknown option --bogus")]:
        ended = subprocess.run([exp10, str(tmp_path / "out"), *flags], capture_output=True, text=True, env=env)
        assert (ended.returncode, ended.stdout, ended.stderr) == (2, "", f"exp10.sh: {message}\n"), flags
    assert not (tmp_path / "out").exists()


def test_a_trial_whose_worker_on_another_machine_stopped_its_heartbeat_is_failed_and_its_configuration_enqueued(
        tmp_path):
    from search import study as study_folder

    settings = Settings("dqn_linen.py", [], "dqn", {"gamma": {"type": "float", "low": 0.9, "high": 0.999}}, "random",
                        "none", 1, study_name="remote")
    save_settings(str(tmp_path), settings)
    study = create(str(tmp_path), settings, 1)
    alive, silent = study.ask(), study.ask()
    now = time.time()
    for trial, heartbeat in ((alive, now), (silent, now - study_folder.LOST_AFTER * study_folder.HEARTBEAT_SECONDS - 1)):
        trial.suggest_float("gamma", 0.9, 0.999)
        trial.storage.set_trial_system_attr(trial._trial_id, "worker", {"host": "elsewhere", "pid": 1, "start": "1"})
        trial.storage.set_trial_system_attr(trial._trial_id, "heartbeat", heartbeat)
    assert study_folder.fail_lost_trials(study) == [silent.number]
    assert study_folder.fail_lost_trials(study) == []  # once only
    trials = study.get_trials()
    assert [trial.state.name for trial in trials] == ["RUNNING", "FAIL", "WAITING"]
    assert trials[1].user_attrs["reason"].startswith("lost: its worker's heartbeat stopped")
    assert study.ask().suggest_float("gamma", 0.9, 0.999) == silent.params["gamma"]  # the retry: its configuration
    assert study_folder.counted(study) == 2  # the running trial and the retry, not the lost one
