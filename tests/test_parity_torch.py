"""Parity of the torch scripts with ppo_linen.py: identical weights and data give the same loss terms, gradients, GAE
and optimiser step; the compiled loss and minibatch update of ppo_torch_compile.py give what the eager ones give;
both inits are seeded orthogonal with the PPO gains."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from flax.training.train_state import TrainState

import ppo_linen
import ppo_torch
import ppo_torch_compile
import reference
from tolerance import RTOL, assert_array_close, assert_close

jax.config.update("jax_default_matmul_precision", "highest")
torch.set_float32_matmul_precision("highest")

MODULES = [ppo_torch, ppo_torch_compile]
# (module, compiled): the eager functions of both scripts, and the compiled ones of ppo_torch_compile.py
# the compiled variant compiles cold in this process: slow
VARIANTS = [(ppo_torch, False), (ppo_torch_compile, False), pytest.param(ppo_torch_compile, True, marks=pytest.mark.slow)]
VARIANT_IDS = ["torch", "torch_compile-eager", "torch_compile-compiled"]
LOSS_KWARGS = dict(clip_coef=0.2, clip_vloss=True, norm_adv=True, ent_coef=0.01, vf_coef=0.5)
ATOL = 1e-6  # parameters and GAE, values of their own (not sums of terms of both signs)


def maybe_compile(fn, compiled):
    torch._dynamo.reset()
    return torch.compile(fn) if compiled else fn


def torch_linears(agent, head):
    return [layer for layer in getattr(agent, head) if isinstance(layer, torch.nn.Linear)]


def linen_and_torch_agents(module, obs_dim=4, action_dim=3):
    """A Linen agent and a torch agent of `module` holding the same weights (torch weight = Linen kernel.T)."""
    agent, params = ppo_linen.make_agent(jax.random.PRNGKey(3), obs_dim, action_dim, "small")
    torch.manual_seed(0)  # any weights: they are overwritten with the Linen ones
    torch_agent = module.make_agent(obs_dim, action_dim, "small", torch.device("cpu"))
    with torch.no_grad():
        for head in ("actor", "critic"):
            for i, linear in enumerate(torch_linears(torch_agent, head)):
                dense = params["params"][head][f"Dense_{i}"]
                linear.weight.copy_(torch.from_numpy(np.asarray(dense["kernel"]).T.copy()))
                linear.bias.copy_(torch.from_numpy(np.asarray(dense["bias"]).copy()))
    return agent, params, torch_agent


def linen_grads(grads, head):
    """Linen gradients of one head as [(weight grad in torch layout, bias grad), ...]."""
    tree = grads["params"][head]
    return [(np.asarray(tree[f"Dense_{i}"]["kernel"]).T, np.asarray(tree[f"Dense_{i}"]["bias"])) for i in range(len(tree))]


def torch_batch(module, mb):
    return module.Batch(**{key: torch.from_numpy(value) for key, value in mb.items()})


def assert_params_match(torch_agent, params):
    for head in ("actor", "critic"):
        expected = linen_grads(params, head)  # same layout conversion as for gradients
        for linear, (weight, bias) in zip(torch_linears(torch_agent, head), expected, strict=True):
            np.testing.assert_allclose(linear.weight.detach().numpy(), weight, rtol=RTOL, atol=ATOL)
            np.testing.assert_allclose(linear.bias.detach().numpy(), bias, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("module,compiled", VARIANTS, ids=VARIANT_IDS)
def test_parity_loss_terms_and_every_gradient_match_linen(module, compiled):
    agent, params, torch_agent = linen_and_torch_agents(module)
    mb = reference.minibatch_like()
    linen_mb = ppo_linen.Batch(**{key: jnp.asarray(value) for key, value in mb.items()})
    loss_fn = functools.partial(ppo_linen.ppo_loss, agent=agent, mb=linen_mb, **LOSS_KWARGS)
    (loss, info), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)

    torch_loss_fn = maybe_compile(module.ppo_loss, compiled)
    torch_loss, torch_info = torch_loss_fn(torch_agent, torch_batch(module, mb), **LOSS_KWARGS)
    torch_loss.backward()

    assert 0 < float(info.clipfrac) < 1  # both clip branches are exercised
    assert_close(float(torch_loss), float(loss), "loss")
    for name in ppo_linen.LossInfo._fields:
        assert_close(float(getattr(torch_info, name)), float(getattr(info, name)), name)
    for head in ("actor", "critic"):
        for linear, (weight_grad, bias_grad) in zip(torch_linears(torch_agent, head), linen_grads(grads, head), strict=True):
            assert_array_close(linear.weight.grad.numpy(), weight_grad, head)
            assert_array_close(linear.bias.grad.numpy(), bias_grad, head)


@pytest.mark.parametrize("module,compiled", VARIANTS, ids=VARIANT_IDS)
def test_parity_one_minibatch_update_loss_grad_clip_adam_matches_optax(module, compiled):
    """From identical weights: loss, gradients, global-norm clip and two Adam steps give the same parameters."""
    args = ppo_linen.Args(num_iterations=10, max_grad_norm=0.05)
    agent, params, torch_agent = linen_and_torch_agents(module)
    mb = reference.minibatch_like()
    linen_mb = ppo_linen.Batch(**{key: jnp.asarray(value) for key, value in mb.items()})
    mb_inds = np.arange(len(mb["obs"]))
    loss_fn = functools.partial(ppo_linen.ppo_loss, agent=agent, **LOSS_KWARGS)
    (_, _), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, mb=linen_mb)
    assert float(optax_global_norm(grads)) > 2 * args.max_grad_norm  # the clip is active
    state = TrainState.create(apply_fn=agent.apply, params=params, tx=ppo_linen.make_optimizer(args))

    torch_args = module.Args(num_iterations=10, max_grad_norm=0.05)
    optimizer = module.make_optimizer(torch_agent, torch_args)
    before = [p.detach().clone() for p in torch_agent.parameters()]
    minibatch_fn = maybe_compile(module.update_minibatch, compiled)
    for _ in range(2):  # Adam's bias correction at steps 1 and 2, from the state the first step left
        info = minibatch_fn(
            torch.from_numpy(mb_inds), torch_batch(module, mb), agent=torch_agent, optimizer=optimizer,
            loss_fn=functools.partial(module.ppo_loss, **LOSS_KWARGS), max_grad_norm=torch_args.max_grad_norm,
        )
        state, linen_info = ppo_linen.update_minibatch(state, jnp.asarray(mb_inds), linen_mb, loss_fn)
        assert_close(float(info.value_loss), float(linen_info.value_loss), "value_loss")
    assert all(not torch.equal(b, p) for b, p in zip(before, torch_agent.parameters()))
    assert_params_match(torch_agent, state.params)
    # the step itself (new - old), not only the parameters, agrees
    old = linen_grads(params, "actor")[0][0]
    np.testing.assert_allclose(
        torch_linears(torch_agent, "actor")[0].weight.detach().numpy() - old,
        linen_grads(state.params, "actor")[0][0] - old, rtol=RTOL, atol=5e-7,  # a step of ~2.5e-4: float32 of ~0.5
    )


def optax_global_norm(tree):
    return jnp.sqrt(sum(jnp.sum(leaf**2) for leaf in jax.tree.leaves(tree)))


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("bootstrap_truncated", [True, False])
def test_parity_gae_matches_linen_on_the_same_rollout(module, bootstrap_truncated):
    """GAE runs eagerly in both scripts (compiling it does not repay), so only the eager function is compared."""
    r = reference.rollout_like()
    linen_storage = ppo_linen.Storage(
        obs=None, actions=None, logprobs=None, values=jnp.asarray(r["values"]), rewards=jnp.asarray(r["rewards"]),
        terminated=jnp.asarray(r["terminated"]), truncated=jnp.asarray(r["truncated"]),
        final_values=jnp.asarray(r["final_values"]),
    )
    expected = ppo_linen.compute_gae(linen_storage, jnp.asarray(r["last_value"]), 0.99, 0.95, bootstrap_truncated)
    storage = module.Storage(
        obs=None, actions=None, logprobs=None, values=torch.from_numpy(r["values"]),
        rewards=torch.from_numpy(r["rewards"]), terminated=torch.from_numpy(r["terminated"]),
        truncated=torch.from_numpy(r["truncated"]), final_values=torch.from_numpy(r["final_values"]),
    )
    got = module.compute_gae(storage, torch.from_numpy(r["last_value"]), 0.99, 0.95, bootstrap_truncated)
    for value, linen_value in zip(got, expected, strict=True):
        np.testing.assert_allclose(value.numpy(), np.asarray(linen_value), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("model_size", ["small", "medium"])
def test_parity_init_is_seeded_orthogonal_with_ppo_gains_and_zero_biases(module, model_size):
    def build(seed):
        torch.manual_seed(seed)
        return module.make_agent(400, 5, model_size, torch.device("cpu"))

    agent = build(0)
    # torch weight (out, in) -> Linen's kernel (in, out)
    heads = {
        head: [(linear.weight.detach().numpy().T, linear.bias.detach().numpy()) for linear in torch_linears(agent, head)]
        for head in ("actor", "critic")
    }
    reference.assert_ppo_init(heads, len(module.MODEL_SIZES[model_size]))
    first = lambda a: torch_linears(a, "actor")[0].weight.detach()
    assert torch.equal(first(agent), first(build(0))) and not torch.equal(first(agent), first(build(1)))
