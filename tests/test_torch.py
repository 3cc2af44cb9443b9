"""Torch-specific behaviour: torch.compile really compiles (and never recompiles), the eager loop fetches to the host
once per iteration, --no-jit-env stays eager, sampling, the rollout's bootstrap values, GPU-only flags on a CPU."""
import collections
import os

import gymnax
import jax
import numpy as np
import pytest
import torch

import ppo_torch
from helpers import EAGER_ITERATIONS, ROOT, assert_clean_error, run_script


def script_fetches(record, script):
    return [f["method"] for f in record["fetches"] if f["file"] == os.path.join(ROOT, script)]


def test_compile_graphs_exactly_the_executables_and_never_recompiles(shared_runs):
    """Read from the script's probed smoke run (tests/probe.py): its one cold compile in the fast subset."""
    run = shared_runs.smoke("ppo_torch_compile.py")
    record, iterations = run.record, len(run.scalars["time/iteration"])
    compilations = [c for c in record["compilations"] if c["co_name"]]
    assert not [c for c in compilations if c["fail_type"]]
    # every graph is compiled during iteration 0: the count at each iteration's fetch never grows, no frame has a
    # second compilation ("frame/1") and so no recompilation ever happens
    assert record["boundaries"] == [len(record["compilations"])] * iterations
    assert all(c["compile_id"].endswith("/0") for c in compilations), compilations
    ours = [c for c in compilations if c["co_filename"] == os.path.join(ROOT, "ppo_torch_compile.py")]
    graphs = {c["co_name"]: c["graph_op_count"] for c in ours}
    # compiled where it repays: the minibatch update (the per-step policy and record steps, GAE and V(last obs) stay
    # eager)
    executables = {"update_minibatch"}
    assert executables <= set(graphs) and all(graphs[name] > 0 for name in executables), graphs
    # the rest of our frames continue update_minibatch after the graph breaks that torch makes on purpose; the fused
    # Adam step runs as it is (one kernel), so no frame of torch's optimizer is compiled
    assert {name for name in graphs if name not in executables} == {
        name for name in graphs if name.startswith("torch_dynamo_resume_in_update_minibatch")
    }
    assert len(graphs) > len(executables)
    assert not [c for c in compilations if c not in ours], compilations
    reasons = " ".join(record["graph_breaks"])
    assert len(record["graph_breaks"]) == 3, reasons
    assert "Optimizer.zero_grad" in reasons and "Tensor.backward" in reasons and "torch.compiler.disable" in reasons
    assert script_fetches(record, "ppo_torch_compile.py") == ["torch.Tensor.tolist"] * iterations


@pytest.mark.parametrize("jit_env", [True, pytest.param(False, marks=pytest.mark.slow)], ids=["jit-env", "no-jit-env"])
def test_eager_loop_fetches_to_the_host_once_per_iteration_and_compiles_nothing(jit_env, shared_runs):
    """Read from ppo_torch.py's probed runs: the smoke run (--jit-env, the default) and the eager run (--no-jit-env)."""
    run = shared_runs.smoke("ppo_torch.py") if jit_env else shared_runs.eager("ppo_torch.py")
    record = run.record
    assert script_fetches(record, "ppo_torch.py") == ["torch.Tensor.tolist"] * len(run.scalars["time/iteration"])
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


def test_cudagraphs_on_a_cpu_exits_with_one_clear_line(tmp_path):
    log_dir = str(tmp_path / "runs")
    result = run_script("ppo_torch_compile.py", "--cudagraphs", "--device", "cpu", "--log-dir", log_dir)
    assert_clean_error(result, log_dir, "--cudagraphs needs a CUDA GPU")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
@pytest.mark.parametrize("script", ["ppo_torch.py", "ppo_torch_compile.py"])
def test_device_gpu_without_a_gpu_exits_with_one_clear_line(script, tmp_path):
    log_dir = str(tmp_path / "runs")
    result = run_script(script, "--device", "gpu", "--log-dir", log_dir)
    assert_clean_error(result, log_dir, "--device gpu: no such device")


def test_policy_step_samples_the_softmax_distribution_and_logs_its_log_prob():
    logits = torch.tensor([1.0, -0.5, 0.3, 2.0])
    n = 200_000

    def agent(obs):
        return logits.expand(len(obs), -1), obs[:, 0]

    torch.manual_seed(0)
    action, logprob, value = ppo_torch.policy_step(torch.zeros(n, 1), agent=agent)
    frequencies = np.bincount(action.numpy(), minlength=4) / n
    np.testing.assert_allclose(frequencies, torch.softmax(logits, 0).numpy(), atol=4e-3)
    np.testing.assert_allclose(logprob.numpy(), torch.log_softmax(logits, 0)[action.long()].numpy(), rtol=1e-6)
    assert action.dtype == torch.int32 and not value.any()


def test_rollout_stores_value_of_final_observation_before_auto_reset():
    env, env_params = gymnax.make("CartPole-v1")
    env_params = env_params.replace(max_steps_in_episode=5)
    step, env_state = ppo_torch.env_reset(jax.random.PRNGKey(0), env, env_params, 3)
    obs = ppo_torch.unpack_step(torch.from_dlpack(step))[0]
    torch.manual_seed(1)
    agent = ppo_torch.make_agent(obs.shape[1], 2, "small", torch.device("cpu"))
    zeros = torch.zeros(3)
    stats = ppo_torch.EpisodeStats(zeros, zeros.int(), torch.zeros(()), torch.zeros(()), torch.zeros(()))
    carry = ppo_torch.RolloutCarry(env_state, obs, jax.random.PRNGKey(2), stats)
    carry, storage, last_value = ppo_torch.rollout(
        carry, lambda o: ppo_torch.policy_step(o, agent=agent),
        lambda *a: ppo_torch.env_step(*a, env=env, env_params=env_params),
        lambda *a: ppo_torch.record_step(*a, agent=agent), agent.value, num_steps=12,
    )
    done = (storage.terminated | storage.truncated).numpy()
    assert storage.truncated.numpy().any()
    # the packed env output unpacks to CartPole's reward 1, boolean flags, and the observations the policy saw
    assert storage.terminated.dtype == storage.truncated.dtype == torch.bool
    assert torch.equal(storage.rewards, torch.ones(12, 3)) and torch.equal(storage.obs[0], obs)
    next_values = np.concatenate([storage.values[1:].numpy(), last_value.numpy()[None]])
    # without a reset the final observation is the next observation; after one it is not
    np.testing.assert_allclose(storage.final_values.numpy()[~done], next_values[~done], rtol=1e-6)
    assert not np.allclose(storage.final_values.numpy()[done], next_values[done])
    assert float(carry.stats.finished_count) == done.sum()
    assert float(carry.stats.finished_length_sum) == 5 * done.sum()
