"""MinAtar's CNN (--network cnn) in every framework against ppo_linen.py's: from identical weights on one minibatch,
the logits, loss terms and gradients are Linen's. Linen and NNX convolve NHWC frames and flatten them (H, W, C);
torch and Equinox convolve NCHW and flatten (C, H, W): the weights cross with their layout converted, and so do the
gradients that come back. The inits are seeded orthogonal with the PPO gains."""
import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from flax import nnx

import ppo_equinox
import ppo_linen
import ppo_nnx
import ppo_nnx_cached
import ppo_torch
import ppo_torch_compile
import reference
from helpers import import_keeping_flax_config
from tolerance import assert_array_close

ppo_nnx_tree, _ = import_keeping_flax_config("ppo_nnx_tree")

FRAME = (5, 6, 3)  # height != width: a swapped axis fails
OBS_DIM, ACTION_DIM = int(np.prod(FRAME)), 3
LAYERS = ("conv", "dense", "actor", "critic")
GAINS = {"conv": np.sqrt(2), "dense": np.sqrt(2), "actor": 0.01, "critic": 1.0}
COEFS = dict(clip_coef=0.2, clip_vloss=True, norm_adv=True, ent_coef=0.01, vf_coef=0.5)


# LAYOUTS: every layer as Linen holds it, {name: (kernel, bias)}: conv (kh, kw, in, out), dense rows in (H, W, C) order
def channels_first(layers: dict) -> dict:
    """Linen's layers as torch and Equinox hold them: conv (out, in, kh, kw), dense rows in (C, H, W) order, (out, in)."""
    (kernel, bias), (dense, dense_bias) = layers["conv"], layers["dense"]
    height, width = FRAME[0] - 2, FRAME[1] - 2
    dense = dense.reshape(height, width, kernel.shape[-1], -1).transpose(2, 0, 1, 3).reshape(dense.shape)
    heads = {name: (layers[name][0].T, layers[name][1]) for name in ("actor", "critic")}
    return {"conv": (kernel.transpose(3, 2, 0, 1), bias), "dense": (dense.T, dense_bias), **heads}


def channels_last(layers: dict) -> dict:
    """The inverse of channels_first: torch's or Equinox's layers (or gradients) as Linen holds them."""
    (weight, bias), (dense, dense_bias) = layers["conv"], layers["dense"]
    height, width = FRAME[0] - 2, FRAME[1] - 2
    dense = dense.T.reshape(weight.shape[0], height, width, -1).transpose(1, 2, 0, 3).reshape(dense.shape[::-1])
    heads = {name: (layers[name][0].T, layers[name][1]) for name in ("actor", "critic")}
    return {"conv": (weight.transpose(2, 3, 1, 0), bias.reshape(-1)), "dense": (dense, dense_bias), **heads}


def linen_layers(tree) -> dict:
    return {name: (np.asarray(tree["params"][name]["kernel"]), np.asarray(tree["params"][name]["bias"])) for name in LAYERS}


def nnx_layers(agent) -> dict:
    return {name: (np.asarray(getattr(agent, name).kernel.get_value()), np.asarray(getattr(agent, name).bias.get_value()))
            for name in LAYERS}


def torch_layers(agent, grad=False) -> dict:
    modules = {"conv": agent.torso[0], "dense": agent.torso[3], "actor": agent.actor_head, "critic": agent.critic_head}
    value = lambda tensor: (tensor.grad if grad else tensor).detach().numpy()
    return channels_last({name: (value(m.weight), value(m.bias)) for name, m in modules.items()})


def equinox_layers(agent) -> dict:
    return channels_last({name: (np.asarray(getattr(agent, name).weight), np.asarray(getattr(agent, name).bias))
                          for name in LAYERS})


# THE CASE: Linen's agent, its minibatch, and its logits, loss terms and gradients
@pytest.fixture(scope="module")
def linen():
    agent, params = ppo_linen.make_agent(jax.random.PRNGKey(3), OBS_DIM, ACTION_DIM, "small", FRAME)
    mb = reference.minibatch_like(obs_dim=OBS_DIM, num_actions=ACTION_DIM)
    batch = ppo_linen.Batch(**{key: jnp.asarray(value) for key, value in mb.items()})
    (loss, info), grads = jax.value_and_grad(ppo_linen.ppo_loss, has_aux=True)(params, agent, batch, **COEFS)
    assert 0 < float(info.clipfrac) < 1  # both clip branches are exercised
    logits, value = agent.apply(params, batch.obs)
    return dict(params=params, mb=mb, loss=loss, info=info, grads=linen_layers(grads), logits=logits, value=value)


def assert_matches_linen(linen, outputs, loss, info, grad_layers):
    reference.assert_matches_reference(linen, outputs, loss, info, grad_layers)


def nnx_agent_like(module, layers: dict):
    agent = module.make_agent(jax.random.PRNGKey(99), OBS_DIM, ACTION_DIM, "small", FRAME)
    for name, (kernel, bias) in layers.items():
        getattr(agent, name).kernel.set_value(jnp.asarray(kernel))
        getattr(agent, name).bias.set_value(jnp.asarray(bias))
    return agent


@pytest.mark.parametrize("module", [ppo_nnx, ppo_nnx_cached, ppo_nnx_tree], ids=["nnx", "nnx_cached", "nnx_tree"])
def test_nnx_cnn_logits_loss_terms_and_gradients_equal_linens_from_identical_weights(module, linen):
    tree = module is ppo_nnx_tree
    with nnx.set_graph_mode(not tree), nnx.set_graph_updates(not tree):
        agent = nnx_agent_like(module, linen_layers(linen["params"]))
        batch = module.Batch(**{key: jnp.asarray(value) for key, value in linen["mb"].items()})
        loss_fn = functools.partial(module.ppo_loss, **COEFS)
        (loss, info), grads = nnx.value_and_grad(loss_fn, has_aux=True)(agent, batch)
        grads = grads if tree else nnx.merge(nnx.graphdef(agent), grads)  # tree mode: an agent holding them
        assert_matches_linen(linen, agent(batch.obs), loss, info, nnx_layers(grads))


def test_equinox_cnn_logits_loss_terms_and_gradients_equal_linens_from_identical_weights(linen):
    agent = ppo_equinox.make_agent(jax.random.PRNGKey(99), OBS_DIM, ACTION_DIM, "small", FRAME)
    layers = channels_first(linen_layers(linen["params"]))
    leaves = lambda a: [x for name in LAYERS for x in (getattr(a, name).weight, getattr(a, name).bias)]
    bias_shapes = [getattr(agent, name).bias.shape for name in LAYERS]  # Equinox's conv bias is (out, 1, 1)
    values = [jnp.asarray(x) for name in LAYERS for x in layers[name]]
    values[1::2] = [bias.reshape(shape) for bias, shape in zip(values[1::2], bias_shapes)]
    agent = eqx.tree_at(leaves, agent, values)
    batch = ppo_equinox.Batch(**{key: jnp.asarray(value) for key, value in linen["mb"].items()})
    (loss, info), grads = eqx.filter_value_and_grad(ppo_equinox.ppo_loss, has_aux=True)(agent, batch, **COEFS)
    assert_matches_linen(linen, agent(batch.obs), loss, info, equinox_layers(grads))


def torch_agent_like(module, layers: dict):
    torch.manual_seed(0)  # any weights: they are overwritten with Linen's
    agent = module.make_agent(OBS_DIM, ACTION_DIM, "small", torch.device("cpu"), FRAME)
    modules = {"conv": agent.torso[0], "dense": agent.torso[3], "actor": agent.actor_head, "critic": agent.critic_head}
    with torch.no_grad():
        for name, (weight, bias) in channels_first(layers).items():
            modules[name].weight.copy_(torch.from_numpy(np.ascontiguousarray(weight)))
            modules[name].bias.copy_(torch.from_numpy(np.ascontiguousarray(bias)))
    return agent


# the compiled loss compiles cold in this process: slow
TORCH_CASES = [(ppo_torch, False), (ppo_torch_compile, False),
               pytest.param(ppo_torch_compile, True, marks=pytest.mark.slow)]


@pytest.mark.parametrize("module,compiled", TORCH_CASES, ids=["torch", "torch_compile-eager", "torch_compile-compiled"])
def test_torch_cnn_logits_loss_terms_and_gradients_equal_linens_from_identical_weights(module, compiled, linen):
    agent = torch_agent_like(module, linen_layers(linen["params"]))
    batch = module.Batch(**{key: torch.from_numpy(value) for key, value in linen["mb"].items()})
    torch._dynamo.reset()
    loss_fn = torch.compile(module.ppo_loss) if compiled else module.ppo_loss
    loss, info = loss_fn(agent, batch, **COEFS)
    loss.backward()
    with torch.no_grad():
        outputs = [tensor.numpy() for tensor in agent(batch.obs)]
    assert_matches_linen(linen, outputs, loss.detach(), info, torch_layers(agent, grad=True))
    # the rollout's per-step network and the batched values over (steps, envs, ...) are the same network
    with torch.no_grad():
        for output, expected in zip(agent.act(batch.obs), outputs):
            assert_array_close(output.numpy(), expected, "act")
        assert_array_close(agent.value(batch.obs.reshape(4, 4, -1)).reshape(-1).numpy(), outputs[1], "value")


def assert_cnn_init(layers: dict):
    """Orthogonal kernels (a conv's as its (kh * kw * in, out) matrix) with the PPO gains, zero biases."""
    for name in LAYERS:
        kernel, bias = layers[name]
        reference.assert_orthogonal(kernel.reshape(-1, kernel.shape[-1]), GAINS[name])
        assert not np.asarray(bias).any(), name


def test_every_frameworks_cnn_init_is_seeded_orthogonal_with_ppo_gains_and_zero_biases():
    key, other = jax.random.PRNGKey(0), jax.random.PRNGKey(1)
    linen_init = lambda k: linen_layers(ppo_linen.make_agent(k, OBS_DIM, ACTION_DIM, "small", FRAME)[1])
    nnx_init = lambda k: nnx_layers(ppo_nnx.make_agent(k, OBS_DIM, ACTION_DIM, "small", FRAME))
    equinox_init = lambda k: equinox_layers(ppo_equinox.make_agent(k, OBS_DIM, ACTION_DIM, "small", FRAME))

    def torch_init(seed):
        torch.manual_seed(seed)
        return torch_layers(ppo_torch.make_agent(OBS_DIM, ACTION_DIM, "small", torch.device("cpu"), FRAME))

    for init, seeds in ((linen_init, (key, other)), (nnx_init, (key, other)), (equinox_init, (key, other)),
                        (torch_init, (0, 1))):
        layers = init(seeds[0])
        assert_cnn_init(layers)
        assert np.array_equal(layers["conv"][0], init(seeds[0])["conv"][0])
        assert not np.array_equal(layers["conv"][0], init(seeds[1])["conv"][0])



def convolutions(fn, *args) -> int:
    """How many convolutions `fn(*args)` traces to, in every sub-computation."""
    return str(jax.make_jaxpr(fn)(*args)).count("conv_general_dilated[")


def pure_loss(name: str, linen: dict):
    """A JAX framework's CNN loss on Linen's minibatch as a function of the agent's parameters alone, and those."""
    module = {"linen": ppo_linen, "nnx": ppo_nnx, "nnx_cached": ppo_nnx_cached, "nnx_tree": ppo_nnx_tree,
              "equinox": ppo_equinox}[name]
    batch = module.Batch(**{key: jnp.asarray(value) for key, value in linen["mb"].items()})
    if module is ppo_linen:
        agent = ppo_linen.make_agent(jax.random.PRNGKey(3), OBS_DIM, ACTION_DIM, "small", FRAME)[0]
        return lambda params: ppo_linen.ppo_loss(params, agent, batch, **COEFS), linen["params"]
    if module is ppo_equinox:
        agent = ppo_equinox.make_agent(jax.random.PRNGKey(3), OBS_DIM, ACTION_DIM, "small", FRAME)
        params, static = eqx.partition(agent, eqx.is_array)
        return lambda params: ppo_equinox.ppo_loss(eqx.combine(params, static), batch, **COEFS), params
    graphdef, params = nnx.split(nnx_agent_like(module, linen_layers(linen["params"])))
    return lambda params: module.ppo_loss(nnx.merge(graphdef, params), batch, **COEFS), params


@pytest.mark.parametrize("name", ["linen", "nnx", "nnx_cached", "nnx_tree", "equinox"])
def test_the_jax_cnns_loss_and_gradients_trace_to_no_convolution_which_xla_cpu_runs_slowly_in_a_loop(name, linen):
    """The conv is the frames' sliced patches times the kernel (docs/variants.md): forward and backward are matrix
    products (the parity tests above prove them the convolution's numbers). The NNX scripts' CNNs are the same code:
    each is traced in graph mode."""
    with nnx.set_graph_mode(True), nnx.set_graph_updates(True):
        loss, params = pure_loss(name, linen)
        assert convolutions(loss, params) == convolutions(jax.grad(loss, has_aux=True), params) == 0


@pytest.mark.parametrize("stride, padding", [(2, "VALID"), (1, "SAME")])
def test_every_jax_conv_as_matmul_refuses_a_stride_or_padding_it_does_not_compute(stride, padding):
    """The sliced patches are those of a stride-1 unpadded convolution: any other is a ValueError, not wrong numbers."""
    frames = jnp.zeros((1, *FRAME))
    for module in (ppo_linen, ppo_nnx, ppo_nnx_cached, ppo_nnx_tree):
        with pytest.raises(ValueError, match="stride 1 and no padding only"):
            module.conv_as_matmul(frames, jnp.zeros((3, 3, FRAME[2], 4)), (stride, stride), padding)
    conv = eqx.nn.Conv2d(FRAME[2], 4, 3, stride=stride, padding=padding, key=jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match="stride 1 and no padding only"):
        ppo_equinox.conv_as_matmul(conv, jnp.zeros((FRAME[2], *FRAME[:2])))
