"""exp11's report (report/population.py) on a synthetic exp11 folder: studies built as in tests/test_tune_report.py,
the population studies timed by a known cost model (a process of N agents takes F + c N), no script run; and
tools/exp11.py's bad input and the tune.py command of each of its studies."""
import json
import math

import pytest

from report import population
from report.text import number_text
from test_tune_report import COMPLETE, FAIL, make_study, trial
import exp11
import exp12
import exp14

F, C, TRIALS = 6.0, 0.5, 8  # minutes: a population process's fixed cost and its cost per agent; configurations


def population_trials(n: int) -> list:
    """TRIALS trials run as populations of n, one process after another, each F + C n minutes; configuration 7 fails."""
    trials, start = [], 0.0
    for first in range(0, TRIALS, n):
        end = start + F + C * n
        trials += [trial(FAIL if k == 7 else COMPLETE, (start, end), None if k == 7 else 10.0 * k, k=k,
                         reason="exit 3: error: loss is NaN" * (k == 7)) for k in range(first, min(first + n, TRIALS))]
        start = end
    return trials


def process_trials(minutes: float) -> list:
    """TRIALS trials in processes two at a time, each `minutes` long; configuration 7 fails."""
    return [trial(FAIL if k == 7 else COMPLETE, (k // 2 * minutes, (k // 2 + 1) * minutes),
                  None if k == 7 else 10.0 * k + (k == 3), k=k) for k in range(TRIALS)]


@pytest.fixture(scope="module")
def exp11_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exp11")
    ways = [("torch", "ppo_torch.py trials, 2 at a time", "ppo_torch.py", 2, 0, process_trials(20.0)),
            ("linen", "ppo_linen.py trials, 2 at a time", "ppo_linen.py", 2, 0, process_trials(10.0))]
    ways += [(f"population{n}", f"ppo_linen_scan.py populations of {n}", "ppo_linen_scan.py", 1, n,
              population_trials(n)) for n in (2, 4, 8)]
    studies = []
    for key, label, script, workers, n, trials in ways:
        (folder / f"CartPole-v1-{key}").mkdir()
        make_study(folder / f"CartPole-v1-{key}", trials)
        studies.append({"part": "CartPole-v1", "folder": f"CartPole-v1-{key}", "label": label, "script": script,
                        "workers": workers, "population": n})
    studies.append({"part": "Breakout-MinAtar", "folder": "Breakout-MinAtar-torch", "label": "ppo_torch.py trials",
                    "script": "ppo_torch.py", "workers": 2, "population": 0})
    plan = {"machine": "AMD EPYC", "load": "0.30 0.86 1.32", "date": "2026-11-28T02:36+00:00", "commit": "abc1234",
            "trials": TRIALS, "workload": "--num-envs 16", "eval_seeds": 3, "studies": studies}
    (folder / "exp11.json").write_text(json.dumps(plan))
    return str(folder), population.write_report(str(folder))


def test_the_cost_model_recovers_a_population_process_s_fixed_and_per_agent_cost():
    walls = [(n, TRIALS, 60 * (TRIALS / n * F + TRIALS * C)) for n in (2, 4, 8)]
    fixed, per_agent = population.fit_model(walls)
    assert fixed == pytest.approx(60 * F) and per_agent == pytest.approx(60 * C)
    assert population.level_off(fixed, per_agent) == pytest.approx(9 * F / C)  # 90 % of 3600 / c
    assert all(math.isnan(value) for value in population.fit_model(walls[:1]))


def test_the_level_off_n_carries_its_leave_one_out_range_and_says_when_it_extrapolates():
    walls = [(n, TRIALS, 60 * (TRIALS / n * F + TRIALS * C)) for n in (2, 4, 8)]
    walls[2] = (8, TRIALS, walls[2][2] * 1.1)  # one size 10 % slow: each fit leaving one size out moves the knee
    knees = [population.level_off(*population.fit_model(walls[:k] + walls[k + 1:])) for k in range(3)]
    assert population.left_out_range(walls) == (min(knees), max(knees)) and min(knees) < max(knees)
    knee = population.level_off(*population.fit_model(walls))
    text = population.knee_text(knee, walls)
    assert text.startswith(f"N ≈ {number_text(knee)} ({number_text(min(knees))}–{number_text(max(knees))} leaving one "
                           "size out), an extrapolation beyond the largest N measured (8)")
    assert all(math.isnan(value) for value in population.left_out_range(walls[:2]))  # two sizes: no spread to show
    within = population.knee_text(6.0, walls)  # a knee inside the sizes measured is no extrapolation
    assert within.startswith("N ≈ 6 (") and "extrapolation" not in within


def test_the_report_answers_with_the_fastest_way_against_the_trials_in_processes(exp11_folder):
    folder, path = exp11_folder
    report = open(path).read()
    # populations of 8: one process of 10 min; ppo_linen.py: 4 pairs of 10 min; ppo_torch.py: 4 pairs of 20 min
    assert ("- CartPole-v1: **ppo_linen_scan.py populations of 8** run the 8 configurations fastest, in 10 min: 4.00× "
            "faster than ppo_linen.py trials, 2 at a time (40 min), 8.00× faster than ppo_torch.py trials, 2 at a time "
            "(80 min).") in report
    assert "- Breakout-MinAtar: no study was run." in report
    assert ("- CartPole-v1: trials per hour 17.1 at N = 2, 30 at N = 4, 48 at N = 8; the fitted model reaches 90% of "
            "its limit at N ≈ 108 (108–108 leaving one size out), an extrapolation beyond the largest N measured (8).")\
        in report
    assert ("**F = 360 s** (start-up and compilation, once per process) and **c = 30 s** per agent, fitted to 3 "
            "population sizes") in report
    assert "at **N ≈ 108 (108–108" in report and "charts/trials_per_hour.png" in report


def test_the_report_tables_each_way_and_compares_the_ways_per_configuration(exp11_folder):
    folder, path = exp11_folder
    report = open(path).read()
    assert "| [ppo_linen_scan.py populations of 2](CartPole-v1-population2/) | 28 min | 2.86× | 17.1 | – | 7 / 1 |" \
        in report
    assert "7 configurations completed in every way" in report
    # configuration 3 is 31 with torch and linen, 30 in the populations: within 1 % of linen's value for 6 of 7
    assert "| ppo_linen_scan.py populations of 8 | 1.00 | 6 of 7 |" in report


def test_the_report_says_how_many_processes_each_way_ran_at_a_time(exp11_folder):
    report = open(exp11_folder[1]).read()
    assert ("(3). Trials in processes ran 2 at a time; the population studies ran 1 process at a time (N = 2, 4, 8). "
            "Each study ran alone") in report
    assert "Trials in Trials in" not in report
    plan = {"studies": [{"part": "A", "population": 0, "workers": 2}, {"part": "A", "population": 8, "workers": 2},
                        {"part": "A", "population": 16, "workers": 2}, {"part": "A", "population": 64, "workers": 1},
                        {"part": "B", "population": 8, "workers": 2}]}
    assert population.workers_text(plan) == ("Trials in processes ran 2 at a time; the population studies ran 2 "
                                             "processes at a time (N = 8, 16); 1 process at a time (N = 64).")


@pytest.mark.parametrize("argv, message", [
    (["out", "--trials", "0"], "--trials: want a positive integer, got '0'"),
    (["out", "--populations", "8,x"], "want positive integers separated by commas, got '8,x'"),
    ([], "the following arguments are required: out"),
])
def test_exp11_refuses_bad_arguments_in_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as stopped:
        exp11.parse(argv)
    assert stopped.value.code == 2 and message in capsys.readouterr().err


def test_exp11s_exp12s_and_exp14s_dry_runs_estimate_their_first_sittings_minutes_and_write_nothing(tmp_path, capsys):
    """At their defaults the estimates give the minutes their own sittings took (exp11 53, exp12 25): the pace they
    carry."""
    assert exp11.main([str(tmp_path / "exp11"), "--dry-run"]) == 0
    assert capsys.readouterr().out == ("exp11: 10 studies of 64 trials of 25 iterations, about 53 min at the pace of "
                                       "its first sitting (a 2-core AMD EPYC VM; another CPU, or a busy one, takes "
                                       "longer)\n")
    assert exp12.main([str(tmp_path / "exp12"), "--dry-run"]) == 0
    assert capsys.readouterr().out.startswith("exp12: 57 runs in 3 repeats of 6 iterations, about 25 min at the pace")
    assert exp14.main([str(tmp_path / "exp14"), "--dry-run"]) == 0
    assert capsys.readouterr().out.startswith("exp14: 51 runs in 3 repeats, about ")
    assert list(tmp_path.iterdir()) == []


def test_exp11_runs_one_tune_study_per_env_and_way_with_the_same_sampler_space_and_seed(tmp_path, monkeypatch, capsys):
    commands = []

    class Ended:
        returncode, stdout = 0, "done\n"

    monkeypatch.setattr(exp11.subprocess, "run", lambda command, **kwargs: commands.append(command) or Ended())
    assert exp11.main([str(tmp_path), "--trials", "5", "--populations", "4,16"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("exp11: 8 studies of 5 trials of 25 iterations, about ")
    assert printed[1].startswith("before a reference sitting: `python -m pytest -m learning`")
    plan = json.load(open(tmp_path / "exp11.json"))
    assert {"family", "model", "stepping", "mhz", "vector", "microarchitecture"} <= set(plan["cpu_details"])
    assert [study["folder"] for study in plan["studies"]] == [
        f"{env}-{key}" for env in ("CartPole-v1", "Breakout-MinAtar")
        for key in ("torch", "linen", "population4", "population16")]
    # populations two at a time (both cores), but one where the 5 trials fill one population of 16
    assert [(study["workers"], study["label"]) for study in plan["studies"][2:4]] == [
        (2, "ppo_linen_scan.py populations of 4, 2 at a time"), (1, "ppo_linen_scan.py populations of 16")]
    studies = [command for command in commands if command[1].endswith("tune.py")]
    report = commands[-1]
    assert report[1:] == ["-m", "report.population", str(tmp_path)]
    for command, study in zip(studies, plan["studies"]):
        words = command[2:command.index(study["script"])]
        options = dict(zip(words[::2], words[1::2]))
        assert options == {"--trials": "5", "--out": str(tmp_path / study["folder"]), "--sampler": "random",
                           "--pruner": "none", "--seed": "1", "--workers": str(study["workers"]), "--eval-seeds": "3",
                           "--space": str(tmp_path / "space.json"), "--population": str(study["population"])}
        assert command[command.index(study["script"]) + 1:] == [
            "--env-id", study["part"], "--num-envs", "16", "--num-steps", "128", "--num-iterations", "25"]
    assert set(json.load(open(tmp_path / "space.json"))) == {
        "learning_rate", "ent_coef", "clip_coef", "gamma", "gae_lambda", "vf_coef", "max_grad_norm"}
