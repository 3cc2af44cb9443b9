"""plot.py on exp9, training on Doors: per algorithm, each design's time to reach the return that only near-shortest
paths give (from the start of iteration 0, compilation included) relative to the fastest, its table, the source's
Table 2 beside our DQN designs as ratios, and learning curves against env steps and wall-clock time."""

import math

import numpy as np
import pytest

from events import write_json, write_run
from report import doors
from test_plot import check_answer, run_plot, wordy_lines
from test_plot_short_runs import section

SECTION = "## NumPy or JAX for my own env? Training on Doors (exp9)"
ENV = "doors:Doors-v0"
ITERATIONS = 12
# design: (variant, mode, envs, seconds per iteration, the iteration from which it logs 2.5 instead of 0)
PPO = [("ppo_linen", "jit", 32, 1.0, 4), ("ppo_torch_gymnasium", "eager", 32, 10.0, 4),
       ("ppo_linen", "jit", 512, 0.5, 6)]
DQN = [("dqn_torch_gymnasium", "eager", 1, 20.0, 3), ("dqn_linen_gymnasium", "jit", 1, 10.0, 3),
       ("dqn_linen", "jit", 16, 2.0, 3), ("dqn_linen", "jit", 1, 4.0, None)]  # the last never gets there


def write_design(root, variant, mode, envs, seconds, learns_from, seed):
    returns = [0.0 if learns_from is None or i < learns_from else 2.5 for i in range(ITERATIONS)]
    name = f"exp9__{variant}__{mode}__{ENV}__small__n{envs}__{seed}"
    write_run(root / "runs" / "exp9" / name, [seconds * (1 + (seed == 2))] * ITERATIONS, variant=variant,
              compile_mode=mode, env_id=ENV, seed=seed, returns=returns, num_envs=envs,
              num_steps=8192 // envs if variant.startswith("ppo_") else 1)


@pytest.fixture(scope="module")
def doors_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("exp9")
    for design in PPO + DQN:
        for seed in (1, 2, 3):
            write_design(root, *design, seed)
    write_json(root / "env_timing.json", {"envs": {ENV: {"step_seconds": 4e-5, "relative": 1.0}}})
    result = run_plot(root)
    return root, result, (root / "REPORT.md").read_text()


def test_a_design_is_named_first_only_where_its_range_over_seeds_is_apart_from_every_others(doors_report):
    _, result, report = doors_report
    assert result.returncode == 0, result.stderr
    text = section(report, SECTION)
    # the window of 5 returns reaches 2.0 at the 4th 2.5: iteration learns_from + 3, its end after (i + 1) iterations;
    # seed 2 runs at half speed. PPO: the wide linen's 10th iteration of 0.5 s, 5 [range 5–10] s, and linen at 32 envs'
    # 8th of 1 s, 8 [range 8–16] s, overlap: level; torch_gymnasium's 80 [range 80–160] is apart from both
    assert ("- **PPO:** linen (jit) at 512 envs and linen (jit) reach a mean return of 2.0 level (5–8 s; ranges over "
            "seeds overlap).\n  - The NumPy env's first, torch_gymnasium (eager), takes 16.0× the time of linen (jit) "
            "at 512 envs.\n") in text
    # DQN: the wide dqn_linen's 14 [range 14–28] s is apart from every other design's range: named first
    assert ("- **DQN:** dqn_linen (jit) at 16 envs reaches a mean return of 2.0 first (14 s).\n  - The NumPy env's "
            "first, dqn_linen_gymnasium (jit), takes 5.0× that time.\n") in text
    assert "  - Never: dqn_linen (jit)." in text
    # the answer at the top: the same numbers, as the table writes them
    assert ("- [exp9 · PPO](#numpy-or-jax-for-my-own-env-training-on-doors-exp9): linen (jit) at 512 envs and linen "
            "(jit) reach a mean return of 2.0 level (5–8 s); the NumPy env's first, torch_gymnasium (eager), takes "
            "16.0× the time of linen (jit) at 512 envs.") in section(report, "## The answer")


def test_the_table_gives_seeds_reaching_times_steps_returns_and_totals(doors_report):
    _, _, report = doors_report
    text = section(report, SECTION)
    # linen at 32 envs: 8 iterations of 1 s (seed 2: 2 s) = 8 s [range 8-16], 8 x 8192 env steps
    # relative: its median time to reach over the first design's (linen at 512 envs, 5 s)
    # then the runs' memory: write_run's 300 MiB of host RSS and 1 MiB of device peak
    assert ("| linen (jit) | JAX | 32 | 3/3 | 8 [range 8–16] | 65,536 [range 65,536–65,536] | 1.6× | 2.5 ± 0 | "
            "12 [range 12–24] | 2.00× | 300 | 1 |") in text
    # the NumPy env's designs first
    assert text.index("| torch_gymnasium (eager) |") < text.index("| linen (jit) |") < text.index("at 512 envs |")
    assert "| torch_gymnasium (eager) | NumPy, loop over copies | 32 | 3/3 | 80 [range 80–160] |" in text
    assert "| 80 [range 80–160] | 65,536 [range 65,536–65,536] | 16.0× |" in text
    assert "| dqn_linen (jit) | JAX | 1 | 0/3 | – | – | – | 0 ± 0 |" in text


def test_the_source_table_gives_both_sides_ratios_to_the_fastest_of_the_three(doors_report):
    _, _, report = doors_report
    text = section(report, SECTION)
    assert "| PyTorch + NumPy env | dqn_torch_gymnasium (eager) | 22.5 | 9.8× | 240 | 10.0× | 10.0× |" in text
    assert "| Flax + NumPy env | dqn_linen_gymnasium (jit) | 22.8 | 9.9× | 120 | 5.0× | 5.0× |" in text
    assert "| Flax + JAX env, 16 x the envs | dqn_linen (jit) at 16 envs | 2.3 | 1.0× | 24 | 1.0× | 1.0× |" in text


def test_curves_against_env_steps_and_wall_time_are_drawn_per_algorithm(doors_report):
    root, _, report = doors_report
    for name in ("doors_ppo_steps.png", "doors_ppo_wall.png", "doors_dqn_steps.png", "doors_dqn_wall.png"):
        assert (root / name).exists() and f"({name})" in report


def test_the_answer_links_each_algorithm_to_the_section_and_the_wall_clock_curves_are_named(doors_report):
    _, _, report = doors_report
    bullets = check_answer(report, {"exp9"})
    assert [bullet["label"] for bullet in bullets] == ["exp9 · PPO", "exp9 · DQN"]
    assert bullets[1]["text"] == ("dqn_linen (jit) at 16 envs reaches a mean return of 2.0 first (14 s); the NumPy "
                                  "env's first, dqn_linen_gymnasium (jit), takes 5.0× that time.")
    assert "| 70 [range 70–140] | 7 [range 7–7] | 5.0× |" in section(report, SECTION)  # dqn_linen_gymnasium's row
    for algorithm in ("PPO", "DQN"):
        assert (f"**Return against wall-clock time: the time to reach a return** ({algorithm}):\n\n![{algorithm} on Doors "
                f"against wall-clock time from iteration 0](doors_{algorithm.lower()}_wall.png)") in report
    assert wordy_lines(report) == []


def test_exp9_stays_out_of_the_generic_learning_tables(doors_report):
    _, _, report = doors_report
    assert "**exp9**" not in report and "## Learning: final returns" not in report


class FakeRun:
    def __init__(self, returns, seconds):
        self.returns, self.return_seconds = np.array(returns, float), np.array(seconds, float)
        self.return_steps = np.arange(1, len(returns) + 1) * 100.0


@pytest.mark.parametrize("returns,expected", [
    ([2.0] * 5, (5.0, 500.0)),  # the first full window
    ([0, 0, 0, 0, 2.5, 2.5, 2.5, 2.5], (8.0, 800.0)),  # 0 + 2.5 x 4 over 5 = 2.0: reached at the 8th
    ([1.9] * 10, (math.nan, math.nan)),
    ([3.0] * 4, (math.nan, math.nan)),  # fewer returns than a window
])
def test_time_to_reach_is_the_end_of_the_iteration_in_which_the_windows_mean_first_reaches_it(returns, expected):
    reached = doors.time_to_reach(FakeRun(returns, np.arange(1, len(returns) + 1, dtype=float)), 2.0)
    assert reached == pytest.approx(expected, nan_ok=True)


def reach_cells(designs):
    """cells and stats for doors' text functions from [(name, variant, compile mode, reaching seeds' times, seeds)]."""
    cells = {name: [{"variant": variant, "compile_mode": mode}] * seeds for name, variant, mode, _, seeds in designs}
    stats = {name: doors.Reach(float(np.median(times)) if times else math.nan, len(times), seeds, times)
             for name, _, _, times, seeds in designs}
    return cells, stats


def test_where_one_seed_reached_the_answer_says_there_is_no_interval_instead_of_naming_a_first():
    cells, stats = reach_cells([("linen (jit)", "ppo_linen", "jit", [4.0], 1),
                                ("equinox (jit)", "ppo_equinox", "jit", [4.4], 1),
                                ("torch_gymnasium (eager)", "ppo_torch_gymnasium", "eager", [9.0], 1)])
    assert doors.answer_lines("PPO", cells, stats) == [
        "- **PPO:** linen (jit) reaches a mean return of 2.0 soonest (4 s; one seed: no interval).",
        "  - The NumPy env's first, torch_gymnasium (eager), takes 2.2× the time of linen (jit) (one seed: no "
        "interval)."]
    assert doors.doors_bullet(cells, stats).startswith("linen (jit) reaches a mean return of 2.0 soonest (4 s; one "
                                                       "seed: no interval); ")


def test_a_numpy_design_level_with_the_first_is_named_among_the_level_and_those_without_a_range_are_named_apart():
    cells, stats = reach_cells([("linen (jit)", "ppo_linen", "jit", [4.0, 4.5], 2),
                                ("linen_gymnasium (jit-vector)", "ppo_linen_gymnasium", "jit-vector", [4.2, 5.0], 2),
                                ("equinox (jit)", "ppo_equinox", "jit", [4.3], 2)])
    assert doors.answer_lines("PPO", cells, stats) == [
        "- **PPO:** linen (jit) and linen_gymnasium (jit-vector) reach a mean return of 2.0 level (4.25–4.6 s; ranges "
        "over seeds overlap; one seed: no interval to tell from equinox (jit)).",
        "  - Some seeds only: equinox (jit) (1 of 2 seeds)."]
