"""ppo_nnx_tree.py against ppo_linen.py: loss terms, gradients and whole iterations through the script's jit_partial
binding, from identical weights.

ppo_nnx_tree pins NNX tree mode in Flax's global config at import, and ppo_nnx / ppo_nnx_cached pin graph mode: one
pytest process imports them all. So this file imports ppo_nnx_tree with the global config put back afterwards (the
other NNX tests keep their graph mode whatever the import order) and runs every test under tree mode set contextually,
which takes precedence over the global config in Flax."""
import functools

import flax
import jax
import jax.numpy as jnp
import pytest
from flax import nnx

import ppo_linen
import reference
from helpers import import_keeping_flax_config
from test_linen import linen_layers
from test_parity_nnx import (
    ROLLOUT_KEY, TINY_ARGS, agent_layers, assert_gradients_close, assert_iteration_parity, linen_iterations, new_stats,
    nnx_agent_like, nnx_layers, update_key,
)
from tolerance import assert_close

ppo_nnx_tree, TREE_PINS = import_keeping_flax_config("ppo_nnx_tree")


@pytest.fixture(autouse=True)
def tree_mode():
    """The mode ppo_nnx_tree pins, for the duration of one test only."""
    assert TREE_PINS == {"nnx_graph_mode": False, "nnx_graph_updates": False}
    with nnx.set_graph_mode(False), nnx.set_graph_updates(False):
        yield
    assert nnx.set_graph_mode.current_value() == flax.config.nnx_graph_mode


def test_importing_the_tree_script_here_leaves_the_graph_mode_pinned_by_ppo_nnx_alone():
    """test_parity_nnx, imported above, imported ppo_nnx (graph mode with graph updates) before ppo_nnx_tree."""
    assert flax.config.nnx_graph_mode is True and flax.config.nnx_graph_updates is True
    assert nnx.set_graph_mode.current_value() is False and nnx.set_graph_updates.current_value() is False


@pytest.mark.parametrize("clip_vloss,norm_adv", [(True, True), (False, False)])
def test_tree_mode_loss_terms_and_gradients_parity_with_linen_on_identical_weights_and_minibatch(clip_vloss, norm_adv):
    linen_agent, params = ppo_linen.make_agent(jax.random.PRNGKey(3), obs_dim=4, action_dim=3, model_size="small")
    agent = nnx_agent_like(params, obs_dim=4, action_dim=3, module=ppo_nnx_tree)
    mb = reference.minibatch_like()
    coefs = dict(clip_coef=0.2, clip_vloss=clip_vloss, norm_adv=norm_adv, ent_coef=0.01, vf_coef=0.5)
    (linen_loss, linen_info), linen_grads = jax.value_and_grad(ppo_linen.ppo_loss, has_aux=True)(
        params, linen_agent, ppo_linen.Batch(**{k: jnp.asarray(v) for k, v in mb.items()}), **coefs
    )
    loss_fn = functools.partial(ppo_nnx_tree.ppo_loss, **coefs)
    loss_and_grad = nnx.jit(nnx.value_and_grad(loss_fn, has_aux=True), graph=False)
    (loss, info), grads = loss_and_grad(agent, ppo_nnx_tree.Batch(**{k: jnp.asarray(v) for k, v in mb.items()}))
    assert float(info.clipfrac) > 0
    assert_close(loss, linen_loss, "loss")
    for name, value in info._asdict().items():
        assert_close(value, getattr(linen_info, name), name)
    # in tree mode the gradients come back as an Agent pytree holding them, not as a State
    assert isinstance(grads, ppo_nnx_tree.Agent)
    assert_gradients_close(
        {head: nnx_layers(grads, head) for head in ("actor", "critic")},
        {head: linen_layers(linen_grads, head) for head in ("actor", "critic")},
    )


@pytest.mark.slow  # iteration parity: the fast subset proves each framework's parity on one minibatch
def test_tree_mode_two_iterations_through_jit_partial_match_linen_from_identical_weights():
    """The script's executables (rollout and update bound once by nnx.jit_partial, graph=False; GAE under jax.jit)
    for two iterations: each matches Linen, and the caller's agent, optimizer and rollout state are updated in place."""
    (env, env_params, obs, env_state), params, linen = linen_iterations(2)
    args = ppo_nnx_tree.Args(**TINY_ARGS)
    agent = nnx_agent_like(params, obs.shape[1], 2, module=ppo_nnx_tree)
    optimizer = nnx.Optimizer(agent, ppo_nnx_tree.make_optimizer(args), wrt=nnx.Param)
    state = ppo_nnx_tree.RolloutState(env_state, obs, ROLLOUT_KEY, new_stats(ppo_nnx_tree, args.num_envs))
    rollout_fn = functools.partial(
        ppo_nnx_tree.rollout, env=env, env_params=env_params, num_steps=args.num_steps, bootstrap_truncated=True
    )
    rollout_fn = nnx.jit_partial(rollout_fn, agent, state, graph=False)
    gae_fn = jax.jit(functools.partial(ppo_nnx_tree.compute_gae, gamma=0.99, gae_lambda=0.95, bootstrap_truncated=True))
    update_fn = nnx.jit_partial(functools.partial(ppo_nnx_tree.update, args=args), agent, optimizer, graph=False)
    for iteration, linen_iteration in enumerate(linen):
        storage, last_value, _ = rollout_fn()
        losses, _ = update_fn(storage, *gae_fn(storage, last_value), update_key(iteration))
        assert_iteration_parity(
            linen_iteration, storage, last_value, state.stats.get_value(), losses, agent_layers(agent)
        )
        steps = (iteration + 1) * args.update_epochs * args.num_minibatches
        assert int(optimizer.step.get_value()) == steps
