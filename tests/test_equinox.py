"""Equinox-specific checks: what --jit really compiles, and why with jax.jit rather than eqx.filter_jit."""
import importlib.metadata

import equinox as eqx
import gymnax
import jax
import jax.numpy as jnp

import ppo_equinox
from helpers import table
from test_parity_nnx import new_stats


def test_jit_mode_compiles_rollout_gae_and_update_once_each_with_jax_jit_and_logs_equinox_version(shared_runs):
    """The script's probed run records which jit each of its functions went through and what JAX compiled."""
    run = shared_runs.smoke("ppo_equinox.py")
    assert sorted(run.record["jitted"]) == [["compute_gae", "jax.jit"], ["rollout", "jax.jit"], ["update", "jax.jit"]]
    compiled = [name for name in run.record["jax_compilations"] if name in ("jit(rollout)", "jit(compute_gae)", "jit(update)")]
    assert sorted(compiled) == ["jit(compute_gae)", "jit(rollout)", "jit(update)"]
    system = table(run.texts["system"])
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
