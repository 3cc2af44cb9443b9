"""ppo_continuous_equinox.py against the reference, ppo_continuous_linen.py: the same weights and minibatch give the
same loss, terms and gradients (tests/continuous_case.py); the init is seeded
orthogonal with the PPO gains and a zero log-std."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import continuous_case
import ppo_continuous_equinox
import reference

HEADS = ("actor_mean", "critic")


@pytest.fixture(autouse=True)
def full_float32_matmuls():
    """The scripts' matmul precision (a GPU's default, TF32, would round both sides past the tolerance)."""
    with jax.default_matmul_precision("highest"):
        yield


def equinox_layers(agent, head):
    """[(kernel (in, out), bias)] of `head` as numpy, in layer order (Equinox stores weight (out, in))."""
    return [(np.asarray(layer.weight).T, np.asarray(layer.bias)) for layer in getattr(agent, head).layers]


def equinox_agent_of(params):
    """An Equinox agent holding the Linen `params`, log-std included."""
    agent = ppo_continuous_equinox.make_agent(
        jax.random.PRNGKey(99), continuous_case.OBS_DIM, continuous_case.ACTION_DIM, "small"
    )
    leaves = lambda a: [x for head in HEADS for layer in getattr(a, head).layers for x in (layer.weight, layer.bias)]
    values = [jnp.asarray(x) for head in HEADS for kernel, bias in continuous_case.linen_layers(params, head)
              for x in (kernel.T, bias)]
    agent = eqx.tree_at(leaves, agent, values)
    return eqx.tree_at(lambda a: a.actor_logstd, agent, jnp.asarray(params["params"]["actor_logstd"]))


@pytest.mark.parametrize("clip_vloss,norm_adv", [(True, True), (False, False)])
def test_loss_terms_and_every_gradient_match_the_reference(clip_vloss, norm_adv):
    _, params = continuous_case.linen_agent()
    mb, coefs, expected = continuous_case.loss_case(clip_vloss, norm_adv)
    agent = equinox_agent_of(params)
    batch = ppo_continuous_equinox.Batch(**{name: jnp.asarray(value) for name, value in mb.items()})
    (loss, info), grads = eqx.filter_value_and_grad(ppo_continuous_equinox.ppo_loss, has_aux=True)(
        agent, batch, *coefs
    )
    gradients = {head: equinox_layers(grads, head) for head in HEADS}
    gradients["actor_logstd"] = grads.actor_logstd
    continuous_case.assert_loss_parity(loss, info._asdict(), gradients, expected)


def test_init_is_seeded_orthogonal_with_ppo_gains_zero_biases_and_zero_logstd():
    agent = ppo_continuous_equinox.make_agent(jax.random.PRNGKey(0), obs_dim=400, action_dim=5, model_size="small")
    heads = {"actor": equinox_layers(agent, "actor_mean"), "critic": equinox_layers(agent, "critic")}
    assert [kernel.shape for kernel, _ in heads["actor"]] == [(400, 64), (64, 64), (64, 5)]
    reference.assert_ppo_init(heads, num_hidden=2)
    logstd = np.asarray(agent.actor_logstd)
    assert logstd.shape == (1, 5) and logstd.dtype == np.float32 and not logstd.any()
    same = ppo_continuous_equinox.make_agent(jax.random.PRNGKey(0), obs_dim=400, action_dim=5, model_size="small")
    other = ppo_continuous_equinox.make_agent(jax.random.PRNGKey(1), obs_dim=400, action_dim=5, model_size="small")
    kernel = lambda a: equinox_layers(a, "actor_mean")[0][0]
    assert np.array_equal(kernel(agent), kernel(same)) and not np.array_equal(kernel(agent), kernel(other))
