"""Tests of plot.py on synthetic event files: exact numbers, skipped files, clean errors, every chart, --compare."""

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from events import ALL_PAIRS, SIZES, write_run, write_sweep

PLOT = Path(__file__).resolve().parents[1] / "plot.py"
# every chart but the learning curves, of which there is one pair per experiment (and model size in exp1)
CHARTS = ("duration_vs_complexity", "speedups_total", "overhead_exp1", "overhead_exp3", "speedups_steady_state",
          "sync_times_exp2", "sync_speedups_exp2", "sync_times_exp3", "sync_speedups_exp3", "compile_modes")

# Iteration times exactly representable in float32 (simple_value), with known windows:
# iteration 0 = 4, mean of iterations 1–7 = 1, median of iterations 8–11 = 0.5, total = 13.
KNOWN_SECONDS = [4.0, 0.5, 1.0, 1.5, 0.5, 1.0, 1.5, 1.0, 0.25, 0.5, 0.75, 0.5]
# Speedup of linen (jit) over torch_compile (compile) per env: geometric mean 4, median 5.
TORCH_SLOWDOWN = {"CartPole-v1": 2.0, "Acrobot-v1": 8.0}


def run_plot(*args):
    """Runs plot.py with args; returns the completed process (text output captured)."""
    return subprocess.run([sys.executable, str(PLOT), *map(str, args)], capture_output=True, text=True, timeout=300)


def read_summary(folder):
    """summary.csv rows keyed by (variant, compile_mode, env, size, exp, seed)."""
    key = ("variant", "compile_mode", "env", "size", "exp", "seed")
    with open(folder / "summary.csv", newline="") as file:
        return {tuple(row[name] for name in key): row for row in csv.DictReader(file)}


def windows(row):
    """A summary row's iteration 0, iterations 1–7 and iterations 8–99 values (None where empty)."""
    return tuple(float(row[name]) if row[name] else None for name in ("iter0_s", "iter1_7_mean_s", "iter8_99_median_s"))


def write_known_sweep(root, scale=1.0):
    """A small sweep with exactly known times (multiplied by scale), plus an unfinished, a corrupt and a cut run."""
    runs = root / "runs"
    for env, slowdown in TORCH_SLOWDOWN.items():
        for variant, mode, factor in (("ppo_linen", "jit", 1.0), ("ppo_torch_compile", "compile", slowdown)):
            seconds = [s * factor * scale for s in KNOWN_SECONDS]
            write_run(runs / "exp1" / f"{variant}_{env}", seconds, variant=variant, compile_mode=mode, env_id=env)
        for mode, factor in (("jit", 1.0), ("none", 4.0)):
            seconds = [s * factor * scale for s in KNOWN_SECONDS]
            write_run(runs / "exp2" / f"linen_{mode}_{env}", seconds, variant="ppo_linen", compile_mode=mode,
                      env_id=env, sync_timing=True, rollout_fraction=0.25)
    write_run(runs / "exp1" / "short", [s * scale for s in (4.0, 1.0, 3.0, 2.0, 2.0)], env_id="MountainCar-v0")
    write_run(runs / "exp1" / "unfinished", KNOWN_SECONDS, env_id="MountainCar-v0", seed=2, finished=False)
    corrupt = next(write_run(runs / "exp1" / "corrupt", KNOWN_SECONDS, env_id="MountainCar-v0", seed=3).iterdir())
    data = bytearray(corrupt.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte
    corrupt.write_bytes(bytes(data))
    cut = next(write_run(runs / "exp1" / "cut", KNOWN_SECONDS, env_id="MountainCar-v0", seed=4).iterdir())
    cut.write_bytes(cut.read_bytes()[:-7])  # a process killed while writing its last record
    return root


@pytest.fixture(scope="module")
def known_sweep(tmp_path_factory):
    """The known sweep and plot.py's result on it (output into the sweep folder itself, the default)."""
    root = write_known_sweep(tmp_path_factory.mktemp("known"))
    return root, run_plot(root)


@pytest.fixture(scope="module")
def reference_sweep(tmp_path_factory):
    """A synthetic sweep with every experiment, variant/mode and size (2 envs, 2 seeds), and plot.py's result."""
    root = tmp_path_factory.mktemp("reference")
    write_sweep(root, envs=("CartPole-v1", "Acrobot-v1"), seeds=(1, 2), num_iterations=12)
    return root, run_plot(root, "--out", root / "report")


def test_summary_csv_holds_the_exact_window_values_of_known_iteration_times(known_sweep):
    root, result = known_sweep
    assert result.returncode == 0, result.stderr
    rows = read_summary(root)
    linen = rows["ppo_linen", "jit", "CartPole-v1", "small", "exp1", "1"]
    assert windows(linen) == (4.0, 1.0, 0.5)
    assert (float(linen["total_s"]), float(linen["startup_s"]), linen["timing"]) == (13.0, 2.0, "async")
    torch = rows["ppo_torch_compile", "compile", "Acrobot-v1", "small", "exp1", "1"]
    assert windows(torch) == (32.0, 8.0, 4.0)
    assert float(torch["final_return"]) == sum(10.0 * i for i in range(8, 13)) / 5  # mean of the last 5 returns


def test_summary_csv_holds_synchronised_rollout_and_update_medians(known_sweep):
    root, _ = known_sweep
    synced = read_summary(root)["ppo_linen", "none", "Acrobot-v1", "small", "exp2", "1"]
    assert synced["timing"] == "sync"
    assert (float(synced["rollout_8_99_median_s"]), float(synced["update_8_99_median_s"])) == (0.5, 1.5)
    unsynced = read_summary(root)["ppo_linen", "jit", "Acrobot-v1", "small", "exp1", "1"]
    assert unsynced["rollout_8_99_median_s"] == unsynced["update_8_99_median_s"] == ""


def test_runs_shorter_than_the_windows_use_what_exists_and_leave_the_rest_empty(known_sweep):
    root, _ = known_sweep
    short = read_summary(root)["ppo_linen", "jit", "MountainCar-v0", "small", "exp1", "1"]
    assert windows(short) == (4.0, 2.0, None)


def test_report_gives_exact_geometric_mean_and_median_speedups_with_bootstrap_intervals(known_sweep):
    root, _ = known_sweep
    report = (root / "REPORT.md").read_text()
    # Speedups 2 and 8 over two envs: geometric mean 4, median 5; resampling the 2 envs spans [2, 8].
    row = "| small | linen (jit) over torch_compile (compile) | 2 | 2 | 4.00× [2.00, 8.00] | 5.00× [2.00, 8.00] |"
    assert report.count(row) == 2  # total duration and iterations 8–99 scale alike


def test_report_tables_give_the_exact_overhead_windows_and_compile_mode_speedups(known_sweep):
    root, _ = known_sweep
    report = (root / "REPORT.md").read_text()
    assert "| linen (jit) | small | 3 | 2 | 4 | 1 | 0.5 |" in report  # CartPole, Acrobot and the short run
    assert "| torch_compile (compile) | small | 2 | 2 | 20 | 5 | 2.5 |" in report  # medians of 2× and 8×
    assert "| exp2 | linen (jit) | linen (none) | small | 2 | 4.00× | 4.00× | 4.00× | 4.00× | 4.00× |" in report


def test_unfinished_corrupt_and_cut_runs_are_skipped_with_one_warning_each(known_sweep):
    root, result = known_sweep
    assert result.returncode == 0 and "Traceback" not in result.stderr
    for run, reason in (("unfinished", "unfinished run (no time/total)"), ("corrupt", "CRC"), ("cut", "truncated")):
        warnings = [line for line in result.stderr.splitlines() if f"/{run}/" in line]
        assert len(warnings) == 1 and warnings[0].startswith("warning: skipping") and reason in warnings[0]
    assert {key[5] for key in read_summary(root)} == {"1"}  # seeds 2, 3 and 4 were the skipped runs


@pytest.mark.parametrize("make_folder", [lambda tmp: tmp, lambda tmp: tmp / "missing"], ids=["empty", "missing"])
def test_empty_or_missing_folder_fails_with_one_error_line(tmp_path, make_folder):
    result = run_plot(make_folder(tmp_path))
    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("plot.py: error:")
    assert "Traceback" not in result.stderr


def test_every_chart_and_the_report_are_written_for_a_full_synthetic_sweep(reference_sweep):
    root, result = reference_sweep
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr
    out = root / "report"
    charts = list(CHARTS)
    charts += [f"learning_curves_{group}_{x}" for group in ("exp1_small", "exp1_medium", "exp1_large", "exp2", "exp3")
               for x in ("steps", "time")]
    report = (out / "REPORT.md").read_text()
    for chart in charts:
        assert (out / f"{chart}.png").stat().st_size > 10_000, chart
        assert f"({chart}.png)" in report, chart
    assert sorted(path.stem for path in out.glob("*.png")) == sorted(charts)
    assert "iteration 0" in report and "iterations 1–7" in report and "iterations 8–99" in report


def test_summary_has_one_row_per_finished_run_and_ignores_warmup(reference_sweep):
    root, _ = reference_sweep
    rows = read_summary(root / "report")
    exp1, exp2, exp3 = 2 * 3 * 3 * 2, 2 * len(ALL_PAIRS) * 2, len(ALL_PAIRS) * len(SIZES) * 2
    assert len(rows) == exp1 + exp2 + exp3
    assert {key[4] for key in rows} == {"exp1", "exp2", "exp3"}


def test_runs_outside_a_sweep_layout_are_classified_by_timing_mode(tmp_path):
    for variant, mode in (("ppo_linen", "jit"), ("ppo_torch_compile", "compile")):
        for sync in (False, True):
            write_run(tmp_path / "runs" / f"{variant}_{sync}", KNOWN_SECONDS, variant=variant, compile_mode=mode,
                      sync_timing=sync)
    result = run_plot(tmp_path)
    assert result.returncode == 0, result.stderr
    assert {(key[0], key[4]) for key in read_summary(tmp_path)} == {
        ("ppo_linen", "exp1"), ("ppo_linen", "sync"), ("ppo_torch_compile", "exp1"), ("ppo_torch_compile", "sync")}
    assert (tmp_path / "speedups_total.png").exists() and (tmp_path / "sync_times_exp2.png").exists()
    assert "env_timing.json not found: no duration_vs_complexity.png" in result.stderr  # skipped, not crashed


def test_speedups_pair_by_the_means_over_seeds_when_two_variants_ran_different_seeds(tmp_path):
    for seed, seconds in ((1, 1.0), (2, 3.0)):  # linen: mean total 2 × 12
        write_run(tmp_path / "runs" / "exp1" / f"linen{seed}", [seconds] * 12, seed=seed)
    write_run(tmp_path / "runs" / "exp1" / "torch3", [6.0] * 12, variant="ppo_torch_compile", compile_mode="compile",
              seed=3)  # torch: total 72, so 72 / 24 = 3
    assert run_plot(tmp_path).returncode == 0
    row = "| small | linen (jit) over torch_compile (compile) | 1 | 1 | 3.00× | 3.00× |"
    assert row in (tmp_path / "REPORT.md").read_text()


def test_compare_puts_two_sweeps_side_by_side_with_their_ratio(tmp_path, known_sweep):
    root_a, _ = known_sweep
    root_b = write_known_sweep(tmp_path / "b", scale=2.0)  # the same runs, everything twice as slow
    result = run_plot("--compare", root_a, root_b, "--out", tmp_path / "compare")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "compare" / "compare.png").stat().st_size > 10_000
    report = (tmp_path / "compare" / "REPORT.md").read_text()
    assert "| linen (jit) | async | small | 3 | 13 | 26 | 2.00× [2.00, 2.00] |" in report
    assert "| linen (none) | sync | small | 2 | 52 | 104 | 2.00× [2.00, 2.00] |" in report


def test_every_chart_kind_is_written_from_the_real_quick_sweep_in_results(tmp_path):
    """results/cpu-quick is a real `benchmark.sh --quick` sweep of all five scripts (exp1 small only)."""
    sweep = PLOT.parent / "results" / "cpu-quick"
    result = run_plot(sweep, "--out", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr
    rows = read_summary(tmp_path)
    assert len(rows) == 30 and {key[0] for key in rows} == {pair[0] for pair in ALL_PAIRS}
    charts = list(CHARTS)
    charts += [f"learning_curves_{group}_{x}" for group in ("exp1_small", "exp2", "exp3") for x in ("steps", "time")]
    assert sorted(path.stem for path in tmp_path.glob("*.png")) == sorted(charts)
