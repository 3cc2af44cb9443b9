"""NNX-specific checks: the mode each script pins, and which NNX entry points each compile mode really uses."""
import json
import os
import subprocess
import sys

import pytest

from helpers import ROOT, TINY, read_run, table

# each NNX script and the mode it pins: graph mode with graph updates, or tree mode
PINNED_MODE = {"ppo_nnx.py": True, "ppo_nnx_cached.py": True, "ppo_nnx_tree.py": False}

# Flip Flax's defaults to the other mode before the script is imported: the script must set its own mode explicitly.
MODE_PIN_PROBE = """
import flax
from flax import nnx
flax.config.update("nnx_graph_mode", {flipped})
flax.config.update("nnx_graph_updates", {flipped})
import {module}
print(flax.config.nnx_graph_mode, flax.config.nnx_graph_updates,
      nnx.set_graph_mode.current_value(), nnx.set_graph_updates.current_value())
"""

# Run a script as __main__ with nnx.jit, nnx.cached_partial, nnx.jit_partial and jax.jit wrapped to record what they are
# given (jax.jit: the script's own functions, bound with functools.partial) and called with. After iteration 0 (its one
# host fetch) it also counts XLA compilations, and the calls into NNX's graph machinery (flax/nnx/graphlib.py: graph
# traversal, flatten/unflatten, caches) made inside the compiled functions' calls.
ENTRY_POINT_PROBE = """
import collections, cProfile, functools, json, os, runpy, sys
import jax
from flax import nnx

jitted, bound, calls = [], [], collections.Counter()
real_jit, real_cached_partial, real_jit_partial, real_jax_jit = nnx.jit, nnx.cached_partial, nnx.jit_partial, jax.jit
real_device_get, fetches, compiles, profile, depth = jax.device_get, [], [], cProfile.Profile(), [0]

def record_jit(fun, kwargs):
    graph = kwargs.get("graph")
    jitted.append([fun.func.__name__, nnx.set_graph_mode.current_value() if graph is None else graph])

def counted(key, fun):
    def call(*args):
        calls[key] += 1
        return fun(*args)
    return call

def profiled(fun):
    def call(*args):
        depth[0] += 1
        if depth[0] == 1 and fetches:
            profile.enable()
        try:
            return fun(*args)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                profile.disable()
    return call

def jit(fun, **kwargs):
    record_jit(fun, kwargs)
    return profiled(real_jit(fun, **kwargs))

def jax_jit(fun, **kwargs):
    if isinstance(fun, functools.partial):
        jitted.append([fun.func.__name__, "jax.jit"])
    return real_jax_jit(fun, **kwargs)

def cached_partial(fun, *objects):
    key = "+".join(type(obj).__name__ for obj in objects)
    bound.append(key)
    return profiled(counted(key, real_cached_partial(fun, *objects)))

def jit_partial(fun, *objects, **kwargs):
    record_jit(fun, kwargs)
    key = "+".join(type(obj).__name__ for obj in objects)
    bound.append(key)
    return profiled(counted(key, real_jit_partial(fun, *objects, **kwargs)))

def device_get(tree):
    fetches.append(len(fetches))
    return real_device_get(tree)

def on_event(event, duration, **kwargs):
    if event == "/jax/core/compile/backend_compile_duration" and fetches:
        compiles.append(event)

jax.monitoring.register_event_duration_secs_listener(on_event)
nnx.jit, nnx.cached_partial, nnx.jit_partial, jax.device_get = jit, cached_partial, jit_partial, device_get
jax.jit = jax_jit
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
graphlib = os.path.join("flax", "nnx", "graphlib.py")
profile.create_stats()
graph_calls = sum(stat[1] for (path, _, _), stat in profile.stats.items() if path.endswith(graphlib))
print("PROBE", json.dumps({"jitted": jitted, "bound": bound, "calls": calls, "fetches": len(fetches),
                           "compiles_after_iteration_0": len(compiles), "graph_calls_after_iteration_0": graph_calls}))
"""


@pytest.mark.parametrize("script", [  # the fast subset: tree mode, the one that differs from graph mode's default
    pytest.param(script, marks=[] if script == "ppo_nnx_tree.py" else [pytest.mark.slow]) for script in PINNED_MODE
])
def test_script_pins_its_nnx_mode_whatever_the_flax_default(script):
    pinned = PINNED_MODE[script]
    code = MODE_PIN_PROBE.format(module=script[: -len(".py")], flipped=not pinned)
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": ROOT})
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == [str(pinned)] * 4


@pytest.mark.parametrize(
    "script,flags,mode,jitted,bound,graph_work",
    [
        pytest.param("ppo_nnx.py", ["--no-jit"], "none", [], [], None, marks=pytest.mark.slow),
        ("ppo_nnx.py", [], "jit", [["rollout", True], ["compute_gae", "jax.jit"], ["update", True]], [], True),
        (
            "ppo_nnx_cached.py", [], "cached", [["rollout", True], ["compute_gae", "jax.jit"], ["update", True]],
            ["Agent+RolloutState", "Agent+Optimizer"], True,
        ),
        (
            "ppo_nnx_tree.py", [], "tree", [["rollout", False], ["compute_gae", "jax.jit"], ["update", False]],
            ["Agent+RolloutState", "Agent+Optimizer"], False,
        ),
    ],
)
def test_compile_mode_uses_the_nnx_entry_points_it_claims_and_compiles_only_in_iteration_0(
    script, flags, mode, jitted, bound, graph_work, tmp_path
):
    """The compile mode logged is the one tested. --no-jit never reaches nnx.jit; nnx.jit and the cached script run
    in graph mode, the tree script in tree mode; GAE, a function of arrays only, is under jax.jit. The cached and tree scripts bind the agent, rollout state and optimizer
    once (nnx.cached_partial / nnx.jit_partial) and call the bound functions every iteration (Flax raises if a cached
    call's nnx.jit did not use the cache). After iteration 0 nothing compiles, and of the compiled modes only tree
    mode's calls skip NNX's graph machinery entirely."""
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
    assert probe["fetches"] == iterations and probe["compiles_after_iteration_0"] == 0
    assert table(read_run(str(tmp_path / "probe"))[1]["system"])["compile_mode"] == mode
    assert graph_work is None or (probe["graph_calls_after_iteration_0"] > 0) == graph_work
