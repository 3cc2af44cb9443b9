"""plot.py on exp8, DQN: per env the slowest DQN variant's steady iteration over the fastest's, the same over the four
designs with a PPO analogue beside the spread of PPO's analogous exp4 variants (none on Breakout-MinAtar, which the
Gymnasium pair cannot run), a table per env with exact values, the chart, the workload line; exp8 kept out of every PPO
section and of the PPO windows' names."""

import csv
import itertools
import math
import shutil

import pytest

from report import dqn, stats
from events import scalar, text, write_events, write_run, write_sweep
from test_plot import capture_figures, check_answer, lines_by_label, run_plot, wordy_lines
from test_plot_short_runs import section

DQN_SECTION = "## Does the framework matter more for DQN than for PPO? (exp8)"
ITERATION_STEPS = 10_000
DQN_ITERATIONS = 50
MINATAR = "Breakout-MinAtar"
MINATAR_ITERATIONS = 20  # Breakout-MinAtar's DQN workload: 200,000 transitions, a replay memory of 100,000
# the four designs with a PPO analogue in exp4, then the variants without one
DESIGNS = (("dqn_torch_gymnasium", "eager"), ("dqn_linen_gymnasium", "jit"), ("dqn_torch", "env-jit"),
           ("dqn_linen", "jit"))
VARIANTS = DESIGNS + (("dqn_torch_compile", "compile"), ("dqn_nnx", "tree"), ("dqn_equinox", "jit"))
# Steady seconds per iteration on CartPole-v1 (Acrobot-v1: twice as long, Breakout-MinAtar four times), the wide
# dqn_linen's at 16 envs apart; the slowest variant's seeds scale its own. Of the seven, dqn_torch_gymnasium over
# dqn_nnx is 16×, 32× and 8× by seed; of the four designs, over dqn_linen 8×, 16× and 4×; on Breakout-MinAtar (no
# Gymnasium pair) dqn_torch over dqn_nnx 8×.
STEADY = {"dqn_torch_gymnasium": 2.0, "dqn_linen_gymnasium": 0.5, "dqn_torch": 1.0, "dqn_linen": 0.25,
          "dqn_torch_compile": 0.75, "dqn_nnx": 0.125, "dqn_equinox": 0.2}
WIDE_STEADY = 0.0625
SLOWEST_SEED_FACTOR = {1: 1.0, 2: 2.0, 3: 0.5}
ENV_FACTOR = {"CartPole-v1": 1.0, "Acrobot-v1": 2.0, MINATAR: 4.0}
# PPO's exp4 on CartPole-v1 alone, its slowest analogous variant 2× its fastest at every seed.
PPO_STEADY = {("ppo_linen", "jit"): 0.0625, ("ppo_torch", "env-jit"): 0.09375, ("ppo_linen_gymnasium", "jit"): 0.1,
              ("ppo_torch_gymnasium", "eager"): 0.125}


def dqn_seconds(steady, iterations=DQN_ITERATIONS):
    """A DQN run's iteration times: iteration 0 (learning starts and compilation) 4 s, iterations 1–7 1.5× the steady
    time, the rest exactly the steady time."""
    return [4.0] + [1.5 * steady] * 7 + [steady] * (iterations - 8)


def write_dqn_run(run_dir, iteration_seconds, *, variant, mode, env, seed, num_envs=1, buffer_size=10_000,
                  peak_bytes=None):
    """Writes one run's event file as the dqn_*.py scripts do: the harness's tags and DQN's (epsilon, TD loss, Q
    values), no rollout or update; an iteration is ITERATION_STEPS transitions, iteration i's return 10·(i + 1) +
    seed."""
    hyperparameters = {
        "exp_name": variant, "seed": seed, "env_id": env, "model_size": "small", "sync_timing": False,
        "profile": False, "device": "auto", "total_timesteps": ITERATION_STEPS * len(iteration_seconds),
        "learning_rate": 0.00025, "num_envs": num_envs, "buffer_size": buffer_size, "gamma": 0.99, "tau": 1.0,
        "target_network_frequency": 500, "batch_size": 128, "start_e": 1.0, "end_e": 0.05,
        "exploration_fraction": 0.5, "learning_starts": ITERATION_STEPS, "train_frequency": 10,
        "iteration_steps": ITERATION_STEPS,
    }
    system = {"script": f"{variant}.py", "compile_mode": mode, "device": "cpu: cpu", "python": "3.11.7",
              "cpu": "Synthetic CPU", "git_commit": "0" * 40}
    events = [text("hyperparameters", "param", hyperparameters), text("system", "key", system),
              scalar("time/startup", 2.0, 0)]
    for iteration, seconds in enumerate(iteration_seconds):
        step = (iteration + 1) * ITERATION_STEPS
        events += [scalar("charts/episodic_return", 10.0 * (iteration + 1) + seed, step),
                   scalar("charts/episodic_length", 100.0, step), scalar("charts/epsilon", 0.05, step),
                   scalar("charts/SPS", step / sum(iteration_seconds[: iteration + 1]), step)]
        events += [scalar("losses/td_loss", 1.0, step), scalar("losses/q_values", 10.0, step)] * (iteration > 0)
        events.append(scalar("time/iteration", seconds, iteration))
    events += [scalar("memory/peak_bytes", peak_bytes, len(iteration_seconds))] * (peak_bytes is not None)
    events += [scalar("memory/peak_rss_bytes", 300 << 20, len(iteration_seconds)),
               scalar("time/total", sum(iteration_seconds), len(iteration_seconds))]
    write_events(run_dir, events)


def write_exp8(root, peak_bytes=None, variants=VARIANTS, envs=tuple(ENV_FACTOR)):
    """exp8 as benchmark.sh lays it out, seeds 1–3: on CartPole-v1 and Acrobot-v1 the variants at 1 env and dqn_linen
    at 16 envs; on Breakout-MinAtar those on gymnax at 1 env, in runs of its own workload."""
    for env, seed in itertools.product(envs, SLOWEST_SEED_FACTOR):
        minatar = env == MINATAR
        runs = [(variant, mode, 1) for variant, mode in variants if not (minatar and variant.endswith("_gymnasium"))]
        runs += [] if minatar else [("dqn_linen", "jit", 16)]
        for variant, mode, num_envs in runs:
            steady = STEADY[variant] if num_envs == 1 else WIDE_STEADY
            factor = ENV_FACTOR[env] * (SLOWEST_SEED_FACTOR[seed] if variant == "dqn_torch_gymnasium" else 1.0)
            write_dqn_run(root / "runs" / "exp8" / f"exp8__{variant}__{mode}__{env}__small__n{num_envs}__{seed}",
                          dqn_seconds(steady * factor, MINATAR_ITERATIONS if minatar else DQN_ITERATIONS),
                          variant=variant, mode=mode, env=env, seed=seed, num_envs=num_envs,
                          buffer_size=100_000 if minatar else 10_000, peak_bytes=peak_bytes)
    return root


def write_exp4(root):
    """PPO's exp4 on CartPole-v1, small, seeds 1–3: runs of 12 iterations at PPO_STEADY's steady times."""
    for (variant, mode), steady in PPO_STEADY.items():
        for seed in SLOWEST_SEED_FACTOR:
            write_run(root / "runs" / "exp4" / f"exp4__{variant}__{mode}__CartPole-v1__small__{seed}",
                      [1.0] * 8 + [steady] * 4, variant=variant, compile_mode=mode, seed=seed)
    return root


@pytest.fixture(scope="module")
def exp8_report(tmp_path_factory):
    """exp8 beside PPO's exp4: the folder, plot.py's result and the DQN section."""
    root = write_exp4(write_exp8(tmp_path_factory.mktemp("exp8")))
    result = run_plot(root)
    assert result.returncode == 0, result.stderr
    return root, section((root / "REPORT.md").read_text(), DQN_SECTION)


@pytest.fixture(scope="module")
def with_and_without_exp8(tmp_path_factory):
    """A PPO sweep of exp1 to exp4 in runs of 100 iterations, and the same sweep plus exp8 (its runs logging a device
    peak, as on a GPU): each report."""
    root = tmp_path_factory.mktemp("ppo")
    write_sweep(root / "ppo", envs=("CartPole-v1", "Acrobot-v1"), seeds=(1,), sizes=("small",), exp4=True)
    shutil.copytree(root / "ppo", root / "both")
    write_exp8(root / "both", peak_bytes=64 << 20)
    for name in ("ppo", "both"):
        result = run_plot(root / name, "--out", root / f"{name}_report")
        assert result.returncode == 0, result.stderr
    return [(root / f"{name}_report" / "REPORT.md").read_text() for name in ("ppo", "both")]


def sections(report):
    """{heading: text} of a report's sections (## and ###)."""
    parts = report.split("\n#")[1:]
    return {("#" + part).split("\n", 1)[0]: "#" + part for part in parts}


def table_row(text, name):
    """The markdown table line of text whose first cell is name."""
    return next(line for line in text.splitlines() if line.startswith(f"| {name} |"))


FOUR_DESIGNS = "  - Of the four designs with a PPO analogue in exp4 (the same framework on the same env backend), "


def test_the_answer_gives_the_familys_spread_then_the_four_designs_beside_ppos_exp4_spread(exp8_report):
    _, text = exp8_report
    # the seven: the slowest over dqn_nnx (tree), the fastest; the four designs: the slowest over dqn_linen (jit)
    assert ("- **CartPole-v1:** 7 DQN variants at 1 env.\n"
            "  - dqn_torch_gymnasium (eager) takes 16.00× [range 8.00–32.00] the steady iteration (median of iterations "
            "8–49) of dqn_nnx (tree), the fastest.\n"
            + FOUR_DESIGNS + "dqn_torch_gymnasium (eager) takes 8.00× [range 4.00–16.00] that of dqn_linen (jit).\n"
            "  - For PPO (exp4, small, median of iterations 8–11) torch_gymnasium (eager) takes 2.00× [range 2.00–2.00] "
            "that of linen (jit).\n"
            "  - **The designs lie further apart for DQN than for PPO** here: the two intervals do not overlap.\n") in text
    assert ("- **Acrobot-v1:** 7 DQN variants at 1 env.\n"
            "  - dqn_torch_gymnasium (eager) takes 16.00× [range 8.00–32.00] the steady iteration (median of iterations "
            "8–49) of dqn_nnx (tree), the fastest.\n"
            + FOUR_DESIGNS + "dqn_torch_gymnasium (eager) takes 8.00× [range 4.00–16.00] that of dqn_linen (jit).\n"
            "  - PPO's exp4 has no run on Acrobot-v1 at model size small: no PPO spread to set beside it.\n") in text
    assert text.index("- **CartPole-v1:**") < text.index("- **Acrobot-v1:**") < text.index("- **Breakout-MinAtar:**") \
        < text.index("Iteration 0 holds the learning-starts phase") < text.index("| variant (mode) |")


def test_the_answer_at_the_top_gives_each_envs_spread_and_the_four_designs_beside_ppos(exp8_report):
    root, _ = exp8_report
    report = (root / "REPORT.md").read_text()
    answer = section(report, "## The answer")
    bullets = check_answer(report, {"exp4", "exp8"})
    assert [bullet["label"] for bullet in bullets][2:] == ["exp8 · CartPole-v1", "exp8 · Acrobot-v1",
                                                           "exp8 · Breakout-MinAtar"]
    assert wordy_lines(report) == []
    assert ("- [exp8 · CartPole-v1](#does-the-framework-matter-more-for-dqn-than-for-ppo-exp8): dqn_torch_gymnasium "
            "(eager) takes 16.00× [range 8.00–32.00] the steady iteration of dqn_nnx (tree); the four designs 8.00× "
            "[range 4.00–16.00] against PPO's four 2.00× [range 2.00–2.00]: further apart for DQN.") in answer
    assert ("- [exp8 · Breakout-MinAtar](#does-the-framework-matter-more-for-dqn-than-for-ppo-exp8): dqn_torch (env-jit) "
            "takes 8.00× [range 8.00–8.00] the steady iteration of dqn_nnx (tree).") in answer


def test_on_breakout_the_answer_gives_the_gymnax_variants_spread_and_says_why_there_is_no_ppo_comparison(exp8_report):
    _, text = exp8_report
    assert ("- **Breakout-MinAtar:** 5 DQN variants at 1 env.\n"
            "  - dqn_torch (env-jit) takes 8.00× [range 8.00–8.00] the steady iteration (median of iterations 8–19) of "
            "dqn_nnx (tree), the fastest.\n"
            "  - No PPO spread to set beside it: the four designs with a PPO analogue in exp4 are not all here.\n"
            "  - exp8 has no run of dqn_torch_gymnasium (eager) and dqn_linen_gymnasium (jit) on Breakout-MinAtar (the "
            "Gymnasium scripts run only envs with a Gymnasium counterpart).\n") in text


def test_a_missing_design_other_than_the_gymnasium_pair_is_named_without_the_gymnasium_reason():
    variant = lambda name: dqn.DesignRuns(name, [], (1.0, (math.nan, math.nan, "")))
    single = [variant(name) for name in ("dqn_torch_gymnasium (eager)", "dqn_linen_gymnasium (jit)", "dqn_linen (jit)",
                                         "dqn_nnx (tree)")]
    assert dqn.ppo_comparison_lines("CartPole-v1", single, [], "iterations 8–11") == [
        "No PPO spread to set beside it: the four designs with a PPO analogue in exp4 are not all here.",
        "exp8 has no run of dqn_torch (env-jit) on CartPole-v1."]


def test_a_sweep_of_the_four_designs_alone_gives_one_spread_beside_ppos_and_one_workload(tmp_path):
    root = write_exp4(write_exp8(tmp_path, variants=DESIGNS, envs=("CartPole-v1", "Acrobot-v1")))
    result = run_plot(root)
    assert result.returncode == 0, result.stderr
    report = (root / "REPORT.md").read_text()
    assert ("- **CartPole-v1:** 4 DQN variants at 1 env.\n"
            "  - dqn_torch_gymnasium (eager) takes 8.00× [range 4.00–16.00] the steady iteration (median of iterations "
            "8–49) of dqn_linen (jit), the fastest.\n"
            "  - For PPO (exp4, small, median of iterations 8–11) torch_gymnasium (eager) takes 2.00× [range 2.00–2.00] "
            "that of linen (jit).\n"
            "  - **The designs lie further apart for DQN than for PPO** here") in report
    assert ("dqn_linen (jit), the fastest.\n  - PPO's exp4 has no run on Acrobot-v1 at model size small: no PPO spread "
            "to set beside it.") in report
    # the answer at the top: the four designs are the family, so their spread is said once
    assert ("dqn_torch_gymnasium (eager) takes 8.00× [range 4.00–16.00] the steady iteration of dqn_linen (jit); PPO's "
            "four 2.00× [range 2.00–2.00]: further apart for DQN.") in section(report, "## The answer")
    assert "Of the four designs" not in report
    assert ("- **Workload (exp8, DQN):** num_envs 1/16; 500,000 transitions in 50 iterations (buffer 10,000); 30 runs "
            "on 2 envs (CartPole-v1, Acrobot-v1)\n") in report
    assert "Each run's steady iteration is the median of its iterations 8–49;" in report


def test_the_table_gives_exact_steady_iteration_seed_range_iteration_0_total_sps_relative_and_final_return(
        exp8_report):
    _, text = exp8_report
    cartpole = text.split("**CartPole-v1**")[1].split("**Acrobot-v1**")[0]
    # total 4 + 7 · 0.375 + 42 · 0.25 = 17.125 s; 500,000 transitions / 17.125 s; twice dqn_nnx's 0.125 s; returns 481,
    # 482, 483 over seeds
    # and each run's host peak RSS, 300 MiB (no device peak logged: no column for it)
    assert table_row(cartpole, "dqn_linen (jit)") == ("| dqn_linen (jit) | 3 | 0.25 [range 0.25–0.25] | 4 | 17.1 | "
                                                      "29,197 | 2.00× [range 2.00–2.00] | 482 ± 1 | 300 |")
    assert table_row(cartpole, "dqn_nnx (tree)") == \
        "| dqn_nnx (tree) | 3 | 0.125 [range 0.125–0.125] | 4 | 10.6 | 47,337 | 1 (fastest) | 482 ± 1 | 300 |"
    assert table_row(cartpole, "variant (mode)").endswith("| final return | host peak RSS (MiB, median) |")
    slowest = table_row(cartpole, "dqn_torch_gymnasium (eager)")
    assert slowest.startswith("| dqn_torch_gymnasium (eager) | 3 | 2 [range 1–4] | 4 |")
    assert "| 16.00× [range 8.00–32.00] | 482 ± 1 |" in slowest
    assert [line.split(" | ")[0] for line in cartpole.splitlines() if line.startswith("| dqn")] == [
        "| dqn_nnx (tree)", "| dqn_equinox (jit)", "| dqn_linen (jit)", "| dqn_linen_gymnasium (jit)",
        "| dqn_torch_compile (compile)", "| dqn_torch (env-jit)", "| dqn_torch_gymnasium (eager)",
        "| dqn_linen (jit) at 16 envs"]  # the variants at 1 env fastest first, the wide run after them
    acrobot = text.split("**Acrobot-v1**")[1].split("**Breakout-MinAtar**")[0]
    assert "| dqn_torch (env-jit) | 3 | 2 [range 2–2] | 4 | 109 | 4,587 | 8.00× [range 8.00–8.00] |" in acrobot


def test_breakouts_table_holds_the_gymnax_variants_in_runs_of_its_own_workload(exp8_report):
    _, text = exp8_report
    breakout = text.split("**Breakout-MinAtar**")[1]
    assert "| s per steady iteration (iterations 8–19) [interval over seeds] |" in breakout
    # 20 iterations: total 4 + 7 · 1.5 + 12 · 1 = 26.5 s; 200,000 transitions / 26.5 s; returns 181, 182, 183 by seed
    assert table_row(breakout, "dqn_linen (jit)") == \
        "| dqn_linen (jit) | 3 | 1 [range 1–1] | 4 | 26.5 | 7,547 | 2.00× [range 2.00–2.00] | 182 ± 1 | 300 |"
    assert [line.split(" | ")[0] for line in breakout.splitlines() if line.startswith("| dqn")] == [
        "| dqn_nnx (tree)", "| dqn_equinox (jit)", "| dqn_linen (jit)", "| dqn_torch_compile (compile)",
        "| dqn_torch (env-jit)"]


def test_the_wide_dqn_linen_is_marked_apart_and_left_out_of_the_spread(exp8_report):
    _, text = exp8_report
    # 4 + 7 · 0.09375 + 42 · 0.0625 = 7.28125 s: faster than every variant, yet the spread's fastest stays dqn_nnx (tree)
    assert table_row(text, "dqn_linen (jit) at 16 envs") == ("| dqn_linen (jit) at 16 envs | 3 | 0.0625 [range "
                                                             "0.0625–0.0625] | 4 | 7.28 | 68,670 | 0.50× [range "
                                                             "0.50–0.50] | 482 ± 1 | 300 |")
    assert ("- A table that has dqn_linen (jit) at 16 envs gives it apart, after the variants at 1 env; it is in neither "
            "spread.\n- It makes as many transitions and gradient steps as at 1 env, in fewer, wider steps of its "
            "loop.") in text


def test_the_note_says_what_iteration_0_holds_and_that_only_whole_iterations_are_timed(exp8_report):
    _, text = exp8_report
    # runs of 50 and of 20 iterations (Breakout-MinAtar): the steady window's name covers both
    assert "Each run's steady iteration is the median of its iterations 8+;" in text
    assert ("- Iteration 0 holds the learning-starts phase (transitions stored, no gradient step) and compilation.\n"
            "- The DQN loop has no rollout/update split (acting and learning alternate at every env step), so only "
            "whole iterations are timed.") in text


def test_exp8_rows_stay_in_summary_csv(exp8_report):
    root, _ = exp8_report
    with open(root / "summary.csv", newline="") as file:
        rows = [row for row in csv.DictReader(file) if row["exp"] == "exp8"]
    assert len(rows) == 2 * 3 * 8 + 3 * 5
    linen = next(row for row in rows if row["variant"] == "dqn_linen" and row["num_envs"] == "1")
    assert (linen["iter8_99_median_s"], linen["total_s"], linen["num_steps"]) == ("0.25", "17.125", "?")
    breakout = [row for row in rows if row["env"] == MINATAR]
    assert {(row["variant"], row["num_iterations"]) for row in breakout} == {
        (variant, str(MINATAR_ITERATIONS)) for variant, _ in VARIANTS if not variant.endswith("_gymnasium")}


def test_the_chart_draws_each_variants_geometric_mean_over_seeds_per_env_on_a_log_axis(tmp_path, monkeypatch):
    figures = capture_figures(monkeypatch)
    assert run_plot(write_exp8(tmp_path)).returncode == 0
    (ax,) = figures["dqn.png"].axes
    assert (tmp_path / "dqn.png").stat().st_size > 10_000 and ax.get_yscale() == "log"
    assert [label.get_text() for label in ax.get_xticklabels()] == ["CartPole-v1", "Acrobot-v1", MINATAR]
    lines = lines_by_label(ax)
    assert list(lines) == ["dqn_torch_gymnasium (eager)", "dqn_linen_gymnasium (jit)", "dqn_torch (env-jit)",
                           "dqn_linen (jit)", "dqn_torch_compile (compile)", "dqn_nnx (tree)", "dqn_equinox (jit)",
                           "dqn_linen (jit) at 16 envs"]
    assert lines["dqn_torch_gymnasium (eager)"].get_ydata() == pytest.approx([2.0, 4.0])  # no Breakout-MinAtar point
    assert lines["dqn_nnx (tree)"].get_ydata() == pytest.approx([0.125, 0.25, 0.5])
    assert lines["dqn_linen (jit) at 16 envs"].get_ydata() == pytest.approx([0.0625, 0.125])
    assert len({line.get_color() for line in lines.values()}) == len(lines)  # a colour of its own each


def test_a_sweep_of_exp8_alone_says_ppos_exp4_is_not_in_it_and_writes_only_its_own_section(tmp_path):
    result = run_plot(write_exp8(tmp_path))
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "REPORT.md").read_text()
    assert [line for line in report.splitlines() if line.startswith("## ")] == [
        "## The answer", DQN_SECTION, "## Method and machine", "## How to read this report", "## Peak memory"]
    assert "PPO's exp4 is not in this sweep: no PPO spread to set beside it." in report
    assert sorted(path.name for path in tmp_path.glob("*.png")) == ["dqn.png"]
    # each workload with its replay memory and its envs: Breakout-MinAtar's own
    assert ("- **Workload (exp8, DQN):** num_envs 1/16; 500,000 transitions in 50 iterations (buffer 10,000) on "
            "CartPole-v1 and Acrobot-v1; 200,000 transitions in 20 iterations (buffer 100,000) on Breakout-MinAtar; "
            "63 runs on 3 envs (CartPole-v1, Acrobot-v1, Breakout-MinAtar)\n") in report
    assert "num_steps ?" not in report and "exp8 (" not in section(report, "## Method and machine")


@pytest.mark.slow  # two more reports of a whole synthetic sweep
def test_without_exp8_there_is_no_dqn_section_and_the_header_names_it_missing(with_and_without_exp8):
    ppo, _ = with_and_without_exp8
    assert DQN_SECTION not in ppo and "dqn" not in ppo
    absent = next(line for line in ppo.splitlines() if line.startswith("- **Not in this sweep:**"))
    assert "exp8 (DQN across frameworks and env backends: does the framework matter more than for PPO);" in absent


@pytest.mark.slow
def test_adding_exp8_to_a_ppo_sweep_leaves_every_ppo_section_unchanged(with_and_without_exp8):
    ppo, both = (sections(report) for report in with_and_without_exp8)
    headings = list(both)
    assert headings[headings.index(DQN_SECTION) + 1] == "## Method and machine"  # the last of the answers
    assert [heading for heading in headings if heading != DQN_SECTION] == list(ppo)
    for heading, text in ppo.items():
        if heading in ("## The answer", "## Method and machine", "## Peak memory"):
            continue  # the answer, the header (its workload) and the memory table name exp8's runs too
        if heading == "## How to read this report":  # its first line counts every run of the sweep, exp8's too
            assert both[heading].split("\n")[3:] == text.split("\n")[3:] and "iterations 8–99" in text
        else:
            assert both[heading] == text, heading
    assert "iterations 8–49" in both[DQN_SECTION]


def test_two_spreads_are_told_apart_only_where_their_intervals_do_not_overlap():
    spread = lambda low, high: (math.sqrt(low * high), (low, high, "range"))
    assert dqn.verdict(spread(4.0, 16.0), spread(2.0, 3.0)).startswith("**The designs lie further apart for DQN")
    assert dqn.verdict(spread(1.1, 1.5), spread(2.0, 3.0)).startswith("**The designs lie closer together for DQN")
    assert dqn.verdict(spread(2.5, 4.0), spread(2.0, 3.0)) == \
        "The two spreads are not told apart: their intervals overlap."
    # one seed: the verdict says which side has it
    assert dqn.verdict(spread(4.0, 16.0), (2.0, (math.nan, math.nan, ""))) == \
        "PPO's side has one seed: no interval to tell the two spreads apart."
    assert dqn.verdict((4.0, (math.nan, math.nan, "")), spread(2.0, 3.0)).startswith("DQN's side has one seed: no")
    assert dqn.verdict((4.0, (math.nan, math.nan, "")), (2.0, (math.nan, math.nan, ""))).startswith("Each side has")


def one_env(seconds_by_name):
    """One env's Variants, fastest first, from {name: steady seconds of seeds 1, 2, …}."""
    found = [dqn.DesignRuns(name, [{"seed": seed, dqn.STEADY: value} for seed, value in enumerate(seconds, 1)],
                         dqn.over_seeds(seconds)) for name, seconds in seconds_by_name.items()]
    return sorted(found, key=lambda variant: variant.steady[0])


def test_a_fastest_not_apart_from_the_next_is_named_with_the_variants_level_with_it():
    # dqn_linen over dqn_equinox by seed: 0.98, 1.02, 1.03: the range holds 1×; dqn_nnx's 1.10× is apart
    single = one_env({"dqn_torch (env-jit)": [10.0] * 3, "dqn_equinox (jit)": [1.0] * 3,
                      "dqn_linen (jit)": [0.98, 1.02, 1.03], "dqn_nnx (tree)": [1.1] * 3})
    assert dqn.answer_lines("Acrobot-v1", single, [], "iterations 8–49", "iterations 8–99")[1] == (
        "  - dqn_torch (env-jit) takes 10.00× [range 10.00–10.00] the steady iteration (median of iterations 8–49) of "
        "the fastest, dqn_equinox (jit) and dqn_linen (jit) level (the ratio's interval over seeds holds 1×).")
    assert dqn.dqn_bullet("Acrobot-v1", single, []) == ("dqn_torch (env-jit) takes 10.00× [range 10.00–10.00] the "
                                                        "steady iteration of the fastest, dqn_equinox (jit) and "
                                                        "dqn_linen (jit) level")
    # with dqn_linen apart too, dqn_equinox is the fastest
    apart = one_env({"dqn_torch (env-jit)": [10.0] * 3, "dqn_equinox (jit)": [1.0] * 3, "dqn_linen (jit)": [1.1] * 3})
    assert dqn.dqn_bullet("Acrobot-v1", apart, []).endswith("the steady iteration of dqn_equinox (jit)")


def test_with_one_seed_the_spread_says_there_is_no_interval_instead_of_naming_the_fastest():
    single = one_env({"dqn_torch (env-jit)": [10.0], "dqn_equinox (jit)": [1.0], "dqn_linen (jit)": [1.01]})
    assert dqn.answer_lines("Acrobot-v1", single, [], "iterations 8–49", "iterations 8–99")[1] == (
        "  - dqn_torch (env-jit) takes 10.00× the steady iteration (median of iterations 8–49) of dqn_equinox (jit) "
        "(one seed: no interval).")


def test_the_answer_says_which_side_has_one_seed_where_only_ppos_does():
    single = one_env({name: [seconds * factor for factor in (1.0, 1.1, 0.9)] for name, seconds in (
        ("dqn_torch_gymnasium (eager)", 20.0), ("dqn_linen_gymnasium (jit)", 10.0), ("dqn_torch (env-jit)", 5.0),
        ("dqn_linen (jit)", 1.0))})
    exp4 = [{"exp": "exp4", "env": "Acrobot-v1", "size": "small", "label": label, "seed": 1, dqn.STEADY: seconds}
            for label, seconds in (("torch_gymnasium (eager)", 5.0), ("linen_gymnasium (jit)", 3.0),
                                   ("torch (env-jit)", 2.0), ("linen (jit)", 1.0))]
    assert dqn.dqn_bullet("Acrobot-v1", single, exp4).endswith("PPO's four 5.00×: PPO's side has one seed: no interval")


def test_an_interval_over_seeds_follows_the_interval_over_envs_rule():
    assert stats.geometric_interval([1.0, 4.0, 2.0]) == (1.0, 4.0, "range")
    low, high, kind = stats.geometric_interval([2.0] * 7 + [4.0])
    assert kind == "95% CI" and low < 2 ** (9 / 8) < high
    assert math.isnan(stats.geometric_interval([2.0])[0])
