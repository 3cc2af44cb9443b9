"""plot.py on exp7, model sizes: the ranking at each size, how the gap moves with the size, the spread over seeds
beside the spread over envs, the rollout's share per size; the large runs' shorter workload kept apart."""

import pytest

from report import sizes, standings, types
from events import write_run
from test_plot import capture_figures, check_answer, lines_by_label, run_plot, wordy_lines
from test_plot_short_runs import section

SIZES_SECTION = "## Does the ranking hold at every model size? (exp7)"
EXP7_ENVS = ("CartPole-v1", "Breakout-MinAtar", "Asterix-MinAtar")
STEADY = {"small": 0.01, "medium": 0.04, "large": 0.5}  # linen's steady seconds per iteration
TORCH_GAP = {"small": 3.0, "medium": 1.5, "large": 1.2}  # torch's steady state over linen's: narrows with the size
TORCH_ENV = {"Breakout-MinAtar": 1.1, "Asterix-MinAtar": 1 / 1.1}  # and per env (1 elsewhere: a geometric mean of 1)
TORCH_SEED = {1: 0.99, 2: 1.0, 3: 1.01}  # and per seed, on Breakout-MinAtar at small
ROLLOUT_SHARE = {"small": 0.5, "medium": 0.25, "large": 0.1}
LENGTH = {"small": 100, "medium": 100, "large": 12}


def seconds(steady, length):
    """Iteration 0 100×, iterations 1–7 1.5× and the rest exactly the steady time."""
    return [100 * steady] + [1.5 * steady] * 7 + [steady] * (length - 8)


def write_exp7(root, medium_envs):
    """exp7 as benchmark.sh lays it out: linen jit and torch env-jit, small on 3 envs × seeds 1–3, medium on
    medium_envs, large on 3 envs in runs of 12 iterations, synchronised runs on CartPole-v1 at each size."""
    cells = [("small", env, seed) for env in EXP7_ENVS for seed in (1, 2, 3)]
    cells += [("medium", env, 1) for env in medium_envs] + [("large", env, 1) for env in EXP7_ENVS]
    for size, env, seed in cells:
        for variant, mode, factor in (("ppo_linen", "jit", 1.0),
                                      ("ppo_torch", "env-jit", TORCH_GAP[size] * TORCH_ENV.get(env, 1.0)
                                       * (TORCH_SEED[seed] if (env, size) == ("Breakout-MinAtar", "small") else 1.0))):
            steady = STEADY[size] * factor
            syncs = (False, True) if env == "CartPole-v1" and seed == 1 else (False,)
            for sync in syncs:
                name = f"exp7__{variant}__{mode}__{env}__{size}{'__sync' if sync else ''}__{seed}"
                write_run(root / "runs" / "exp7" / name, seconds(steady, LENGTH[size]), variant=variant,
                          compile_mode=mode, env_id=env, model_size=size, seed=seed, sync_timing=sync,
                          rollout_fraction=ROLLOUT_SHARE[size])
    return root


@pytest.fixture(scope="module")
def sizes_report(tmp_path_factory):
    """exp7 with medium on 8 envs (enough for a CI) beside a small exp1 of 100-iteration runs."""
    root = write_exp7(tmp_path_factory.mktemp("exp7"), ("CartPole-v1", "Acrobot-v1", "MountainCar-v0",
                                                        "DiscountingChain-bsuite", "MemoryChain-bsuite",
                                                        "Breakout-MinAtar", "Asterix-MinAtar", "Freeway-MinAtar"))
    for variant, mode in (("ppo_linen", "jit"), ("ppo_nnx_cached", "cached")):
        write_run(root / "runs" / "exp1" / f"exp1__{variant}__{mode}__CartPole-v1__small__1", seconds(0.01, 100),
                  variant=variant, compile_mode=mode)
    result = run_plot(root)
    assert result.returncode == 0, result.stderr
    return (root / "REPORT.md").read_text()


def table_row(text, *cells):
    """The first markdown table line of text that starts with these cells."""
    start = "| " + " | ".join(cells) + " |"
    return next(line for line in text.splitlines() if line.startswith(start))


def test_each_size_is_ranked_on_its_own_runs_with_its_own_steady_window(sizes_report):
    text = section(sizes_report, SIZES_SECTION)
    assert "![steady iteration relative to each size's fastest](ranking_sizes.png)" in text
    assert "torch (env-jit) | 3 | 3.00× [range 2.73–3.30]" in table_row(text, "small", "torch (env-jit)")
    assert "| 8 | 1.50× [95% CI" in table_row(text, "medium", "torch (env-jit)")  # 8 envs: a CI
    assert "| 3 | 1.20× [range 1.09–1.32]" in table_row(text, "large", "torch (env-jit)")
    assert "iterations 8–99/iterations 8–11, relative" in text  # each size's window as its runs hold it
    assert "**large** (3 envs, runs of 12 iterations)" in text
    assert "- *Reduced workload:* the large (12 iterations) runs are shorter than the others" in text


def test_the_ranking_table_gives_each_variants_host_and_device_memory_beside_its_times(sizes_report):
    text = section(sizes_report, SIZES_SECTION)
    header = table_row(text, "model size", "variant (mode)")
    assert header.endswith("| host peak RSS (MiB, median) | device peak (MiB, median) |")
    # write_run's default memory: 300 MiB of host RSS, 1 MiB of device peak per run
    assert table_row(text, "large", "torch (env-jit)").endswith("| never (steady state slower) | 300 | 1 |")


def test_the_gap_to_the_fastest_is_followed_across_sizes_and_its_direction_said(sizes_report):
    text = section(sizes_report, SIZES_SECTION)
    assert table_row(text, "torch (env-jit)").startswith(
        "| torch (env-jit) | 3.00× [range 2.73–3.30] | 1.50× [95% CI")
    assert table_row(text, "torch (env-jit)").endswith("| 1.20× [range 1.09–1.32] |")
    assert ("The slowest variant's steady state is 3.00× at small, 1.50× at medium and 1.20× at large the fastest's: "
            "the gap between the frameworks narrows from small to large.") in text
    assert ("- torch (env-jit): 3.00× (small) → 1.50× (medium) → 1.20× (large): its gap to the fastest narrows as the "
            "model grows.") in text
    assert "- linen (jit): 1.00× (small) → 1.00× (medium) → 1.00× (large): within 10% of the fastest at every size." \
        in text


def test_the_answer_gives_each_sizes_ranking_and_how_the_gap_moves_across_sizes(sizes_report):
    bullets = check_answer(sizes_report, {"exp1", "exp7"})
    assert [bullet["label"] for bullet in bullets] == ["exp1 · small", "exp7 · small", "exp7 · medium", "exp7 · large",
                                                       "exp7 · across sizes"]
    assert bullets[1]["anchor"] == "does-the-ranking-hold-at-every-model-size-exp7"
    # the numbers as the section's tables write them: torch's relative steady iteration at each size, the spread
    # across sizes; linen also starts first here (iteration 0 is 100 steady iterations), so no start bullet
    text = section(sizes_report, SIZES_SECTION)
    assert bullets[3]["text"] == ("steady iteration: linen (jit) shortest (0.5 s); torch at best 1.20× [range "
                                  "1.09–1.32] (torch (env-jit)); one run per cell.")
    assert "| 1.20× [range 1.09–1.32] | 1.20× [range 1.09–1.32] | 60 | 0.6 |" in table_row(text, "large", "torch (env-jit)")
    assert bullets[1]["text"].startswith("steady iteration: linen (jit) shortest") and "one run" not in bullets[1]["text"]
    assert bullets[4]["text"] == ("the slowest variant's steady state over the fastest's: 3.00× (small) → 1.50× "
                                  "(medium) → 1.20× (large); the gap narrows.")
    answer = section(sizes_report, "## The answer")  # the headline chart: the first answer's, exp1's ranking
    assert "![ranking of the fully compiled variants](ranking.png)" in answer and "ranking_sizes.png" not in answer
    assert wordy_lines(sizes_report) == []


def test_a_gap_that_grows_with_the_model_is_said_to_widen():
    assert sizes.gap_move_text("torch (env-jit)", {"small": 1.5, "medium": 1.2, "large": 2.0}) == \
        "- torch (env-jit): 1.50× (small) → 1.20× (medium) → 2.00× (large): its gap to the fastest widens as the model grows."
    assert sizes.gap_move_text("equinox (jit)", {"small": 1.0, "large": 1.04}).endswith(
        "within 10% of the fastest at every size.")


def test_the_spread_over_seeds_is_shown_beside_the_spread_over_envs(sizes_report):
    text = section(sizes_report, SIZES_SECTION)
    row = table_row(text, "small", "torch (env-jit)", "3.00×")
    # over envs: each env's geometric mean over its seeds; over seeds: Breakout-MinAtar's 0.99 to 1.01 of 3.30
    assert row == "| small | torch (env-jit) | 3.00× | 2.73–3.30× | 3.27–3.33× | 3 |", row
    assert "| medium |" not in text.split("**Run-to-run spread")[1].split("**Rollout and update")[0]  # one seed


def test_the_rollout_share_is_given_per_size_from_the_synchronised_runs(sizes_report):
    text = section(sizes_report, SIZES_SECTION)
    assert table_row(text, "large", "linen (jit)", "iterations 8–11").endswith("| 10.0% |")
    assert ("- The rollout's share of the iteration by model size:\n"
            "  - linen (jit): 50.0% (small) → 25.0% (medium) → 10.0% (large)\n"
            "  - torch (env-jit): 50.0% (small) → 25.0% (medium) → 10.0% (large)\n") in text


def test_exp7_stays_out_of_the_other_sections_and_their_windows(sizes_report):
    ranking = section(sizes_report, "## Which variant is fastest? (exp1")
    assert "torch (env-jit)" not in ranking and "| large |" not in ranking
    assert "iterations 8–99, relative" in ranking  # exp7's 12-iteration runs do not rename exp1's window
    returns = sizes_report.split("**exp7**")[1]
    assert "Breakout-MinAtar" in returns  # exp7's final returns, async runs only


def test_the_size_chart_is_one_panel_of_each_variants_steady_gap_against_the_model_size(tmp_path, monkeypatch):
    figures = capture_figures(monkeypatch)
    assert run_plot(write_exp7(tmp_path, EXP7_ENVS)).returncode == 0
    (ax,) = figures["ranking_sizes.png"].axes
    assert [label.get_text().split(" (")[0] for label in ax.get_xticklabels()] == ["small", "medium", "large"]
    lines = lines_by_label(ax)
    assert {"torch (env-jit)", "linen (jit)"} <= set(lines) and ax.get_yscale() == "log"
    assert lines["torch (env-jit)"].get_ydata() == pytest.approx([3.0, 1.5, 1.2], rel=0.01)  # the gap narrows


def test_each_sizes_answer_names_a_fastest_alone_only_where_its_interval_is_apart_from_every_others():
    # small: equinox 0.9× linen on CartPole-v1 and 1.05× on Acrobot-v1, a range that holds 1×; large: torch 1.2× on both
    factor = {("small", "equinox (jit)", "CartPole-v1"): 0.9, ("small", "equinox (jit)", "Acrobot-v1"): 1.05,
              ("large", "torch (env-jit)", "CartPole-v1"): 1.2, ("large", "torch (env-jit)", "Acrobot-v1"): 1.2}
    steady = lambda size, label, env: factor.get((size, label, env), 1.0)
    rows = [{"label": label, "env": env, "seed": 1, "size": size, "num_iterations": 100, "iter0_s": 4.0,
             "iter8_99_median_s": steady(size, label, env), "total_s": 4.0 + 99 * steady(size, label, env),
             "condition": types.Condition("exp7", env, size, "async", ())}
            for size, other in (("small", "equinox (jit)"), ("large", "torch (env-jit)"))
            for label in ("linen (jit)", other) for env in ("CartPole-v1", "Acrobot-v1")]
    bullets = dict(standings.ranking_bullets(standings.size_rankings(rows, sizes.SIZE_LABELS, "iterations 8–99"), "exp7"))
    assert bullets["exp7 · small"].startswith("steady iteration: equinox (jit) shortest (0.972 s), level with linen "
                                              "(jit)")
    assert bullets["exp7 · large"].startswith("steady iteration: linen (jit) shortest (1 s); torch at best 1.20×")
    assert "level" not in bullets["exp7 · large"] and "no interval" not in bullets["exp7 · large"]
