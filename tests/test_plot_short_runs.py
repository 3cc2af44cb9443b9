"""plot.py on sweeps too short for some windows (--iterations 1, 3, 8, 9), a sweep of one variant, a failing section."""

import re

import pytest

import plot
from report import env_backend, settings
from events import BACKEND_PAIRS, write_run, write_sweep
from test_plot import run_plot

ENVS = ("CartPole-v1", "Acrobot-v1")
# Every section a sweep of exp1 to exp4 has, and the windows each one reads besides the total.
SECTIONS = {
    "## Which variant is fastest?": ("iterations 8–99",),
    "## Env backend against framework (exp4)": ("iterations 8–99",),
    "## Effect of each compile mode": ("iterations 8–99",),
    "## Total duration against env complexity (exp1)": (),
    "## Speedups between the fully compiled variants: total duration (exp1)": (),
    "## Overhead windows (exp1)": ("iterations 1–7", "iterations 8–99"),
    "## Overhead windows (exp3)": ("iterations 1–7", "iterations 8–99"),
    "## Speedups between the fully compiled variants: iteration": ("iterations 8–99",),
    "## Synchronised rollout and update (exp2, per env)": ("iterations 8–99",),
    "## Synchronised rollout and update (exp3, per size)": ("iterations 8–99",),
    "## Peak memory": (),
    "## Learning: final returns and learning curves": (),
}
LEARNING_CURVES = ("### Learning curves: exp1, small", "### Learning curves: exp2", "### Learning curves: exp3",
                   "### Learning curves: exp4")


def section(report, heading):
    """The text of the section whose heading starts with heading, up to the next section."""
    start = report.index(heading)
    end = report.find("\n## ", start + 1)
    return report[start: end if end >= 0 else len(report)]


# 1 iteration (nothing but iteration 0) is the edge the fast subset keeps; 3 (the length a user hit), 8 (no steady
# window) and 9 read in the full suite
@pytest.fixture(scope="module", ids=lambda n: f"{n}-iterations",
                params=(1, *(pytest.param(n, marks=pytest.mark.slow) for n in (3, 8, 9))))
def short_sweep(request, tmp_path_factory):
    """A synthetic sweep of exp1 to exp4 (2 envs, small, 1 seed) whose runs all have request.param iterations."""
    root = tmp_path_factory.mktemp(f"iterations{request.param}")
    write_sweep(root, envs=ENVS, seeds=(1,), num_iterations=request.param, sizes=("small",), exp4=True)
    result = run_plot(root)
    report = root / "REPORT.md"
    return request.param, result, report.read_text() if report.exists() else ""


def test_every_section_is_written_without_error_or_nan_for_runs_of_any_length(short_sweep):
    _, result, report = short_sweep
    assert result.returncode == 0, result.stderr
    assert all(line.startswith("warning: ") for line in result.stderr.splitlines()), result.stderr
    for heading in [*SECTIONS, *LEARNING_CURVES]:
        assert heading in report, heading
    assert not re.search(r"\bnan\b", report, re.IGNORECASE)


def test_each_section_says_in_one_line_which_of_its_windows_are_empty(short_sweep):
    iterations, _, report = short_sweep
    for heading, windows in SECTIONS.items():
        text = section(report, heading)
        empty = [window for window in windows if iterations <= settings.WINDOWS[window][0]]
        notes = [line for line in text.splitlines() if line.startswith("*Empty windows:*")]
        assert len(notes) == (1 if empty else 0), heading
        for window in empty:
            runs = f"runs of {iterations} iteration{'s' if iterations > 1 else ''}"
            assert f"{window} is empty in every run ({runs} end before iteration {settings.WINDOWS[window][0]})" \
                in notes[0], heading


def test_no_steady_state_claim_is_made_from_an_empty_steady_state(short_sweep):
    iterations, _, report = short_sweep
    ranking = section(report, "## Which variant is fastest?")
    backend = section(report, "## Env backend against framework (exp4)")
    if iterations > 8:
        assert "steady state (iteration 8)" in ranking and "On the steady state (iteration 8)" in backend
        return
    assert "No steady-state comparison: iterations 8–99 is empty in these runs." in ranking
    assert "repaid" not in report and "after about" not in report and "On the steady state" not in backend
    assert "| – (no steady state) |" in section(report, "## Effect of each compile mode")


def test_a_sweep_of_one_variant_writes_its_sections_and_says_why_it_ranks_nothing(tmp_path):
    for env in ENVS:
        write_run(tmp_path / "runs" / "exp1" / env, [4.0, 1.0, 1.0], env_id=env)
    result = run_plot(tmp_path)
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "REPORT.md").read_text()
    assert "Skipped: fewer than two fully compiled variants in exp1." in section(report, "## Which variant is fastest?")
    overhead = section(report, "## Overhead windows (exp1)")
    assert "*Empty windows:* iterations 8–99 is empty in every run (runs of 3 iterations" in overhead
    assert "| linen (jit) | small | 2 | 2 | 4 | 1 | – |" in overhead
    assert "### Learning curves: exp1, small" in report and not re.search(r"\bnan\b", report, re.IGNORECASE)


def failing_backend_effects(rows, metric):
    """Stands in for env_backend.backend_effects: fails as a bug in one section would."""
    raise RuntimeError("boom")


def test_a_failing_section_is_one_error_line_and_the_other_sections_are_still_written(tmp_path, monkeypatch, capfd):
    for exp, variant, mode in (("exp1", "ppo_linen", "jit"), ("exp1", "ppo_nnx_cached", "cached"),
                               *(("exp4", variant, mode) for variant, mode in BACKEND_PAIRS)):
        write_run(tmp_path / "runs" / exp / f"{variant}_{mode}", [4.0] + [1.0] * 8, variant=variant, compile_mode=mode)
    monkeypatch.setattr(env_backend, "backend_effects", failing_backend_effects)  # the workers fork from this process
    with pytest.raises(SystemExit) as exit_info:
        plot.main([str(tmp_path)])
    assert exit_info.value.code == 1
    errors = [line for line in capfd.readouterr().err.splitlines() if not line.startswith("warning: ")]
    assert errors == ["plot.py: error: section env_backend failed: RuntimeError: boom"]
    report = (tmp_path / "REPORT.md").read_text()
    assert "## Failed section: env_backend\n\nThis section failed (RuntimeError: boom)." in report
    assert "## Which variant is fastest?" in report and (tmp_path / "ranking.png").exists()
    assert "### Learning curves: exp4" in report and (tmp_path / "learning_curves_exp4_time.png").exists()
