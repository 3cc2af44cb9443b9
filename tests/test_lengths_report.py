"""exp15's report (report/lengths.py) on a synthetic exp15 folder: each cell's three studies built as in
tests/test_tune_report.py, timed so that the trials in processes overtake the populations between the two lengths, no
script run; and tools/exp15.py's bad input, its tune.py commands, its alternation and its choice of what to rerun."""
import json

import pytest

from report import cells as report_cells, lengths
from search.storage import load
from test_tune_report import COMPLETE, PRUNED, START, configuration, make_study, trial
import exp15

# minutes: each way's trials per (length, study seed); the population's end together, the trials two at a time
WALLS = {(10, 1): (2.0, 4.0, 3.0), (10, 2): (2.2, 4.2, 3.1), (100, 1): (10.0, 8.0, 6.0), (100, 2): (10.5, 8.0, 6.5)}


def way_trials(way: str, minutes: float) -> list:
    """Four configurations: the population's end together; the others two at a time, half the time each; the pruned
    study's trial 3 pruned. Configuration k's value is 10 k (the trials'), 10 k + 1 (the population's)."""
    if way == "population":
        return [trial(COMPLETE, (0, minutes), 10.0 * k + 1, k=k) for k in range(4)]
    half = minutes / 2
    return [trial(PRUNED if way == "pruned" and k == 3 else COMPLETE, (k // 2 * half, (k // 2 + 1) * half),
                  None if way == "pruned" and k == 3 else 10.0 * k, k=k) for k in range(4)]


# the rerun values on the 2 fresh seeds of configuration k (one of configuration 1's runs failed)
RERUNS = {0: [5.0, 7.0], 1: [20.0, None], 2: [30.0, 34.0], 3: [40.0, 44.0]}


def score(folder, name: str) -> dict:
    """The reruns, as tools/exp15.py picks them: the equal time is the fastest way's end; by it, at 10 iterations
    every way had finished configurations (the populations all four, the others their first pair), at 100 the
    populations nothing (the pruned study ends first)."""
    studies = {way: load(str(folder / f"{name}-{way}"))[1] for way in ("population", "trials", "pruned")}
    moment = report_cells.equal_time(studies.values())
    picks = {way: {at: None if trial is None else {"trial": trial.number, "config": trial.number}
                   for at, trial in found.items()} for way, found in report_cells.ways_best(studies, moment).items()}
    return {"equal_time_s": moment, "seeds": [100001, 100002], "picks": picks,
            "configs": [{"params": configuration(k), "values": RERUNS[k]} for k in range(4)]}


@pytest.fixture(scope="module")
def exp15_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exp15")
    cells = []
    for (length, seed), walls in WALLS.items():
        name = report_cells.cell_name("CartPole-v1", length, seed)
        studies = []
        for way, minutes in zip(("population", "trials", "pruned"), walls):
            (folder / f"{name}-{way}").mkdir()
            make_study(folder / f"{name}-{way}", way_trials(way, minutes))
            studies.append({"way": way, "label": f"the {way} way", "folder": f"{name}-{way}"})
        (folder / f"{name}-score.json").write_text(json.dumps(score(folder, name)))
        cells.append({"name": name, "env": "CartPole-v1", "length": length, "seed": seed, "studies": studies})
    plan = {"machine": "AMD EPYC", "invocations": [
        {"argv": ["tools/exp15.py", "out", "--env", "CartPole-v1"], "date": "2026-11-29T04:26+00:00",
         "commit": "abc1234", "load": "0.48 1.33 1.90", "trials": 4, "workload": "--num-envs 16", "score_seeds": 2}],
        "cells": cells}
    (folder / "exp15.json").write_text(json.dumps(plan))
    return str(folder), lengths.write_report(str(folder))


def test_the_report_locates_the_crossover_between_the_lengths_measured(exp15_folder):
    text = open(exp15_folder[1]).read()
    assert ("- CartPole-v1, the wall time of the trials way against the population way: 1.95× at 10, 0.78× at 100 "
            "iterations: they overtake the populations between 10 and 100 iterations") in text
    assert "the pruned way against the populations: 1.45× at 10, 0.61× at 100 iterations: they overtake" in text


def test_without_a_crossover_the_report_says_none_up_to_the_longest_length_and_no_further(exp15_folder):
    folder, _ = exp15_folder
    plan = json.load(open(f"{folder}/exp15.json"))
    cells = report_cells.grouped(report_cells.load_cells(folder, plan))["CartPole-v1"]
    assert lengths.crossover_text({10: cells[10]}, "trials") == (
        "1.95× at 10 iterations: the populations are faster at every length measured; no crossover up to 10 "
        "iterations (beyond is not measured)")


def test_at_equal_time_each_way_is_scored_by_the_rerun_of_its_best_by_then(exp15_folder):
    text = open(exp15_folder[1]).read()
    # by 2 min the population's pick (configuration 3) reruns at 42, the others' (configuration 1, one seed's run
    # failed) at 20: below it in both study seeds, which 2 study seeds cannot tell apart at 95 %; the trials and the
    # pruned study picked the same one
    assert ("- CartPole-v1, at equal wall time, the best found, rerun on fresh seeds (median over study seeds): 10 "
            "iterations, equal time 2.1 min (2 min–2.2 min) (the end of the population way): the population way 42; "
            "the trials way 20; the pruned way 20 (medians; the trials way below the first in each of the 2 study "
            "seeds, by 22; the pruned way below the first in each of the 2 study seeds, by 22; 2 study seeds cannot "
            "tell a difference at 95 %; the trials way and the pruned way picked the same configuration in every "
            "study seed).") in text
    assert "| 100 | the trials way | 6.25 min (6 min–6.5 min) | 20 (20–20) | 42 (42–42) | 30 (30–30) |" in text
    assert "| 100 | the population way | 6.25 min (6 min–6.5 min) | nothing finished by then | 42 (42–42) |" in text


def test_an_equal_time_comparison_where_a_way_finished_nothing_says_so_and_compares_nothing(exp15_folder):
    text = open(exp15_folder[1]).read()
    # at 100 iterations the pruned study ends first, at 6 min, and the populations end at 10: they had finished nothing
    line = next(line for line in text.splitlines() if "at equal wall time" in line and ": 100 iterations" in line)
    assert line.endswith("100 iterations, equal time 6.25 min (6 min–6.5 min) (the end of the pruned way): the "
                         "population way had finished nothing by then (in every study seed): nothing compared at equal "
                         "time.")
    assert "the trials way 20" not in line and "told apart" not in line


def test_picks_at_a_ceiling_are_level_by_construction_and_not_compared(monkeypatch):
    # CartPole-v1's episodes end at 500 steps: every pick reruns at 499.2-500, whatever the way found
    cells = [report_cells.Cell("CartPole-v1", 244, seed, "c", dict.fromkeys(("population", "trials")), {}, {
        "equal_time_s": 30.0, "seeds": [1, 2], "configs": [{"params": {}, "values": [500.0, 500.0]},
                                                           {"params": {}, "values": [500.0, 498.4]}],
        "picks": {way: {"equal": {"trial": 0, "config": k}} for k, way in enumerate(("population", "trials"))}})
        for seed in (1, 2)]
    monkeypatch.setattr(lengths, "wall", lambda cell, way: {"population": 30.0, "trials": 45.0}[way])
    text = lengths.equal_text(244, cells, {"population": "populations", "trials": "trials"})
    assert text == ("244 iterations, equal time 30 s (30 s–30 s) (the end of populations): every way's pick reruns "
                    "at 499–500, at CartPole-v1's ceiling of 500: level by construction, nothing compared")


def equal_cells(values: dict) -> list:
    """Cells without studies, one per study seed: {way: its pick's rerun mean per study seed}, each pick its own
    configuration."""
    ways = list(values)
    seeds = range(1, len(values[ways[0]]) + 1)
    return [report_cells.Cell("Breakout-MinAtar", 25, seed, "c", dict.fromkeys(ways), {}, {
        "equal_time_s": 20.0, "seeds": [1, 2], "configs": [{"params": {}, "values": [values[way][seed - 1]] * 2}
                                                           for way in ways],
        "picks": {way: {"equal": {"trial": 0, "config": k}} for k, way in enumerate(ways)}}) for seed in seeds]


def test_three_study_seeds_apart_are_given_seed_by_seed_never_told_apart(monkeypatch):
    # the populations' reruns above the trials' in each of the 3 study seeds, their ranges apart: that happens 1 time
    # in 4 with no difference, so 3 study seeds cannot tell it at 95 %
    monkeypatch.setattr(lengths, "wall", lambda cell, way: {"population": 20.0, "trials": 30.0}[way])
    cells = equal_cells({"population": [10.0, 12.0, 11.0], "trials": [6.0, 9.0, 4.0]})
    text = lengths.equal_text(25, cells, {"population": "populations", "trials": "trials"})
    assert text.endswith("populations 11; trials 6 (medians; trials below the first in each of the 3 study seeds, by "
                         "3 to 7; 3 study seeds cannot tell a difference at 95 %)")
    assert "lies apart" not in text and "told apart" not in text


def test_six_study_seeds_whose_ranges_lie_apart_are_told_apart(monkeypatch):
    monkeypatch.setattr(lengths, "wall", lambda cell, way: {"population": 20.0, "trials": 30.0}[way])
    cells = equal_cells({"population": [10.0, 12.0, 11.0, 13.0, 10.0, 12.0], "trials": [6.0, 9.0, 4.0, 5.0, 7.0, 8.0]})
    text = lengths.equal_text(25, cells, {"population": "the population way", "trials": "the trials way"})
    assert text.endswith("the population way 11.5; the trials way 6.5 (medians; the population way's range over the "
                         "study seeds lies apart from every other's)")


def test_one_clock_ends_a_population_s_agents_at_their_tell_as_it_ends_a_trial(tmp_path):
    # the population's process ended at 1.5 min, its agents were told at 2 min: a trial in a process ends at its tell
    ended = (START.timestamp() + 90.0)
    make_study(tmp_path / "population", [trial(COMPLETE, (0, 2.0), 1.0, k=k, user_attrs={"population_end": ended})
                                          for k in range(2)])
    plan = {"cells": [{"name": "c", "env": "CartPole-v1", "length": 25, "seed": 1,
                       "studies": [{"way": "population", "label": "p", "folder": "population"}]}]}
    (cell,) = report_cells.load_cells(str(tmp_path), plan)
    assert report_cells.wall(cell, "population") == pytest.approx(120.0)
    study = cell.studies["population"]
    assert report_cells.best_by(study, 100.0) is None and report_cells.best_by(study, 120.0).number == 0


def test_a_tpe_study_too_short_to_leave_its_start_up_is_named_random_search(tmp_path):
    # one after another: trial n begins as trial n - 1 ends, so trials 10 and 11 begin once 10 have finished
    make_study(tmp_path / "short", [trial(COMPLETE, (k, k + 1), 1.0, k=k) for k in range(8)])
    make_study(tmp_path / "long", [trial(PRUNED if k % 2 else COMPLETE, (k, k + 1), None if k % 2 else 1.0, k=k)
                                   for k in range(12)])
    short, long = (report_cells.load_study(str(tmp_path), name) for name in ("short", "long"))
    assert report_cells.tpe_drawn(short) == [] and report_cells.tpe_drawn(long) == [10, 11]  # pruned trials count
    label = "ppo_linen.py trials, 2 at a time, TPE + Hyperband"
    assert report_cells.sampled_label(label, "tpe", [short, short]) == (
        "ppo_linen.py trials, 2 at a time, random search (TPE's start-up) + Hyperband")
    assert report_cells.sampled_label(label, "tpe", [short, long]) == label
    assert report_cells.sampled_label(label, "random", [short]) == label


def test_the_wall_chart_joins_no_lengths_so_it_draws_no_crossing_it_did_not_measure(exp15_folder, monkeypatch):
    folder, _ = exp15_folder
    figures = []
    monkeypatch.setattr(lengths.Figure, "savefig", lambda figure, path, **kwargs: figures.append(figure))
    plan = json.load(open(f"{folder}/exp15.json"))
    groups = report_cells.grouped(report_cells.load_cells(folder, plan))["CartPole-v1"]
    lengths.wall_chart(groups, {"population": "p", "trials": "t", "pruned": "r"}, f"{folder}/wall.png")
    (axes,) = figures[0].axes
    assert all(len(line.get_xdata()) < 2 for line in axes.lines)  # no segment from one length to the next
    assert "no line joins them" in open(exp15_folder[1]).read()


def test_the_cost_table_gives_each_way_s_wall_time_and_ratio_with_its_spread(exp15_folder):
    text = open(exp15_folder[1]).read()
    assert "| 10 | the population way | 2.1 min (2 min–2.2 min) | 1 | 8 / 0 |" in text
    assert "| 10 | the pruned way | 3.05 min (3 min–3.1 min) | 1.45× (1.41×–1.50×) | 6 / 2 |" in text
    assert "`tools/exp15.py out --env CartPole-v1` | 2026-11-29T04:26+00:00 | abc1234 | 0.48 1.33 1.90" in text


def test_best_by_counts_only_the_trials_ended_by_the_moment(tmp_path):
    make_study(tmp_path, way_trials("trials", 4.0))
    study = load(str(tmp_path))[1]
    assert report_cells.best_by(study, 60.0) is None  # the first two end at 2 min
    assert report_cells.best_by(study, 120.0).value == 10.0 and report_cells.best_by(study).value == 30.0
    assert report_cells.equal_time([study]) == pytest.approx(240.0)


@pytest.mark.parametrize("argv, message", [
    (["out", "--env", "CartPole-v1", "--lengths", "25,0"], "want positive integers separated by commas, got '25,0'"),
    (["out", "--env", "Pong"], "argument --env: invalid choice: 'Pong'"),
    (["out"], "the following arguments are required: --env"),
])
def test_exp15_refuses_bad_arguments_in_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as stopped:
        exp15.parse(argv)
    assert stopped.value.code == 2 and message in capsys.readouterr().err


def test_exp15_prints_its_estimate_first_and_a_dry_run_writes_nothing(tmp_path, capsys):
    assert exp15.main([str(tmp_path / "out"), "--env", "Breakout-MinAtar", "--lengths", "25,244", "--study-seeds", "1",
                       "--dry-run"]) == 0
    options = exp15.parse(["out", "--env", "Breakout-MinAtar"])
    minutes = sum(exp15.estimate_seconds(exp15.COSTS["Breakout-MinAtar"], n, options) for n in (25, 244)) / 60
    assert capsys.readouterr().out.startswith("exp15 Breakout-MinAtar: 2 cell(s) of 3 studies of 8 trials (lengths "
                                              f"[25, 244], study seeds [1]); about {minutes:.0f} min")
    assert 5 < minutes < 15  # the 8 minutes this cell took in results/cpu-2core-exp15, within a factor of 2
    assert not (tmp_path / "out").exists()


def test_exp15_runs_three_studies_per_cell_in_turning_order_then_the_reruns(tmp_path, monkeypatch, capsys):
    commands, scored = [], []

    class Ended:
        returncode, stdout = 0, "done\n"

    monkeypatch.setattr(exp15.subprocess, "run", lambda command, **kwargs: commands.append(command) or Ended())
    monkeypatch.setattr(exp15, "score", lambda out, name, studies, seed, workload, options: scored.append(name))
    assert exp15.main([str(tmp_path), "--env", "CartPole-v1", "--lengths", "25,244", "--study-seeds", "1,2"]) == 0
    plan = json.load(open(tmp_path / "exp15.json"))
    names = [cell["name"] for cell in plan["cells"]]
    assert names == scored == ["CartPole-v1-L25-s1", "CartPole-v1-L244-s1", "CartPole-v1-L25-s2", "CartPole-v1-L244-s2"]
    assert [[study["way"] for study in cell["studies"]] for cell in plan["cells"]] == [
        ["population", "trials", "pruned"], ["trials", "pruned", "population"], ["pruned", "population", "trials"],
        ["population", "trials", "pruned"]]
    studies = [command for command in commands if command[1].endswith("tune.py")]
    assert commands[-1][1:] == ["-m", "report.lengths", str(tmp_path)]
    for command, study in zip(studies, [study for cell in plan["cells"] for study in cell["studies"]]):
        words = command[2:command.index(study["script"])]
        options = dict(zip(words[::2], words[1::2]))
        assert (options["--sampler"], options["--pruner"], options["--workers"], options["--population"]) == (
            study["sampler"], study["pruner"], "2", str(study["population"]))
    seeds_and_lengths = [(dict(zip(c[2:], c[3:]))["--seed"], c[-1]) for c in studies]
    assert seeds_and_lengths == [(s, n) for s, n in (("1", "25"), ("1", "244"), ("2", "25"), ("2", "244"))
                                 for _ in range(3)]
    assert plan["invocations"][0]["argv"][:2] == ["tools/exp15.py", str(tmp_path)]


def test_exp15_s_pruned_way_samples_as_its_name_says_random_search_where_tpe_would_not_leave_its_start_up():
    # 8 trials: TPE would draw all 8 at random (its start-up lasts until 10 have finished): the random sampler, named
    short, long = (next(way for way in exp15.ways(4, trials) if way.key == "pruned") for trials in (8, 12))
    assert (short.sampler, short.pruner, short.label) == ("random", "hyperband",
                                                          "ppo_linen.py trials, 2 at a time, random search + Hyperband")
    assert (long.sampler, long.label) == ("tpe", "ppo_linen.py trials, 2 at a time, TPE + Hyperband")


def test_exp15_reruns_each_way_s_best_by_the_equal_time_and_at_its_end_once_per_configuration(tmp_path, monkeypatch):
    studies = []
    for way, minutes in (("population", 2.0), ("trials", 4.0), ("pruned", 3.0)):
        make_study(tmp_path / way, way_trials(way, minutes))
        studies.append({"way": way, "folder": way})
    reruns = []
    monkeypatch.setattr(exp15, "rerun", lambda out, name, index, params, seeds, workload, env:
                        reruns.append((index, params)) or [float(index)] * len(seeds))
    options = exp15.parse([str(tmp_path), "--env", "CartPole-v1", "--score-seeds", "2"])
    exp15.score(str(tmp_path), "cell", studies, 1, [], options)
    data = json.load(open(report_cells.score_path(str(tmp_path), "cell")))
    assert data["equal_time_s"] == pytest.approx(120.0) and data["seeds"] == [100_001, 100_002]
    picks = {way: {at: pick and pick["trial"] for at, pick in found.items()} for way, found in data["picks"].items()}
    # by 2 min: the population all four (best 3), the trials their first pair (ending at 2 min: counted), the pruned
    # study its first pair (1.5 min); at their ends the pruned study's best is trial 2 (trial 3 was pruned)
    assert picks == {"population": {"equal": 3, "end": 3}, "trials": {"equal": 1, "end": 3},
                     "pruned": {"equal": 1, "end": 2}}
    # configuration k is the same in every way: configurations 3, 1 and 2, each rerun once
    assert sorted(index for index, _ in reruns) == [0, 1, 2] and [c["values"] for c in data["configs"]] == [[0.0] * 2,
                                                                                              [1.0] * 2, [2.0] * 2]
