"""exp13's report (report/budget.py) on a synthetic exp13 folder: two cells of four studies built as in
tests/test_tune_report.py, with known reruns, no script run; and tools/exp13.py's bad input, estimate, tune.py commands,
alternation and choice of what to rerun (a PBT agent by its replay)."""
import json
import math
import signal

import pytest

from report import budget, cells as report_cells
from test_tune_report import COMPLETE, make_study, trial
import exp13

WAYS = ("population", "pruned", "seeds", "pbt")
# each cell's fresh seeds and, per way, its pick's rerun values on them: PBT best, the populations next (told apart
# from PBT: every paired difference is 10 or more), the seeds way close to the populations, the pruned study no pick
RERUNS = {1: {"population": [100.0, 110.0], "seeds": [101.0, 109.0], "pbt": [120.0, 125.0]},
          2: {"population": [90.0, 100.0], "seeds": [95.0, 96.0], "pbt": [110.0, 112.0]}}


def cell_score(seed: int) -> dict:
    configs, picks = [], {}
    for way in WAYS:
        values = RERUNS[seed].get(way)
        if values is None:
            picks[way] = {"equal": None}
            continue
        entry = {"replay": f"pbt/trial_0001"} if way == "pbt" else {"params": {"learning_rate": len(configs)}}
        picks[way] = {"equal": {"trial": 1, "config": len(configs)}}
        configs.append({**entry, "values": values})
    return {"equal_time_s": 180.0, "seeds": [100_000 + seed, 100_001 + seed], "configs": configs, "picks": picks}


@pytest.fixture(scope="module")
def exp13_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exp13")
    cells = []
    for seed in (1, 2):
        name = report_cells.cell_name("Breakout-MinAtar", 100, seed)
        studies = []
        for way in WAYS:
            # three trials one after another: two end within the 3 minutes, one at 4 min (not counted)
            spans = ((0.0, 1.0), (1.0, 2.0), (2.0, 4.0))
            make_study(folder / f"{name}-{way}", [trial(COMPLETE, span, 10.0 * k, k=k) for k, span in enumerate(spans)])
            studies.append({"way": way, "label": f"the {way} way", "folder": f"{name}-{way}"})
        (folder / f"{name}-score.json").write_text(json.dumps(cell_score(seed)))
        cells.append({"name": name, "env": "Breakout-MinAtar", "length": 100, "seed": seed, "minutes": 3.0,
                      "studies": studies})
    plan = {"machine": "AMD EPYC 9B45", "cells": cells, "invocations": [
        {"argv": ["tools/exp13.py", "out", "--env", "Breakout-MinAtar"], "date": "2026-11-29T08:30+00:00",
         "commit": "abc1234", "load": "0.10 0.20 0.30", "minutes": 3.0,
         "workload": "--num-envs 16 --num-steps 128 --num-iterations 100", "score_seeds": 2}]}
    (folder / "exp13.json").write_text(json.dumps(plan))
    return str(folder), open(budget.write_report(str(folder))).read()


def test_the_answer_names_the_way_whose_pick_reruns_best_and_by_how_much_seed_by_seed(exp13_folder):
    text = exp13_folder[1]
    answer = text.split("## The answer", 1)[1].split("*The numbers:*", 1)[0]
    # PBT: 120, 125, 110, 112 -> 116.75; the populations 100, 110, 90, 100 -> 100: 17.5 and 16 less by study seed;
    # both study seeds on one side happen 1 time in 2 with no difference: 2 study seeds tell nothing apart
    assert ("Breakout-MinAtar, 3 min a way on 2 cores, 100 iterations a trial, 2 study seeds: no way's pick is told "
            "apart as the best (2 study seeds cannot tell a difference at 95 %); the highest mean: the pbt way 117 "
            "[range 111, 122]") in answer
    assert ("the population way 100 [range 95, 105], 16.8 less on average: below the first in each of the 2 study "
            "seeds, by 16 to 17.5; 2 study seeds cannot tell a difference at 95 %") in answer
    assert "told apart" not in answer.replace("no way's pick is told apart", "") and "**" not in answer
    assert "the pruned way –, no rerun" in answer  # no pick within the minutes: no rerun


def test_the_table_counts_the_trials_within_the_minutes_and_gives_each_study_seeds_rerun(exp13_folder):
    text = exp13_folder[1]
    # two of three trials ended within 3 min; the best among them has value 10 (its own seed)
    assert "| the pbt way | 2 (2–2) | 10 (10–10) | 117 (111–122) | 117 [" in text
    assert "| the population way | 2 (2–2) | 10 (10–10) | 100 (95–105) | 100 [" in text
    assert "](charts/breakout_minatar_best.png)" in text
    assert "| `tools/exp13.py out --env Breakout-MinAtar` | 2026-11-29T08:30+00:00 | abc1234 |" in text


def test_a_single_pair_is_never_told_apart(tmp_path):
    cells = report_cells.load_cells(str(tmp_path), {"cells": []})
    assert cells == []
    cell = report_cells.Cell("CartPole-v1", 10, 1, "c", {}, {}, {
        "equal_time_s": 60.0, "seeds": [7], "picks": {"a": {"equal": {"config": 0}}, "b": {"equal": {"config": 1}}},
        "configs": [{"values": [10.0]}, {"values": [5.0]}]})
    found = budget.difference([cell], "a", "b")
    assert (found.mean, found.low, found.high, found.told_apart) == (5.0, 5.0, 5.0, False)


def picked_cell(seed: int, picks: dict, configs: list) -> report_cells.Cell:
    """A cell of study seed `seed` without studies: {way: its pick's configuration index}, each configuration's rerun
    values on the 3 fresh seeds."""
    return report_cells.Cell("Breakout-MinAtar", 244, seed, f"c{seed}", dict.fromkeys(picks), {}, {
        "equal_time_s": 300.0, "seeds": [100_001, 100_002, 100_003],
        "picks": {way: {"equal": {"trial": 0, "config": config}} for way, config in picks.items()},
        "configs": [{"values": values} for values in configs]})


LABELS = {"population": "random populations of 8", "seeds": "random populations of 4 trials x 2 seeds"}


def test_a_paired_bootstrap_resamples_the_study_seeds_not_the_reruns_of_one_pick():
    # per study seed the difference is 1, 1 and -0.3 on each of the 3 fresh seeds: the 9 reruns, resampled as if
    # independent, keep their mean above 0 (told apart); the 3 study seeds, the independent unit, do not
    cells = [picked_cell(1, {"population": 0, "seeds": 1}, [[11.0] * 3, [10.0] * 3]),
             picked_cell(2, {"population": 0, "seeds": 1}, [[11.0] * 3, [10.0] * 3]),
             picked_cell(3, {"population": 0, "seeds": 1}, [[10.0] * 3, [10.3] * 3])]
    text = budget.answer_text("Breakout-MinAtar", cells, LABELS)
    assert ("random populations of 4 trials x 2 seeds 10.1 [range 10, 10.3], 0.567 less on average: below the first "
            "in study seeds 1 and 2, by 1, and above it in study seed 3, by 0.3; 3 study seeds cannot tell a "
            "difference at 95 %") in text
    assert "**" not in text  # no winner in bold inside overlapping intervals
    assert ("no way's pick is told apart as the best (3 study seeds cannot tell a difference at 95 %); the highest "
            "mean: random populations of 8 10.7 [range 10, 11]") in text


def test_three_study_seeds_on_one_side_are_given_seed_by_seed_never_told_apart():
    # exp13's CartPole-v1 TPE + Hyperband: below the first in each of the 3 study seeds, by 49.3 to 91; all 3 on one
    # side happen 1 time in 4 with no difference (a sign test's smallest two-sided p over n units is 2 / 2^n)
    cells = [picked_cell(seed, {"population": 0, "seeds": 1}, [[500.0] * 3, [500.0 - gap] * 3])
             for seed, gap in ((1, 49.3), (2, 65.3), (3, 91.0))]
    found = budget.difference(cells, "population", "seeds")
    assert (found.low, found.high, found.told_apart) == (pytest.approx(49.3), pytest.approx(91.0), False)
    text = budget.answer_text("CartPole-v1", cells, LABELS)
    assert ("random populations of 4 trials x 2 seeds 431 [range 409, 451], 68.5 less on average: below the first in "
            "each of the 3 study seeds, by 49.3 to 91; 3 study seeds cannot tell a difference at 95 %") in text
    assert ": told apart" not in text and "**" not in text
    assert budget.can_tell(5) is False and budget.can_tell(6) is True  # 2/2^5 = 0.0625, 2/2^6 = 0.031


def test_six_study_seeds_on_one_side_are_told_apart_and_the_best_way_is_bold():
    cells = [picked_cell(seed, {"population": 0, "seeds": 1}, [[12.0] * 3, [12.0 - 1 - seed % 2] * 3])
             for seed in range(1, 7)]
    text = budget.answer_text("Breakout-MinAtar", cells, LABELS)
    assert "**random populations of 8** gave the best agent, its rerun 12 [95 % interval 12, 12]" in text
    assert ("random populations of 4 trials x 2 seeds 10.5 [95 % interval 10.2, 10.8], 1.5 less [95 % interval 1.17, "
            "1.83] over study seeds 1, 2, 3, 4, 5 and 6: told apart") in text


def test_the_bootstrap_over_study_seeds_is_enumerated_so_no_random_seed_moves_a_bound():
    # exp13's Breakout-MinAtar populations of 8 against 4 x 2 seeds: study seed 1's difference 2.85, the others 0
    assert budget.unit_interval([0.0, 0.0, 2.85]) == (0.0, 2.85)  # 3 units: the range of their means
    low, high = budget.unit_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    assert (round(low, 6), round(high, 6)) == (1.8, 4.2)  # every one of the 5^5 resamples, weighed exactly
    assert budget.unit_interval([4.0]) == (4.0, 4.0) and all(map(math.isnan, budget.unit_interval([])))


def test_identical_picks_are_the_same_configuration_not_a_tie_inside_an_interval():
    # study seeds 2 and 3: both ways picked configuration 0 (the same fresh seeds: a difference of 0 by construction);
    # study seed 1: different picks, 3 apart on every fresh seed
    cells = [picked_cell(1, {"population": 0, "seeds": 1}, [[11.0, 12.0, 13.0], [14.0, 15.0, 16.0]]),
             picked_cell(2, {"population": 0, "seeds": 0}, [[9.0, 10.0, 11.0]]),
             picked_cell(3, {"population": 0, "seeds": 0}, [[15.0, 14.0, 16.0]])]
    text = budget.answer_text("Breakout-MinAtar", cells, LABELS)
    assert ("random populations of 8 12.3 [range 10, 15], the same configuration in study seeds 2 and 3; below the "
            "first in study seed 1, by 3; one study seed cannot tell a difference at 95 %") in text
    assert ": told apart" not in text and "not told apart" not in text and "**" not in text
    same = [picked_cell(seed, {"population": 0, "seeds": 0}, [[10.0 + seed] * 3]) for seed in (1, 2, 3)]
    assert "the same configuration in every study seed" in budget.answer_text("Breakout-MinAtar", same, LABELS)


def test_the_best_chart_draws_the_reruns_on_axes_of_their_own_with_no_marker_on_another(tmp_path, monkeypatch):
    # two ways whose picks rerun alike in every study seed (the same configuration): side by side, not on each other
    cells = [picked_cell(seed, {"population": 0, "seeds": 0}, [[12.0] * 3]) for seed in (1, 2, 3)]
    figures = []
    monkeypatch.setattr(report_cells, "time_points", lambda study: [(1.0, 5.0), (2.0, 9.0)])
    monkeypatch.setattr(report_cells.Figure, "savefig", lambda figure, path, **kwargs: figures.append(figure))
    report_cells.best_chart({244: cells}, {}, str(tmp_path / "best.png"))
    above, below = figures[0].axes[:2]
    assert "best objective so far" in above.get_ylabel() and "rerun on fresh seeds" in below.get_ylabel()
    marks = [tuple(point) for collection in below.collections for point in collection.get_offsets()]
    assert len(marks) == 6 and len(set(marks)) == 6 and {y for _, y in marks} == {12.0}


@pytest.mark.parametrize("argv, message", [
    (["out", "--env", "CartPole-v1", "--minutes", "0"], "want minutes above 0"),
    (["out", "--env", "CartPole-v1", "--population", "8", "--seeds-per-trial", "3"], "must divide --population"),
    (["out", "--env", "CartPole-v1", "--pbt", "1"], "--pbt wants at least 2 agents"),
    (["out", "--env", "Pong"], "argument --env: invalid choice: 'Pong'"),
])
def test_exp13_refuses_bad_arguments_in_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as stopped:
        exp13.parse(argv)
    assert stopped.value.code == 2 and message in capsys.readouterr().err


def test_exp13_prints_its_estimate_first_and_a_dry_run_writes_nothing(tmp_path, capsys):
    assert exp13.main([str(tmp_path / "out"), "--env", "Breakout-MinAtar", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("exp13 Breakout-MinAtar: 3 cell(s) of 4 studies of 3 min (study seeds [1, 2, 3], 100 "
                          "iterations a trial); about ")
    minutes = int(out.split("about ")[1].split(" min")[0])
    assert 36 < minutes < 50  # 3 x 4 x 3 min of budget, plus the stops and the reruns
    assert not (tmp_path / "out").exists()


def test_exp13_runs_four_studies_per_cell_in_turning_order_each_with_its_minutes(tmp_path, monkeypatch):
    commands, scored = [], []

    class Study:
        def __init__(self, command, **kwargs):
            commands.append(command)

        def wait(self, timeout=None):
            return 128 + signal.SIGTERM  # stopped at its minutes, as exp13 stops a study still running

    monkeypatch.setattr(exp13.subprocess, "Popen", Study)
    class Ended:
        returncode, stdout = 0, ""

    monkeypatch.setattr(exp13.subprocess, "run", lambda command, **kwargs: commands.append(command) or Ended())
    monkeypatch.setattr(exp13, "score", lambda out, name, studies, seed, workload, options: scored.append(name))
    exp13.main([str(tmp_path), "--env", "CartPole-v1", "--study-seeds", "1,2", "--minutes", "2.5"])
    plan = json.load(open(tmp_path / "exp13.json"))
    assert scored == ["CartPole-v1-L100-s1", "CartPole-v1-L100-s2"]
    assert [[study["way"] for study in cell["studies"]] for cell in plan["cells"]] == [
        ["population", "pruned", "seeds", "pbt"], ["pruned", "seeds", "pbt", "population"]]
    studies = {study["folder"]: study for cell in plan["cells"] for study in cell["studies"]}
    tune_commands = [command for command in commands if command[1].endswith("tune.py")]
    assert len(tune_commands) == 8
    for command in tune_commands:
        words = command[2:]
        options = dict(zip(words[:words.index(next(w for w in words if w.endswith(".py")))][::2],
                           words[1:words.index(next(w for w in words if w.endswith(".py")))][::2]))
        study = studies[options["--out"].split("/")[-1]]
        assert (options["--minutes"], options["--workers"], options["--sampler"], options["--pruner"]) == (
            "2.5", "2", study["sampler"], study["pruner"])
        assert command[-1] == "100" and command[-2] == "--num-iterations"
        expected = {"population": {"--population": "8"}, "pruned": {"--population": "0"},
                    "seeds": {"--population": "4", "--seeds-per-trial": "2"},
                    "pbt": {"--population": "0", "--pbt": "8"}}[study["way"]]
        assert {key: options.get(key) for key in expected} == expected, study["way"]
    assert commands[-1][1:] == ["-m", "report.budget", str(tmp_path)]


def test_exp13_reruns_each_way_s_pick_within_the_minutes_and_a_pbt_agent_by_its_replay(tmp_path, monkeypatch):
    studies = []
    for way in WAYS:  # trial 1 (value 10) ends at 2 min, trial 2 (value 20) at 4: after the 3 minutes
        make_study(tmp_path / way, [trial(COMPLETE, span, 10.0 * k, k=k) for k, span in enumerate(((0, 1), (1, 2),
                                                                                                   (2, 4)))])
        studies.append({"way": way, "folder": way})
    reruns, replays = [], []
    monkeypatch.setattr(exp13, "rerun", lambda out, name, index, params, seeds, workload, env:
                        reruns.append((index, params)) or [float(index)] * len(seeds))
    monkeypatch.setattr(exp13, "replay", lambda out, name, folder, number, seed, workload, env:
                        replays.append((folder, number, seed)) or 50.0)
    options = exp13.parse([str(tmp_path), "--env", "CartPole-v1", "--score-seeds", "2"])
    exp13.score(str(tmp_path), "cell", studies, 1, [], options)
    data = json.load(open(report_cells.score_path(str(tmp_path), "cell")))
    assert data["equal_time_s"] == 180.0 and data["seeds"] == [100_001, 100_002]
    assert {way: pick["equal"]["trial"] for way, pick in data["picks"].items()} == dict.fromkeys(WAYS, 1)
    # configuration 1 is the same in the three ways that sample it (one rerun); the PBT agent is replayed per seed
    assert [index for index, _ in reruns] == [0] and sorted(replays) == [("pbt", 1, 100_001), ("pbt", 1, 100_002)]
    assert data["configs"][1] == {"replay": "pbt/trial_0001", "values": [50.0, 50.0]}
    assert {way: pick["equal"]["config"] for way, pick in data["picks"].items()} == {
        "population": 0, "pruned": 0, "seeds": 0, "pbt": 1}


def test_the_report_says_how_many_trials_tpe_drew_itself_and_whether_the_pick_was_a_random_start_up_draw(tmp_path):
    # 12 trials one after another: TPE draws trials 10 and 11 itself (10 had finished), 0-9 at random; picks: trial 3
    make_study(tmp_path / "long", [trial(COMPLETE, (k, k + 1), float(k), k=k) for k in range(12)])
    make_study(tmp_path / "short", [trial(COMPLETE, (k, k + 1), float(k), k=k) for k in range(6)])
    plan = {"cells": [{"studies": [{"way": "pruned", "sampler": "tpe"}]}]}
    long = report_cells.load_study(str(tmp_path), "long")
    picks = {"picks": {"pruned": {"equal": {"trial": 3, "config": 0}}}}
    cells = [report_cells.Cell("CartPole-v1", 50, seed, "c", {"pruned": long}, {}, picks) for seed in (1, 2)]
    assert budget.startup_lines(plan, cells, {"pruned": "TPE + Hyperband trials"}) == [
        "*TPE + Hyperband trials:* TPE draws at random until 10 of a study's trials have finished (completed or "
        "pruned: Optuna's start-up); here TPE drew 2 (2–2) of the 12 (12–12) trials of a study itself, the others "
        "at random; the pick was one of the random draws in study seeds 1 and 2.", ""]
    cells = [cell._replace(studies={"pruned": report_cells.load_study(str(tmp_path), "short")}) for cell in cells]
    assert budget.startup_lines(plan, cells, {"pruned": "TPE + Hyperband trials"})[0].endswith(
        "here TPE drew 0 (0–0) of the 6 (6–6) trials of a study itself, the others at random: random search with "
        "Hyperband.")
