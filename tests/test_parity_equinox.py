"""ppo_equinox.py against ppo_linen.py (same weights, same batch, same rollout)."""
import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ppo_equinox
import reference
from test_linen import linen_layers
from test_parity_nnx import (
    ROLLOUT_KEY, TINY_ARGS, assert_gae_parity_with_linen_and_numpy_reference, assert_iteration_parity,
    assert_loss_parity, linen_iterations, linen_loss_case, new_stats, update_key,
)

HEADS = ("actor", "critic")


def equinox_layers(agent, head):
    """The (kernel (in, out), bias) list of the actor or critic MLP, in layer order (Equinox stores weight (out, in))."""
    return [(np.asarray(layer.weight).T, np.asarray(layer.bias)) for layer in getattr(agent, head).layers]


def equinox_agent_like(params, obs_dim, action_dim):
    """An Equinox agent holding exactly the Linen agent's weights."""
    agent = ppo_equinox.make_agent(jax.random.PRNGKey(99), obs_dim, action_dim, "small")
    leaves = lambda a: [x for head in HEADS for layer in getattr(a, head).layers for x in (layer.weight, layer.bias)]
    linen = [jnp.asarray(x) for head in HEADS for kernel, bias in linen_layers(params, head) for x in (kernel.T, bias)]
    return eqx.tree_at(leaves, agent, linen)


@pytest.mark.parametrize("clip_vloss,norm_adv", [(True, True), (False, False)])
def test_loss_terms_and_gradients_parity_with_linen_on_identical_weights_and_minibatch(clip_vloss, norm_adv):
    params, mb, coefs, linen = linen_loss_case(clip_vloss, norm_adv)
    agent = equinox_agent_like(params, obs_dim=4, action_dim=3)
    (loss, info), grads = eqx.filter_value_and_grad(ppo_equinox.ppo_loss, has_aux=True)(
        agent, ppo_equinox.Batch(**mb), *coefs
    )
    assert_loss_parity(loss, info, {head: equinox_layers(grads, head) for head in HEADS}, linen)


@pytest.mark.parametrize("bootstrap_truncated", [True, False])
def test_gae_parity_with_linen_and_numpy_reference(bootstrap_truncated):
    assert_gae_parity_with_linen_and_numpy_reference(ppo_equinox, bootstrap_truncated)


def test_init_seeded_orthogonal_with_ppo_gains_and_zero_biases():
    agent = ppo_equinox.make_agent(jax.random.PRNGKey(0), obs_dim=400, action_dim=5, model_size="small")
    heads = {head: equinox_layers(agent, head) for head in HEADS}
    assert [kernel.shape for kernel, _ in heads["actor"]] == [(400, 64), (64, 64), (64, 5)]
    reference.assert_ppo_init(heads, num_hidden=2)
    same = ppo_equinox.make_agent(jax.random.PRNGKey(0), obs_dim=400, action_dim=5, model_size="small")
    other = ppo_equinox.make_agent(jax.random.PRNGKey(1), obs_dim=400, action_dim=5, model_size="small")
    kernel = lambda a: equinox_layers(a, "actor")[0][0]
    assert np.array_equal(kernel(agent), kernel(same)) and not np.array_equal(kernel(agent), kernel(other))


@pytest.mark.slow  # iteration parity: the fast subset proves each framework's parity on one minibatch
def test_rollout_and_update_parity_with_linen_from_identical_weights():
    """One rollout, GAE and update (4 Adam steps, annealed LR) from the same weights, env state and keys; the Equinox
    side bound and run under jax.jit as the script's main block does."""
    (env, env_params, obs, env_state), params, (linen,) = linen_iterations(1)
    args = ppo_equinox.Args(**TINY_ARGS)
    agent = equinox_agent_like(params, obs.shape[1], 2)
    optimizer = ppo_equinox.make_optimizer(args)
    train_state = ppo_equinox.TrainState(agent, optimizer.init(eqx.filter(agent, eqx.is_array)))
    stats = new_stats(ppo_equinox, args.num_envs)
    carry = ppo_equinox.RolloutCarry(env_state, obs, ROLLOUT_KEY, stats)
    rollout_fn = functools.partial(
        ppo_equinox.rollout, env=env, env_params=env_params, num_steps=args.num_steps, bootstrap_truncated=True
    )
    gae_fn = functools.partial(ppo_equinox.compute_gae, gamma=0.99, gae_lambda=0.95, bootstrap_truncated=True)
    update_fn = functools.partial(ppo_equinox.update, optimizer=optimizer, args=args)
    rollout_fn, gae_fn, update_fn = jax.jit(rollout_fn), jax.jit(gae_fn), jax.jit(update_fn)
    carry, storage, last_value, _ = rollout_fn(agent, carry)
    train_state, losses, _ = update_fn(train_state, storage, *gae_fn(storage, last_value), update_key(0))
    assert float(train_state.opt_state[1].count) == args.update_epochs * args.num_minibatches
    new_layers = {head: equinox_layers(train_state.agent, head) for head in HEADS}
    assert_iteration_parity(linen, storage, last_value, carry.stats, losses, new_layers)
