"""ppo_nnx.py against ppo_linen.py (same weights, same batch), and ppo_nnx_cached.py against ppo_nnx.py."""
import functools
from typing import Any, NamedTuple

import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from flax.training.train_state import TrainState

import ppo_linen
import ppo_nnx
import ppo_nnx_cached
import reference
from test_linen import linen_layers
from tolerance import assert_array_close, assert_close

TINY_ARGS = dict(num_envs=4, num_steps=16, num_minibatches=2, update_epochs=2)
TOLERANCE = dict(rtol=1e-4, atol=1e-6)
ROLLOUT_KEY = jax.random.PRNGKey(2)


def nnx_layers(agent, head):
    """The (kernel, bias) list of the actor or critic MLP, in layer order."""
    linears = [layer for layer in getattr(agent, head).layers if isinstance(layer, nnx.Linear)]
    return [(np.asarray(layer.kernel.get_value()), np.asarray(layer.bias.get_value())) for layer in linears]


def nnx_agent_like(params, obs_dim, action_dim, module=ppo_nnx):
    """An NNX agent holding exactly the Linen agent's weights."""
    agent = module.make_agent(jax.random.PRNGKey(99), obs_dim, action_dim, "small")
    for head in ("actor", "critic"):
        linears = [layer for layer in getattr(agent, head).layers if isinstance(layer, nnx.Linear)]
        for layer, (kernel, bias) in zip(linears, linen_layers(params, head), strict=True):
            layer.kernel.set_value(jnp.asarray(kernel))
            layer.bias.set_value(jnp.asarray(bias))
    return agent


def assert_layers_close(actual, expected):
    for head in ("actor", "critic"):
        for (kernel, bias), (expected_kernel, expected_bias) in zip(actual[head], expected[head], strict=True):
            np.testing.assert_allclose(kernel, expected_kernel, **TOLERANCE)
            np.testing.assert_allclose(bias, expected_bias, **TOLERANCE)


def assert_gradients_close(actual, expected):
    """Each head's gradients ({head: [(kernel, bias), ...]}) as tests/tolerance.py compares sums of terms."""
    for head in ("actor", "critic"):
        for layer, expected_layer in zip(actual[head], expected[head], strict=True):
            for array, expected_array in zip(layer, expected_layer, strict=True):
                assert_array_close(array, expected_array, head)


def assert_trees_equal(actual, expected):
    """Leaf by leaf, exactly (the classes of the containers may differ: each script defines its own)."""
    for x, y in zip(jax.tree.leaves(actual), jax.tree.leaves(expected), strict=True):
        np.testing.assert_array_equal(x, y)


def new_stats(module, num_envs):
    zeros = jnp.zeros(num_envs)
    return module.EpisodeStats(zeros, zeros.astype(jnp.int32), jnp.zeros(()), jnp.zeros(()), jnp.zeros(()))


def linen_loss_case(clip_vloss, norm_adv):
    """Linen's params, the minibatch, the loss coefficients, and Linen's loss, loss terms and gradients on them."""
    linen_agent, params = ppo_linen.make_agent(jax.random.PRNGKey(3), obs_dim=4, action_dim=3, model_size="small")
    mb = {k: jnp.asarray(v) for k, v in reference.minibatch_like().items()}
    coefs = (0.2, clip_vloss, norm_adv, 0.01, 0.5)
    (loss, info), grads = jax.value_and_grad(ppo_linen.ppo_loss, has_aux=True)(
        params, linen_agent, ppo_linen.Batch(**mb), *coefs
    )
    return params, mb, coefs, (loss, info, grads)


def assert_loss_parity(loss, info, grad_layers, linen):
    """Loss, every loss term and every gradient ({head: layers}) equal Linen's (from linen_loss_case)."""
    linen_loss, linen_info, linen_grads = linen
    assert float(info.clipfrac) > 0
    assert_close(loss, linen_loss, "loss")
    for name, value in info._asdict().items():
        assert_close(value, getattr(linen_info, name), name)
    assert_gradients_close(grad_layers, {head: linen_layers(linen_grads, head) for head in ("actor", "critic")})


@pytest.mark.parametrize("clip_vloss,norm_adv", [(True, True), (False, False)])
def test_loss_terms_and_gradients_parity_with_linen_on_identical_weights_and_minibatch(clip_vloss, norm_adv):
    params, mb, coefs, linen = linen_loss_case(clip_vloss, norm_adv)
    agent = nnx_agent_like(params, obs_dim=4, action_dim=3)
    (loss, info), grads = nnx.value_and_grad(ppo_nnx.ppo_loss, has_aux=True)(agent, ppo_nnx.Batch(**mb), *coefs)
    grad_agent = nnx.merge(nnx.graphdef(agent), grads)
    assert_loss_parity(loss, info, {head: nnx_layers(grad_agent, head) for head in ("actor", "critic")}, linen)


def assert_gae_parity_with_linen_and_numpy_reference(module, bootstrap_truncated):
    """`module.compute_gae` equals Linen's bit for bit and the numpy reference within tolerance."""
    r = reference.rollout_like()
    arrays = dict(
        obs=None, actions=None, logprobs=None, values=jnp.asarray(r["values"]), rewards=jnp.asarray(r["rewards"]),
        terminated=jnp.asarray(r["terminated"]), truncated=jnp.asarray(r["truncated"]),
        final_values=jnp.asarray(r["final_values"]),
    )
    last_value = jnp.asarray(r["last_value"])
    advantages, returns = module.compute_gae(module.Storage(**arrays), last_value, 0.99, 0.95, bootstrap_truncated)
    linen_adv, linen_ret = ppo_linen.compute_gae(ppo_linen.Storage(**arrays), last_value, 0.99, 0.95, bootstrap_truncated)
    np.testing.assert_array_equal(advantages, linen_adv)
    np.testing.assert_array_equal(returns, linen_ret)
    expected_adv, expected_ret = reference.gae(**r, gamma=0.99, gae_lambda=0.95, bootstrap_truncated=bootstrap_truncated)
    np.testing.assert_allclose(advantages, expected_adv, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(returns, expected_ret, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bootstrap_truncated", [True, False])
def test_gae_parity_with_linen_and_numpy_reference(bootstrap_truncated):
    assert_gae_parity_with_linen_and_numpy_reference(ppo_nnx, bootstrap_truncated)


@pytest.mark.parametrize("model_size", ["small", "medium"])
def test_init_parity_seeded_orthogonal_with_ppo_gains_and_zero_biases(model_size):
    agent = ppo_nnx.make_agent(jax.random.PRNGKey(0), obs_dim=400, action_dim=5, model_size=model_size)
    heads = {head: nnx_layers(agent, head) for head in ("actor", "critic")}
    reference.assert_ppo_init(heads, len(ppo_nnx.MODEL_SIZES[model_size]))
    same = ppo_nnx.make_agent(jax.random.PRNGKey(0), obs_dim=400, action_dim=5, model_size=model_size)
    other = ppo_nnx.make_agent(jax.random.PRNGKey(1), obs_dim=400, action_dim=5, model_size=model_size)
    kernel = lambda a: nnx_layers(a, "actor")[0][0]
    assert np.array_equal(kernel(agent), kernel(same)) and not np.array_equal(kernel(agent), kernel(other))


class LinenIteration(NamedTuple):
    storage: Any
    last_value: Any
    stats: Any
    losses: Any
    params: Any


def linen_iterations(num_iterations):
    """The first `num_iterations` (at most LINEN_ITERATIONS) of linen_reference_run, with its env, start and params."""
    start, params, iterations = linen_reference_run()
    assert num_iterations <= len(iterations)
    return start, params, iterations[:num_iterations]


LINEN_ITERATIONS = 2  # the most iterations a parity test compares


@functools.cache  # once per session: the NNX, NNX tree and Equinox parity tests compare with the same arrays
def linen_reference_run(num_iterations=LINEN_ITERATIONS):
    """Linen's rollout, GAE and update from fixed weights, env state and keys (CartPole-v1 episodes cut at 5 steps,
    4 Adam steps per update, annealed LR): the env, its start, the initial params and each iteration's results."""
    env, env_params = gymnax.make("CartPole-v1")
    env_params = env_params.replace(max_steps_in_episode=5)
    args = ppo_linen.Args(**TINY_ARGS)
    obs, env_state = ppo_linen.env_reset(jax.random.PRNGKey(0), env, env_params, args.num_envs)
    linen_agent, params = ppo_linen.make_agent(jax.random.PRNGKey(1), obs.shape[1], 2, "small")
    train_state = TrainState.create(apply_fn=linen_agent.apply, params=params, tx=ppo_linen.make_optimizer(args))
    carry = ppo_linen.RolloutCarry(env_state, obs, ROLLOUT_KEY, new_stats(ppo_linen, args.num_envs))
    iterations = []
    for iteration in range(num_iterations):
        carry, storage, last_value, _ = ppo_linen.rollout(
            train_state.params, carry, linen_agent, env, env_params, args.num_steps, True
        )
        advantages, returns = ppo_linen.compute_gae(storage, last_value, 0.99, 0.95, True)
        train_state, losses, _ = ppo_linen.update(
            train_state, storage, advantages, returns, update_key(iteration), linen_agent, args
        )
        iterations.append(LinenIteration(storage, last_value, carry.stats, losses, train_state.params))
    return (env, env_params, obs, env_state), params, iterations


def update_key(iteration):
    return jax.random.PRNGKey(4 + iteration)


def assert_iteration_parity(linen, storage, last_value, stats, losses, new_layers):
    """One iteration's storage, V(last obs), episode stats, losses and updated weights ({head: layers}) against
    Linen's."""
    for name, value in storage._asdict().items():
        np.testing.assert_allclose(value, getattr(linen.storage, name), **TOLERANCE, err_msg=name)
    np.testing.assert_allclose(last_value, linen.last_value, **TOLERANCE)
    for name, value in stats._asdict().items():
        np.testing.assert_allclose(value, getattr(linen.stats, name), **TOLERANCE, err_msg=name)
    for name, value in losses._asdict().items():
        assert_close(value, getattr(linen.losses, name), name)
    assert_layers_close(new_layers, {head: linen_layers(linen.params, head) for head in ("actor", "critic")})


def agent_layers(agent):
    return {head: nnx_layers(agent, head) for head in ("actor", "critic")}


@pytest.mark.slow  # iteration parity: the fast subset proves each framework's parity on one minibatch
def test_rollout_and_update_parity_with_linen_from_identical_weights():
    """One rollout, GAE and update (4 Adam steps, annealed LR) from the same weights, env state and keys."""
    (env, env_params, obs, env_state), params, (linen,) = linen_iterations(1)
    args = ppo_nnx.Args(**TINY_ARGS)
    agent = nnx_agent_like(params, obs.shape[1], 2)
    optimizer = nnx.Optimizer(agent, ppo_nnx.make_optimizer(args), wrt=nnx.Param)
    state = ppo_nnx.RolloutState(env_state, obs, ROLLOUT_KEY, new_stats(ppo_nnx, args.num_envs))
    storage, last_value, _ = ppo_nnx.rollout(agent, state, env, env_params, args.num_steps, True)
    advantages, returns = ppo_nnx.compute_gae(storage, last_value, 0.99, 0.95, True)
    losses, _ = ppo_nnx.update(agent, optimizer, storage, advantages, returns, update_key(0), args)
    assert_iteration_parity(linen, storage, last_value, state.stats.get_value(), losses, agent_layers(agent))
    assert int(optimizer.step.get_value()) == args.update_epochs * args.num_minibatches


def training_setup(module, num_steps):
    """Agent, optimizer and rollout state of `module`, seeded like its main block."""
    env, env_params = gymnax.make("CartPole-v1")
    args = module.Args(**TINY_ARGS)
    key, param_key, env_key = jax.random.split(jax.random.PRNGKey(1), 3)
    obs, env_state = module.env_reset(env_key, env, env_params, args.num_envs)
    agent = module.make_agent(param_key, obs.shape[1], env.action_space(env_params).n, "small")
    optimizer = nnx.Optimizer(agent, module.make_optimizer(args), wrt=nnx.Param)
    state = module.RolloutState(env_state, obs, key, new_stats(module, args.num_envs))
    rollout_fn = functools.partial(
        module.rollout, env=env, env_params=env_params, num_steps=num_steps, bootstrap_truncated=True
    )
    update_fn = functools.partial(module.update, args=args)
    return agent, optimizer, state, nnx.jit(rollout_fn), nnx.jit(update_fn)


@pytest.mark.slow  # iteration parity: the fast subset proves each framework's parity on one minibatch
def test_cached_partial_parity_with_nnx_jit_over_two_iterations():
    """ppo_nnx_cached's binding (objects bound once, updated in place) gives ppo_nnx's results."""
    agent, optimizer, state, rollout_fn, update_fn = training_setup(ppo_nnx, TINY_ARGS["num_steps"])
    cached_agent, cached_optimizer, cached_state, cached_rollout, cached_update = training_setup(
        ppo_nnx_cached, TINY_ARGS["num_steps"]
    )
    cached_rollout = nnx.cached_partial(cached_rollout, cached_agent, cached_state)
    cached_update = nnx.cached_partial(cached_update, cached_agent, cached_optimizer)
    gae_fn = jax.jit(functools.partial(ppo_nnx.compute_gae, gamma=0.99, gae_lambda=0.95, bootstrap_truncated=True))
    for _ in range(2):
        storage, last_value, update_key = rollout_fn(agent, state)
        assert_trees_equal(cached_rollout(), (storage, last_value, update_key))
        advantages, returns = gae_fn(storage, last_value)
        losses, explained_var = update_fn(agent, optimizer, storage, advantages, returns, update_key)
        cached_losses, cached_explained_var = cached_update(storage, advantages, returns, update_key)
        assert_trees_equal((cached_losses, cached_explained_var), (losses, explained_var))
        # the cached functions updated the caller's own objects, in place
        assert_trees_equal((cached_agent, cached_optimizer, cached_state), (agent, optimizer, state))
    assert int(cached_optimizer.step.get_value()) == 2 * TINY_ARGS["update_epochs"] * TINY_ARGS["num_minibatches"]
