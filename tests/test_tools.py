"""tools/host_time_jax.py and tools/torch_step_parts.py end to end on the smallest configs, and their bad input;
tools/atari_update_cost.py's bad input."""
import os
import subprocess
import sys

import pytest

import atari_update_cost
import torch_step_parts
from helpers import FAST_COMPILE, ROOT

TOOL = os.path.join(ROOT, "tools", "host_time_jax.py")


@pytest.mark.slow
def test_host_time_tool_times_the_outermost_call_of_each_compiled_function():
    """The cached variant nests nnx.jit inside nnx.cached_partial, the tree variant uses jit_partial, both with GAE
    under jax.jit, and Equinox compiles with jax.jit: each function gets one figure per variant, one timed call per
    iteration, and so do iteration 0 and the iterations after it."""
    variants = ["nnx.cached_partial(nnx.jit)", "nnx.jit_partial (tree)", "Equinox jax.jit"]
    result = subprocess.run(
        [sys.executable, TOOL, "--rounds", "1", "--num-iterations", "3", "--tiny", "--variants", *variants],
        cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, "XLA_FLAGS": FAST_COMPILE},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    rows = {line.split("|")[1].strip(): line.split("|")[2:-1] for line in result.stdout.splitlines() if "|" in line}
    assert [cell.strip() for cell in rows["host time"]] == variants
    for row in ("rollout (ms per call)", "compute_gae (ms per call)", "update (ms per call)", "rollout first call (s)",
                "update first call (s)", "iteration 0 (s)", "iterations 1-2, mean (ms)"):
        assert all(float(cell) > 0 for cell in rows[row]), row
    assert [cell.strip() for cell in rows["calls timed per run (rollout / compute_gae / update)"]] == ["3 / 3 / 3"] * 3


@pytest.mark.slow  # a fresh process for one error line: the fast subset probes the scripts' bad input only
def test_host_time_tool_passes_on_a_script_error_as_one_line():
    result = subprocess.run(
        [sys.executable, TOOL, "--rounds", "1", "--env-id", "NoSuchEnv-v0", "--variants", "nnx.jit_partial (tree)"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert lines == ["error: unknown env 'NoSuchEnv-v0': not a registered gymnax environment, nor module:EnvId"]


STEP_PARTS = os.path.join(ROOT, "tools", "torch_step_parts.py")


@pytest.mark.slow
def test_step_parts_tool_times_each_part_and_the_whole_step_of_ppo_torch_and_sums_the_parts():
    result = subprocess.run([sys.executable, STEP_PARTS, "--rounds", "2", "--calls", "10"],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in result.stdout.splitlines()
            if line.startswith("| ") and "---" not in line}
    parts = [label for label in rows if label not in ("part of one rollout step", "**sum of the parts**",
                                                      "the whole step, the same calls in one loop",
                                                      "the whole step / the sum of the parts")]
    assert len(parts) == 4
    medians = [float(rows[label].split()[0]) for label in parts]
    assert all(median > 0 for median in medians)
    assert abs(float(rows["**sum of the parts**"].strip("*")) - sum(medians)) < 0.5
    assert float(rows["the whole step, the same calls in one loop"].split()[0]) > 0


@pytest.mark.slow
def test_step_parts_tool_times_the_parts_of_ppo_torch_native_and_its_compiled_step():
    result = subprocess.run([sys.executable, STEP_PARTS, "--script", "ppo_torch_native", "--rounds", "2", "--calls",
                             "10"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in result.stdout.splitlines()
            if line.startswith("| ") and "---" not in line}
    parts = [label for label in torch_step_parts.NativeSteps.PARTS]
    assert all(float(rows[label].split()[0]) > 0 for label in parts) and len(parts) == 5
    assert abs(float(rows["**sum of the parts**"].strip("*")) - sum(float(rows[label].split()[0]) for label in parts)) < 0.5
    assert float(rows["the whole step compiled (`rollout_step` under torch.compile)"].split()[0]) > 0


@pytest.mark.parametrize("argv, error", [
    (["--script", "ppo_torch_native", "--env-id", "Breakout-MinAtar"],
     "error: --env-id Breakout-MinAtar: ppo_torch_native.py has CartPole-v1, Acrobot-v1 and MountainCar-v0"),
    (["--calls", "0"], "error: --num-envs, --calls and --rounds must be at least 1"),
    (["--env-id", "NoSuchEnv-v0"], "error: unknown env 'NoSuchEnv-v0': not a registered gymnax environment"),
])
def test_step_parts_tool_refuses_bad_input_with_one_line(argv, error, capsys):
    assert torch_step_parts.main(argv) == 2
    assert capsys.readouterr().err == error + "\n"


@pytest.mark.parametrize("argv, error", [
    (["conv"], "argument way: invalid choice: 'conv' (choose from 'patches', 'xla', 'torch')"),
    (["patches", "--calls", "0"], "--calls must be at least 1"),
])
def test_atari_update_cost_refuses_bad_input_with_one_line(argv, error, capsys):
    with pytest.raises(SystemExit) as exited:
        atari_update_cost.main(argv)
    assert exited.value.code == 2 and capsys.readouterr().err == f"atari_update_cost.py: error: {error}\n"
