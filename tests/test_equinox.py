"""Equinox-specific checks: what --jit really compiles, and why with jax.jit rather than eqx.filter_jit."""
import importlib.metadata
import json
import os
import re
import subprocess
import sys

import equinox as eqx
import gymnax
import jax
import jax.numpy as jnp

import ppo_equinox
from helpers import ROOT, TINY, read_run, table
from test_parity_nnx import new_stats

# Run ppo_equinox.py as __main__ with jax.jit and eqx.filter_jit wrapped to record which of the script's functions
# (bound with functools.partial) each is given.
ENTRY_POINT_PROBE = """
import functools, json, runpy, sys
import equinox as eqx
import jax

jitted, real_jit, real_filter_jit = [], jax.jit, eqx.filter_jit

def recording(label, jit):
    def wrapper(fun, **kwargs):
        if isinstance(fun, functools.partial):
            jitted.append([fun.func.__name__, label])
        return jit(fun, **kwargs)
    return wrapper

jax.jit, eqx.filter_jit = recording("jax.jit", real_jit), recording("eqx.filter_jit", real_filter_jit)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
print("PROBE", json.dumps(jitted))
"""


def test_jit_mode_compiles_rollout_gae_and_update_once_each_with_jax_jit_and_logs_equinox_version(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", ENTRY_POINT_PROBE, os.path.join(ROOT, "ppo_equinox.py"), *TINY,
         "--num-iterations", "3", "--log-dir", str(tmp_path), "--run-name", "probe"],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "JAX_LOG_COMPILES": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    jitted = json.loads(result.stdout.split("PROBE ", 1)[1])
    assert sorted(jitted) == [["compute_gae", "jax.jit"], ["rollout", "jax.jit"], ["update", "jax.jit"]]
    compiled = re.findall(r"Compiling jit\((rollout|compute_gae|update)\)", result.stderr)
    assert sorted(compiled) == ["compute_gae", "rollout", "update"]
    system = table(read_run(str(tmp_path / "probe"))[1]["system"])
    assert system["equinox"] == importlib.metadata.version("equinox") and system["compile_mode"] == "jit"


def test_the_train_state_and_rollout_carry_hold_only_arrays_so_jax_jit_takes_them_as_they_are():
    """What lets the script use jax.jit on the Equinox model: partitioning what the compiled calls take leaves nothing
    static."""
    env, env_params = gymnax.make("CartPole-v1")
    obs, env_state = ppo_equinox.env_reset(jax.random.PRNGKey(0), env, env_params, 4)
    agent = ppo_equinox.make_agent(jax.random.PRNGKey(1), obs.shape[1], 2, "small")
    optimizer = ppo_equinox.make_optimizer(ppo_equinox.Args())
    train_state = ppo_equinox.TrainState(agent, optimizer.init(eqx.filter(agent, eqx.is_array)))
    carry = ppo_equinox.RolloutCarry(env_state, obs, jax.random.PRNGKey(2), new_stats(ppo_equinox, 4))
    for tree in (train_state, carry):
        arrays, static = eqx.partition(tree, eqx.is_array)
        assert jax.tree.leaves(static) == [] and len(jax.tree.leaves(arrays)) == len(jax.tree.leaves(tree)) > 0


def test_filter_jit_returns_only_when_its_computation_is_done_unlike_jax_jit():
    """Why the script compiles with jax.jit: Equinox 0.13's filter_jit blocks on an output of every call (to re-raise
    its runtime errors), jax.jit returns at dispatch. With filter_jit each of the three calls of an iteration would be a
    host synchronisation."""

    def slow(x):
        return jax.lax.fori_loop(0, 200, lambda _, y: jnp.tanh(y @ y), x)

    x = jnp.full((256, 256), 0.01)
    for jit in (jax.jit, eqx.filter_jit):
        fn = jit(slow)
        fn(x).block_until_ready()  # compile
        assert fn(x).is_ready() == (jit is eqx.filter_jit), jit.__name__
