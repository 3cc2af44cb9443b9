"""exp12's report (report/continuous.py) on a synthetic exp12 folder: runs of known steady iterations, env costs of
known seconds, no script run; and its bad input."""
import json
import os
import sys

import pytest

from events import write_run
from helpers import fake_command_set
from report import continuous
from test_plot import run_plot
import exp12

# (env, backend): {label: steady seconds}, and the env's steps per iteration in seconds
STEADY = {
    ("Pendulum-v1", "gymnax"): {"continuous_linen (jit)": 0.05, "continuous_torch (env-jit)": 0.40},
    ("hopper", "Brax"): {"continuous_linen (jit)": 1.0, "continuous_nnx (tree)": 1.05,
                         "continuous_torch (env-jit)": 1.4},
}
ENV_SECONDS = {("Pendulum-v1", "gymnax"): 0.0025, ("hopper", "Brax"): 0.8}
SCRIPTS = {"continuous_linen (jit)": ("ppo_continuous_linen", "jit"),
           "continuous_nnx (tree)": ("ppo_continuous_nnx", "tree"),
           "continuous_torch (env-jit)": ("ppo_continuous_torch", "env-jit")}


@pytest.fixture(scope="module")
def exp12_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exp12")
    runs = []
    for repeat in (1, 2, 3):
        for (env, backend), labels in STEADY.items():
            for label, seconds in labels.items():
                name = f"{env}__{label}__{repeat}"
                script, mode = SCRIPTS[label]
                # iteration 0 compiles (cold in repeat 1, 5 s from the cache after it); 1 is slower; the steady ones
                # vary by repeat around `seconds`
                steady = seconds * (1 + 0.1 * (repeat - 2))
                write_run(str(folder / "runs" / name), [30.0 if repeat == 1 else 5.0, 2 * seconds] + [steady] * 4,
                          variant=script,
                          compile_mode=mode, env_id=env, returns=[-1200.0 + 100 * i for i in range(6)])
                runs.append({"env": env, "backend": backend, "label": label, "repeat": repeat, "run": name})
    costs = [{"env": env, "backend": backend, "processes": [
        {"reset_compile_seconds": 10.0, "first_call_seconds": 20.0 + seconds, "seconds": [seconds * spread] * 3}
        for spread in (0.9, 1.0, 1.2)]} for (env, backend), seconds in ENV_SECONDS.items()]
    plan = {"machine": "AMD EPYC", "load": "0.20 0.30 0.40", "date": "2026-11-28T07:00+00:00", "commit": "abc1234",
            "iterations": 6, "workload": "--num-envs 8", "env_costs": costs, "runs": runs,
            "brax_backends": [{"env": "hopper", "brax_backend": "spring", "reset_compile_seconds": 4.0,
                               "first_call_seconds": 7.25, "seconds": [0.2, 0.3, 0.25]}]}
    (folder / "exp12.json").write_text(json.dumps(plan))
    with open(continuous.write_report(str(folder))) as f:
        return str(folder), f.read()


def test_the_answer_sets_each_env_s_framework_spread_beside_its_share_with_its_range_and_names_the_level(exp12_folder):
    _, report = exp12_folder
    # Pendulum: 0.40 / 0.05 = 8x, the env 5 % of Linen's iteration (its processes 4.5–6 %); hopper: 1.4x, 80 %
    # (72–96 %), and NNX's range over repeats (0.945–1.155 s) overlaps Linen's (0.9–1.1 s): not told apart
    assert ("**Pendulum-v1 (gymnax)**: the env's steps alone take 5.0% of the fastest script's steady iteration "
            "[4.5%–6.0% over the env's processes]; fastest continuous_linen (jit); the slowest takes 8.00× the "
            "fastest's.") in report
    assert ("**hopper (Brax)**: the env's steps alone take 80.0% of the fastest script's steady iteration [72.0%–96.0% "
            "over the env's processes]; fastest continuous_linen (jit), level with continuous_nnx (tree) (ranges over "
            "repeats overlap); the slowest takes 1.40× the fastest's.") in report
    assert os.path.isfile(os.path.join(exp12_folder[0], "charts", "spread_by_env_share.png"))


def test_each_env_s_table_gives_the_median_steady_iteration_over_repeats_with_its_range(exp12_folder):
    _, report = exp12_folder
    hopper = report.split("### hopper (Brax)")[1]
    # iteration 0: repeat 1's (cold), then the median of the others' (the compilation cache warm)
    assert "| continuous_torch (env-jit) | 1.4 [1.26–1.54] | 3 | 1.40× | 57.1% | 30 | 5 | 2 | -700 |" in hopper
    assert "compiling its reset and steps takes 30 s" in hopper


def test_brax_s_backends_get_their_steps_and_compile_seconds(exp12_folder):
    _, report = exp12_folder
    assert "| hopper | spring | 0.25 | 11 |" in report.split("## Brax's backends")[1]


def test_a_folder_without_exp12_json_is_refused_in_one_line(tmp_path, capsys):
    assert continuous.main([str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path} holds no exp12.json: not exp12's folder\n"


def test_a_sweeps_report_gives_exp12s_gpu_runs_each_scripts_ratio_per_env(tmp_path):
    """--grid gpu's exp12 runs, read by plot.py: report/continuous.py's section of the sweep's report."""
    for script, mode, steady in (("ppo_continuous_linen", "jit", 0.05), ("ppo_continuous_torch", "env-jit", 0.2)):
        write_run(str(tmp_path / "runs" / "exp12" / f"exp12__{script}__{mode}__hopper__small__n2048__1"),
                  [30.0] + [1.5 * steady] * 7 + [steady] * 8, variant=script, compile_mode=mode, env_id="hopper",
                  num_envs=2048, num_steps=64)
    result = run_plot(tmp_path)
    assert result.returncode == 0, result.stderr
    section = (tmp_path / "REPORT.md").read_text().split("Continuous control on Brax's envs (exp12)")[1]
    assert "| continuous_linen (jit) | 0.05 | 1.00× |" in section
    assert "| continuous_torch (env-jit) | 0.2 | 4.00× |" in section


def test_exp12_times_the_envs_runs_every_scripts_env_per_repeat_and_resumes_a_folder_of_its_settings(tmp_path,
                                                                                                       monkeypatch):
    """--tiny (Pendulum-v1 in gymnax and Gymnasium), every process faked: the env costs, one run per (env, script),
    the report; rerun, the folder resumes with nothing left to run; rerun with other settings, it is refused."""
    commands = fake_command_set(monkeypatch, exp12)
    assert exp12.main([str(tmp_path), "--tiny"]) == 0
    runs = [command for command in commands if "--run-name" in command]
    scripts = [variant.file for _, _, _, variants in exp12.ENVS[:2] for variant in variants]
    assert [os.path.basename(command[1]) for command in runs] == scripts
    assert commands[-1][1:] == ["-m", "report.continuous", str(tmp_path)]
    plan = json.load(open(tmp_path / "exp12.json"))
    commands.clear()
    assert exp12.main([str(tmp_path), "--tiny"]) == 0  # resumed: only the report is made again
    assert commands == [[sys.executable, "-m", "report.continuous", str(tmp_path)]]
    resumed = json.load(open(tmp_path / "exp12.json"))
    assert resumed["runs"] == plan["runs"] and len(resumed["resumed"]) == 1
    with pytest.raises(SystemExit) as refused:
        exp12.main([str(tmp_path), "--iterations", "3"])
    assert str(refused.value.code).startswith(f"exp12.py: {tmp_path} holds a sitting of other settings (its workload")
