"""plot.py on exp6, many agents: one vmapped process against N processes (wall time, agents per hour, speedup, the
extrapolation beyond the measured N), the exp5 prediction beside the measured gain, the agents' final returns, and
groups that cannot be used."""

import math
from types import SimpleNamespace

import pytest

from report import agents
from events import write_exp5_runs, write_exp6_group, write_json, write_run
from test_plot import capture_figures, check_answer, lines_by_label, run_plot, wordy_lines
from test_plot_scaling import GYMNAX_COSTS
from test_plot_short_runs import section

AGENTS = "## Many agents: one vmapped process against many processes (exp6)"
# Wall seconds to train N agents: one vmapped process 20 + 2·N; N processes 2 at a time, ⌈N/2⌉ waves of 15 s (linen)
# and 30 s (torch).
VMAPPED_WALL = lambda n: 20 + 2 * n
WAVE_SECONDS = {("ppo_linen", "jit"): 15, ("ppo_torch", "env-jit"): 30}


def write_agents_sweep(root):
    """exp6 as the data format has it: linen_scan at N = 1 … 16, linen and torch processes at N = 1 … 8."""
    for n in (1, 2, 4, 8, 16):
        write_exp6_group(root, "ppo_linen_scan", "scan", n, VMAPPED_WALL(n), processes=1, parallel=1)
    for (variant, mode), wave in WAVE_SECONDS.items():
        for n in (1, 2, 4, 8):
            write_exp6_group(root, variant, mode, n, math.ceil(n / 2) * wave, processes=n, parallel=2)
    return root


@pytest.fixture(scope="module")
def exp6_alone(tmp_path_factory):
    """A sweep of exp6 alone plus three groups that cannot be used: the folder, plot.py's result and the report."""
    root = write_agents_sweep(tmp_path_factory.mktemp("exp6"))
    write_exp6_group(root, "ppo_linen_scan", "scan", 32, 84.0, processes=1, parallel=1,
                     group_json={"script": "ppo_linen_scan", "mode": "scan", "env_id": "CartPole-v1", "agents": 32,
                                 "processes": 1, "parallel": 1})  # no wall time
    write_exp6_group(root, "ppo_linen", "jit", 16, 120.0, processes=16, parallel=2, finished_agents=15)
    write_run(root / "runs" / "exp6" / "loose" / "agent0", [1.0] * 12)  # an agent without its group.json
    result = run_plot(root)
    return root, result, (root / "REPORT.md").read_text()


def test_a_sweep_of_exp6_alone_opens_with_its_answer_and_draws_its_chart(exp6_alone):
    root, result, report = exp6_alone
    assert result.returncode == 0, result.stderr
    headings = [line for line in report.splitlines() if line.startswith("## ")]
    assert headings == ["## The answer", AGENTS, "## Method and machine", "## How to read this report",
                        "## Peak memory", "## Learning: final returns and learning curves"]
    assert "Skipped" not in report
    assert sorted(path.stem for path in root.glob("*.png")) == ["agents", "learning_curves_exp6_steps",
                                                                 "learning_curves_exp6_time", "learning_curves_exp6_wall"]
    assert ("- [exp6 · CartPole-v1](#many-agents-one-vmapped-process-against-many-processes-exp6): At N = 8, one "
            "linen_scan (scan) process is 1.67× faster than linen (jit) processes 2 at a time and 3.33× faster than "
            "torch (env-jit) processes 2 at a time; one run: no interval.") in section(report, "## The answer")
    assert (root / "agents.png").exists()  # its drawing: test_the_time_axis_gives_a_vmapped_process_s_agents_...


def test_the_answer_links_to_the_section_and_no_line_runs_long(exp6_alone):
    _, _, report = exp6_alone
    assert [bullet["label"] for bullet in check_answer(report, {"exp6"})] == ["exp6 · CartPole-v1"]
    assert "![wall time to train N agents](agents.png)" in section(report, "## The answer")
    assert wordy_lines(report) == []
    assert "(learning_curves_exp6_wall.png)" in report


def test_the_table_gives_wall_time_agents_per_hour_and_speedups_extrapolating_only_the_processes(exp6_alone):
    _, _, report = exp6_alone
    text = section(report, AGENTS)
    assert ("| N agents | linen_scan (scan): wall (s) | linen_scan (scan): agents per hour | linen (jit): wall (s) | "
            "linen (jit): agents per hour | torch (env-jit): wall (s) | torch (env-jit): agents per hour | speedup of "
            "linen_scan (scan) over linen (jit) processes | speedup of linen_scan (scan) over torch (env-jit) "
            "processes |") in text
    assert "| 8 | 36 | 800 | 60 | 480 | 120 | 240 | 1.67× | 3.33× |" in text
    # 16 agents: linen and torch processes extrapolated from their 4 waves at N = 8: 8 waves of 15 and 30 s
    assert ("| 16 | 52 | 1,108 | ≈120 (extrapolated) | ≈480 (extrapolated) | ≈240 (extrapolated) | ≈240 (extrapolated) "
            "| 2.31× (extrapolated) | 4.62× (extrapolated) |") in text
    # the conclusions: at the largest N every variant measured, and at the vmapped process's largest
    assert ("- **CartPole-v1:**\n"
            "  - At N = 8, one linen_scan (scan) process is 1.67× faster than linen (jit) processes 2 at a time and "
            "3.33× faster than torch (env-jit) processes 2 at a time; one run: no interval.\n"
            "  - At N = 16, one linen_scan (scan) process is 2.31× faster than linen (jit) processes 2 at a time "
            "(extrapolated) and 4.62× faster than torch (env-jit) processes 2 at a time (extrapolated); one run: no "
            "interval.\n") in text
    assert "| 1 | 22 | 164 | 15 | 240 | 30 | 120 | 0.68× | 1.36× |" in text  # one agent: the processes are faster


def test_without_exp5_there_is_one_line_saying_there_is_no_fit_to_predict_from(exp6_alone):
    _, _, report = exp6_alone
    text = section(report, AGENTS)
    assert ("No predicted gain: no exp5 fit of linen (jit) on CartPole-v1 with the agents' per-env workload to predict "
            "from.") in text
    assert "predicts" not in text


def test_groups_that_cannot_be_used_are_left_out_with_one_warning_each(exp6_alone):
    root, result, report = exp6_alone
    warnings = [line for line in result.stderr.splitlines() if "exp6" in line and "leaving out" in line]
    assert len(warnings) == 3
    assert any("__a32__1: group.json has no usable 'wall_seconds'" in line for line in warnings)
    assert any("__a16__1: 15 of its 16 agents' runs finished" in line for line in warnings)
    assert any("exp6/loose: no group.json beside them" in line for line in warnings)
    assert "| 32 |" not in section(report, AGENTS)


def test_each_agents_final_return_is_summarised_per_variant_and_number_of_agents(exp6_alone):
    _, _, report = exp6_alone
    returns = report.split("**exp6**")[1]
    # agent i's last five returns average 100 + i: over agents 0–7, 103.5 ± 2.45
    assert "| env | N agents | linen (jit) | torch (env-jit) | linen_scan (scan) |" in returns
    assert "| CartPole-v1 | 8 | 104 ± 2.4 | 104 ± 2.4 | 104 ± 2.4 |" in returns
    assert "| CartPole-v1 | 16 | – | – | 108 ± 4.8 |" in returns  # the linen group of 16 was left out
    assert "### Learning curves: exp6" in report


def test_the_exp5_fit_of_linen_predicts_the_gain_beside_the_measured_one(tmp_path):
    write_agents_sweep(tmp_path)
    write_exp5_runs(tmp_path, GYMNAX_COSTS, num_envs=(8, 32, 128))  # linen: a = 1 ms, b = 10 µs per env
    write_json(tmp_path / "system.json", {"cpu": "Synthetic CPU", "gpu": None})
    result = run_plot(tmp_path)
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "REPORT.md").read_text()
    text = section(report, AGENTS)
    # N = 8, 32 envs per agent, P = 2: per iteration 4 × (1 + 0.32) ms / (1 + 2.56) ms; per run also each side's
    # start-up (2 s) and iteration 0 (5 s) and 11 iterations: 4 × 7.0145 s / 7.0392 s; measured 60 / 36
    assert "| 8 | 1.48× | 3.99× | 1.67× |" in text
    assert ("  - exp5's cost model of linen (jit) predicts a gain of 1.48× per iteration at N = 8 (3.99× per run with "
            "the measured start-up and iteration 0); measured: 1.67×.") in text
    assert "8× at N = 16 with P = 2 — a prediction of the model, not measured here." in text
    # exp5 and exp6 open the report: neither the agents nor exp5's runs were taken for exp1 runs
    assert [line for line in report.splitlines() if line.startswith("## ")][:3] == [
        "## The answer", "## How the cost grows with the number of envs (exp5)", AGENTS]
    # the headline chart is exp6's, though exp5's section comes first: exp5's runs are read beside exp6's
    assert "![wall time to train N agents](agents.png)" in section(report, "## The answer")


def test_the_time_axis_gives_a_vmapped_process_s_agents_its_time_divided_by_their_number(tmp_path, monkeypatch):
    """Four agents in one process share its clock: against time per agent they learn as fast as one agent each."""
    figures = capture_figures(monkeypatch)
    write_exp6_group(tmp_path, "ppo_linen_scan", "scan", 4, 30.0, processes=1, parallel=1)
    write_exp6_group(tmp_path, "ppo_linen", "jit", 4, 60.0, processes=4, parallel=2)
    assert run_plot(tmp_path).returncode == 0
    (ax,) = figures["learning_curves_exp6_time.png"].axes
    lines = lines_by_label(ax)
    # 11 iterations of 0.1 s after iteration 0: the process's 1.1 s over its 4 agents, or 1.1 s each
    assert max(lines["linen_scan (scan)"].get_xdata()) == pytest.approx(1.1 / 4)
    assert max(lines["linen (jit)"].get_xdata()) == pytest.approx(1.1)
    assert ax.get_xlabel() == "training time per agent after iteration 0 (s)"


def test_the_vmapped_process_is_called_faster_only_where_the_ranges_over_repeats_are_apart():
    group = lambda label, count, wall, processes: SimpleNamespace(label=label, agents=count, wall=wall,
                                                                  processes=processes, parallel=min(processes, 2))
    groups = [group("linen_scan (scan)", n, wall, 1) for n, wall in ((8, 36.0), (8, 44.0), (16, 60.0), (16, 64.0))]
    groups += [group("linen (jit)", 8, wall, 8) for wall in (40.0, 48.0)]  # overlaps the vmapped process's 36–44 s
    groups += [group("torch (env-jit)", 8, 120.0, 8)]  # one run: no range
    variants = agents.agent_times(groups)
    vmapped, processes = variants[0], variants[1:]
    # N = 8: linen level (44 / 40 s); N = 16: linen extrapolated from its two runs at 8, 80–96 s, apart from 60–64 s
    assert agents.agents_sentence(vmapped, processes, 8) == (
        "At N = 8, one linen_scan (scan) process is level with linen (jit) processes 2 at a time (1.10×, ranges over "
        "repeats overlap) and 3.00× faster than torch (env-jit) processes 2 at a time; one run: no interval for torch "
        "(env-jit).")
    assert agents.agents_sentence(vmapped, processes[:1], 16) == (
        "At N = 16, one linen_scan (scan) process is 1.42× faster than linen (jit) processes 2 at a time "
        "(extrapolated).")
