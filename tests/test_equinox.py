"""Equinox-specific checks: what --jit really compiles, and eqx.filter_jit's synchronisation, which docs/variants.md states."""
import importlib.metadata
import json
import os
import re
import subprocess
import sys

import equinox as eqx
import jax
import jax.numpy as jnp

from helpers import ROOT, TINY, read_run, table

# Run ppo_equinox.py as __main__ with eqx.filter_jit wrapped to record which functions it is given.
ENTRY_POINT_PROBE = """
import json, runpy, sys
import equinox as eqx

jitted, real_filter_jit = [], eqx.filter_jit

def filter_jit(fun, **kwargs):
    jitted.append(fun.func.__name__)
    return real_filter_jit(fun, **kwargs)

eqx.filter_jit = filter_jit
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
print("PROBE", json.dumps(jitted))
"""


def test_jit_mode_compiles_rollout_gae_and_update_once_each_with_filter_jit_and_logs_equinox_version(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", ENTRY_POINT_PROBE, os.path.join(ROOT, "ppo_equinox.py"), *TINY,
         "--num-iterations", "3", "--log-dir", str(tmp_path), "--run-name", "probe"],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "JAX_LOG_COMPILES": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(json.loads(result.stdout.split("PROBE ", 1)[1])) == ["compute_gae", "rollout", "update"]
    compiled = re.findall(r"Compiling jit\((rollout|compute_gae|update)\)", result.stderr)
    assert sorted(compiled) == ["compute_gae", "rollout", "update"]
    system = table(read_run(str(tmp_path / "probe"))[1]["system"])
    assert system["equinox"] == importlib.metadata.version("equinox") and system["compile_mode"] == "jit"


def test_filter_jit_returns_only_when_its_computation_is_done_unlike_jax_jit():
    """Equinox 0.13's filter_jit blocks on an output of every call (to re-raise its runtime errors); jax.jit returns
    at dispatch. So each eqx.filter_jit call in ppo_equinox.py is a host synchronisation."""

    def slow(x):
        return jax.lax.fori_loop(0, 200, lambda _, y: jnp.tanh(y @ y), x)

    x = jnp.full((256, 256), 0.01)
    for jit in (jax.jit, eqx.filter_jit):
        fn = jit(slow)
        fn(x).block_until_ready()  # compile
        assert fn(x).is_ready() == (jit is eqx.filter_jit), jit.__name__
