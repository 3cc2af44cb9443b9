"""Torch-specific behaviour: torch.compile really compiles (and never recompiles), the eager loop fetches to the host
once per iteration, --no-jit-env stays eager, sampling, the rollout's bootstrap values (GPU-only flags on a CPU: the
CLI probe, tests/test_robustness.py)."""
import collections
import importlib
import os

import gymnax
import jax
import numpy as np
import pytest
import torch

import ppo_torch
from helpers import EAGER_ITERATIONS, ROOT, auto_device


def script_fetches(record, script):
    """The host reads the script makes, but the action hand-over on the CPU (a NumPy view of a CPU tensor per step)."""
    return [f["method"] for f in record["fetches"] if f["file"] == os.path.join(ROOT, script) and not cpu_view(f)]


def cpu_view(fetch):
    return fetch["method"] == "torch.Tensor.numpy" and fetch["device"] == "cpu"


def test_compile_makes_the_minibatch_update_one_graph_and_never_recompiles(shared_runs):
    """Read from the script's probed smoke run (tests/probe.py): its one cold compile in the fast subset."""
    run = shared_runs.smoke("ppo_torch_compile.py")
    record, iterations = run.record, len(run.scalars["time/iteration"])
    compilations = [c for c in record["compilations"] if c["co_name"]]
    assert not [c for c in compilations if c["fail_type"]]
    # every graph is compiled during iteration 0: the count at each iteration's fetch never grows, no frame has a
    # second compilation ("frame/1") and so no recompilation ever happens
    assert record["boundaries"] == [len(record["compilations"])] * iterations
    # compiled where it repays: the minibatch update, loss to Adam step, in one graph (no graph break, no resumed frame,
    # no frame of torch's own); the per-step policy, the rollout's values and GAE stay eager
    assert [(c["co_name"], c["co_filename"], c["compile_id"]) for c in compilations] == [
        ("update_minibatch", os.path.join(ROOT, "ppo_torch_compile.py"), "0/0")
    ]
    assert compilations[0]["graph_op_count"] > 0 and record["graph_breaks"] == {}
    assert script_fetches(record, "ppo_torch_compile.py") == ["torch.Tensor.tolist"] * iterations


@pytest.mark.parametrize("jit_env", [True, pytest.param(False, marks=pytest.mark.slow)], ids=["jit-env", "no-jit-env"])
def test_eager_loop_fetches_to_the_host_once_per_iteration_and_compiles_nothing(jit_env, shared_runs):
    """Read from ppo_torch.py's probed runs: the smoke run (--jit-env, the default) and the eager run (--no-jit-env)."""
    run = shared_runs.smoke("ppo_torch.py") if jit_env else shared_runs.eager("ppo_torch.py")
    record, iterations = run.record, len(run.scalars["time/iteration"])
    assert script_fetches(record, "ppo_torch.py") == ["torch.Tensor.tolist"] * iterations
    # on the CPU the actions cross to JAX as a NumPy view, once per env step (TINY: 16 steps per iteration); on a GPU
    # through DLPack, no NumPy view
    views = 16 * iterations if auto_device() == "cpu" else 0
    assert len([f for f in record["fetches"] if cpu_view(f)]) == views
    # nothing else reads to the host: fused Adam keeps its step count on the device (the default Adam reads it with
    # .item() at every step)
    elsewhere = collections.Counter(
        (f["method"], f["file"].split("site-packages" + os.sep)[-1])
        for f in record["fetches"] if f["file"] != os.path.join(ROOT, "ppo_torch.py")
    )
    assert not elsewhere, elsewhere
    assert record["compilations"] == []


@pytest.mark.slow
def test_no_jit_env_compilations_do_not_grow_with_iterations(shared_runs):
    """JAX's compile log in the eager run, counted at each iteration's end: the env step is never compiled, and
    iterations 3 to 5 compile nothing more than 1 and 2."""
    record = shared_runs.eager("ppo_torch.py").record
    names = record["jax_compilations"]
    assert not [name for name in names if "env_step" in name or name.startswith("jit(step")], names
    boundaries = record["jax_boundaries"]
    assert len(boundaries) == EAGER_ITERATIONS
    assert boundaries[1] > 0 and boundaries[1:] == [boundaries[1]] * (EAGER_ITERATIONS - 1), boundaries


def test_policy_step_samples_the_softmax_distribution_with_the_rollouts_gumbel_noise():
    logits = torch.tensor([1.0, -0.5, 0.3, 2.0])
    n = 200_000
    torch.manual_seed(0)
    gumbel = ppo_torch.gumbel_noise(1, n, 4, torch.device("cpu"))[0]
    network = lambda obs: (logits.expand(len(obs), -1), None)  # noqa: E731
    action, step_logits, _ = ppo_torch.policy_step(torch.zeros(n, 1), gumbel, network=network)
    frequencies = np.bincount(action.numpy(), minlength=4) / n
    np.testing.assert_allclose(frequencies, torch.softmax(logits, 0).numpy(), atol=4e-3)
    assert action.dtype == torch.int32 and torch.equal(step_logits[0], logits)


@pytest.mark.parametrize("script", ["ppo_torch", "ppo_torch_compile", "ppo_torch_gymnasium", "ppo_torch_native"])
def test_gumbel_noise_stays_finite_where_the_uniform_draw_is_zero(script, monkeypatch):
    """torch.rand draws from [0, 1): U = 0 (about once in 2**24 draws) must not give -inf and drop the action."""
    module = importlib.import_module(script)
    monkeypatch.setattr(module.torch, "rand", lambda *shape, device: torch.zeros(*shape, device=device))
    gumbel = module.gumbel_noise(2, 3, 4, torch.device("cpu"))
    assert gumbel.shape == (2, 3, 4) and torch.isfinite(gumbel).all()
    # as jax.random.gumbel: U at the smallest positive normal float32, -log(-log(tiny)) = -log(87.34)
    np.testing.assert_allclose(gumbel.numpy(), -np.log(-np.log(np.finfo(np.float32).tiny)), rtol=1e-6)


@pytest.fixture
def jax_on_the_cpu():
    """JAX's arrays on the CPU, beside these tests' CPU agent (where there is a GPU, JAX's default device is the GPU)."""
    with jax.default_device(jax.devices("cpu")[0]):
        yield


def cpu_rollout(agent, env, env_params, env_state, obs, num_steps: int, bootstrap_truncated: bool):
    """ppo_torch.rollout from fresh episode stats, the policy step the script's, the env step op by op: its new carry,
    storage and V(last obs)."""
    zeros = jax.numpy.zeros(len(obs))
    stats = ppo_torch.EpisodeStats(zeros, zeros.astype(int), zeros[0], zeros[0], zeros[0])
    carry = ppo_torch.RolloutCarry(ppo_torch.EnvCarry(jax.random.PRNGKey(2), env_state, stats), obs)
    return ppo_torch.rollout(
        carry, agent, lambda o, g: ppo_torch.policy_step(o, g, network=agent.act),
        lambda *a: ppo_torch.env_step(*a, env=env, env_params=env_params), torch.Tensor.numpy,
        num_steps=num_steps, num_actions=env.action_space(env_params).n, bootstrap_truncated=bootstrap_truncated,
    )


def test_rollout_stores_value_of_final_observation_before_auto_reset(jax_on_the_cpu):
    env, env_params = gymnax.make("CartPole-v1")
    env_params = env_params.replace(max_steps_in_episode=5)
    step, env_state = ppo_torch.env_reset(jax.random.PRNGKey(0), env, env_params, 3)
    obs = ppo_torch.unpack_step(torch.from_dlpack(step))[0]
    torch.manual_seed(1)
    agent = ppo_torch.make_agent(obs.shape[1], 2, "small", torch.device("cpu"))
    carry, storage, last_value = cpu_rollout(agent, env, env_params, env_state, obs, 12, bootstrap_truncated=True)
    done = (storage.terminated | storage.truncated).numpy()
    assert storage.truncated.numpy().any()
    # the packed env output unpacks to CartPole's reward 1, boolean flags, and the observations the policy saw
    assert storage.terminated.dtype == storage.truncated.dtype == torch.bool
    assert torch.equal(storage.rewards, torch.ones(12, 3)) and torch.equal(storage.obs[0], obs)
    next_values = np.concatenate([storage.values[1:].numpy(), last_value.numpy()[None]])
    # without a reset the final observation is the next observation (the same value from another batch: float32
    # differs at ~1e-7 between batch shapes and CPUs); after one it is not
    np.testing.assert_allclose(storage.final_values.numpy()[~done], next_values[~done], rtol=1e-5, atol=1e-6)
    assert not np.allclose(storage.final_values.numpy()[done], next_values[done])
    # the log-probs stored are those of the actions taken under the policy that saw each observation
    log_probs = torch.log_softmax(agent.actor(storage.obs), dim=-1).gather(-1, storage.actions.long()[..., None])
    np.testing.assert_allclose(storage.logprobs.numpy(), log_probs.squeeze(-1).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert float(carry.env.stats.finished_count) == done.sum()
    assert float(carry.env.stats.finished_length_sum) == 5 * done.sum()


def test_no_bootstrap_truncated_computes_no_value_of_final_observations(jax_on_the_cpu):
    """The study's workload without the bootstrap does not pay for V(final observation): no critic call over the
    final observations."""
    env, env_params = gymnax.make("CartPole-v1")
    step, env_state = ppo_torch.env_reset(jax.random.PRNGKey(0), env, env_params, 2)
    obs = ppo_torch.unpack_step(torch.from_dlpack(step))[0]
    agent = ppo_torch.make_agent(obs.shape[1], 2, "small", torch.device("cpu"))
    critic_calls = []
    agent.critic.register_forward_hook(lambda module, inputs, output: critic_calls.append(inputs[0].shape[:-1].numel()))
    for bootstrap_truncated in (True, False):
        _, storage, _ = cpu_rollout(agent, env, env_params, env_state, obs, 4, bootstrap_truncated)
    # rows per call: the 4 x 2 observations seen, the 2 last ones, the 4 x 2 final ones; without the bootstrap, no third
    assert critic_calls == [8, 2, 8, 8, 2]
    assert not storage.final_values.any()


def test_the_cnn_rollout_runs_its_shared_torso_once_per_observation(jax_on_the_cpu):
    """The CNN's heads share a torso: each rollout step takes V(obs) with the logits, from one torso pass, and the
    stacked steps are not convolved again; only V(last obs) is one more pass."""
    env, env_params = gymnax.make("Breakout-MinAtar")
    step, env_state = ppo_torch.env_reset(jax.random.PRNGKey(0), env, env_params, 2)
    obs, num_actions = ppo_torch.unpack_step(torch.from_dlpack(step))[0], env.action_space(env_params).n
    frame_shape = env.observation_space(env_params).shape
    agent = ppo_torch.make_agent(obs.shape[1], num_actions, "small", torch.device("cpu"), frame_shape)
    torso_rows = []
    agent.torso.register_forward_hook(lambda module, inputs, output: torso_rows.append(len(inputs[0])))
    _, storage, _ = cpu_rollout(agent, env, env_params, env_state, obs, 4, bootstrap_truncated=False)
    assert torso_rows == [2, 2, 2, 2, 2]
    with torch.no_grad():  # the values kept are those of the observations seen
        np.testing.assert_allclose(storage.values.numpy(), agent.value(storage.obs).numpy(), rtol=1e-5, atol=1e-6)
