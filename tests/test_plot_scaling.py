"""plot.py on exp5, how the cost grows with the number of envs: the cost model t(N) = a + b·N, its charts, tables
and generated conclusions; exp5 alone, beside exp1, and too short for a steady state."""

import csv
import re

import numpy as np
import pytest

from sweep.experiments import EXPERIMENTS
from report import cost_model, scaling, text
from events import write_exp5_runs, write_run
from helpers import charts_drawn
from test_plot import capture_figures, check_answer, run_plot, wordy_lines
from test_plot_short_runs import section

# Steady seconds per iteration a + b·N of each variant: torch's fixed cost is 10× linen's, its cost per env a little
# lower, so its gap to linen falls with N; Gymnasium's cost per env is 10× linen's, so its gap grows.
COSTS = {("ppo_linen", "jit"): (1e-3, 1e-5), ("ppo_torch", "env-jit"): (1e-2, 8e-6),
         ("ppo_torch_gymnasium", "eager"): (5e-3, 1e-4)}
GYMNAX_COSTS = {variant: cost for variant, cost in COSTS.items() if "gymnasium" not in variant[0]}
SCALING = "## How the cost grows with the number of envs (exp5)"


def write_scaling_sweep(root):
    """exp5 as benchmark.sh lays it out: every variant on CartPole-v1, the gymnax ones on Breakout-MinAtar too,
    N = 8 … 2048, synchronised runs at 8 and 2048 on CartPole-v1."""
    write_exp5_runs(root, COSTS, sync_num_envs=(8, 2048))
    write_exp5_runs(root, GYMNAX_COSTS, envs=("Breakout-MinAtar",))
    return root


@pytest.fixture(scope="module")
def exp5_alone(tmp_path_factory):
    """A sweep of exp5 alone: the folder, plot.py's result and the report (its two charts drawn for real)."""
    root = write_scaling_sweep(tmp_path_factory.mktemp("exp5"))
    with charts_drawn():
        result = run_plot(root)
    return root, result, (root / "REPORT.md").read_text()


def test_the_cost_fit_recovers_a_and_b_from_exact_timings():
    ns = np.array([8, 32, 128, 512, 2048])
    fit = cost_model.fit_cost(ns, 0.004 + 3e-5 * ns)
    assert fit.a == pytest.approx(0.004, rel=1e-9) and fit.b == pytest.approx(3e-5, rel=1e-9)
    assert np.abs(fit.residuals).max() < 1e-9
    assert fit.a_bounds == pytest.approx((0.004, 0.004), rel=1e-6)


def test_the_cost_fit_minimises_the_relative_error_and_its_intervals_hold_the_truth():
    ns = np.array([8, 32, 128, 512, 2048])
    times = (0.004 + 3e-5 * ns) * (1 + np.array([0.03, -0.02, 0.01, -0.03, 0.02]))
    fit = cost_model.fit_cost(ns, times)
    relative_error = lambda a, b: np.sum(((a + b * ns - times) / times) ** 2)
    for a, b in ((fit.a * 1.01, fit.b), (fit.a * 0.99, fit.b), (fit.a, fit.b * 1.01), (fit.a, fit.b * 0.99)):
        assert relative_error(a, b) > relative_error(fit.a, fit.b)
    assert fit.residuals == pytest.approx((fit.a + fit.b * ns - times) / times)
    assert fit.a_bounds[0] < 0.004 < fit.a_bounds[1] and fit.b_bounds[0] < 3e-5 < fit.b_bounds[1]
    absolute_b, absolute_a = np.polyfit(ns, times, 1)  # least squares on absolute error weighs the largest N most
    assert fit.a != pytest.approx(absolute_a, rel=1e-2)


def test_the_cost_fit_has_no_interval_through_two_n_and_no_fit_from_one():
    fit = cost_model.fit_cost([8, 2048, 2048], [1.0, 3.0, 3.0])  # three runs, two N: a line, residuals 0, no spread
    assert (fit.a, fit.b) == pytest.approx((1 - 8 * 2 / 2040, 2 / 2040))
    assert np.isnan(cost_model.fit_cost([8, 2048], [1.0, 3.0]).a_bounds[0])
    assert cost_model.fit_cost([32, 32], [1.0, 1.1]) is None


def test_within_the_fastest_is_interpolated_log_log_between_measured_n_and_never_beyond():
    ns = np.array([8, 32, 128])
    # log ratio falls linearly in log N from 4× at 8 to 1× at 32: 1.25× at 8 · 4^(log 3.2 / log 4) = 25.6
    assert scaling.within_ranges(ns, np.array([4.0, 1.0, 1.0])) == [((pytest.approx(25.6), True), (128, False))]
    assert scaling.within_ranges(ns, np.array([1.0, 4.0, 4.0])) == [((8, False), (pytest.approx(10.0), True))]
    assert scaling.within_ranges(ns, np.array([2.0, 1.5, 1.3])) == []  # approaching, but not within by 128: no guess
    assert scaling.within_ranges(ns, np.array([1.25, 1.0, 1.1])) == [((8, False), (128, False))]


def test_a_conclusion_names_who_is_fastest_at_each_end_and_where_the_other_stays_within_it():
    seconds = {("linen (jit)", 8): 1.0, ("linen (jit)", 2048): 10.0, ("torch (env-jit)", 8): 4.0,
               ("torch (env-jit)", 2048): 5.0}
    rows = [{"label": label, "num_envs": str(n), "iter8_99_median_s": t} for (label, n), t in seconds.items()]
    table = cost_model.scalings(rows)
    assert ("**CartPole-v1** (2 variants, 8–2,048 envs): linen (jit) has the shortest time per iteration at 8 envs "
            "(1,000 ms), torch (env-jit) at 2,048 envs (5,000 ms); one seed: no interval.") == \
        scaling.scaling_conclusion("CartPole-v1", table)
    # what each variant does against the fastest is the table's: its gap from the smallest N to the largest, and where
    # it comes within 1.25× of the fastest (1.25× at 8 · 256^(log 1.25 / log 2) ≈ 47.7)
    linen = next(scaled for scaled in table if scaled.label == "linen (jit)")
    assert scaling.gap_text(linen) == "1.00× at 8 → 2.00× at 2,048"
    assert scaling.within_text(linen) == "8–≈48 envs (≈: interpolated between measured N)"
    assert scaling.scaling_bullet(table) == ("linen (jit) has the shortest time per iteration at 8 envs (1,000 ms), "
                                             "torch (env-jit) at 2,048 envs (5,000 ms); one seed: no interval")


def seeded_scalings(seconds):
    """cost_model.scalings of rows from {(label, N): [seconds of each seed]}."""
    return cost_model.scalings([{"label": label, "num_envs": str(n), "iter8_99_median_s": t}
                             for (label, n), by_seed in seconds.items() for t in by_seed])


def test_a_conclusion_names_one_variant_shortest_only_where_its_range_over_seeds_is_apart_from_every_others():
    # at 8 envs the two ranges over seeds overlap: both are named, level; at 2,048 torch's is apart from linen's
    table = seeded_scalings({("linen (jit)", 8): [1.0, 1.2], ("linen (jit)", 2048): [10.0, 10.5],
                             ("torch (env-jit)", 8): [1.1, 1.3], ("torch (env-jit)", 2048): [5.0, 5.2]})
    assert scaling.scaling_bullet(table) == ("linen (jit) and torch (env-jit) share the shortest time per iteration at "
                                             "8 envs (1,100–1,200 ms; ranges over seeds overlap), torch (env-jit) at "
                                             "2,048 envs (5,100 ms)")
    apart = seeded_scalings({("linen (jit)", 8): [1.0, 1.1], ("linen (jit)", 2048): [10.0, 10.2],
                             ("torch (env-jit)", 8): [4.0, 4.2], ("torch (env-jit)", 2048): [20.0, 21.0]})
    assert scaling.scaling_bullet(apart) == ("linen (jit) has the shortest time per iteration at 8 and at 2,048 envs "
                                             "(1,050 ms and 10,100 ms)")


def test_a_sweep_of_exp5_alone_opens_with_its_answer_and_draws_both_charts(exp5_alone):
    root, result, report = exp5_alone
    assert result.returncode == 0, result.stderr
    headings = [line for line in report.splitlines() if line.startswith("## ")]
    assert headings == ["## The answer", SCALING, "## Method and machine", "## How to read this report",
                        "## Peak memory", "## Learning: final returns and learning curves"]
    assert "Skipped" not in report and "skipping" not in result.stderr
    assert sorted(path.stem for path in root.glob("*.png")) == ["scaling_relative", "scaling_sps"]
    assert all(path.stat().st_size > 10_000 for path in root.glob("*.png"))
    assert "(scaling_sps.png)" in report and "(scaling_relative.png)" in report
    absent = next(line for line in report.splitlines() if line.startswith("- **Not in this sweep:**"))
    assert [exp for exp in EXPERIMENTS if f" {exp} (" in absent] == ["exp1", "exp2", "exp3", "exp4", "exp6", "exp7",
                                                                    "exp8", "exp9"]
    assert "- **Workload (exp5):** num_envs 8/32/128/512/2048, num_steps 256," in report


def test_one_variant_gets_no_relative_chart_and_each_fitted_line_states_its_largest_residual(tmp_path, monkeypatch):
    figures = capture_figures(monkeypatch)
    linen = {("ppo_linen", "jit"): COSTS["ppo_linen", "jit"]}
    write_exp5_runs(tmp_path, linen, num_envs=(8, 128, 2048))
    write_run(tmp_path / "runs" / "exp5" / "slow", [1.0] * 8 + [3 * (1e-3 + 1e-5 * 512)] * 4, num_envs=512)
    assert run_plot(tmp_path).returncode == 0
    assert not (tmp_path / "scaling_relative.png").exists() and "scaling_relative.png" not in figures
    assert ("No chart of times relative to the fastest: every env ran one variant (linen (jit)), which would only be "
            "compared with itself.") in (tmp_path / "REPORT.md").read_text()
    (ax,) = figures["scaling_sps.png"].axes
    ns = (8, 128, 512, 2048)
    fit = cost_model.fit_cost(ns, [(1e-3 + 1e-5 * n) * (3 if n == 512 else 1) for n in ns])
    (written,) = [label.get_text() for label in ax.texts]
    assert written == f"fit's largest relative residual\nlinen (jit): {text.percent_text(cost_model.max_residual(fit), '')}"


def test_the_cost_model_table_gives_a_and_b_and_where_each_variant_comes_within_the_fastest(exp5_alone):
    _, _, report = exp5_alone
    text = section(report, SCALING)
    assert ("| CartPole-v1 | linen (jit) | 5 | 8/32/128/512/2048 | 1 ms [95% fit interval 1 to 1] | 10 µs [95% fit "
            "interval 10 to 10] | 0.0% | 1.00× at 8 → 1.00× at 2,048 | the fastest at every measured N (8–2,048 envs) "
            "|") in text
    # torch / linen: 2.30× at 512, 1.23× at 2048; log-log interpolation crosses 1.25× at N ≈ 1,970
    assert ("| CartPole-v1 | torch (env-jit) | 5 | 8/32/128/512/2048 | 10 ms [95% fit interval 10 to 10] | 8 µs [95% "
            "fit interval 8 to 8] | 0.0% | 9.32× at 8 → 1.23× at 2,048 | ≈1,970–2,048 envs (≈: interpolated between "
            "measured N) |") in text
    assert "| 0.0% | 5.37× at 8 → 9.77× at 2,048 | not in the measured range (8–2,048 envs) |" in text
    assert "| CartPole-v1 | torch_gymnasium (eager) | 5 |" in text
    assert "| not in the measured range (8–2,048 envs) |" in text
    assert "| Breakout-MinAtar | torch (env-jit) | 5 |" in text and "| Breakout-MinAtar | torch_gymnasium" not in text


def test_the_conclusions_are_generated_from_the_fitted_costs_and_the_gaps(exp5_alone):
    _, _, report = exp5_alone
    assert ("- **CartPole-v1** (3 variants, 8–2,048 envs): linen (jit) has the shortest time per iteration at 8 and at "
            "2,048 envs (1.08 ms and 21.5 ms; one seed: no interval).\n") in report
    assert ("- [exp5 · CartPole-v1](#how-the-cost-grows-with-the-number-of-envs-exp5): linen (jit) has the shortest "
            "time per iteration at 8 and at 2,048 envs (1.08 ms and 21.5 ms; one seed: no interval).") in \
        section(report, "## The answer")


def test_the_answer_gives_each_envs_fastest_at_both_ends_and_no_line_runs_long(exp5_alone):
    _, _, report = exp5_alone
    bullets = check_answer(report, {"exp5"})
    assert [bullet["label"] for bullet in bullets] == ["exp5 · CartPole-v1", "exp5 · Breakout-MinAtar"]
    assert "(scaling_sps.png)" in section(report, "## The answer")
    assert wordy_lines(report) == []


def test_the_sync_runs_split_the_cost_into_rollout_and_update_and_every_run_has_its_peak_rss(exp5_alone):
    root, _, report = exp5_alone
    text = section(report, SCALING)
    assert "| CartPole-v1 | linen (jit) | 2,048 | 0.00537 | 0.0161 | 25.0% |" in text  # a quarter in the rollout
    assert "| CartPole-v1 | linen (jit) | 0.25 ms | 2.5 µs | 0.75 ms | 7.5 µs |" in text
    run_row = re.compile(r"\| CartPole-v1 \| linen \(jit\) \| [0-9,]+ \| (a)?sync \|")
    runs = [line for line in text.splitlines() if run_row.match(line)]
    assert len(runs) == 5 + 2
    assert runs[0].startswith("| CartPole-v1 | linen (jit) | 8 | async | 1 | 0.00108 | 0.00108 |")
    assert runs[-1].endswith("| 302 |")  # 300 MiB + 2,048 KiB
    with open(root / "summary.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    assert len(rows) == 15 + 6 + 10 and {row["exp"] for row in rows} == {"exp5"}
    assert {float(row["peak_rss_bytes"]) for row in rows if row["num_envs"] == "8"} == {300 * 2**20 + 8 * 2**10}


def test_exp5_runs_stay_out_of_exp1_and_name_their_own_windows_and_memory(tmp_path):
    for env in ("CartPole-v1", "Acrobot-v1"):  # exp1: 20 iterations, its steady state 8–19
        for variant, mode in (("ppo_linen", "jit"), ("ppo_nnx_cached", "cached")):
            write_run(tmp_path / "runs" / "exp1" / f"{variant}_{env}", [4.0] + [1.0] * 19, variant=variant,
                      compile_mode=mode, env_id=env)
    write_exp5_runs(tmp_path, GYMNAX_COSTS, num_envs=(8, 32, 128), peak_bytes=64 << 20)
    result = run_plot(tmp_path)
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "REPORT.md").read_text()
    ranking = section(report, "## Which variant is fastest?")
    assert "torch" not in ranking and "| small | linen (jit) | 2 |" in ranking and "iterations 8–19" in ranking
    assert "| linen (jit) | small | 2 |" in section(report, "## Overhead windows (exp1)")  # 2 runs, not 2 + 3
    assert "iterations 8–11" in section(report, SCALING) and "iterations 8–19" not in section(report, SCALING)
    assert "iterations 8+" not in report  # no window named from the two lengths mixed
    assert report.index("## Which variant is fastest?") < report.index(SCALING) < report.index("## How to read")
    # device peaks: exp1's 1 MiB runs and exp5's 64 MiB ones apart in the memory section, exp5's also per run in its own
    assert "| exp1 | linen (jit) | small | 2 | 300 | 1 |" in section(report, "## Peak memory")
    assert "| exp5 | linen (jit) | small | 3 | 300 | 64 |" in section(report, "## Peak memory")
    assert "| device peak (MiB) |" in section(report, SCALING)
    assert "| CartPole-v1 | linen (jit) | 128 | async | 1 | 0.00228 | 0.00228 |" in section(report, SCALING)
    assert "| 300 | 64 |" in section(report, SCALING)


def test_exp5_too_short_for_a_steady_state_says_so_in_one_line(tmp_path):
    write_exp5_runs(tmp_path, GYMNAX_COSTS, num_envs=(8, 32), sync_num_envs=(8,), num_iterations=3)
    result = run_plot(tmp_path)
    assert result.returncode == 0, result.stderr
    text = section((tmp_path / "REPORT.md").read_text(), SCALING)
    notes = [line for line in text.splitlines() if line and not line.startswith(("|", "#", "- ", "**Every"))]
    assert notes == ["*Empty windows:* iterations 8–99 is empty in every run (runs of 3 iterations end before "
                     "iteration 8); figures over an empty window are left out ('–' in tables)."]
    assert "| CartPole-v1 | linen (jit) | 32 | async | 1 | – | – | – | – | 300 |" in text  # the run and its memory
    assert not list(tmp_path.glob("*.png")) and not re.search(r"\bnan\b", text, re.IGNORECASE)
