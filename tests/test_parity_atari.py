"""The Atari scripts' Nature CNN in every framework against ppo_atari_linen.py's: from identical weights on one
minibatch of uint8 frames, the logits, values, loss terms and gradients are Linen's (rtol 1e-4). The frames come as
the env stacks them, (N, 4, 84, 84): Linen and NNX convolve them channels last and flatten the last convolution's
output (H, W, C); torch and Equinox convolve them channels first and flatten (C, H, W). The weights cross with their
layout converted, and so do the gradients that come back. Each init is seeded orthogonal with the PPO gains. The JAX
cases run compiled, one call each: eagerly, each of the sliced patches' ops (89 slices, and their gradients) would
compile on its own. The fast subset keeps torch's case (the layout crossing) and the strided convolution's; NNX's,
Equinox's and the inits are in the full suite (their layers' parity on MinAtar's CNN is in the fast subset)."""
import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from flax import nnx

import ppo_atari_equinox
import ppo_atari_linen
import ppo_atari_torch
import ppo_atari_torch_compile
import reference
from helpers import import_keeping_flax_config
from tolerance import assert_array_close

ppo_atari_nnx, _ = import_keeping_flax_config("ppo_atari_nnx")

FRAME, ACTION_DIM, BATCH = (4, 84, 84), 4, 16
CONVS = ("conv0", "conv1", "conv2")
LAYERS = (*CONVS, "dense", "actor", "critic")
GAINS = {**dict.fromkeys(CONVS, np.sqrt(2)), "dense": np.sqrt(2), "actor": 0.01, "critic": 1.0}
LAST = (7, 7, 64)  # the last convolution's output, (H, W, C)
COEFS = dict(clip_coef=0.1, clip_vloss=True, norm_adv=True, ent_coef=0.01, vf_coef=0.5)


# LAYOUTS: every layer as Linen holds it, {name: (kernel, bias)}: conv (kh, kw, in, out), dense rows in (H, W, C) order
def channels_first(layers: dict) -> dict:
    """Linen's layers as torch and Equinox hold them: conv (out, in, kh, kw), dense rows in (C, H, W) order, (out, in)."""
    convs = {name: (layers[name][0].transpose(3, 2, 0, 1), layers[name][1]) for name in CONVS}
    dense, dense_bias = layers["dense"]
    dense = dense.reshape(*LAST, -1).transpose(2, 0, 1, 3).reshape(dense.shape)
    heads = {name: (layers[name][0].T, layers[name][1]) for name in ("actor", "critic")}
    return {**convs, "dense": (dense.T, dense_bias), **heads}


def channels_last(layers: dict) -> dict:
    """The inverse of channels_first: torch's or Equinox's layers (or gradients) as Linen holds them."""
    convs = {name: (layers[name][0].transpose(2, 3, 1, 0), layers[name][1].reshape(-1)) for name in CONVS}
    dense, dense_bias = layers["dense"]
    height, width, channels = LAST
    dense = dense.T.reshape(channels, height, width, -1).transpose(1, 2, 0, 3).reshape(dense.shape[::-1])
    heads = {name: (layers[name][0].T, layers[name][1]) for name in ("actor", "critic")}
    return {**convs, "dense": (dense, dense_bias), **heads}


def linen_layers(tree) -> dict:
    names = {**{f"conv{k}": f"convs_{k}" for k in range(3)}, **{name: name for name in ("dense", "actor", "critic")}}
    return {name: (np.asarray(tree["params"][key]["kernel"]), np.asarray(tree["params"][key]["bias"]))
            for name, key in names.items()}


def nnx_modules(agent) -> dict:
    return {**{f"conv{k}": agent.convs.layers[2 * k] for k in range(3)}, "dense": agent.dense, "actor": agent.actor,
            "critic": agent.critic}


def nnx_layers(agent) -> dict:
    return {name: (np.asarray(m.kernel.get_value()), np.asarray(m.bias.get_value()))
            for name, m in nnx_modules(agent).items()}


def torch_modules(agent) -> dict:
    network = agent.network  # conv, ReLU, conv, ReLU, conv, ReLU, Flatten, dense, ReLU
    return {"conv0": network[0], "conv1": network[2], "conv2": network[4], "dense": network[7], "actor": agent.actor,
            "critic": agent.critic}


def torch_layers(agent, grad=False) -> dict:
    value = lambda tensor: (tensor.grad if grad else tensor).detach().numpy()
    return channels_last({name: (value(m.weight), value(m.bias)) for name, m in torch_modules(agent).items()})


def equinox_modules(agent) -> dict:
    return {**{f"conv{k}": agent.convs[k] for k in range(3)}, "dense": agent.dense, "actor": agent.actor,
            "critic": agent.critic}


def equinox_layers(agent) -> dict:
    return channels_last({name: (np.asarray(m.weight), np.asarray(m.bias)) for name, m in equinox_modules(agent).items()})


# THE CASE: Linen's agent, a minibatch of frames, and its logits, loss terms and gradients
def minibatch() -> dict:
    """reference.minibatch_like's actions, log-probs, values, advantages and returns, with random uint8 frames."""
    mb = reference.minibatch_like(batch=BATCH, num_actions=ACTION_DIM)
    mb["obs"] = np.random.default_rng(1).integers(0, 256, size=(BATCH, *FRAME), dtype=np.uint8)
    return mb


@pytest.fixture(scope="module")
def linen():
    agent, params = ppo_atari_linen.make_agent(jax.random.PRNGKey(3), FRAME, ACTION_DIM)
    mb = minibatch()
    batch = ppo_atari_linen.Batch(**{key: jnp.asarray(value) for key, value in mb.items()})

    @jax.jit
    def case(params):
        loss_and_grads = jax.value_and_grad(ppo_atari_linen.ppo_loss, has_aux=True)(params, agent, batch, **COEFS)
        return loss_and_grads, agent.apply(params, batch.obs)

    ((loss, info), grads), (logits, value) = case(params)
    assert 0 < float(info.clipfrac) < 1  # both clip branches are exercised
    return dict(params=params, mb=mb, loss=loss, info=info, grads=linen_layers(grads), logits=logits, value=value)


def assert_matches_linen(linen, outputs, loss, info, grad_layers):
    reference.assert_matches_reference(linen, outputs, loss, info, grad_layers)


def nnx_agent_like(layers: dict):
    agent = ppo_atari_nnx.make_agent(jax.random.PRNGKey(99), FRAME, ACTION_DIM)
    for name, module in nnx_modules(agent).items():
        module.kernel.set_value(jnp.asarray(layers[name][0]))
        module.bias.set_value(jnp.asarray(layers[name][1]))
    return agent


@pytest.mark.slow  # a second network of the layers tests/test_parity_cnn.py checks fast
def test_nnx_atari_logits_loss_terms_and_gradients_equal_linens_from_identical_weights(linen):
    with nnx.set_graph_mode(False), nnx.set_graph_updates(False):  # the script's tree mode
        agent = nnx_agent_like(linen_layers(linen["params"]))
        batch = ppo_atari_nnx.Batch(**{key: jnp.asarray(value) for key, value in linen["mb"].items()})
        loss_fn = functools.partial(ppo_atari_nnx.ppo_loss, mb=batch, **COEFS)
        case = nnx.jit(lambda agent: (nnx.value_and_grad(loss_fn, has_aux=True)(agent), agent(batch.obs)))
        ((loss, info), grads), outputs = case(agent)
        assert_matches_linen(linen, outputs, loss, info, nnx_layers(grads))


@pytest.mark.slow  # a second network of the layers tests/test_parity_cnn.py checks fast
def test_equinox_atari_logits_loss_terms_and_gradients_equal_linens_from_identical_weights(linen):
    agent = ppo_atari_equinox.make_agent(jax.random.PRNGKey(99), FRAME, ACTION_DIM)
    layers, modules = channels_first(linen_layers(linen["params"])), equinox_modules(agent)
    leaves = lambda a: [x for m in equinox_modules(a).values() for x in (m.weight, m.bias)]
    values = [jnp.asarray(x).reshape(getattr(modules[name], field).shape)  # Equinox's conv bias is (out, 1, 1)
              for name in LAYERS for x, field in zip(layers[name], ("weight", "bias"))]
    agent = eqx.tree_at(leaves, agent, values)
    batch = ppo_atari_equinox.Batch(**{key: jnp.asarray(value) for key, value in linen["mb"].items()})
    loss_and_grads = eqx.filter_value_and_grad(ppo_atari_equinox.ppo_loss, has_aux=True)
    ((loss, info), grads), outputs = eqx.filter_jit(lambda agent: (loss_and_grads(agent, batch, **COEFS),
                                                                   agent(batch.obs)))(agent)
    assert_matches_linen(linen, outputs, loss, info, equinox_layers(grads))


def torch_agent_like(module, layers: dict):
    torch.manual_seed(0)  # any weights: they are overwritten with Linen's
    agent = module.make_agent(FRAME, ACTION_DIM, torch.device("cpu"))
    with torch.no_grad():
        for name, (weight, bias) in channels_first(layers).items():
            torch_modules(agent)[name].weight.copy_(torch.from_numpy(np.ascontiguousarray(weight)))
            torch_modules(agent)[name].bias.copy_(torch.from_numpy(np.ascontiguousarray(bias)))
    return agent


# the compiled loss compiles cold in this process: slow
TORCH_CASES = [(ppo_atari_torch, False), pytest.param(ppo_atari_torch_compile, True, marks=pytest.mark.slow)]


@pytest.mark.parametrize("module,compiled", TORCH_CASES, ids=["torch", "torch_compile"])
def test_torch_atari_logits_loss_terms_and_gradients_equal_linens_from_identical_weights(module, compiled, linen):
    agent = torch_agent_like(module, linen_layers(linen["params"]))
    batch = module.Batch(**{key: torch.from_numpy(value) for key, value in linen["mb"].items()})
    torch._dynamo.reset()
    loss_fn = torch.compile(module.ppo_loss) if compiled else module.ppo_loss
    loss, info = loss_fn(agent, batch, **COEFS)
    loss.backward()
    with torch.no_grad():
        outputs = [tensor.numpy() for tensor in agent(batch.obs)]
        assert_array_close(agent.value(batch.obs).numpy(), outputs[1], "value")
    assert_matches_linen(linen, outputs, loss.detach(), info, torch_layers(agent, grad=True))


@pytest.mark.slow  # a second network of the layers tests/test_parity_cnn.py checks fast
def test_every_frameworks_atari_init_is_seeded_orthogonal_with_ppo_gains_and_zero_biases():
    key, other = jax.random.PRNGKey(0), jax.random.PRNGKey(1)
    linen_init = lambda k: linen_layers(ppo_atari_linen.make_agent(k, FRAME, ACTION_DIM)[1])
    equinox_init = lambda k: equinox_layers(ppo_atari_equinox.make_agent(k, FRAME, ACTION_DIM))

    def nnx_init(k):
        with nnx.set_graph_mode(False), nnx.set_graph_updates(False):
            return nnx_layers(ppo_atari_nnx.make_agent(k, FRAME, ACTION_DIM))

    def torch_init(seed):
        torch.manual_seed(seed)
        return torch_layers(ppo_atari_torch.make_agent(FRAME, ACTION_DIM, torch.device("cpu")))

    for init, seeds in ((linen_init, (key, other)), (nnx_init, (key, other)), (equinox_init, (key, other)),
                        (torch_init, (0, 1))):
        layers = init(seeds[0])
        for name in LAYERS:
            kernel, bias = layers[name]
            reference.assert_orthogonal(kernel.reshape(-1, kernel.shape[-1]), GAINS[name])
            assert not np.asarray(bias).any(), name
        assert np.array_equal(layers["conv0"][0], init(seeds[0])["conv0"][0])
        assert not np.array_equal(layers["conv0"][0], init(seeds[1])["conv0"][0])


def test_the_strided_conv_as_matmul_is_the_convolution_and_traces_to_none():
    """The sliced patches with a stride are lax's strided convolution (each of the Nature CNN's three), and the JAX
    losses trace to no convolution (XLA:CPU runs one slowly inside the update's loop)."""
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(2, 84, 84, 4)).astype(np.float32))
    for channels, size, stride in ppo_atari_linen.NATURE_CONVS:
        fan_in = size * size * x.shape[-1]  # scaled so that each layer's outputs stay near 1, as an init keeps them
        kernel = jnp.asarray(rng.normal(size=(size, size, x.shape[-1], channels)).astype(np.float32) / np.sqrt(fan_in))
        want = jax.lax.conv_general_dilated(x, kernel, (stride, stride), "VALID",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"), precision="highest")
        for module in (ppo_atari_linen, ppo_atari_nnx):
            with jax.default_matmul_precision("highest"):  # the scripts' (a CPU's default may round the products)
                got = jax.jit(module.conv_as_matmul, static_argnums=(2, 3))(x, kernel, (stride, stride), "VALID")
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)
        x = jax.nn.relu(want)
    agent, params = ppo_atari_linen.make_agent(jax.random.PRNGKey(3), FRAME, ACTION_DIM)
    batch = ppo_atari_linen.Batch(**{key: jnp.asarray(value) for key, value in minibatch().items()})
    loss = functools.partial(ppo_atari_linen.ppo_loss, agent=agent, mb=batch, **COEFS)
    jaxprs = (jax.make_jaxpr(loss)(params), jax.make_jaxpr(jax.grad(loss, has_aux=True))(params))
    assert not any("conv_general_dilated[" in str(jaxpr) for jaxpr in jaxprs)
