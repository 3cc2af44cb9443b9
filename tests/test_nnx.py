"""NNX-specific checks: graph mode pinned by the scripts, and which NNX entry points each compile mode really uses."""
import json
import os
import subprocess
import sys

import pytest

from helpers import ROOT, TINY

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

# Run a script as __main__ with nnx.jit and nnx.cached_partial wrapped to record what they are given and called with.
ENTRY_POINT_PROBE = """
import collections, json, runpy, sys
from flax import nnx

jitted, bound, calls = [], [], collections.Counter()
real_jit, real_cached_partial = nnx.jit, nnx.cached_partial

def jit(fun, **kwargs):
    jitted.append(fun.func.__name__)
    return real_jit(fun, **kwargs)

def cached_partial(fun, *objects):
    key = "+".join(type(obj).__name__ for obj in objects)
    bound.append(key)
    cached = real_cached_partial(fun, *objects)
    def counted(*args):
        calls[key] += 1
        return cached(*args)
    return counted

nnx.jit, nnx.cached_partial = jit, cached_partial
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
print("PROBE", json.dumps({"jitted": jitted, "bound": bound, "calls": calls}))
"""


@pytest.mark.parametrize("script", NNX_SCRIPTS)
def test_script_pins_graph_mode_and_graph_updates_whatever_the_flax_default(script):
    code = GRAPH_MODE_PROBE.format(module=script[: -len(".py")])
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": ROOT})
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["True"] * 4


@pytest.mark.parametrize(
    "script,flags,jitted,bound",
    [
        pytest.param("ppo_nnx.py", ["--no-jit"], [], [], marks=pytest.mark.slow),
        ("ppo_nnx.py", [], ["rollout", "compute_gae", "update"], []),
        ("ppo_nnx_cached.py", [], ["rollout", "compute_gae", "update"], ["Agent+RolloutState", "Agent+Optimizer"]),
    ],
)
def test_compile_mode_uses_the_nnx_entry_points_it_claims(script, flags, jitted, bound, tmp_path):
    """--no-jit never reaches nnx.jit; the cached script binds the agent, rollout state and optimizer once through
    nnx.cached_partial and calls the bound functions every iteration (Flax raises if nnx.jit did not use the cache)."""
    iterations = 3
    result = subprocess.run(
        [sys.executable, "-c", ENTRY_POINT_PROBE, os.path.join(ROOT, script), *TINY, *flags,
         "--num-iterations", str(iterations), "--log-dir", str(tmp_path), "--run-name", "probe"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    probe = json.loads(result.stdout.split("PROBE ", 1)[1])
    assert sorted(probe["jitted"]) == sorted(jitted)
    assert probe["bound"] == bound
    assert probe["calls"] == {key: iterations for key in bound}
