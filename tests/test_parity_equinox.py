"""ppo_equinox.py against ppo_linen.py (same weights, same batch, same rollout)."""
import functools

import equinox as eqx
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax.training.train_state import TrainState

import ppo_equinox
import ppo_linen
import reference
from test_linen import linen_layers
from test_parity_nnx import TINY_ARGS, TOLERANCE, assert_layers_close, new_stats

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
    linen_agent, params = ppo_linen.make_agent(jax.random.PRNGKey(3), obs_dim=4, action_dim=3, model_size="small")
    agent = equinox_agent_like(params, obs_dim=4, action_dim=3)
    mb = reference.minibatch_like()
    coefs = (0.2, clip_vloss, norm_adv, 0.01, 0.5)
    (linen_loss, linen_info), linen_grads = jax.value_and_grad(ppo_linen.ppo_loss, has_aux=True)(
        params, linen_agent, ppo_linen.Batch(**{k: jnp.asarray(v) for k, v in mb.items()}), *coefs
    )
    (loss, info), grads = eqx.filter_value_and_grad(ppo_equinox.ppo_loss, has_aux=True)(
        agent, ppo_equinox.Batch(**{k: jnp.asarray(v) for k, v in mb.items()}), *coefs
    )
    assert float(info.clipfrac) > 0
    np.testing.assert_allclose(loss, linen_loss, **TOLERANCE)
    for name, value in info._asdict().items():
        np.testing.assert_allclose(value, getattr(linen_info, name), **TOLERANCE, err_msg=name)
    assert_layers_close(
        {head: equinox_layers(grads, head) for head in HEADS},
        {head: linen_layers(linen_grads, head) for head in HEADS},
    )


@pytest.mark.parametrize("bootstrap_truncated", [True, False])
def test_gae_parity_with_linen_and_numpy_reference(bootstrap_truncated):
    r = reference.rollout_like()
    arrays = dict(
        obs=None, actions=None, logprobs=None, values=jnp.asarray(r["values"]), rewards=jnp.asarray(r["rewards"]),
        terminated=jnp.asarray(r["terminated"]), truncated=jnp.asarray(r["truncated"]),
        final_values=jnp.asarray(r["final_values"]),
    )
    last_value = jnp.asarray(r["last_value"])
    advantages, returns = ppo_equinox.compute_gae(
        ppo_equinox.Storage(**arrays), last_value, 0.99, 0.95, bootstrap_truncated
    )
    linen_adv, linen_ret = ppo_linen.compute_gae(ppo_linen.Storage(**arrays), last_value, 0.99, 0.95, bootstrap_truncated)
    np.testing.assert_array_equal(advantages, linen_adv)
    np.testing.assert_array_equal(returns, linen_ret)
    expected_adv, expected_ret = reference.gae(**r, gamma=0.99, gae_lambda=0.95, bootstrap_truncated=bootstrap_truncated)
    np.testing.assert_allclose(advantages, expected_adv, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(returns, expected_ret, rtol=1e-5, atol=1e-6)


def test_init_seeded_orthogonal_with_ppo_gains_and_zero_biases():
    agent = ppo_equinox.make_agent(jax.random.PRNGKey(0), obs_dim=400, action_dim=5, model_size="small")
    heads = {head: equinox_layers(agent, head) for head in HEADS}
    assert [kernel.shape for kernel, _ in heads["actor"]] == [(400, 64), (64, 64), (64, 5)]
    reference.assert_ppo_init(heads, num_hidden=2)
    same = ppo_equinox.make_agent(jax.random.PRNGKey(0), obs_dim=400, action_dim=5, model_size="small")
    other = ppo_equinox.make_agent(jax.random.PRNGKey(1), obs_dim=400, action_dim=5, model_size="small")
    kernel = lambda a: equinox_layers(a, "actor")[0][0]
    assert np.array_equal(kernel(agent), kernel(same)) and not np.array_equal(kernel(agent), kernel(other))


def test_rollout_and_update_parity_with_linen_from_identical_weights():
    """One rollout, GAE and update (4 Adam steps, annealed LR) from the same weights, env state and keys; the Equinox
    side bound and run under eqx.filter_jit as the script's main block does."""
    env, env_params = gymnax.make("CartPole-v1")
    env_params = env_params.replace(max_steps_in_episode=5)
    args = ppo_linen.Args(**TINY_ARGS)
    obs, env_state = ppo_linen.env_reset(jax.random.PRNGKey(0), env, env_params, args.num_envs)
    linen_agent, params = ppo_linen.make_agent(jax.random.PRNGKey(1), obs.shape[1], 2, "small")
    train_state = TrainState.create(apply_fn=linen_agent.apply, params=params, tx=ppo_linen.make_optimizer(args))
    carry = ppo_linen.RolloutCarry(params, env_state, obs, jax.random.PRNGKey(2), new_stats(ppo_linen, args.num_envs))
    linen_carry, linen_storage, linen_last = ppo_linen.rollout(carry, linen_agent, env, env_params, args.num_steps)
    linen_adv, linen_ret = ppo_linen.compute_gae(linen_storage, linen_last, 0.99, 0.95, True)
    linen_b = ppo_linen.flatten_batch(linen_storage, linen_adv, linen_ret)
    train_state, linen_losses, _ = ppo_linen.update(train_state, linen_b, jax.random.PRNGKey(4), linen_agent, args)

    eqx_args = ppo_equinox.Args(**TINY_ARGS)
    agent = equinox_agent_like(params, obs.shape[1], 2)
    optimizer = ppo_equinox.make_optimizer(eqx_args)
    state = ppo_equinox.TrainState(agent, optimizer.init(eqx.filter(agent, eqx.is_array)))
    carry = ppo_equinox.RolloutCarry(
        agent, env_state, obs, jax.random.PRNGKey(2), new_stats(ppo_equinox, args.num_envs)
    )
    rollout_fn = functools.partial(ppo_equinox.rollout, env=env, env_params=env_params, num_steps=args.num_steps)
    gae_fn = functools.partial(ppo_equinox.compute_gae, gamma=0.99, gae_lambda=0.95, bootstrap_truncated=True)
    update_fn = functools.partial(ppo_equinox.update, optimizer=optimizer, args=eqx_args)
    rollout_fn, gae_fn, update_fn = eqx.filter_jit(rollout_fn), eqx.filter_jit(gae_fn), eqx.filter_jit(update_fn)
    carry, storage, last_value = rollout_fn(carry)
    for name, value in storage._asdict().items():
        np.testing.assert_allclose(value, getattr(linen_storage, name), **TOLERANCE, err_msg=name)
    np.testing.assert_allclose(last_value, linen_last, **TOLERANCE)
    for name, value in carry.stats._asdict().items():
        np.testing.assert_allclose(value, getattr(linen_carry.stats, name), **TOLERANCE, err_msg=name)
    b = ppo_equinox.flatten_batch(storage, *gae_fn(storage, last_value))
    state, losses, _ = update_fn(state, b, jax.random.PRNGKey(4))
    for name, value in losses._asdict().items():
        np.testing.assert_allclose(value, getattr(linen_losses, name), **TOLERANCE, err_msg=name)
    assert float(state.opt_state[1].count) == args.update_epochs * args.num_minibatches
    assert_layers_close(
        {head: equinox_layers(state.agent, head) for head in HEADS},
        {head: linen_layers(train_state.params, head) for head in HEADS},
    )
