"""exp14's report (report/cnn.py) on a synthetic exp14 folder: runs of known steady iterations and returns, env costs
of known seconds, no script run; its bad input; and tools/exp14.py's commands and their alternation, no script run."""
import json

import pytest

from events import write_run
from helpers import fake_command_set
from report import cnn
from report.envshare import STEADY_FROM
from test_plot import run_plot
import exp14

# case: (env, backend, threshold, {label: (steady seconds, returns by iteration)}), and each env's steps per iteration
CASES = {
    "MinAtar CNN, small": ("Breakout-MinAtar", "gymnax", 1.5, {
        "linen (jit)": (1.0, [0.5, 1.0, 1.6, 2.0, 2.5, 3.0]), "torch (env-jit)": (2.0, [0.5, 0.8, 1.2, 1.4, 1.5, 2.0])}),
    "Nature CNN": ("Breakout-v5", "ALE", None, {
        "atari_linen (jit)": (4.0, [1.0] * 6), "atari_equinox (jit)": (4.2, [1.0] * 6),
        "atari_torch (eager)": (6.0, [1.0] * 6)}),
}
ENV_SECONDS = {("Breakout-MinAtar", "gymnax"): 0.1, ("Breakout-v5", "ALE"): 2.0}
SCRIPTS = {"linen (jit)": ("ppo_linen", "jit"), "torch (env-jit)": ("ppo_torch", "env-jit"),
           "atari_linen (jit)": ("ppo_atari_linen", "jit"), "atari_equinox (jit)": ("ppo_atari_equinox", "jit"),
           "atari_torch (eager)": ("ppo_atari_torch", "eager")}


@pytest.fixture(scope="module")
def exp14_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exp14")
    runs = []
    for repeat in (1, 2, 3):
        for case, (env, backend, threshold, labels) in CASES.items():
            for label, (seconds, returns) in labels.items():
                name = f"{case}__{label}__{repeat}".replace(" ", "")
                script, mode = SCRIPTS[label]
                # iteration 0 compiles (cold in repeat 1); the steady ones vary by repeat around `seconds`
                steady = seconds * (1 + 0.1 * (repeat - 2))
                write_run(str(folder / "runs" / name), [20.0 if repeat == 1 else 4.0, seconds] + [steady] * 4,
                          variant=script, compile_mode=mode, env_id=env, returns=returns)
                runs.append({"case": case, "env": env, "backend": backend, "label": label, "repeat": repeat,
                             "run": name, "threshold": threshold})
    costs = [{"env": env, "backend": backend, "processes": [
        {"first_call_seconds": 1.0 + seconds, "seconds": [seconds * spread] * 3} for spread in (0.9, 1.0, 1.2)]}
        for (env, backend), seconds in ENV_SECONDS.items()]
    cases = [{"case": case, "env": env, "backend": backend, "workload": "--num-envs 8", "threshold": threshold}
             for case, (env, backend, threshold, _) in CASES.items()]
    plan = {"machine": "AMD EPYC", "load": "0.20 0.30 0.40", "date": "2026-12-01T07:00+00:00", "commit": "abc1234",
            "iterations": "6", "cases": cases, "env_costs": costs, "runs": runs}
    (folder / "exp14.json").write_text(json.dumps(plan))
    with open(cnn.write_report(str(folder))) as f:
        return str(folder), f.read()


def test_the_answer_names_each_cases_fastest_script_every_frameworks_ratio_and_the_envs_share(exp14_folder):
    _, report = exp14_folder
    # MinAtar: torch 2 s against Linen's 1 s; the env 0.1 s of Linen's iteration
    assert ("- **MinAtar CNN, small**: fastest linen (jit); each framework's best against it (the median of the "
            "ratios repeat by repeat [their range]): linen 1.00× [1.00–1.00], torch 2.00× [2.00–2.00]; the env's "
            "steps alone take 10.0% of the fastest script's steady iteration.") in report
    # Atari: Equinox's range over repeats (3.78–4.62 s) overlaps Linen's (3.6–4.4 s): level
    assert ("- **Nature CNN**: fastest atari_linen (jit), level with atari_equinox (jit) (ranges over repeats "
            "overlap); each framework's best against it (the median of the ratios repeat by repeat [their range]): "
            "linen 1.00× [1.00–1.00], equinox 1.05× [1.05–1.05], torch 1.50× [1.50–1.50]; the env's steps alone take "
            "50.0% of the fastest script's steady iteration.") in report
    assert "| vs fastest [range over repeats] |" in report and "| 3 | 1.50× [1.50–1.50] |" in report


def test_a_ratio_and_its_bracket_are_one_statistic_the_median_of_the_per_repeat_ratios_and_their_range():
    """The fastest by median steady iteration is each ratio's baseline, repeat by repeat: a script of 1.5, 1.5 and 1.9 s
    against 1.0, 1.2 and 1.1 s has the ratios 1.5, 1.25 and 1.73, so 1.50× [1.25–1.73]; the ratio of the medians,
    1.5 / 1.1 = 1.36, is another statistic and not given."""
    runs = {"fast": [{"repeat": 1, "steady": 1.0}, {"repeat": 2, "steady": 1.2}, {"repeat": 3, "steady": 1.1}],
            "slow": [{"repeat": 1, "steady": 1.5}, {"repeat": 2, "steady": 1.5}, {"repeat": 3, "steady": 1.9}]}
    first, ratios = cnn.repeat_ratios(runs)
    assert first == "fast" and ratios["fast"] == (1.0, 1.0, 1.0)
    assert [round(value, 3) for value in ratios["slow"]] == [1.5, 1.25, 1.727]
    assert cnn.ratio_text(ratios["slow"]) == "1.50× [1.25–1.73]"


def test_the_small_minatar_case_gives_the_training_seconds_to_its_return_threshold(exp14_folder):
    _, report = exp14_folder
    # Linen reaches 1.5 at iteration 2: 21.9, 6 and 6.1 s in repeats 1-3 (iteration 0: 20 s cold, then 4 s; the
    # steady iterations 0.9, 1.0, 1.1 s); torch at iteration 4: 27.4, 12 and 12.6 s. Medians 6.1 and 12.6
    assert ("- **MinAtar CNN, small, time to a mean return of 1.5** (training seconds, iteration 0's compilation "
            "included; repeats that reached it): linen (jit) 6.1 s (3 of 3); torch (env-jit) 12.6 s (3 of 3).") in report
    small = report.split("### MinAtar CNN, small")[1].split("###")[0]
    assert "| to return 1.5, s | last return |" in small
    assert "to return" not in report.split("### Nature CNN")[1]


def test_a_folder_without_exp14_json_is_refused_in_one_line(tmp_path, capsys):
    assert cnn.main([str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path} holds no exp14.json: not exp14's folder\n"


def test_a_sweeps_report_gives_exp14s_gpu_runs_each_cases_ratios_under_the_cases_names(tmp_path):
    """--grid gpu's exp14 runs, read by plot.py: report/cnn.py's section of the sweep's report, a table per case."""
    runs = (("ppo_linen", "jit", "Breakout-MinAtar", "small", 32, 0.02), ("ppo_torch", "env-jit", "Breakout-MinAtar",
            "small", 32, 0.05), ("ppo_linen", "jit", "Breakout-MinAtar", "medium", 32, 0.04),
            ("ppo_atari_linen", "jit", "Breakout-v5", "nature", 8, 0.3),
            ("ppo_atari_torch", "eager", "Breakout-v5", "nature", 8, 0.6))
    for script, mode, env, size, num_envs, steady in runs:
        write_run(str(tmp_path / "runs" / "exp14" / f"exp14__{script}__{mode}__{env}__{size}__n{num_envs}__1"),
                  [30.0] + [1.5 * steady] * 7 + [steady] * 8, variant=script, compile_mode=mode, env_id=env,
                  model_size=size, num_envs=num_envs)
    result = run_plot(tmp_path)
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "REPORT.md").read_text()
    section = report.split("## Convolutional agents (exp14)")[1]
    small, wide, nature = (section.split(f"**{case}**")[1].split("**")[0] for case in (
        "MinAtar CNN, small", "MinAtar CNN, wide", "Nature CNN"))
    assert "| linen (jit) | 0.02 | 1.00× |" in small and "| torch (env-jit) | 0.05 | 2.50× |" in small
    assert "| linen (jit) | 0.04 | 1.00× |" in wide and "torch" not in wide
    assert "| atari_torch (eager) | 0.6 | 2.00× |" in nature
    assert "Nature CNN: fastest atari_linen (jit); the slowest script takes 2.00× its steady iteration" in report


def test_exp14s_atari_case_runs_at_least_8_steady_iterations_a_run():
    """The Nature CNN's verdict rests on its steady iterations (the report's window: iterations 2 on): 8 a run at
    least, not the first sitting's 4 (6 iterations)."""
    atari = next(case for case in exp14.CASES if case.backend == "ALE")
    assert atari.iterations - STEADY_FROM >= 8


def test_exp14_estimates_times_each_env_alone_runs_every_cases_scripts_once_per_repeat_and_resumes(tmp_path, monkeypatch,
                                                                                                   capsys):
    commands = fake_command_set(monkeypatch, exp14)
    assert exp14.main([str(tmp_path), "--repeats", "2"]) == 0
    assert capsys.readouterr().out.startswith("exp14: 34 runs in 2 repeats, about 25 min at the pace of its first")
    costs = [command for command in commands if command[1].endswith("cnn_env_cost.py")]
    assert [command[2] for command in costs] == ["Breakout-MinAtar"] * 3 + ["Breakout-v5"] * 3
    assert commands[:6] == costs and commands[-1][1:] == ["-m", "report.cnn", str(tmp_path)]
    runs, plan = commands[6:-1], json.load(open(tmp_path / "exp14.json"))
    per_repeat = [(case.case, variant.file) for case in exp14.CASES for variant in case.variants]
    assert len(runs) == len(plan["runs"]) == 2 * len(per_repeat)
    for index, command in enumerate(runs):
        repeat, (case_name, file) = index // len(per_repeat) + 1, per_repeat[index % len(per_repeat)]
        case = next(case for case in exp14.CASES if case.case == case_name)
        options = " ".join(command[2:])
        assert command[1].endswith(file) and f"--env-id {case.env} {' '.join(case.network + case.workload)}" in options
        assert f"--num-iterations {case.iterations} --seed {repeat} " in options
        assert (plan["runs"][index]["case"], plan["runs"][index]["repeat"]) == (case_name, repeat)
    assert plan["cache_empty_at_start"] and [cost["env"] for cost in plan["env_costs"]] == ["Breakout-MinAtar",
                                                                                          "Breakout-v5"]
    commands.clear()  # rerun with a third repeat: the folder resumed, only the third repeat's runs left to run
    assert exp14.main([str(tmp_path), "--repeats", "3"]) == 0
    assert len(commands) == len(per_repeat) + 1 and all("--seed 3 " in " ".join(command) for command in commands[:-1])
    plan = json.load(open(tmp_path / "exp14.json"))
    assert len(plan["runs"]) == 3 * len(per_repeat) and len(plan["env_costs"]) == 2 and len(plan["resumed"]) == 1
    with pytest.raises(SystemExit) as refused:  # other settings: refused, the folder untouched
        exp14.main([str(tmp_path), "--tiny"])
    assert str(refused.value.code).startswith(f"exp14.py: {tmp_path} holds a sitting of other settings (its iterations")
    assert json.load(open(tmp_path / "exp14.json")) == plan
