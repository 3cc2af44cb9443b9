"""NNX-specific checks: graph mode pinned by the scripts, and which NNX entry points each compile mode really uses."""
import os
import subprocess
import sys

import pytest

from helpers import ROOT

NNX_SCRIPTS = ["ppo_nnx.py", "ppo_nnx_cached.py"]

# Flip Flax's defaults before the script is imported: the script must set graph mode back on explicitly.
GRAPH_MODE_PROBE = """
import flax
from flax import nnx
flax.config.update("nnx_graph_mode", False)
flax.config.update("nnx_graph_updates", False)
import {module}
print(flax.config.nnx_graph_mode, flax.config.nnx_graph_updates,
      nnx.set_graph_mode.current_value(), nnx.set_graph_updates.current_value())
"""


@pytest.mark.parametrize("script", NNX_SCRIPTS)
def test_script_pins_graph_mode_and_graph_updates_whatever_the_flax_default(script):
    code = GRAPH_MODE_PROBE.format(module=script[: -len(".py")])
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": ROOT})
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["True"] * 4


def nnx_probe(shared_runs, script, eager):
    """The script's probed run: its eager run, or its fast smoke run (tests/probe.py wraps nnx.jit and cached_partial)."""
    return shared_runs.eager(script) if eager else shared_runs.smoke(script)


@pytest.mark.parametrize(
    "script,eager,jitted,bound",
    [
        pytest.param("ppo_nnx.py", True, [], [], marks=pytest.mark.slow),
        ("ppo_nnx.py", False, ["rollout", "compute_gae", "update"], []),
        ("ppo_nnx_cached.py", False, ["rollout", "compute_gae", "update"], ["Agent+RolloutState", "Agent+Optimizer"]),
    ],
)
def test_compile_mode_uses_the_nnx_entry_points_it_claims(script, eager, jitted, bound, shared_runs):
    """--no-jit never reaches nnx.jit; the cached script binds the agent, rollout state and optimizer once through
    nnx.cached_partial and calls the bound functions every iteration (Flax raises if nnx.jit did not use the cache)."""
    run = nnx_probe(shared_runs, script, eager)
    iterations = len(run.scalars["time/iteration"])
    assert sorted(run.record["nnx_jitted"]) == sorted(jitted)
    assert run.record["nnx_bound"] == bound
    assert run.record["nnx_calls"] == {key: iterations for key in bound}
