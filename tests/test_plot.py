"""Tests of plot.py on synthetic event files: exact numbers, skipped files, clean errors, every chart, --compare."""

import contextlib
import csv
import io
import math
import re
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

import plot
import report.main
from report import (charts, compile_modes, curves, env_backend, header, load, palette, ranking, settings, standings, stats,
                    text, types)
from events import ALL_PAIRS, SIZES, write_json, write_run, write_sweep
from helpers import DRAWING, draw_charts

PLOT = Path(__file__).resolve().parents[1] / "plot.py"

# every chart but the learning curves, of which there is one pair per experiment (and model size in exp1)
CHARTS = ("ranking", "duration_vs_complexity", "speedups_total", "overhead_exp1", "overhead_exp3",
          "speedups_steady_state", "sync_times_exp2", "sync_speedups_exp2", "sync_times_exp3", "sync_speedups_exp3",
          "compile_modes")

# Iteration times exactly representable in float32 (simple_value), with known windows:
# iteration 0 = 4, mean of iterations 1–7 = 1, median of iterations 8–11 = 0.5, total = 13.
KNOWN_SECONDS = [4.0, 0.5, 1.0, 1.5, 0.5, 1.0, 1.5, 1.0, 0.25, 0.5, 0.75, 0.5]
# Speedup of linen (jit) over torch_compile (compile) per env: geometric mean 4, median 5.
TORCH_SLOWDOWN = {"CartPole-v1": 2.0, "Acrobot-v1": 8.0}


def run_plot_process(*args, cwd=None):
    """Runs plot.py with args in a fresh process, as a user does; returns the completed process (output captured)."""
    return subprocess.run([sys.executable, str(PLOT), *map(str, args)], capture_output=True, text=True, timeout=300,
                          cwd=cwd)


def run_plot(*args, cwd=None):
    """Runs plot.py's main with args and --workers 0 in this process (no interpreter start-up, no pool); returns
    what run_plot_process would: the exit status and the text on stdout and stderr, a traceback included."""
    stdout, stderr, returncode = io.StringIO(), io.StringIO(), 0
    with contextlib.chdir(cwd or Path.cwd()), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            plot.main([*map(str, args), "--workers", "0"])
        except SystemExit as stop:
            returncode = stop.code if isinstance(stop.code, int) else 1
            if isinstance(stop.code, str):
                print(stop.code, file=sys.stderr)
        except Exception:  # a crash, as the interpreter would report it
            traceback.print_exc()
            returncode = 1
    return subprocess.CompletedProcess(args, returncode, stdout.getvalue(), stderr.getvalue())


ANSWER_BULLET = re.compile(r"- \[(?P<label>[^\]]+)\]\(#(?P<anchor>[^)]+)\): (?P<text>.+)$")
# Sections whose lines quote what the sweep recorded (packages, commands, workloads) or define terms: not generated
# conclusions, so the word limit leaves them out.
QUOTING_SECTIONS = ("## Method and machine", "## How to read this report")
MAX_WORDS = 40


def github_anchors(report):
    """{anchor: line number} of the report's headings, as GitHub makes them, written apart from report/text.py's: lower
    case, everything but word characters, '-' and spaces dropped, each space a '-', a repeated anchor numbered -1, -2."""
    anchors, seen = {}, {}
    for number, line in enumerate(report.splitlines()):
        match = re.match(r"#{1,6} (.+)", line)
        if match:
            base = anchor = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-")
            while anchor in seen:
                seen[base] += 1
                anchor = f"{base}-{seen[base]}"
            seen[anchor] = 0
            anchors[anchor] = number
    return anchors


def check_answer(report, experiments):
    """Asserts that the report opens with its title and 'The answer', whose bullets (one or more per experiment in
    experiments, and none for any other) each link to a heading of the report between the answer and 'Method and
    machine', and that the machine, commit and workload come after the answers, in 'Method and machine'. Returns the
    bullets' matches."""
    lines = report.splitlines()
    assert lines[0].startswith("# benchback ") and lines[1:4] == ["", "## The answer", ""], lines[:4]
    block = section_text(report, "## The answer")
    bullets = [ANSWER_BULLET.match(line) for line in block.splitlines() if line.startswith("- ")]
    assert bullets and all(bullets), block
    assert {bullet["label"].split(" ")[0] for bullet in bullets} == set(experiments), block
    anchors = github_anchors(report)
    method = lines.index("## Method and machine")
    for bullet in bullets:
        assert bullet["anchor"] in anchors, bullet[0]
        assert lines.index("## The answer") < anchors[bullet["anchor"]] < method, bullet[0]
    assert block.count("**Machine:**") == 1 and "## The answer" not in report.split("\n## The answer")[1]
    for header_line in ("**CPU:**", "**git commit:**", "**Workload", "**Machine:** unknown: no system.json"):
        if header_line in report:
            assert report.index(header_line) > report.index("\n## Method and machine\n"), header_line
    return bullets


def wordy_lines(report, limit=MAX_WORDS):
    """The report's generated prose (bullets and paragraphs; not tables, headings, charts or quotes) of more than limit
    words, outside QUOTING_SECTIONS."""
    wordy, quoting = [], False
    for line in report.splitlines():
        if line.startswith("## "):
            quoting = line in QUOTING_SECTIONS
        if not quoting and line.strip() and not line.startswith(("|", "#", "![", ">")) and len(line.split()) > limit:
            wordy.append(line)
    return wordy


def section_text(report, heading):
    """The text of the section whose heading starts with heading, up to the next section (## heading)."""
    start = report.index(heading)
    end = report.find("\n## ", start + 1)
    return report[start: end if end >= 0 else len(report)]


def capture_figures(monkeypatch):
    """{file name: Figure} of every chart the report saves from now on in this process (run_plot), drawn and checked
    for real (a test that reads a chart draws it: conftest.py's charts_undrawn)."""
    draw_charts(monkeypatch, DRAWING)
    figures, savefig = {}, Figure.savefig

    def saving(figure, path, *args, **kwargs):
        figures[Path(path).name] = figure
        return savefig(figure, path, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", saving)
    return figures


def lines_by_label(ax):
    """{legend label: Line2D} of the lines drawn in ax with a label (an error bar's: its data line)."""
    lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
    return lines | {bars.get_label(): bars.lines[0] for bars in ax.containers if not bars.get_label().startswith("_")}


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


def write_reference_sweep(folder):
    """A synthetic sweep with every experiment, variant/mode and size (2 envs, 2 seeds), and plot.py's result."""
    root = Path(folder)
    write_sweep(root, envs=("CartPole-v1", "Acrobot-v1"), seeds=(1, 2), num_iterations=12)
    return root, run_plot_process(root, "--out", root / "report")


def reference_sweep_job(shared_runs, background=False):
    """The reference sweep and its plot.py run, once in the session (in the background when the test is marked so)."""
    return shared_runs.job(("reference_sweep",), write_reference_sweep, background)


@pytest.fixture(scope="module")
def reference_sweep(shared_runs):
    return reference_sweep_job(shared_runs)


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
    assert (synced["num_steps"], synced["update_epochs"], synced["num_minibatches"]) == ("256", "10", "8")
    assert synced["timing"] == "sync"
    assert (float(synced["rollout_8_99_median_s"]), float(synced["update_8_99_median_s"])) == (0.5, 1.5)
    unsynced = read_summary(root)["ppo_linen", "jit", "Acrobot-v1", "small", "exp1", "1"]
    assert unsynced["rollout_8_99_median_s"] == unsynced["update_8_99_median_s"] == ""


def test_runs_shorter_than_the_windows_use_what_exists_and_leave_the_rest_empty(known_sweep):
    root, _ = known_sweep
    short = read_summary(root)["ppo_linen", "jit", "MountainCar-v0", "small", "exp1", "1"]
    assert windows(short) == (4.0, 2.0, None)


def test_report_gives_exact_geometric_mean_and_median_speedups_with_the_range_over_few_envs(known_sweep):
    root, _ = known_sweep
    report = (root / "REPORT.md").read_text()
    # Speedups 2 and 8 over two envs: geometric mean 4, median 5; with two envs the interval is their range.
    row = ("| small | linen (jit) over torch_compile (compile) | 2 | 2 | 4.00× [range 2.00–8.00] "
           "| 5.00× [range 2.00–8.00] |")
    assert report.count(row) == 2  # total duration and iterations 8–11 scale alike
    assert "CI" not in report.split("## How to read")[0]  # no confidence interval from 2 envs


def test_report_tables_give_the_exact_overhead_windows_and_compile_mode_speedups(known_sweep):
    root, _ = known_sweep
    report = (root / "REPORT.md").read_text()
    assert "| linen (jit) | small | 3 | 2 | 4 | 1 | 0.5 |" in report  # CartPole, Acrobot and the short run
    assert "| torch_compile (compile) | small | 2 | 2 | 20 | 5 | 2.5 |" in report  # medians of 2× and 8×
    assert ("| exp2 | linen (jit) | linen (none) | small | 2 | 4.00× | 4.00× | 4.00× | 4.00× | 4.00× "
            "| from the start |") in report


def test_unfinished_corrupt_and_cut_runs_are_skipped_with_one_warning_each(known_sweep):
    root, result = known_sweep
    assert result.returncode == 0 and "Traceback" not in result.stderr
    for run in ("unfinished", "corrupt", "cut"):  # tensorboard's loader stops at a bad record: no time/total
        warnings = [line for line in result.stderr.splitlines() if f"/{run}/" in line]
        assert len(warnings) == 1 and warnings[0].startswith("warning: skipping") and "no time/total" in warnings[0]
    assert {key[5] for key in read_summary(root)} == {"1"}  # seeds 2, 3 and 4 were the skipped runs


@pytest.mark.parametrize("workers", [1, pytest.param(3, marks=pytest.mark.slow)])
def test_workers_sets_the_processes_and_the_calls_that_read_the_event_files(workers, known_sweep, tmp_path,
                                                                          monkeypatch):
    pools = []

    class RecordingPool(load.InProcess):  # in this process, recording what main asks of its pool
        def __init__(self, max_workers):
            self.max_workers, self.calls = max_workers, []
            pools.append(self)

        def submit(self, fn, /, *args, **kwargs):
            self.calls.append(fn)
            return super().submit(fn, *args, **kwargs)

    monkeypatch.setattr(report.main, "ProcessPoolExecutor", RecordingPool)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        plot.main([str(known_sweep[0]), "--out", str(tmp_path), "--workers", str(workers)])
    assert [pool.max_workers for pool in pools] == [workers]
    assert pools[0].calls.count(load.load_runs) == workers


@pytest.mark.slow  # a fresh process for one error line: the fast subset probes the scripts' bad input only
@pytest.mark.parametrize("make_folder", [lambda tmp: tmp, lambda tmp: tmp / "missing"], ids=["empty", "missing"])
def test_empty_or_missing_folder_fails_with_one_error_line(tmp_path, make_folder):
    result = run_plot_process(make_folder(tmp_path))
    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("plot.py: error:")
    assert "Traceback" not in result.stderr


@pytest.mark.background.with_args(reference_sweep_job)
def test_every_chart_and_the_report_are_written_for_a_full_synthetic_sweep(reference_sweep):
    root, result = reference_sweep
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr
    out = root / "report"
    charts = list(CHARTS)
    charts += [f"learning_curves_{group}_{x}" for group in ("exp1_small", "exp1_medium", "exp1_large", "exp2", "exp3")
               for x in ("steps", "time", "wall")]
    report = (out / "REPORT.md").read_text()
    for chart in charts:
        assert (out / f"{chart}.png").stat().st_size > 10_000, chart
        assert f"({chart}.png)" in report, chart
    assert sorted(path.stem for path in out.glob("*.png")) == sorted(charts + ["memory"])
    assert "iteration 0" in report and "iterations 1–7" in report and "iterations 8–11" in report


def test_the_report_opens_with_the_answer_a_bullet_per_experiment_linked_to_its_section(reference_sweep):
    root, _ = reference_sweep
    report = (root / "report" / "REPORT.md").read_text()
    assert report.startswith(f"# benchback report: {root.name}\n\n## The answer\n\n- [exp1 · small](#which-variant-is-"
                             "fastest-exp1-fully-compiled-variants): ")
    bullets = check_answer(report, {"exp1", "exp2", "exp3"})
    assert [bullet["label"] for bullet in bullets] == ["exp1 · small", "exp1 · medium", "exp1 · large", "exp2", "exp3"]
    answer = section_text(report, "## The answer")
    assert "![ranking of the fully compiled variants](ranking.png)" in answer  # the first answer's first chart
    assert "**Machine:** Synthetic CPU, no GPU, 2026-01-01, commit 0000000 ([method and machine](#method-and-machine))." \
        in answer
    # each bullet's numbers are written as the section's table writes them: the JAX variants' spread, torch's best
    ranking = section_text(report, "## Which variant is fastest?")
    for bullet in bullets[:3]:
        size = bullet["label"].split(" · ")[1]
        assert re.fullmatch(r"steady iteration: nnx_cached \(cached\) shortest \([0-9.]+ s\); JAX within 1\.11× "
                            r"\[range 1\.11–1\.11\] \(linen \(jit\)\); torch at best 1\.67× \[range 1\.67–1\.67\] "
                            r"\(torch_compile \(compile\)\)\.", bullet["text"]), bullet["text"]
        assert f"| {size} | linen (jit) | 2 | 1.11× [range 1.11–1.11] |" in ranking
        assert f"| {size} | torch_compile (compile) | 2 | 1.67× [range 1.67–1.67] |" in ranking
    assert bullets[3]["text"].endswith("2.00× [range 2.00–2.00] (torch_compile (compile) over torch (env-jit)) to "
                                       "8.89× [range 8.89–8.89] (nnx_cached (cached) over nnx (none)).")
    row = next(line for line in report.splitlines() if line.startswith("| exp2 | nnx_cached (cached) | nnx (none) |"))
    assert row.split(" | ")[7] == "8.89×"  # its steady-state column


@pytest.mark.slow  # the word limit over three reports
def test_no_generated_conclusion_runs_over_the_word_limit(reference_sweep, known_sweep, shards):
    reports = [(reference_sweep[0] / "report" / "REPORT.md").read_text(), (known_sweep[0] / "REPORT.md").read_text(),
               shards[2]]
    assert all("**Conclusions** (generated" in report for report in reports)
    assert [line for report in reports for line in wordy_lines(report)] == []
    assert wordy_lines("## Peak device memory\n\n" + "word " * (MAX_WORDS + 1))  # the check itself can fail


def test_the_answer_of_a_sharded_sweep_names_each_machine_kind_and_the_header_follows_the_answers(shards):
    _, _, report = shards
    bullets = check_answer(report, {"exp1", "exp2", "exp3", "exp4"})
    assert [bullet["label"] for bullet in bullets] == ["exp1 · small (machine 1)", "exp1 · small · start (machine 1)",
                                                       "exp4 · total (machine 2)",
                                                       "exp4 · steady state (machine 2)", "exp2 (machine 2)",
                                                       "exp3 (machine 2)"]
    assert bullets[2]["anchor"] == "env-backend-against-framework-exp4--machine-2-intel-xeon-nvidia-h100-80gb-hbm3"
    assert ("**Machine:** `s1`: 2-core AMD EPYC, no GPU, commit aaaaaaa (dirty); `s2`: 16-core Intel Xeon, NVIDIA H100 "
            "80GB HBM3, commit aaaaaaa") in section_text(report, "## The answer")
    check_answer(shards[2], {"exp1", "exp2", "exp3", "exp4"})


def test_heading_anchors_follow_githubs_rules_and_number_repeats():
    lines = ["# benchback report: s1", "## Which variant is fastest? (exp1, fully compiled variants) — machine 1: AMD "
             "EPYC, no GPU", "### Learning curves: exp1, small", "## Peak device memory", "## Peak device memory",
             "## Peak device memory-1", "not a heading: # x"]
    assert text.heading_anchors(lines) == {
        "benchback report: s1": "benchback-report-s1",
        "Which variant is fastest? (exp1, fully compiled variants) — machine 1: AMD EPYC, no GPU":
            "which-variant-is-fastest-exp1-fully-compiled-variants--machine-1-amd-epyc-no-gpu",
        "Learning curves: exp1, small": "learning-curves-exp1-small",
        "Peak device memory": "peak-device-memory", "Peak device memory-1": "peak-device-memory-1-1"}
    assert set(github_anchors("\n".join(lines))) == {"benchback-report-s1", "learning-curves-exp1-small",
                                                      "which-variant-is-fastest-exp1-fully-compiled-variants--machine-1"
                                                      "-amd-epyc-no-gpu", "peak-device-memory", "peak-device-memory-1",
                                                      "peak-device-memory-1-1"}


def test_the_learning_curves_are_drawn_against_wall_clock_time_from_the_start_of_iteration_0(tmp_path, monkeypatch):
    for variant, mode, factor in (("ppo_linen", "jit", 1.0), ("ppo_torch_compile", "compile", 2.0)):
        write_run(tmp_path / "runs" / "exp1" / variant, [s * factor for s in KNOWN_SECONDS], variant=variant,
                  compile_mode=mode)
    figures = capture_figures(monkeypatch)
    assert run_plot(tmp_path).returncode == 0
    (ax,) = figures["learning_curves_exp1_small_wall.png"].axes
    lines = lines_by_label(ax)
    # a return after every iteration: the first at the end of iteration 0 (compilation included), the last at the total
    assert (min(lines["linen (jit)"].get_xdata()), max(lines["linen (jit)"].get_xdata())) == (4.0, 13.0)
    assert max(lines["torch_compile (compile)"].get_xdata()) == 26.0
    assert ax.get_xlabel() == "wall-clock time from the start of iteration 0 (s)"
    report = (tmp_path / "REPORT.md").read_text()
    assert ("**Return against wall-clock time: the time to reach a return** (x: wall-clock time from the start of "
            "iteration 0, compilation included):\n\n![learning curves exp1, small against wall-clock time from the "
            "start of iteration 0](learning_curves_exp1_small_wall.png)") in report
    assert report.index("(learning_curves_exp1_small_steps.png)") < report.index("(learning_curves_exp1_small_wall.png)")


def test_a_sweep_of_one_run_of_one_iteration_still_opens_with_the_answer(tmp_path):
    write_run(tmp_path / "runs" / "exp1" / "only", [4.0])
    result = run_plot(tmp_path)
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "REPORT.md").read_text()
    check_answer(report, {"exp1"})
    assert ("- [exp1](#which-variant-is-fastest-exp1-fully-compiled-variants): no ranking: fewer than two fully compiled "
            "variants ran.") in report
    assert [line for line in report.splitlines() if line.startswith("## ")][:3] == [
        "## The answer", "## Which variant is fastest? (exp1, fully compiled variants)", "## Method and machine"]
    assert "**Machine:** unknown (no system.json)" in report and not re.search(r"\bnan\b", report, re.IGNORECASE)


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


def test_speedups_pair_only_the_same_seed(tmp_path):
    for seed, seconds in ((1, 1.0), (2, 3.0)):
        write_run(tmp_path / "runs" / "exp1" / f"linen{seed}", [seconds] * 12, seed=seed)
    for seed, seconds in ((2, 6.0), (3, 1.0)):  # seed 2 pairs (6 / 3 = 2); seed 3 has no partner
        write_run(tmp_path / "runs" / "exp1" / f"torch{seed}", [seconds] * 12, variant="ppo_torch_compile",
                  compile_mode="compile", seed=seed)
    assert run_plot(tmp_path).returncode == 0
    row = "| small | linen (jit) over torch_compile (compile) | 1 | 1 | 2.00× | 2.00× |"
    assert row in (tmp_path / "REPORT.md").read_text()


def test_compare_puts_two_sweeps_side_by_side_with_their_ratio(tmp_path, known_sweep, monkeypatch):
    root_a, _ = known_sweep
    root_b = write_known_sweep(tmp_path / "b", scale=2.0)  # the same runs, everything twice as slow
    figures = capture_figures(monkeypatch)
    result = run_plot("--compare", root_a, root_b, "--out", tmp_path / "compare")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "compare" / "compare.png").stat().st_size > 10_000
    # the chart: each side's steady iteration (whatever the runs' lengths) and B's speedup over A, 0.5× here
    side_a, side_b, speedup = figures["compare.png"].axes
    assert side_a.get_ylim() == side_b.get_ylim() and speedup.get_ylabel() == "B's speedup over A (log scale)"
    points = [float(y) for drawn in speedup.collections if type(drawn).__name__ == "PathCollection"
              for y in np.asarray(drawn.get_offsets())[:, 1]]
    assert points and points == pytest.approx([0.5] * len(points))
    report = (tmp_path / "compare" / "REPORT.md").read_text()
    # totals (runs of the same length only) with B's speedup over A: B is twice as slow
    assert "| linen (jit) | async | small | 3 | 13 | 26 | 0.50× [range 0.50–0.50] |" in report
    assert "| linen (none) | sync | small | 2 | 52 | 104 | 0.50× [range 0.50–0.50] |" in report
    assert "[1.00, 1.00]" not in report and "CI" not in report  # 2–3 envs: a labelled range, never a "CI"
    # the answer: each side's steady iteration, linked to the table it comes from; then each side's machine
    assert report.startswith(f"# benchback comparison: {root_a.name} vs b\n\n## The answer\n\n")
    bullets = check_answer(report, {"compare"})
    assert bullets[0][0] == ("- [compare · small](#steady-iteration-on-each-side): slowest steady iteration over the "
                             "fastest: A 8.00× (torch_compile (compile)), B 8.00× (torch_compile (compile)); B's "
                             "speedup over A 0.50×.")
    assert [line for line in report.splitlines() if line.startswith("#")][-3:] == [
        "## Method and machine", f"### A: {root_a.name} (unknown machine)", "### B: b (unknown machine)"]
    assert wordy_lines(report) == []


@pytest.mark.slow  # a report of the committed quick sweep; test_reports.py remakes every committed report too
def test_every_chart_kind_is_written_from_the_real_quick_sweep_in_results(tmp_path):
    """results/cpu-quick is a real `benchmark.sh --quick` sweep of all five scripts (exp1 small only)."""
    sweep = PLOT.parent / "results" / "cpu-quick"
    result = run_plot(sweep, "--out", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr
    rows = read_summary(tmp_path)
    assert len(rows) == 30 and {key[0] for key in rows} == {pair[0] for pair in ALL_PAIRS}
    charts = list(CHARTS)
    charts += [f"learning_curves_{group}_{x}" for group in ("exp1_small", "exp2", "exp3")
               for x in ("steps", "time", "wall")]
    assert sorted(path.stem for path in tmp_path.glob("*.png")) == sorted(charts)
    report = (tmp_path / "REPORT.md").read_text()
    assert report.index("Smoke test, not results") < report.index("## Which variant is fastest?") < report.index(
        "## How to read this report")
    # the generated conclusion, from the committed runs: no winner where the interval holds 1×
    assert ("  - No variant is fastest in total: linen (jit) has the shortest total time.\n"
            "  - nnx_cached (cached) is not told apart from it (its interval holds 1×).\n") in report
    assert "| small | nnx_cached (cached) | 3 | 1.09× [range 0.97–1.21] |" in report  # its relative total: the table's
    # the answer: the shortest steady iteration, the JAX spread and torch's best, as the table writes them
    assert ("- [exp1 · small](#which-variant-is-fastest-exp1-fully-compiled-variants): steady iteration: linen (jit) "
            "shortest (0.0106 s), level with nnx_cached (cached); JAX within 1.09× [range 0.80–1.64] (nnx_cached "
            "(cached)); torch at best 4.73× [range 3.39–5.77] (torch_compile (compile)); one run per cell.") in report
    assert "iterations 8–99: 8–9" in report  # 10-iteration runs: the steady-state window holds iterations 8 and 9
    assert "Acrobot-v1 · small: no episode finished in any run" in report  # the empty panel says why


@pytest.mark.slow  # a process of its own
def test_a_sweeps_report_is_written_where_optuna_cannot_be_imported(tmp_path):
    """plot.py reads a sweep with no search library: optuna (tune.py's) unimportable in its process."""
    root = write_known_sweep(tmp_path / "sweep")
    blocked = ("import runpy, sys; sys.modules['optuna'] = None; sys.argv = sys.argv[1:]; "
               "runpy.run_path(sys.argv[0], run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", blocked, str(PLOT), str(root), "--out", str(tmp_path / "out"),
                             "--workers", "0"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "out" / "REPORT.md").read_text().startswith("# ")


def test_identical_learning_curves_are_named_and_drawn_apart(known_sweep):
    root, _ = known_sweep
    report = (root / "REPORT.md").read_text()
    # linen jit and none log the same returns at the same steps: the second is dashed on top and named
    assert "- CartPole-v1: linen (jit) is identical to linen (none) (drawn dashed on top of it)" in report


# ---------------------------------------------------------------------------------------------- a sharded sweep
# Two folders of one sweep (different machines): s1 holds exp1, s2 exp2, exp3 and exp4 and the env timing.
# s1 ran on an AMD EPYC without GPU (machine 1), s2 on an Intel Xeon with an H100 (machine 2).
MACHINE_1, MACHINE_2 = "machine 1: AMD EPYC, no GPU", "machine 2: Intel Xeon, NVIDIA H100 80GB HBM3"
H100 = {"name": "NVIDIA H100 80GB HBM3", "driver": "580.65", "count": 1}
BACKEND_SECONDS = {("ppo_linen", "jit"): 1.0, ("ppo_torch", "env-jit"): 1.5,
                   ("ppo_linen_gymnasium", "jit"): 3.0, ("ppo_torch_gymnasium", "eager"): 4.5}


def write_shards(root):
    """The two shard folders s1 and s2 under root (see above); returns them."""
    s1, s2 = root / "s1", root / "s2"
    envs = ("CartPole-v1", "Acrobot-v1")
    for env in envs:  # linen: iteration 0 = 4 s, then 1 s; torch_compile: 14 s, then 0.5 s — break-even 1 + 10/0.5
        write_run(s1 / "runs" / "exp1" / f"linen_{env}", [4.0] + [1.0] * 11, env_id=env)
        write_run(s1 / "runs" / "exp1" / f"torch_{env}", [14.0] + [0.5] * 11, variant="ppo_torch_compile",
                  compile_mode="compile", env_id=env)
        for (variant, mode), seconds in BACKEND_SECONDS.items():
            write_run(s2 / "runs" / "exp4" / f"{variant}_{env}", [seconds] * 12, variant=variant, compile_mode=mode,
                      env_id=env)
    exp2 = s2 / "runs" / "exp2"
    for env in envs:  # two envs: an interval (a range) to tell the compile modes' steady states apart
        write_run(exp2 / f"linen_jit_{env}", [1.0] * 12, env_id=env, sync_timing=True)
        write_run(exp2 / f"linen_none_{env}", [4.0] * 10, compile_mode="none", env_id=env, sync_timing=True)  # eager
        write_run(exp2 / f"torch_envjit_{env}", [2.0] * 12, variant="ppo_torch", compile_mode="env-jit", env_id=env,
                  sync_timing=True)
        write_run(exp2 / f"torch_compile_{env}", [12.0] + [1.0] * 11, variant="ppo_torch_compile",
                  compile_mode="compile", env_id=env, sync_timing=True)
    write_run(exp2 / "nnx_jit", [1.0] * 12, variant="ppo_nnx", sync_timing=True)
    write_run(exp2 / "nnx_none", [4.0] * 12, variant="ppo_nnx", compile_mode="none", sync_timing=True, num_steps=128)
    exp3 = s2 / "runs" / "exp3"
    write_run(exp3 / "one_return", [1.0] * 12, env_id="Acrobot-v1", sync_timing=True, returns=[None] * 11 + [5.0])
    for variant, mode in (("ppo_linen", "jit"), ("ppo_torch", "env-jit")):
        write_run(exp3 / f"{variant}_medium", [1.0] * 12, variant=variant, compile_mode=mode, env_id="Acrobot-v1",
                  model_size="medium", sync_timing=True, returns=[None] * 12)
    system = {"cpu": "AMD EPYC", "cpu_count": 2, "gpu": None, "python": "3.11.7", "packages": {"jax": "0.10.2"},
              "git_commit": "a" * 40, "git_dirty": True, "command": "./benchmark.sh --quick --shard 1/2 --out s1",
              "load_average": "0.12 0.10 0.05"}
    write_json(s1 / "system.json", system)
    write_json(s1 / "workload.json", {"num_iterations": 12, "eager_iterations": 10})
    (s1 / "sweeps.txt").write_text("2026-11-22T10:00:00+00:00 2026-11-22T10:30:00+00:00 1800 40\n"
                                   "2026-11-22T11:00:00+00:00 2026-11-22T11:10:00+00:00 600 12\n")
    (s1 / "load.txt").write_text("a 1.10\nb 0.90\nc 2.50\n")
    write_json(s2 / "system.json", {**system, "cpu": "Intel Xeon", "cpu_count": 16, "gpu": H100,
                                    "packages": {"jax": "0.10.3"}, "git_dirty": False})
    write_json(s2 / "env_timing.json", {"envs": {"CartPole-v1": {"step_seconds": 1e-5, "relative": 1.0},
                                                 "Acrobot-v1": {"step_seconds": 3e-5, "relative": 3.0}}})
    return s1, s2


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """The two shards, plot.py's result on them read together, and the report."""
    root = tmp_path_factory.mktemp("shards")
    s1, s2 = write_shards(root)
    result = run_plot(s1, s2, "--out", root / "report")
    return root / "report", result, (root / "report" / "REPORT.md").read_text()


def test_the_method_and_machine_section_gives_the_smoke_test_label_the_machines_and_the_workload(shards):
    _, result, report = shards
    assert result.returncode == 0, result.stderr
    head = section_text(report, "## Method and machine")
    assert report.index("## Which variant is fastest?") < report.index("## Method and machine")  # after the answers
    assert "Smoke test, not results" in head and "Smoke test, not results" in section_text(report, "## The answer")
    assert "**CPU:** AMD EPYC, 2 cores; **GPU:** none (CPU only)" in head
    assert "**CPU:** Intel Xeon, 16 cores; **GPU:** NVIDIA H100 80GB HBM3 (driver 580.65) ×1" in head
    assert "{'name'" not in report
    assert f"**git commit:** {'a' * 40} (working tree dirty)" in head and "(clean)" in head
    assert "**load average:** 0.12 0.10 0.05" in head and "eager_iterations 10" in head
    assert "`s1`: **sweep wall time:** 40.0 min (2400 s, 2 invocations from 2026-11-22T10:00:00+00:00 to " \
           "2026-11-22T11:10:00+00:00); **commands:** not recorded per invocation (its sweeps.txt predates that " \
           "record): only the last invocation's is known, above; **1-minute load average at the end of each run:** " \
           "median 1.10, range 0.90–2.50 over 3 runs" in head
    # s1's system.json holds the last of its two invocations' command, and says so
    assert "- **command of the last of its 2 invocations:** `" in head and "- **command:** `" in head
    assert "`s2`:" not in head  # s2 recorded neither file
    assert ("**Workload:** num_envs 32, num_steps 256, update_epochs 10, num_minibatches 8, bootstrap_truncated True; "
            "iterations 12, eager iterations 10;") in head
    assert "**Iterations each window holds, runs of 10 iterations:** iteration 0: 0; iterations 1–7: 1–7; " \
           "iterations 8–99: 8–9" in head


def test_a_resumed_sweep_names_each_invocations_command_once_with_how_many_ran_it():
    resume, narrowed = "./benchmark.sh --only exp7 --out r", "./benchmark.sh --only exp7 --filter __large__ --out r"
    assert header.invocations_text([resume, resume, "", narrowed]) == (
        f"**commands (invocations):** `{resume}` (2), not recorded (1), `{narrowed}` (1)")


def test_folders_on_different_machines_are_flagged_and_env_timing_comes_from_any_folder(shards):
    out, result, report = shards
    assert "Warning: the folders ran on different hardware" in report
    assert "Warning: the folders ran on different package versions" in report
    assert "warning" not in result.stderr  # s1 has no env_timing.json, s2's serves both
    assert (out / "duration_vs_complexity_machine1.png").exists()


def test_ranking_gives_relative_times_and_the_break_even_of_a_faster_steady_state(shards):
    _, _, report = shards
    assert "| small | torch_compile (compile) | 2 | 1.30× [range 1.30–1.30] | 1 (fastest) | 14 | 0.5 | " \
           "after 21 iterations |" in report  # total 19.5 / 15; 1 + (14 − 4) / (1 − 0.5)
    assert ("- **small** (2 envs, runs of 12 iterations):\n"
            "  - **linen (jit)** is fastest in total.\n"
            "  - **torch_compile (compile)** is fastest in the steady state (iterations 8+).\n"
            "  - torch_compile (compile) is 2.00× [range 2.00–2.00] faster per iteration than linen (jit), the shortest "
            "in total; its longer iteration 0 is repaid after about 21 iterations.\n") in report


def test_runs_of_other_workloads_are_never_paired_and_totals_need_equal_length(shards):
    out, _, report = shards
    rows = read_summary(out)
    assert rows["ppo_nnx", "none", "CartPole-v1", "small", "exp2", "1"]["num_steps"] == "128"
    # nnx none ran another workload: no pair
    assert "| exp2 | nnx (jit) |" not in section_text(report, "## Effect of each compile mode")
    # linen none ran 10 iterations, linen jit 12: no total compared, every per-iteration window is
    assert "| exp2 | linen (jit) | linen (none) | small | 2 | – | 4.00× | 4.00× | 4.00× | 4.00× | from the start |" in report


def test_torch_compile_is_measured_against_torch_env_jit_with_its_break_even(shards):
    out, _, report = shards
    # totals 23 and 24 s; iteration 0: 12 against 2 s; steady state 1 against 2 s: repaid after 1 + 10 / 1 iterations
    assert ("| exp2 | torch_compile (compile) | torch (env-jit) | small | 2 | 1.04× | 0.17× | 2.00× | 2.00× | 2.00× "
            "| after 11 iterations |") in report
    assert "| exp2 | torch_compile (compile) | torch (none) |" not in report
    assert (out / "compile_modes_machine2.png").exists()


def test_empty_learning_curve_panels_say_why_and_single_returns_are_drawn(shards):
    _, _, report = shards
    assert "- Acrobot-v1 · medium: no episode finished in any run, so the panel is empty" in report
    assert "- Acrobot-v1 · small: linen (jit): too few returns for a line, drawn as points" in report


def test_env_backend_experiment_draws_the_two_by_two_with_a_generated_conclusion(shards):
    out, _, report = shards
    assert (out / "env_backend_machine2.png").exists()  # its drawing: test_the_env_backend_chart_draws_each_...
    assert "| total duration | CartPole-v1 | small | 1 | 1.50× | 3.00× |" in report
    assert ("- On total time, **the env backend dominates** (2 env/size cells, geometric means):\n"
            "  - Gymnasium on the CPU takes 3.00× [range 3.00–3.00] the time of gymnax on the device.\n"
            "  - torch takes 1.50× [range 1.50–1.50] the time of linen.\n"
            "  - The env backend changes the time 2.00× [range 2.00–2.00] as much as the framework.\n") in report
    assert ("- [exp4 · total (machine 2)](#env-backend-against-framework-exp4--machine-2-intel-xeon-nvidia-h100-80gb-"
            "hbm3): the env backend dominates: Gymnasium takes 3.00× [range 3.00–3.00] the time of gymnax; torch takes "
            "1.50× [range 1.50–1.50] the time of linen.") in report


def test_the_env_backend_chart_draws_each_frameworks_cells_against_the_backend(tmp_path, monkeypatch):
    """The 2 × 2 itself, not each factor averaged over the other: x the env backend (a category: no line joins two),
    the frameworks side by side, each one's geometric mean over seeds of its steady iterations a large point, log y."""
    steady = {("ppo_linen", "jit"): 0.1, ("ppo_linen_gymnasium", "jit"): 0.3, ("ppo_torch", "env-jit"): 0.4,
              ("ppo_torch_gymnasium", "eager"): 0.5}
    for (variant, mode), seconds in steady.items():
        for seed, factor in ((1, 1.0), (2, 4.0)):
            write_run(tmp_path / "runs" / "exp4" / f"{variant}_{seed}", [1.0] * 8 + [seconds * factor] * 4,
                      variant=variant, compile_mode=mode, seed=seed)
    figures = capture_figures(monkeypatch)
    assert run_plot(tmp_path).returncode == 0
    (ax,) = figures["env_backend.png"].axes
    assert [label.get_text() for label in ax.get_xticklabels()] == ["gymnax", "Gymnasium"]
    large = [points for points in ax.collections if points.get_sizes()[0] > 50]  # a geometric mean: a large point
    names = {tuple(points.get_facecolor()[0]): points.get_label() for points in large
             if not points.get_label().startswith("_")}  # a framework's colour, labelled once
    means = {}
    for points in large:  # one point per backend, in the backend's marker
        means.setdefault(names[tuple(points.get_facecolor()[0])], []).extend(np.ravel(points.get_offsets()).tolist())
    assert sorted(means) == ["linen", "torch"] and ax.get_yscale() == "log" and not ax.get_lines()
    # (x, y) per backend: x the backend's place + 0.2, y √(0.1 · 0.4) and √(0.3 · 1.2)
    assert means["linen"] == pytest.approx([0.2, 0.2, 1.2, 0.6])
    assert means["torch"] == pytest.approx([-0.2, 0.8, 0.8, 1.0])
    assert "| CartPole-v1 | small | 0.8 | 1 | 0.2 | 0.6 |" in (tmp_path / "REPORT.md").read_text()


def test_a_sweep_of_exp4_alone_opens_with_its_answer_and_leaves_out_the_experiments_it_lacks(tmp_path):
    for env in ("CartPole-v1", "Acrobot-v1"):
        for (variant, mode), seconds in BACKEND_SECONDS.items():
            write_run(tmp_path / "runs" / "exp4" / f"{variant}_{env}", [seconds] * 12, variant=variant,
                      compile_mode=mode, env_id=env)
    result = run_plot(tmp_path)
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "REPORT.md").read_text()
    headings = [line for line in report.splitlines() if line.startswith("## ")]
    assert headings == ["## The answer", "## Env backend against framework (exp4)", "## Method and machine",
                        "## How to read this report", "## Peak memory",
                        "## Learning: final returns and learning curves"]
    assert [line for line in report.splitlines() if "Not in this sweep" in line] == [
        "- **Not in this sweep:** exp1 (the fully compiled variants, async: the ranking); exp2 (every compile mode "
        "per env, synchronised); exp3 (every compile mode per model size, synchronised); exp5 (how the cost grows "
        "with the number of envs); exp6 (many agents in one process against many processes); exp7 (the ranking at each "
        "model size, with seeds); exp8 (DQN across frameworks and env backends: does the framework matter more than "
        "for PPO); exp9 (training on Doors, an env written in NumPy and in JAX: NumPy or JAX for my own env)."]
    assert "Skipped" not in report and "skipping" not in result.stderr
    assert sorted(path.stem for path in tmp_path.glob("*.png")) == [
        "env_backend", "learning_curves_exp4_steps", "learning_curves_exp4_time", "learning_curves_exp4_wall", "memory"]


def test_a_sweep_of_exp1_to_exp4_names_only_exp5_to_exp9_as_missing(shards):
    _, _, report = shards
    assert [line for line in report.splitlines() if "Not in this sweep" in line] == [
        "- **Not in this sweep:** exp5 (how the cost grows with the number of envs); exp6 (many agents in one process "
        "against many processes); exp7 (the ranking at each model size, with seeds); exp8 (DQN across frameworks and "
        "env backends: does the framework matter more than for PPO); exp9 (training on Doors, an env written in NumPy "
        "and in JAX: NumPy or JAX for my own env)."]
    assert report.index("## Which variant is fastest?") < report.index("## Env backend against framework (exp4)") \
        < report.index("## Effect of each compile mode") < report.index("## How to read this report")


def test_peak_host_and_device_memory_are_tabled_per_experiment_and_the_device_peak_charted(shards):
    out, _, report = shards
    assert (out / "memory_machine1.png").exists() and (out / "memory_machine2.png").exists()
    # linen jit, small, runs of 300 MiB of host RSS and 1 MiB of device peak each: machine 1 ran 2 in exp1; machine 2
    # 2 in exp2, 1 in exp3 (a sync run outside runs/<exp>/), 2 in exp4
    machine_1 = section_text(report, f"## Peak memory — {MACHINE_1}")
    assert "| experiment | variant (mode) | model size | runs | host peak RSS (MiB, median) | device peak (MiB, " \
        "median) |" in machine_1
    assert "| exp1 | linen (jit) | small | 2 | 300 | 1 |" in machine_1
    machine_2 = section_text(report, f"## Peak memory — {MACHINE_2}")
    assert "| exp2 | linen (jit) | small | 2 | 300 | 1 |" in machine_2
    assert "| exp4 | linen (jit) | small | 2 | 300 | 1 |" in machine_2


def test_compare_takes_a_sharded_side_and_never_writes_into_a_sweep(tmp_path, known_sweep):
    root_a, _ = known_sweep
    root_b = write_known_sweep(tmp_path / "b", scale=2.0)
    shard_2 = tmp_path / "a2"
    (root_b / "runs" / "exp2").rename(tmp_path / "exp2_b")  # B's exp2 runs moved to a second shard of B
    (shard_2 / "runs").mkdir(parents=True)
    (tmp_path / "exp2_b").rename(shard_2 / "runs" / "exp2")
    result = run_plot("--compare", root_a, "--vs", root_b, shard_2, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = (tmp_path / f"compare__{root_a.name}__vs__b" / "REPORT.md").read_text()
    assert "| linen (jit) | async | small |" in report and "| linen (none) | sync | small |" in report
    assert not (root_b / "REPORT.md").exists() and not (shard_2 / "REPORT.md").exists()
    refused = run_plot("--compare", root_a, "--vs", root_b, "--out", root_b)
    assert refused.returncode != 0 and refused.stderr.startswith("plot.py: error:")
    assert len(refused.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------------------- helpers


def test_points_replace_bars_so_nothing_depends_on_where_a_log_axis_starts():
    ax = Figure().subplots()
    charts.draw_points(ax, ["small"], ["linen (jit)"], {("small", "linen (jit)"): [1.0, 2.0, 4.0]})
    assert not ax.patches  # no bars
    assert list(ax.lines[0].get_ydata()) == [2.0]  # the median, whiskers to 1 and 4


def test_every_variant_has_its_own_colour_and_comparisons_carry_both_variants_colours():
    colours = list(settings.LABEL_COLORS.values())
    assert len(set(colours)) == len(colours) and not set(colours) & set(settings.OTHER_COLORS)
    for label in ("nnx_tree (tree)", "equinox (none)", "equinox (jit)", "torch_gymnasium (eager)",
                  "linen_gymnasium (jit)"):
        assert label in settings.LABEL_COLORS
    name = "linen (jit) over torch_compile (compile)"
    assert charts.colors_for([name])[name] == settings.LABEL_COLORS["linen (jit)"]
    assert charts.edge_color(name) == settings.LABEL_COLORS["torch_compile (compile)"]


def drawn_ranking(tmp_path, monkeypatch, labels):
    """The ranking section's figure of one size, drawn in-process for labels (two envs, one seed) and saved."""
    figures = []
    monkeypatch.setattr(ranking, "save_figure", lambda figure, *args: figures.append(figure) or
                        charts.save_figure(figure, *args))
    cells = [(label, 2.0, 1.0 + k) for k, label in enumerate(labels)]
    rows = ranking_rows(cells, ("CartPole-v1", "Acrobot-v1"), (1,))
    ranking.ranking_chart(standings.size_rankings(rows, settings.LABEL_COLORS, "iterations 8–99"),
                          types.ChartFolder(tmp_path), "exp1", "ranking.png")
    return figures[0]


def test_a_section_draws_each_variant_in_the_palettes_colour_and_marker(tmp_path, monkeypatch, drawn_charts):
    labels = ("linen (jit)", "torch_gymnasium (eager)", "torch_native (eager)")  # a JAX, a NumPy, a torch env
    figure = drawn_ranking(tmp_path, monkeypatch, labels)
    drawn = {(line.get_color(), line.get_marker()) for ax in figure.axes for line in ax.get_lines()
             if line.get_color() != "black" and line.get_marker() not in ("None", "|", "")}
    assert drawn == {(palette.color_of(label), palette.marker_of(label)) for label in labels}
    assert len({palette.marker_of(label) for label in labels}) == 3  # the env's language tells them apart


def test_a_sections_axes_name_their_metric_and_unit_and_a_log_axis_says_so(tmp_path, monkeypatch, drawn_charts):
    figure = drawn_ranking(tmp_path, monkeypatch, ("linen (jit)", "equinox (jit)"))
    [ax] = figure.axes
    assert ax.get_xscale() == "log" and "log scale" in ax.get_xlabel()
    assert charts.chart_problems(figure) == []


def test_chart_problems_name_an_axis_without_its_metric_its_unit_or_its_log_scale():
    figure = Figure()
    ax = figure.subplots()
    ax.plot([1, 10, 100], [1, 2, 3])
    ax.set_xscale("log")
    ax.set_ylabel("time")
    assert charts.axis_problems(ax, "p") == ["p: the x axis names no metric",
                                             "p: the x axis is on a log scale and its label does not say so",
                                             "p: the y axis 'time' names no unit"]
    ax.set_xlabel("env steps (count)")
    ax.set_ylabel("time (s)")
    charts.say_log_scale(ax.xaxis)
    assert ax.get_xlabel() == "env steps (count, log scale)" and charts.axis_problems(ax, "p") == []


def test_a_series_that_is_no_variant_keeps_clear_of_every_variants_colour():
    colors = palette.other_colors(["populations", "trials in processes"])
    assert list(colors.values()) == list(settings.OTHER_COLORS[:2])
    assert palette.script_colors({"Flax + JAX env": "dqn_linen.py", "PyTorch + NumPy": "dqn_torch_gymnasium.py"}) == {
        "Flax + JAX env": palette.color_of("dqn_linen (jit)"),
        "PyTorch + NumPy": palette.color_of("dqn_torch_gymnasium (eager)")}
    # one script drawing two series: the variant's colour would not tell them apart
    assert set(palette.script_colors({"a": "dqn_linen.py", "b": "dqn_linen.py"}).values()) <= set(settings.OTHER_COLORS)


def pairs_over_envs(count):
    """One pair per env with speedups 1, 2, …, count."""
    config = lambda env: types.Condition("exp1", env, "small", "async", ())
    return [types.Pair(config(f"env{i}"), 1.0, float(i + 1)) for i in range(count)]


def test_an_interval_is_a_confidence_interval_only_from_the_minimum_number_of_envs():
    low, high, kind = stats.interval(pairs_over_envs(settings.MIN_ENVS_FOR_CI - 1))
    assert (low, kind) == (1.0, "range") and high == pytest.approx(settings.MIN_ENVS_FOR_CI - 1.0)
    low, high, kind = stats.interval(pairs_over_envs(settings.MIN_ENVS_FOR_CI))
    assert kind == "95% CI" and 1.0 < low < high < settings.MIN_ENVS_FOR_CI
    # log speedups 0, ln 2, …, ln 8: exp(mean ± t(7, 0.975) · sd / √8), by hand
    logs = np.log(np.arange(1, 9))
    half_width = 2.3646243 * logs.std(ddof=1) / math.sqrt(8)
    assert (low, high) == pytest.approx((math.exp(logs.mean() - half_width), math.exp(logs.mean() + half_width)))


def simulated_pairs(rng, envs, seeds, true_log_speedup):
    """Pairs of `seeds` seeds on each of `envs` envs: each env's log speedup normal around the true one (sd 0.3), its
    seeds' normal around the env's (sd 0.1)."""
    config = lambda env: types.Condition("exp1", env, "small", "async", ())
    env_logs = rng.normal(true_log_speedup, 0.3, envs)
    return [types.Pair(config(f"env{i}"), 1.0, math.exp(rng.normal(env_log, 0.1)))
            for i, env_log in enumerate(env_logs) for _ in range(seeds)]


@pytest.mark.parametrize("envs,seeds", [(8, 1), (12, 1), (12, 3)])
def test_the_95_percent_ci_covers_the_true_geometric_mean_95_percent_of_the_time(envs, seeds):
    rng, true_log_speedup, draws = np.random.default_rng(envs * 10 + seeds), 0.4, 2000
    covered = 0
    for _ in range(draws):
        low, high, kind = stats.interval(simulated_pairs(rng, envs, seeds, true_log_speedup))
        covered += low <= math.exp(true_log_speedup) <= high
    assert kind == "95% CI" and 0.94 <= covered / draws <= 0.96, covered / draws


@pytest.mark.parametrize("envs,label", [(8, "99% CI"), (10, "97% CI"), (12, "96% CI")])
def test_the_median_interval_covers_the_true_median_at_least_as_often_as_its_label_says(envs, label):
    rng, true_log_speedup, draws = np.random.default_rng(envs), 0.4, 2000
    covered = 0
    for _ in range(draws):
        low, high, kind = stats.median_interval(simulated_pairs(rng, envs, 1, true_log_speedup))
        covered += low <= math.exp(true_log_speedup) <= high
    assert kind == label and covered / draws >= int(label[:2]) / 100 - 0.01, covered / draws


def test_the_time_axis_of_learning_curves_starts_at_the_end_of_iteration_0(tmp_path):
    run = load.load_run(next(write_run(tmp_path / "run", KNOWN_SECONDS).iterdir()))
    assert curves.curve_x(run, "time")[:2].tolist() == [0.0, 0.5]  # returns after iterations 0 and 1
    assert curves.curve_x(run, "steps")[0] == 32 * 256


def test_a_faster_steady_state_that_is_not_repaid_or_needs_no_repaying():
    standing = lambda iter0, steady: standings.Standing("x", 1, (1.0, ()), (1.0, ()), iter0, steady)
    assert standings.break_even(standing(10.0, 1.0), standing(1.0, 1.0)) is None  # not faster: never repaid
    assert standings.break_even(standing(1.0, 0.5), standing(2.0, 1.0)) == 0  # faster from the start
    assert standings.break_even(standing(11.0, 0.5), standing(1.0, 1.0)) == 21.0


@pytest.mark.parametrize("args", [["--compare", "A"], ["A", "--compare", "A", "A"]], ids=["one-side", "both-modes"])
def test_a_comparison_without_two_sides_fails_with_one_error_line(tmp_path, args):
    (tmp_path / "A").mkdir()
    result = run_plot(*args, cwd=tmp_path)
    assert result.returncode != 0 and result.stderr.startswith("plot.py: error:")
    assert len(result.stderr.strip().splitlines()) == 1


def ranked(total, steady, steady_vs_linen):
    """linen (jit), the shortest in total, and nnx_cached (cached), the shortest in the steady state, whose relative
    times (mean, interval) are total and steady; steady_vs_linen is nnx_cached's steady state over linen's."""
    itself = (1.0, (1.0, 1.0, "range"))
    envs = 1 if math.isnan(total[1][0]) else 2  # one env: no interval
    linen = standings.Standing("linen (jit)", envs, itself, (1 / steady[0], (1 / steady[1][1], 1 / steady[1][0], "range")),
                          4.0, 1.0, itself)
    nnx = standings.Standing("nnx_cached (cached)", envs, total, itself, 14.0, steady_vs_linen[0], steady_vs_linen)
    conclusion = standings.ranking_conclusion("small", 100, [linen, nnx], linen.label, nnx.label, "iterations 8–99")
    return conclusion, standings.break_even_text(nnx, linen, nnx.steady_vs_total)


def test_a_ranking_names_a_winner_and_a_break_even_only_where_the_interval_excludes_one():
    conclusion, break_even = ranked((1.3, (1.2, 1.4, "range")), (0.5, (0.4, 0.6, "range")), (0.5, (0.4, 0.6, "range")))
    # one short bullet per finding; nnx_cached's relative total (1.30×) is the table's, not repeated
    assert conclusion == [
        "- **small** (2 envs, runs of 100 iterations):",
        "  - **linen (jit)** is fastest in total.",
        "  - **nnx_cached (cached)** is fastest in the steady state (iterations 8–99).",
        "  - nnx_cached (cached) is 2.00× [range 1.67–2.50] faster per iteration than linen (jit), the shortest in total; "
        "its longer iteration 0 is repaid after about 21 iterations."]
    assert break_even == "after 21 iterations"  # 1 + (14 − 4) / (1 − 0.5)
    ci = "95% CI"
    conclusion, break_even = ranked((1.01, (0.98, 1.03, ci)), (0.99, (0.97, 1.02, ci)), (0.99, (0.97, 1.02, ci)))
    assert conclusion[1:3] == ["  - No variant is fastest in total: linen (jit) has the shortest total time.",
                               "  - nnx_cached (cached) is not told apart from it (its interval holds 1×)."]
    assert "  - No variant is fastest in the steady state (iterations 8–99): nnx_cached (cached) has the shortest time " \
        "per iteration." in conclusion
    assert conclusion[-1].startswith("  - No break-even against linen (jit)") and "repaid" not in str(conclusion)
    assert break_even == "– (steady states indistinguishable)"
    no_interval = (math.nan, math.nan, "")
    conclusion, break_even = ranked((1.3, no_interval), (0.5, no_interval), (0.5, no_interval))
    assert conclusion == [
        "- **small** (1 env, runs of 100 iterations):",
        "  - No variant is named fastest in total: linen (jit) has the shortest total time.",
        "  - With one env there is no interval to tell it from nnx_cached (cached).",
        "  - No variant is named fastest in the steady state (iterations 8–99): nnx_cached (cached) has the shortest "
        "time per iteration.",
        "  - With one env there is no interval to tell it from linen (jit).",
        "  - No break-even against linen (jit), the shortest in total: the two steady states are not told apart "
        "(2.00×)."]
    assert break_even == "– (one env: no interval)"


def ranking_rows(cells, envs, seeds):
    """Summary rows of exp1 at size small: for each (label, iteration 0 s, steady s) of cells, one per env and seed."""
    return [{"label": label, "env": env, "seed": seed, "size": "small", "num_iterations": 100, "iter0_s": iter0,
             "iter8_99_median_s": steady, "total_s": iter0 + 99 * steady,
             "condition": types.Condition("exp1", env, "small", "async", ())}
            for label, iter0, steady in cells for env in envs for seed in seeds]


def test_the_ranking_answer_is_the_steady_iteration_then_when_a_faster_one_repays_its_slower_start():
    cells = [("linen (jit)", 10.0, 1.0), ("torch (env-jit)", 2.0, 3.0), ("torch_compile (compile)", 42.0, 2.0)]
    rows = ranking_rows(cells, ("CartPole-v1", "Acrobot-v1"), (1, 2))
    [sized] = standings.size_rankings(rows, settings.LABEL_COLORS, "iterations 8–99")
    assert standings.ranking_bullets([sized], "exp1") == [
        ("exp1 · small", "steady iteration: linen (jit) shortest (1 s); torch at best 2.00× [range 2.00–2.00] "
                         "(torch_compile (compile))"),
        # 1 + (10 − 2) / (3 − 1) = 5 for linen, 1 + (42 − 2) / (3 − 2) = 41 for torch_compile
        ("exp1 · small · start", "torch (env-jit) starts quickest (iteration 0: 2 s); a faster steady iteration repays "
                                 "its slower start after 5–41 iterations (last: torch_compile (compile))")]
    # one seed per env: the bullet says there is no run-to-run spread; one env: no interval either
    [single] = standings.size_rankings(ranking_rows(cells, ("CartPole-v1",), (1,)), settings.LABEL_COLORS, "it. 8–99")
    assert standings.ranking_bullet(single) == ("steady iteration: linen (jit) shortest (1 s; one env: no interval); "
                                              "torch at best 2.00× (torch_compile (compile)); one run per cell")


def test_a_ranking_answer_names_the_variants_level_with_the_shortest_steady_iteration():
    rows = ranking_rows([("linen (jit)", 4.0, 1.0), ("equinox (jit)", 4.0, 1.0)], ("CartPole-v1", "Acrobot-v1"), (1,))
    for row in rows:  # equinox faster on one env, slower on the other: the range holds 1×
        row["iter8_99_median_s"] *= {("equinox (jit)", "CartPole-v1"): 0.9, ("equinox (jit)", "Acrobot-v1"): 1.05}.get(
            (row["label"], row["env"]), 1.0)
    [sized] = standings.size_rankings(rows, settings.LABEL_COLORS, "iterations 8–99")
    assert standings.ranking_bullet(sized).startswith("steady iteration: equinox (jit) shortest (0.972 s), level with "
                                                    "linen (jit); JAX within 1.03× [range 0.95–1.11] (linen (jit))")


def test_an_interval_tells_two_variants_apart_only_if_it_excludes_one_as_printed():
    assert not stats.distinguishable((1.003, 1.03, "95% CI"))  # printed [1.00–1.03]: holds 1×
    assert stats.distinguishable((1.006, 1.03, "95% CI")) and stats.distinguishable((0.5, 0.994, "range"))
    assert not stats.distinguishable((math.nan, math.nan, ""))  # one env: no interval


def test_the_env_backend_conclusion_names_a_dominant_factor_only_where_the_interval_excludes_one():
    dominant = {("CartPole-v1", "small"): [(1.5, 3.0)], ("Acrobot-v1", "small"): [(1.5, 2.0)]}
    assert env_backend.backend_conclusion(dominant, "total time") == [
        "- On total time, **the env backend dominates** (2 env/size cells, geometric means):",
        "  - Gymnasium on the CPU takes 2.45× [range 2.00–3.00] the time of gymnax on the device.",
        "  - torch takes 1.50× [range 1.50–1.50] the time of linen.",
        "  - The env backend changes the time 1.63× [range 1.33–2.00] as much as the framework."]
    assert env_backend.backend_bullet(dominant) == ("the env backend dominates: Gymnasium takes 2.45× [range 2.00–3.00] "
                                                    "the time of gymnax; torch takes 1.50× [range 1.50–1.50] the time "
                                                    "of linen")
    neither = {("CartPole-v1", "small"): [(1.5, 2.0)], ("Acrobot-v1", "small"): [(0.5, 1.5)]}
    assert env_backend.backend_conclusion(neither, "total time") == [
        "- On total time, **neither factor dominates** (2 env/size cells, geometric means):",
        "  - Gymnasium on the CPU takes 1.73× [range 1.50–2.00] the time of gymnax on the device.",
        "  - torch and linen are not told apart (torch / linen: 0.87× [range 0.50–1.50]).",
        "  - The env backend changes the time 1.00× [range 0.75–1.33] as much as the framework (its interval holds "
        "1×)."]
    one_env = env_backend.backend_conclusion({("CartPole-v1", "small"): [(1.5, 3.0)]}, "total time")
    assert one_env[:2] == ["- On total time, **neither factor dominates** (1 env/size cell, geometric means):",
                           "  - Gymnasium on the CPU and gymnax on the device are not told apart (one env: no interval, "
                           "Gymnasium on the CPU / gymnax on the device: 3.00×)."]
    assert one_env[-1].endswith("as much as the framework (with one env there is no interval).")


def test_torch_on_its_own_env_is_level_with_a_cell_where_the_interval_holds_one_and_says_where_there_is_none():
    what = "torch on gymnax"
    assert env_backend.own_env_words((1.02, (0.96, 1.32, "range")), what) == \
        "is level with torch on gymnax (1.02× [range 0.96–1.32])"
    assert env_backend.own_env_words((2.81, (2.71, 3.12, "range")), what) == \
        "takes 2.81× [range 2.71–3.12] the time of torch on gymnax"
    assert env_backend.own_env_words((2.81, (math.nan, math.nan, "")), what) == \
        "takes 2.81× the time of torch on gymnax (one env: no interval)"


def test_a_compile_modes_speedup_says_where_its_interval_does_not_tell_the_mode_from_its_baseline():
    speedups = [((2.0, (1.9, 2.1, "range")), "torch_compile (compile)", "torch (env-jit)", "small"),
                ((1.02, (0.97, 1.08, "range")), "nnx_cached (cached)", "nnx (none)", "small")]
    assert compile_modes.steady_bullet(speedups, "iterations 8–99") == (
        "steady-state speedup (iterations 8–99) of a mode over its baseline: 1.02× [range 0.97–1.08] (nnx_cached "
        "(cached) over nnx (none); its interval holds 1×) to 2.00× [range 1.90–2.10] (torch_compile (compile) over "
        "torch (env-jit))")
    one_env = [((1.5, (math.nan, math.nan, "")), "nnx_cached (cached)", "nnx (none)", "small")]
    assert compile_modes.steady_bullet(one_env, "iterations 8–99") == (
        "steady-state speedup (iterations 8–99) of nnx_cached (cached) over nnx (none): 1.50×; one env: no interval")
    one_env.append(((2.0, (math.nan, math.nan, "")), "torch_compile (compile)", "torch (env-jit)", "small"))
    assert compile_modes.steady_bullet(one_env, "iterations 8–99").endswith(
        "1.50× (nnx_cached (cached) over nnx (none)) to 2.00× (torch_compile (compile) over torch (env-jit)); one env: "
        "no interval")  # the reason both share, said once


def test_the_rule_names_a_first_alone_only_where_its_interval_is_apart_from_every_others():
    ranges = {"a": [1.0, 1.2], "b": [1.1, 1.3], "c": [2.0, 2.1], "d": [1.05]}
    apart = lambda first, name: stats.ranges_apart(ranges[first], ranges[name])
    lead = stats.level_with_first(["a", "b", "c", "d"], apart)
    assert (lead.first, lead.level, lead.unknown, lead.apart, lead.crowned) == ("a", ["b"], ["d"], ["c"], False)
    assert text.lead_names(lead, str) == "a and b"
    assert text.lead_note(lead, str, "ranges overlap", "seed") == "ranges overlap; one seed: no interval to tell from d"
    crowned = stats.level_with_first(["a", "c"], apart)
    assert crowned.crowned and text.lead_note(crowned, str, "ranges overlap", "seed") == ""
    alone = stats.level_with_first(["d", "a", "c"], apart)  # one value: no range to set beside any other
    assert text.lead_note(alone, str, "ranges overlap", "seed") == "one seed: no interval"
