"""The reports of tune.py's studies (report/study.py) and of exp10 (report/search.py), on synthetic studies built in
temporary folders: trials added to Optuna storages with chosen values, states, reasons and times, no script run."""
import datetime
import json
import os
import re
import subprocess
import sys

import matplotlib
import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import TrialState

from helpers import ROOT, charts_drawn
from report import search as search_report, studies, study as study_report
from search.storage import Settings, create, load, save_settings

COMPLETE, PRUNED, FAIL = TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL
SPACE = {
    "learning_rate": {"type": "float", "low": 1e-4, "high": 1e-2, "log": True},
    "batch_size": {"type": "categorical", "choices": [32, 64, 128]},
    "train_frequency": {"type": "int", "low": 1, "high": 16, "log": True},
}
DISTRIBUTIONS = {"learning_rate": FloatDistribution(1e-4, 1e-2, log=True),
                 "batch_size": CategoricalDistribution([32, 64, 128]),
                 "train_frequency": IntDistribution(1, 16, log=True)}
START = datetime.datetime(2026, 11, 20, 10, 0)


def configuration(k: int) -> dict:
    """The k-th synthetic configuration: every parameter changes with k."""
    return {"learning_rate": 1e-4 * (k + 1), "batch_size": [32, 64, 128][k % 3], "train_frequency": 1 + 3 * k % 16}


def trial(state, minutes, value=None, reason="", k=0, **attributes):
    """A finished trial of configuration k that ran over [start, end] minutes after START."""
    frozen = optuna.trial.create_trial(state=state, value=value, params=configuration(k), distributions=DISTRIBUTIONS,
                                       user_attrs={"reason": reason, **attributes.get("user_attrs", {})},
                                       system_attrs=attributes.get("system_attrs", {}),
                                       intermediate_values=attributes.get("intermediate_values", {1: 0.0}))
    frozen.datetime_start = START + datetime.timedelta(minutes=minutes[0])
    frozen.datetime_complete = START + datetime.timedelta(minutes=minutes[1])
    return frozen


def make_study(folder, trials, evaluation=None, script="dqn_linen.py", flags=(), search=("random", "none")) -> str:
    """A study folder as tune.py leaves it (study.json, journal.log, evaluation.json), its trials added in order; the
    script runs with `flags` and the trial length, under the sampler and pruner `search`."""
    settings = Settings(script=script, script_flags=[*flags, "--total-timesteps", "20000"], algorithm="dqn",
                        space=SPACE, sampler=search[0], pruner=search[1], seed=1, study_name="synthetic",
                        trials=len(trials), eval_seeds=3)
    save_settings(str(folder), settings)
    study = create(str(folder), settings, settings.seed)
    for frozen in trials:
        study.add_trial(frozen)
    if evaluation is not None:
        (folder / "evaluation.json").write_text(json.dumps(evaluation))
    return str(folder)


# the main study: wall time 25 min (trials 0-2: overlapping, then adjacent) + 35 min (trials 3-8, after a 35 min gap)
MAIN_TRIALS = [
    trial(COMPLETE, (0, 10), 100.0, k=0),
    trial(COMPLETE, (5, 20), 150.0, k=1),
    trial(PRUNED, (20, 25), reason="pruned after iteration 2", k=2, intermediate_values={1: 10.0, 2: 12.0}),
    trial(FAIL, (60, 70), reason="exit status 1: out of memory", k=3),
    trial(FAIL, (70, 72), reason="lost: its worker (pid 7) is gone; retried", k=4, system_attrs={"retried": True}),
    trial(COMPLETE, (72, 80), 200.0, k=4, user_attrs={"retry_of": 4}),
    trial(FAIL, (80, 82), reason="exit status 1: out of memory", k=5),
    trial(COMPLETE, (81, 90), 120.0, k=6),
    trial(FAIL, (90, 95), reason="no episode ended: no charts/episodic_return in the event file", k=7),
]
EVALUATION = {"trial": 5, "value": 200.0, "params": configuration(4), "runs": [
    {"seed": 100001, "value": 190.0, "reason": ""}, {"seed": 100002, "value": 210.0, "reason": ""},
    {"seed": 100003, "value": None, "reason": "exit status 1: out of memory"}]}


@pytest.fixture(scope="module")
def main_report(tmp_path_factory):
    """The main study's folder and its REPORT.md's text."""
    folder = make_study(tmp_path_factory.mktemp("study"), MAIN_TRIALS, EVALUATION)
    with charts_drawn():  # a test reads its charts
        path = study_report.write_report(folder)
    with open(path) as f:
        return folder, f.read()


def answer_of(text: str) -> str:
    """The report's opening section: its first heading to the next."""
    return text.split("## The answer", 1)[1].split("\n## ", 1)[0]


def test_the_report_opens_with_the_best_configuration_its_value_and_its_re_evaluation_as_mean_and_sd(main_report):
    _, text = main_report
    assert text.index("## The answer") < text.index("## The study") < text.index("## Charts") < text.index("## Trials")
    answer = answer_of(text)
    assert ("**Best configuration:** trial 5, value **200** (the objective: the mean episodic return over the last "
            "10 % of env steps); re-evaluated: 200 ± 14 over 2 fresh seeds (mean ± sd; 1 of 3 seeds failed).") \
        in answer
    # trial 5 is the retry of trial 4: configuration 4
    assert "| learning_rate | 0.0005 |\n| batch_size | 64 |\n| train_frequency | 13 |" in answer


def test_the_report_counts_completed_pruned_and_failed_trials_with_their_reasons_and_retries_apart(main_report):
    answer = answer_of(main_report[1])
    assert "- **Trials:** 4 completed, 1 pruned, 3 failed; 1 retry apart (" in answer
    assert "| exit status 1: out of memory | 2 |" in answer
    assert "| no episode ended: no charts/episodic_return in the event file | 1 |" in answer
    assert "lost: its worker" not in answer  # the retried trial is counted apart, not among the failures


def test_wall_time_is_the_union_of_the_trials_intervals_and_trials_per_hour_count_finished_trials(main_report):
    # [0, 25] min (overlapping, then adjacent) and [60, 95] min after a gap: 25 + 35 = 60 min
    assert study_report.wall_seconds(MAIN_TRIALS) == 3600
    assert study_report.wall_seconds(MAIN_TRIALS[:3]) == 25 * 60
    assert study_report.wall_seconds([MAIN_TRIALS[0], MAIN_TRIALS[3]]) == 20 * 60
    # 8 finished trials (not the retried one) in 1 h; durations 10, 15, 5, 10, 8, 2, 9, 5 min: median 8.5 min
    wall = "- **Wall time:** 60 min, 8 trials per hour (finished trials); median trial 8.5 min."
    assert wall in answer_of(main_report[1])
    assert "the union of the trials' start-to-end intervals" in main_report[1]


def test_the_best_so_far_runs_on_the_wall_time_clock_without_the_gap(main_report):
    _, study = load(main_report[0])
    assert study_report.time_points(study) == [(600, 100.0), (1200, 150.0), (45 * 60, 200.0), (55 * 60, 120.0)]
    assert study_report.best_so_far(study_report.number_points(study)) == [(0, 100.0), (1, 150.0), (5, 200.0),
                                                                           (7, 200.0)]


def test_the_three_charts_exist_as_pngs_and_are_linked_with_a_caption(main_report):
    folder, text = main_report
    for name, caption in [("best_so_far", "*Best so far:*"), ("importances", "*Parameter importances:*"),
                          ("contour", "*Contour:*")]:
        with open(os.path.join(folder, "charts", f"{name}.png"), "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
        assert re.search(rf"!\[[^]]+\]\(charts/{name}\.png\)\n\n{re.escape(caption)}", text), name


def test_the_contour_leaves_matplotlib_s_style_as_it_was(main_report):
    assert matplotlib.rcParams["axes.facecolor"] == "white"  # Optuna's contour sets its ggplot style globally


def test_the_trial_table_lists_the_best_trials_by_value_and_points_to_trials_csv(main_report):
    folder, text = main_report
    table = text.split("## Trials", 1)[1]
    assert [int(row.split("|")[1]) for row in table.splitlines() if re.match(r"\| \d", row)] == [5, 1, 7, 0]
    assert "| 5 | complete | 200 | 8 min |  |" in table
    assert "Not listed: 0 more completed, 1 pruned, 3 failed, 1 retried." in table
    assert "[trials.csv](trials.csv)" in table and os.path.exists(os.path.join(folder, "trials.csv"))


def test_a_study_with_one_completed_trial_explains_why_importances_and_contour_are_absent(tmp_path):
    folder = make_study(tmp_path, [trial(COMPLETE, (0, 3), 42.0), trial(FAIL, (3, 4), reason="exit status 1")])
    with open(study_report.write_report(folder)) as f:
        text = f.read()
    assert "re-evaluated: not re-evaluated." in text
    assert "*No parameter importances:* they need at least 2 completed trials, and this study has 1." in text
    assert "*No contour:* it plots the two most important parameters, and there are no importances." in text
    assert sorted(os.listdir(os.path.join(folder, "charts"))) == ["best_so_far.png"]


@pytest.mark.slow  # a fresh process for one error line: the fast subset probes the scripts' bad input only
def test_the_command_on_a_folder_without_a_study_prints_one_error_line_and_exits_2(tmp_path):
    ended = subprocess.run([sys.executable, "-m", "report.study", str(tmp_path)], cwd=ROOT, capture_output=True,
                           text=True)
    assert ended.returncode == 2 and ended.stdout == ""
    assert ended.stderr == f"error: {tmp_path} holds no study (study.json is missing)\n"


def two_workers(minutes: float, values=(110.0, 210.0, 300.0, 400.0)) -> list:
    """Configurations 0-3 on two workers over `minutes` of wall time: configuration 3 failed (lost), then completed on
    its retry, trial 5; configuration 4 failed."""
    m = minutes / 25
    return [trial(COMPLETE, (0, 10 * m), values[0], k=0), trial(COMPLETE, (0, 10 * m), values[1], k=1),
            trial(COMPLETE, (10 * m, 20 * m), values[2], k=2),
            trial(FAIL, (10 * m, 12 * m), reason="lost; retried", k=3, system_attrs={"retried": True}),
            trial(FAIL, (12 * m, 20 * m), reason="exit status 1", k=4),
            trial(COMPLETE, (20 * m, 25 * m), values[3], k=3, user_attrs={"retry_of": 3})]


# exp10: three part-(a) studies (the first listed is the reference; the third the second's design on 3 workers) and one
# not run, one part-(b) study and one not run
WORKERS = {1: 2, 2: 3}  # the studies' workers by their place in exp10.json (else 1)
REFERENCE_TRIALS = [trial(COMPLETE, (10 * k, 10 * k + 10), value, k=k)
                    for k, value in enumerate([90.0, 190.0, 300.0, 400.0, 500.0])]  # 50 min, one after another
OTHER_TRIALS = two_workers(25)  # 25 min on two workers
SOURCE_TRIALS = [trial(COMPLETE, (0, 10), 50.0, k=0), trial(COMPLETE, (10, 20), 96.0, k=1),
                 trial(COMPLETE, (20, 30), 100.0, k=2)]


@pytest.fixture(scope="module")
def exp10_report(tmp_path_factory):
    """exp10's folder, its REPORT.md's text."""
    directory = tmp_path_factory.mktemp("exp10")
    other = {"script": "dqn_linen.py", "flags": ["--num-envs", "16"]}
    studies = [("a", "Reference design", "a-reference", REFERENCE_TRIALS, {"script": "dqn_torch_gymnasium.py"}),
               ("a", "Other design", "a-other", OTHER_TRIALS, other),
               ("a", "Other design, 3 workers", "a-other-workers3", OTHER_TRIALS, other),
               ("a", "Unrun design", "a-unrun", None, {}),
               ("b", "Source design", "b-source", SOURCE_TRIALS, {"search": ("tpe", "hyperband"), "evaluation": {
                   "trial": 2, "value": 100.0, "params": configuration(2),
                   "runs": [{"seed": 1, "value": 90.0, "reason": ""}, {"seed": 2, "value": 110.0, "reason": ""}]}}),
               ("b", "Missing design", "b-missing", None, {})]
    for _, _, folder, trials, study in studies:
        if trials:
            (directory / folder).mkdir()
            make_study(directory / folder, trials, **study)
    (directory / "exp10.json").write_text(json.dumps({
        "machine": "AMD EPYC 7B13", "load": "0.12",
        "cpu_details": {"vendor": "AuthenticAMD", "family": 25, "model": 1, "stepping": 1, "mhz": 2450,
                        "vector": "AVX2", "microarchitecture": "Zen 3"}, "date": "2026-11-27", "trials": 5,
        "total_timesteps": 20000,
        "studies": [{"part": part, "label": label, "folder": folder, "workers": WORKERS.get(k, 1)}
                    for k, (part, label, folder, _, _) in enumerate(studies)]}))
    with charts_drawn(), open(search_report.write_report(str(directory))) as f:  # a test reads its charts
        return directory, f.read()


def test_the_search_report_opens_with_the_fastest_design_and_the_first_to_near_its_best(exp10_report):
    answer = answer_of(exp10_report[1])
    assert ("- Part (a): **Other design** finishes the same search fastest, in 25 min: 2.00× faster than Reference "
            "design (50 min).") in answer
    # 50, 96, 100: within 5 % of 100 from the second trial's end, 20 min of wall time; TPE drew it at random
    assert ("- Part (b): **Source design** first came within 5% of its final best value (100) after 20 min of wall "
            "time, at trial 1, one of TPE's 10 random start-up trials.") in answer
    # the machine with its CPU's generation (sweep/machine.py cpu_details)
    assert ("AMD EPYC 7B13 (Zen 3, family 25 model 1, AVX2), load average 0.12 at the start, 2026-11-27; 5 trials per "
            "study of 20,000") in answer
    # each part's sampler and pruner, from the studies' own settings, and the flags every study's script takes
    assert ("Part (a): a random sampler seeded per trial number, no pruner; part (b): TPE, Hyperband. Every study's "
            "script also takes `--total-timesteps 20000`.") in answer


def test_the_search_report_tables_each_designs_script_and_cost_against_the_named_fastest_and_those_not_run(
        exp10_report):
    text = exp10_report[1]
    assert "| design | script | workers | wall time | × the fastest (Other design) | trials per hour |" in text
    assert "| Reference design | `dqn_torch_gymnasium.py` | 1 | 50 min | 2.00× | 6 | 10 min | 5 / 0 | 500 |" in text
    assert "| Other design | `dqn_linen.py --num-envs 16` | 2 | 25 min | 1.00× | 12 | 10 min | 4 / 1 | 400 |" in text
    assert "| Unrun design | – | 1 | not run | – | – | – | – | – |" in text


def test_the_search_report_compares_the_distinct_designs_per_configuration_by_spread_and_rank(exp10_report):
    directory, text = exp10_report
    # the study on 3 workers is Other design's script and flags again: said, and counted once
    assert ("Other design, 3 workers ran the same design as Other design (the same script and flags, 3 workers against "
            "2): the same value in 4 of their 4 shared configurations. It is one design: the comparison below counts "
            "it once.") in text
    # configurations 0-3 completed in both (3 by its retry): spreads 20/100, 20/200, 0, 0: median 5.0%
    assert "4 configurations (trial numbers) completed in all 2 distinct designs." in text
    assert "median **5.0%** over the configurations" in text
    assert "| Reference design | 1.00 |\n| Other design | 1.00 |\n\n" in text
    assert studies.shared_values([studies.load_entry(str(directory), {
        "part": "a", "label": label, "folder": folder}) for label, folder in
        [("r", "a-reference"), ("o", "a-other")]]) == {0: [90.0, 110.0], 1: [190.0, 210.0], 2: [300.0, 300.0],
                                                     3: [400.0, 400.0]}


def test_the_search_report_gives_part_b_its_best_configuration_re_evaluation_importances_and_charts(exp10_report):
    directory, text = exp10_report
    part_b = text.split("## (b)", 1)[1]
    assert "Each study: TPE, Hyperband." in part_b
    assert ("| Source design | `dqn_linen.py` | 100 (trial 2) | learning_rate=0.0003, batch_size=128, "
            "train_frequency=7 | 100 ± 14 over 2 fresh seeds (mean ± sd) | ") in part_b
    assert "| Missing design | – | not run |" in part_b
    for name in ("configurations", "best_so_far"):
        assert f"](charts/{name}.png)" in text and (directory / "charts" / f"{name}.png").stat().st_size > 1000


def test_the_search_command_on_a_folder_without_exp10_json_prints_one_error_line_and_exits_2(tmp_path, capsys):
    assert search_report.main([str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path} holds no exp10.json: not exp10's folder\n"


# exp10 repeated: study seeds 1 and 2, part (a) three designs: the reference takes 50 and 40 min; Flax + JAX env, at
# its script's own flags, 30 and 30; the other design, at 16 envs, 25 and 32 min (the least median, but not at the
# scripts' own flags: not the baseline, and level with it); part (b) two designs per seed, part (p) a population per
# seed
SECOND_REFERENCE = [trial(COMPLETE, (10 * k, 10 * k + 10), value, k=k) for k, value in enumerate([90.0, 190.0, 280.0,
                                                                                                 380.0])]
OTHER_SLOWER = two_workers(32)
# Flax + JAX env, the design of part (b)'s Source design: within 5 % of its best, 1 of 4 configurations in seed 1
# (400), 2 of 4 in seed 2 (390 and 400)
LINEN_TRIALS = {1: two_workers(30), 2: two_workers(30, (110.0, 390.0, 300.0, 400.0))}
# a second part (b) design, part (a)'s reference design: within 5 % of its final best at 10 min (trial 0) in seed 1,
# at 30 min (trial 2) in seed 2: a range over the seeds that holds Source design's 20 min
SECOND_SOURCE = {1: [trial(COMPLETE, (0, 10), 95.0, k=0), trial(COMPLETE, (10, 20), 100.0, k=1)],
                 2: [trial(COMPLETE, (0, 10), 50.0, k=0), trial(COMPLETE, (10, 20), 60.0, k=1),
                     trial(COMPLETE, (20, 30), 100.0, k=2)]}
POPULATION_TRIALS = [trial(COMPLETE, (0, 5), 350.0, k=0), trial(COMPLETE, (0, 5), 420.0, k=1)]


@pytest.fixture(scope="module")
def repeated_report(tmp_path_factory):
    """exp10's folder of two study seeds and a population, its REPORT.md's text."""
    directory = tmp_path_factory.mktemp("exp10-repeated")
    other = {"script": "dqn_linen.py", "flags": ["--num-envs", "16"]}
    studies = [("a", "Reference design", "a-reference", 1, REFERENCE_TRIALS, {"script": "dqn_torch_gymnasium.py"}),
               ("a", "Other design", "a-other", 1, OTHER_TRIALS, other),
               ("a", "Flax + JAX env", "a-linen", 1, LINEN_TRIALS[1], {}),
               ("p", "Flax + JAX env, populations of 2", "p-linen-vmap", 1, POPULATION_TRIALS,
                {"script": "dqn_linen_vmap.py"}),
               ("b", "Source design", "b-source", 1, SOURCE_TRIALS, {"search": ("tpe", "hyperband")}),
               ("b", "Second source", "b-second", 1, SECOND_SOURCE[1], {"script": "dqn_torch_gymnasium.py",
                                                                        "search": ("tpe", "hyperband")}),
               ("a", "Reference design", "a-reference", 2, SECOND_REFERENCE, {"script": "dqn_torch_gymnasium.py"}),
               ("a", "Other design", "a-other", 2, OTHER_SLOWER, other),
               ("a", "Flax + JAX env", "a-linen", 2, LINEN_TRIALS[2], {}),
               ("p", "Flax + JAX env, populations of 2", "p-linen-vmap", 2, None, {}),
               ("b", "Source design", "b-source", 2, SOURCE_TRIALS[:2], {"search": ("tpe", "hyperband")}),
               ("b", "Second source", "b-second", 2, SECOND_SOURCE[2], {"script": "dqn_torch_gymnasium.py",
                                                                        "search": ("tpe", "hyperband")})]
    for _, _, folder, seed, trials, study in studies:
        if trials:
            (directory / f"{folder}-s{seed}").mkdir()
            make_study(directory / f"{folder}-s{seed}", trials, **study)
    (directory / "exp10.json").write_text(json.dumps({
        "machine": "AMD EPYC 9B45", "load": "0.12", "date": "2026-11-29", "trials": 5, "total_timesteps": 20000,
        "invocations": [{"argv": "tools/exp10.sh out --study-seeds 1,2", "date": "2026-11-29T08:00Z",
                         "commit": "abc1234", "load": "0.12 0.30 0.40"},
                        {"argv": "tools/exp10.sh out --study-seeds 2 --parts p", "date": "2026-11-30T08:00Z",
                         "commit": "abc1234", "load": "0.05 0.10 0.20", "machine": "AMD EPYC 7B13",
                         "cpu_details": {"vendor": "AuthenticAMD", "family": 25, "model": 1, "flags": []}}],
        "studies": [{"part": part, "label": label, "folder": f"{folder}-s{seed}", "workers": 1, "seed": seed,
                     "population": 2 if part == "p" else 0} for part, label, folder, seed, _, _ in studies]}))
    with charts_drawn(), open(search_report.write_report(str(directory))) as f:  # a test reads its charts
        return directory, f.read()


def test_repeated_exp10_gives_every_ratio_against_one_named_baseline_with_its_spread_over_the_study_seeds(
        repeated_report):
    text = repeated_report[1]
    # the baseline is the fastest design at one worker and its script's own flags (Flax + JAX env, 30 min), not Other
    # design (16 envs), whose median is less: the reference takes 50/30 = 1.67x and 40/30 = 1.33x, Other design 25/30
    # and 32/30, its range over the seeds (25-32 min) overlapping Flax + JAX env's: level with it
    assert ("- Part (a): every ratio is to **Flax + JAX env**, the fastest of the designs at one worker and their "
            "scripts' own flags, 30 min (30 min–30 min), seed by seed. Level with it (their wall times' ranges over "
            "the seeds overlap): Other design 0.95× (0.83×–1.07×). The others take Reference design 1.50× "
            "(1.33×–1.67×) its time.") in text
    assert "finishes the same search fastest" not in text  # Other design's lead is inside the seeds' ranges
    assert "| design | script | workers | wall time | × Flax + JAX env | trials per hour |" in text
    assert "| Reference design | `dqn_torch_gymnasium.py` | 1 | 45 min (40 min–50 min) | 1.50× (1.33×–1.67×) |" in text
    assert ("| Other design | `dqn_linen.py --num-envs 16` | 1 | 28.5 min (25 min–32 min) | 0.95×= (0.83×–1.07×) |"
            in text)
    assert "= level with Flax + JAX env: their wall times' ranges over the study seeds overlap." in text
    assert ("| `tools/exp10.sh out --study-seeds 1,2` | 2026-11-29T08:00Z | abc1234 | 0.12 0.30 0.40 | AMD EPYC 9B45 "
            "(generation not recorded) |") in text  # an invocation that recorded no CPU: the plan's
    # a sitting in windows on two machines says so: a study begun on one and resumed on the other mixes their times
    assert "| 0.05 0.10 0.20 | AMD EPYC 7B13 (family 25 model 1) |" in text
    assert "**Mixed machines:** the invocations ran on AMD EPYC 7B13 (family 25 model 1) and AMD EPYC 9B45" in text
    assert "where the seeds ran on different machines, their spread includes the machines' difference." in text
    # the agreement per seed, over the distinct designs only (Other design and Flax + JAX env are distinct scripts)
    assert "| 1 | 4 | 3 |" in text and "| 2 | 4 | 3 |" in text
    # 4 of 5: a failed trial's retry reran its configuration within the 5 trials, said under the table
    assert ("Study seed 2 shares 4 of its 5 configurations: a failed trial is retried on its own configuration within "
            "the study's 5 trials, so that study never draws its last configuration (retried trials: Other design 1 and "
            "Flax + JAX env 1).") in text


def test_repeated_exp10_crowns_a_design_that_finishes_first_only_apart_from_every_other():
    """A design with flags of its own that is faster than the baseline in every seed, apart from it: named first."""
    walls = {"Plain": [600.0, 720.0], "Flagged": [300.0, 360.0], "Slow": [1800.0, 1860.0]}  # seconds, seed by seed
    assert search_report.first_text(walls, "Plain") == (" **Flagged** finishes the search first, in 5.5 min (5 min–6 "
                                                        "min), apart from every other design (ranges over the seeds).")
    assert search_report.first_text({**walls, "Close": [330.0, 660.0]}, "Plain") == ""
    assert search_report.first_text(walls, "Flagged") == ""  # the baseline itself is first: the ratios say so


def test_repeated_exp10_part_b_gives_the_random_searchs_rate_of_near_bests_and_reads_no_difference_inside_it(
        repeated_report):
    text = repeated_report[1]
    # Source design near at 20 min in both seeds, Second source at 10 and 30 min: their ranges overlap. Part (a)'s
    # twins of their designs (Flax + JAX env, the reference): 1 of 4 and 2 of 4, 1 of 5 and 1 of 4 configurations
    # within 5 % of their study's best
    assert ("- Part (b), TPE + Hyperband: the wall time until each design's best so far came within 5% of its final "
            "best: Source design 20 min (20 min–20 min), at a start-up trial in 2 of 2 seeds; Second source 20 min "
            "(10 min–30 min), at a start-up trial in 2 of 2 seeds. In part (a)'s random search of the same designs and "
            "seeds, 20.0%–50.0% of the configurations, and 1–2 of the first 10, came within 5% of their study's best: "
            "one random draw in 2–5 gets there, on average. Their times are level (ranges over the seeds overlap): a "
            "difference between them is the draw's, not a result.") in text


def test_repeated_exp10_shows_tpes_start_up_trials_and_the_population_with_its_integer_fields_fixed(repeated_report):
    directory, text = repeated_report
    part_b = text.split("## (b)", 1)[1].split("## (p)", 1)[0]
    assert "| Source design | 1 | 100 (trial 2) | 20 min, at trial 1, one of TPE's 10 random start-up trials |" in part_b
    assert "| Source design | 2 | 96 (trial 1) | 20 min, at trial 1, one of TPE's 10 random start-up trials |" in part_b
    assert "at a start-up trial in 2 of 2 seeds" in text
    assert (directory / "charts" / "best_so_far.png").stat().st_size > 1000
    fixed = "buffer_size=10000, batch_size=128, train_frequency=10, target_network_frequency=500"
    assert f"fixed at the script's defaults ({fixed})" in text
    # seed 1: the population's best 420 against Flax + JAX env's 400 (all fields); seed 2 not run
    assert "| Flax + JAX env, populations of 2 | 1 | 5 min | 0.17× | 420 | 400 |" in text
    assert "| Flax + JAX env, populations of 2 | 2 | not run |" in text
    # both bests are in-sample (no rerun), and part (a)'s in-sample bests of the same configurations spread 500 - 400
    # across its designs in seed 1: the gap of 20 is inside that spread, not a result
    assert (f"with the integer fields fixed at the script's defaults ({fixed}) its best value less Flax + JAX env's "
            "(all fields), seed by seed: 20. Both are in-sample bests, the largest of one-seed values, none rerun on "
            "fresh seeds; part (a)'s in-sample bests of the same float values spread 100 across its designs (seed 1): "
            "the gap is inside that spread, not a result.") in text


def test_a_lost_workers_trial_counts_in_the_wall_time_up_to_its_last_heartbeat_not_its_late_failure():
    heartbeat = (START + datetime.timedelta(minutes=8)).timestamp()
    lost = trial(FAIL, (5, 3000), reason="lost; retried", system_attrs={"retried": True, "heartbeat": heartbeat})
    assert study_report.wall_seconds([trial(COMPLETE, (0, 6), 1.0), lost]) == 8 * 60


def test_the_agents_of_a_population_end_together_when_their_process_ends_not_as_they_are_told(tmp_path):
    """tune.py tells a population's agents one after another (about 12 ms each: 0.7 s for 64); each carries its
    process's end (population_end), and the wall-time clock takes that."""
    end = (START + datetime.timedelta(minutes=10)).timestamp()
    told = [trial(COMPLETE, (0, 10 + k / 60), 10.0 * k, k=k, user_attrs={"population_end": end}) for k in range(3)]
    _, study = load(make_study(tmp_path, told))
    assert [seconds for seconds, _ in study_report.time_points(study)] == [600.0] * 3
    assert study_report.wall_seconds(told) == 600.0
