"""tools/host_time_jax.py end to end on the smallest config: it runs the scripts it names, reports every call."""
import os
import subprocess
import sys

import pytest

from helpers import ROOT

TOOL = os.path.join(ROOT, "tools", "host_time_jax.py")


@pytest.mark.slow
def test_host_time_tool_times_the_outermost_call_of_each_compiled_function():
    """The cached variant nests nnx.jit inside nnx.cached_partial, the tree variant uses jit_partial, both with GAE
    under jax.jit, and Equinox compiles with jax.jit: each function gets one figure per variant, one timed call per
    iteration, and so do iteration 0 and the iterations after it."""
    variants = ["nnx.cached_partial(nnx.jit)", "nnx.jit_partial (tree)", "Equinox jax.jit"]
    result = subprocess.run(
        [sys.executable, TOOL, "--rounds", "1", "--num-iterations", "3", "--tiny", "--variants", *variants],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    rows = {line.split("|")[1].strip(): line.split("|")[2:-1] for line in result.stdout.splitlines() if "|" in line}
    assert [cell.strip() for cell in rows["host time"]] == variants
    for row in ("rollout (ms per call)", "compute_gae (ms per call)", "update (ms per call)", "rollout first call (s)",
                "update first call (s)", "iteration 0 (s)", "iterations 1-2, mean (ms)"):
        assert all(float(cell) > 0 for cell in rows[row]), row
    assert [cell.strip() for cell in rows["calls timed per run (rollout / compute_gae / update)"]] == ["3 / 3 / 3"] * 3


def test_host_time_tool_passes_on_a_script_error_as_one_line():
    result = subprocess.run(
        [sys.executable, TOOL, "--rounds", "1", "--env-id", "NoSuchEnv-v0", "--variants", "nnx.jit_partial (tree)"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert lines == ["error: unknown env 'NoSuchEnv-v0': not a registered gymnax environment"]
