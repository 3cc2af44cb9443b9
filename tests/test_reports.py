"""The charts' rule (report/charts.py, chart_problems): every data point inside its axes and between labelled ticks,
no legend over a label; the charts that answer (exp9's time to reach a return, the comparison's steady iteration); and
every committed report reproduced by tools/regenerate_reports.py without a chart problem."""
import glob
import math
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from matplotlib.figure import Figure

import regenerate_reports
from helpers import ROOT
from report import doors
from report.charts import category_axis, chart_problems, log_axis, new_figure, save_figure
from report.types import ChartFolder
from test_plot import run_plot


def drawn(figure):
    """The figure's problems once its layout is drawn."""
    figure.draw_without_rendering()
    return chart_problems(figure)


def test_a_point_outside_its_axes_is_a_problem():
    figure = Figure()
    ax = figure.subplots()
    ax.plot([0, 1], [0, 1], label="rising")
    ax.set(ylim=(0, 0.5), xlabel="iteration (count)", ylabel="time (s)")
    (problem,) = drawn(figure)
    assert problem.startswith("panel 1: 1 point(s) outside the limits of the y axis (1; series: rising)")


def test_a_point_beyond_the_last_labelled_tick_is_a_problem_that_save_figure_mends(tmp_path, capsys, drawn_charts):
    figure, (ax,) = new_figure("points", 1)
    ax.scatter([0, 1], [1.0, 5.5], label="points")
    ax.set(xlabel="iteration (count)", ylabel="speedup (×, log scale)")
    log_axis(ax, "y", "×")  # ticks at 1, 2, 5: 5.5 above the last one
    (problem,) = drawn(figure)
    assert "1 point(s) beyond the outermost labelled tick of the y axis (5.5; series: points)" in problem
    save_figure(figure, ChartFolder(tmp_path), "points.png")
    assert ax.get_ylim()[1] == pytest.approx(10) and chart_problems(figure) == []
    assert "chart problem" not in capsys.readouterr().err


def test_a_legend_over_tick_labels_is_a_problem():
    figure = Figure(figsize=(4, 3))
    ax = figure.subplots()
    for number in range(3):
        ax.plot([0, 10], [number, number + 1], label=f"line {number}")
    ax.set(xticks=[0, 5, 10], yticks=[0, 1, 2, 3, 4], xlabel="x")
    ax.legend(loc="upper left", bbox_to_anchor=(0, 0))  # hangs below the axes, over its tick labels
    (problem,) = drawn(figure)
    assert problem.startswith("the legend covers") and "x tick label" in problem


def test_clean_figures_have_no_problem_and_save_figure_makes_room_for_a_long_legend(tmp_path, capsys, drawn_charts):
    figure, axes = new_figure("clean", 2)
    for ax in axes:  # category x axis, points with whiskers and a 1× line across (x in axes units)
        ax.errorbar([-0.2, 0.8], [1.5, 3.0], yerr=[[0.2, 0.5], [0.3, 0.5]], marker="o", linestyle="none", label="a")
        ax.scatter([0.2, 1.2], [0.8, 2.2], label="b")
        ax.axhline(1.0, linestyle="--")
        ax.set(xlabel="design", ylabel="speedup (×)")
        log_axis(ax, "y", "×")
        category_axis(ax, ["first", "second"])
    save_figure(figure, ChartFolder(tmp_path), "clean.png")
    assert chart_problems(figure) == []
    many, (ax,) = new_figure("many labels", 1, panel_size=(4.2, 3.2), fixed_margins=True)
    for number in range(12):  # a legend of 12 rows in one column: taller than the figure's bottom margin
        ax.plot([0, 1], [number, number + 1], label=f"a rather long label number {number}")
    ax.set(xlabel="iteration (count)", ylabel="time (s)")
    height = many.get_figheight()
    save_figure(many, ChartFolder(tmp_path), "many.png")
    assert many.get_figheight() > height and chart_problems(many) == []
    assert "chart problem" not in capsys.readouterr().err


def fake_run(seconds_to_reach, label, variant, mode):
    """A summary row of one Doors run whose mean return reaches 2.5 after seconds_to_reach (never: NaN)."""
    returns = np.full(10, 0.5) if math.isnan(seconds_to_reach) else np.full(10, 2.5)
    run = SimpleNamespace(returns=returns, return_steps=np.arange(1, 11) * 100.0,
                          return_seconds=np.linspace(0.1, 1, 10) * (1 if math.isnan(seconds_to_reach)
                                                                    else seconds_to_reach / 0.5))
    return {"run": run, "label": label, "variant": variant, "compile_mode": mode, "seed": 1}


def test_the_time_to_reach_chart_puts_the_first_on_top_and_lists_those_that_never_reached_it(tmp_path, monkeypatch,
                                                                                             drawn_charts):
    figures, savefig = {}, Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda figure, path, *args, **kwargs: (
        figures.setdefault(Path(path).name, figure), savefig(figure, path, *args, **kwargs))[1])
    cells = {"torch_gymnasium (eager)": [fake_run(8.0, "torch_gymnasium (eager)", "ppo_torch_gymnasium", "eager")],
             "linen (jit)": [fake_run(2.0, "linen (jit)", "ppo_linen", "jit")],
             "torch (env-jit)": [fake_run(math.nan, "torch (env-jit)", "ppo_torch", "env-jit")]}
    stats = {"PPO": doors.design_stats(cells)}
    assert doors.reach_chart([("PPO", cells)], stats, ChartFolder(tmp_path)) == "doors_time_to_reach.png"
    (ax,) = figures["doors_time_to_reach.png"].axes
    assert [label.get_text() for label in ax.get_yticklabels()] == [
        "linen (jit)", "torch_gymnasium (eager)", "torch (env-jit): never reached it (1 seed)"]
    assert ax.get_xscale() == "log" and [line.get_xdata()[0] for line in ax.get_lines()[::3]] == pytest.approx([2, 8])
    assert [line.get_marker() for line in ax.get_lines()[::3]] == ["o", "s"]  # the JAX env's, the NumPy env's
    assert chart_problems(figures["doors_time_to_reach.png"]) == []


def test_exp9s_report_is_headed_by_the_time_to_reach_chart(tmp_path):
    """Against env steps the designs learn alike by construction: the headline is the time to reach the return."""
    result = run_plot("results/cpu-2core-exp9", "--out", tmp_path, cwd=ROOT)
    assert result.returncode == 0 and "chart problem" not in result.stderr, result.stderr
    report = (tmp_path / "REPORT.md").read_text()
    answer = report[:report.index("**Machine:**")]
    charts = [line for line in answer.splitlines() if line.startswith("![")]
    assert charts == ["![time to reach a mean return of 2.0 per design](doors_time_to_reach.png)"]
    assert report.index("(doors_time_to_reach.png)") < report.index("(doors_ppo_steps.png)")


def test_the_tool_lists_every_committed_report_but_those_only_their_measurement_writes():
    found = {os.path.relpath(os.path.dirname(path), os.path.join(ROOT, "results"))
             for path in glob.glob(os.path.join(ROOT, "results", "**", "REPORT.md"), recursive=True)}
    measured = {name for name in found if name.split(os.sep)[0] in regenerate_reports.NOT_REGENERATED}
    command_sets = {report.name for report in regenerate_reports.REPORTS if report.module}
    studies = {name for name in found if os.sep in name and name.split(os.sep)[0] in command_sets}  # tune.py's
    assert found - measured - studies == {report.name for report in regenerate_reports.REPORTS}
    assert {name.split(os.sep)[0] for name in measured} == set(regenerate_reports.NOT_REGENERATED)
    assert all(Path(ROOT, "report", f"{report.module}.py").is_file() for report in regenerate_reports.REPORTS
               if report.module)


def test_the_tool_refuses_an_unknown_report_with_one_line():
    result = subprocess.run([sys.executable, "tools/regenerate_reports.py", "--check", "--only", "nowhere"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 2 and result.stderr.startswith("regenerate_reports.py: error: no committed report "
                                                               "nowhere")
    assert len(result.stderr.strip().splitlines()) == 1


def regenerated_reports(shared_runs, background=False):
    """The error lines of tools/regenerate_reports.py --check (its plot.py processes, in the background)."""
    reports = regenerate_reports.REPORTS
    return shared_runs.job(("regenerated reports",), lambda folder: regenerate_reports.check(reports), background)


@pytest.mark.slow
@pytest.mark.background.with_args(regenerated_reports)
def test_every_committed_report_is_reproduced_without_a_chart_problem(shared_runs):
    """tools/regenerate_reports.py --check: each committed sitting's report made again (1–10 s each; a command set's by
    its report module, in a copy of its folder) equals the committed REPORT.md, and no chart of any of them has a point
    outside its axes or past its labelled ticks, or a legend over a label."""
    errors = regenerated_reports(shared_runs)
    assert [error for error in errors if "chart problem" in error] == []
    assert errors == []
