"""ppo_continuous_nnx.py against the reference, ppo_continuous_linen.py: the same weights and minibatch give the same
loss, terms and gradients in tree mode (tests/continuous_case.py); the init is
seeded orthogonal with the PPO gains and a zero log-std.

The script pins NNX tree mode in Flax's global config at import: it is imported with the global config put back
afterwards and every test runs under tree mode set contextually (as tests/test_parity_nnx_tree.py does)."""

import flax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

import continuous_case
import reference
from helpers import import_keeping_flax_config

ppo_continuous_nnx, TREE_PINS = import_keeping_flax_config("ppo_continuous_nnx")
HEADS = ("actor_mean", "critic")


@pytest.fixture(autouse=True)
def tree_mode():
    """The mode ppo_continuous_nnx pins, for the duration of one test only."""
    assert TREE_PINS == {"nnx_graph_mode": False, "nnx_graph_updates": False}
    with nnx.set_graph_mode(False), nnx.set_graph_updates(False):
        yield
    assert nnx.set_graph_mode.current_value() == flax.config.nnx_graph_mode


@pytest.fixture(autouse=True)
def full_float32_matmuls():
    """The scripts' matmul precision (a GPU's default, TF32, would round both sides past the tolerance)."""
    with jax.default_matmul_precision("highest"):
        yield


def nnx_layers(agent, head):
    """[(kernel (in, out), bias)] of `head` as numpy, in layer order (of the parameters, or of gradients held alike)."""
    linears = [layer for layer in getattr(agent, head).layers if isinstance(layer, nnx.Linear)]
    return [(np.asarray(layer.kernel.get_value()), np.asarray(layer.bias.get_value())) for layer in linears]


def nnx_agent_of(params):
    """An NNX agent holding the Linen `params`, log-std included."""
    agent = ppo_continuous_nnx.make_agent(
        jax.random.PRNGKey(99), continuous_case.OBS_DIM, continuous_case.ACTION_DIM, "small"
    )
    for head in HEADS:
        linears = [layer for layer in getattr(agent, head).layers if isinstance(layer, nnx.Linear)]
        for layer, (kernel, bias) in zip(linears, continuous_case.linen_layers(params, head), strict=True):
            layer.kernel.set_value(jnp.asarray(kernel))
            layer.bias.set_value(jnp.asarray(bias))
    agent.actor_logstd.set_value(jnp.asarray(params["params"]["actor_logstd"]))
    return agent


@pytest.mark.parametrize("clip_vloss,norm_adv", [(True, True), (False, False)])
def test_tree_mode_loss_terms_and_every_gradient_match_the_reference(clip_vloss, norm_adv):
    _, params = continuous_case.linen_agent()
    mb, coefs, expected = continuous_case.loss_case(clip_vloss, norm_adv)
    agent = nnx_agent_of(params)
    loss_fn = lambda agent, mb: ppo_continuous_nnx.ppo_loss(agent, mb, *coefs)
    loss_and_grad = nnx.jit(nnx.value_and_grad(loss_fn, has_aux=True), graph=False)
    batch = ppo_continuous_nnx.Batch(**{name: jnp.asarray(value) for name, value in mb.items()})
    (loss, info), grads = loss_and_grad(agent, batch)
    # in tree mode the gradients come back as an Agent pytree holding them, not as a State
    assert isinstance(grads, ppo_continuous_nnx.Agent)
    gradients = {head: nnx_layers(grads, head) for head in HEADS}
    gradients["actor_logstd"] = grads.actor_logstd.get_value()
    continuous_case.assert_loss_parity(loss, info._asdict(), gradients, expected)


def test_init_is_seeded_orthogonal_with_ppo_gains_zero_biases_and_zero_logstd():
    agent = ppo_continuous_nnx.make_agent(jax.random.PRNGKey(0), obs_dim=400, action_dim=5, model_size="small")
    heads = {"actor": nnx_layers(agent, "actor_mean"), "critic": nnx_layers(agent, "critic")}
    assert [kernel.shape for kernel, _ in heads["actor"]] == [(400, 64), (64, 64), (64, 5)]
    reference.assert_ppo_init(heads, num_hidden=2)
    assert isinstance(agent.actor_logstd, nnx.Param)
    logstd = np.asarray(agent.actor_logstd.get_value())
    assert logstd.shape == (1, 5) and logstd.dtype == np.float32 and not logstd.any()
    same = ppo_continuous_nnx.make_agent(jax.random.PRNGKey(0), obs_dim=400, action_dim=5, model_size="small")
    other = ppo_continuous_nnx.make_agent(jax.random.PRNGKey(1), obs_dim=400, action_dim=5, model_size="small")
    kernel = lambda a: nnx_layers(a, "actor_mean")[0][0]
    assert np.array_equal(kernel(agent), kernel(same)) and not np.array_equal(kernel(agent), kernel(other))
