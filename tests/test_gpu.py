"""On a CUDA GPU (skipped elsewhere): the DLPack exchange between JAX and torch neither races nor blocks the host, the
torch rollout stores exactly the steps the env made, and the torch scripts wait on the GPU once per iteration (the
logged metrics' fetch), --cudagraphs included. Every other test runs on the GPU too where there is one (`--device
auto`); these check what only a GPU can show."""
import collections
import os
import re
import subprocess
import sys
import time

import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import ppo_torch
from helpers import ROOT, TINY, read_run, run_script
from tolerance import assert_close

pytestmark = pytest.mark.skipif(
    not (torch.cuda.is_available() and jax.default_backend() == "gpu"), reason="needs a CUDA GPU for JAX and torch"
)
SIZE, PRODUCER_STEPS = 4096, 100  # a producer that keeps the GPU busy for ~0.1 s or more (float32 products)


def jax_producer(x):
    """x + PRODUCER_STEPS, one matrix product per step: y @ I is exact on small integers, so the result is known."""
    eye = jnp.eye(SIZE, dtype=x.dtype)
    body = lambda i, y: jnp.matmul(y, eye, precision=jax.lax.Precision.HIGHEST) + 1
    return jax.lax.fori_loop(0, PRODUCER_STEPS, body, x)


def torch_producer(x):
    eye = torch.eye(SIZE, device=x.device)
    for _ in range(PRODUCER_STEPS):
        x = x @ eye + 1
    return x


def timed_gpu_seconds(produce, wait):
    """How long the producer keeps the GPU busy: its output waited for, after a first call that compiles."""
    wait(produce())
    start = time.perf_counter()
    wait(produce())
    return time.perf_counter() - start


@pytest.mark.parametrize("direction", ["jax-to-torch", "torch-to-jax"])
def test_dlpack_exchange_waits_on_the_gpu_not_the_host_and_reads_the_finished_array(direction):
    """The exchange the torch scripts make each step (torch.from_dlpack of the env's output, jax.dlpack.from_dlpack of
    the action), here of an array still being computed: it must return at once (no host sync) and the consumer must
    read the finished values (it waits on the GPU for the producer's stream: no race)."""
    torch.set_float32_matmul_precision("highest")
    if direction == "jax-to-torch":
        produce = jax.jit(jax_producer)
        x = jnp.zeros((SIZE, SIZE), jnp.float32) + jnp.arange(SIZE, dtype=jnp.float32)[:, None] % 7
        busy = timed_gpu_seconds(lambda: produce(x), jax.block_until_ready)
        y = produce(x)
        start = time.perf_counter()
        consumed = torch.from_dlpack(y)
        handed = time.perf_counter() - start
        expected = torch.arange(SIZE, device="cuda", dtype=torch.float32)[:, None] % 7 + PRODUCER_STEPS
        finished = bool(torch.equal(consumed, expected.expand(SIZE, SIZE)))
    else:
        x = torch.arange(SIZE, device="cuda", dtype=torch.float32)[:, None].expand(SIZE, SIZE) % 7
        busy = timed_gpu_seconds(lambda: torch_producer(x), lambda y: torch.cuda.synchronize())
        y = torch_producer(x)
        start = time.perf_counter()
        consumed = jax.dlpack.from_dlpack(y)
        handed = time.perf_counter() - start
        expected = jnp.arange(SIZE, dtype=jnp.float32)[:, None] % 7 + PRODUCER_STEPS
        finished = bool(jnp.array_equal(consumed, jnp.broadcast_to(expected, (SIZE, SIZE))))
    assert busy > 0.05, f"the producer is too short to show a host wait ({busy:.3f} s)"
    assert handed < busy / 10, f"the hand-over took {handed:.4f} s of the producer's {busy:.3f} s: a host wait"
    assert finished, "the consumer read the array before the producer had finished it"


def test_torch_rollout_on_the_gpu_stores_exactly_the_steps_the_env_made():
    """ppo_torch.py's rollout as main() builds it on the GPU (env step jitted with its carry donated, actions to JAX by
    DLPack, each packed step read by DLPack into the storage), replayed in JAX alone from the same start on the
    actions it took: the observations, rewards and flags it stored are the replay's, bit for bit."""
    num_envs, num_steps = 4096, 64
    env, env_params = gymnax.make("CartPole-v1")
    device = jax.devices("gpu")[0]
    step, env_state = ppo_torch.env_reset(jax.random.PRNGKey(0), env, env_params, num_envs)
    obs = ppo_torch.unpack_step(torch.from_dlpack(step))[0]
    torch.manual_seed(1)
    agent = ppo_torch.make_agent(obs.shape[1], 2, "small", torch.device("cuda"))
    zeros = jnp.zeros(num_envs)
    stats = ppo_torch.EpisodeStats(zeros, zeros.astype(jnp.int32), jnp.zeros(()), jnp.zeros(()), jnp.zeros(()))
    env_carry = jax.device_put(ppo_torch.EnvCarry(jax.random.PRNGKey(2), env_state, stats), device)
    start = jax.tree.map(jnp.copy, env_carry)  # the rollout's env step donates its carry
    env_step = lambda carry, action: ppo_torch.env_step(carry, action, env=env, env_params=env_params)
    carry, storage, _ = ppo_torch.rollout(
        ppo_torch.RolloutCarry(env_carry, obs), agent, lambda o, g: ppo_torch.policy_step(o, g, network=agent.act),
        jax.jit(env_step, donate_argnums=0), jax.dlpack.from_dlpack, num_steps, 2, bootstrap_truncated=True,
    )
    replay_step, replayed = jax.jit(env_step), []
    for action in jnp.asarray(storage.actions.cpu().numpy()):
        start, step = replay_step(start, action)
        replayed.append(np.asarray(step))
    next_obs, rewards, terminated, truncated, _ = ppo_torch.unpack_step(torch.from_numpy(np.stack(replayed)))
    assert terminated.any()  # episodes ended and reset inside the rollout
    np.testing.assert_array_equal(storage.obs[1:].cpu().numpy(), next_obs[:-1].numpy())
    np.testing.assert_array_equal(carry.obs.cpu().numpy(), next_obs[-1].numpy())
    np.testing.assert_array_equal(storage.rewards.cpu().numpy(), rewards.numpy())
    np.testing.assert_array_equal(storage.terminated.cpu().numpy(), terminated.bool().numpy())
    np.testing.assert_array_equal(storage.truncated.cpu().numpy(), truncated.bool().numpy())


SYNC_WARNING = re.compile(r"^(.+?):(\d+): UserWarning: called a synchronizing CUDA operation", re.M)
# the script under torch's sync debug mode, turned on at the end of iteration 0 (its first fetch): from then on, every
# operation that makes the host wait for the GPU warns with the line that asked for it; CUDA graph replays counted
UNDER_SYNC_DEBUG = """
import atexit, runpy, sys, torch
replays, replay, tolist = [], torch.cuda.CUDAGraph.replay, torch.Tensor.tolist
torch.cuda.CUDAGraph.replay = lambda graph: replays.append(1) or replay(graph)
atexit.register(lambda: print("CUDA graph replays:", len(replays)))
def first_fetch(tensor):
    torch.Tensor.tolist = tolist
    values = tolist(tensor)
    torch.cuda.set_sync_debug_mode("warn")
    return values
torch.Tensor.tolist, sys.argv = first_fetch, sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.slow
@pytest.mark.parametrize("script, flags", [
    ("ppo_torch.py", ()), ("ppo_torch_compile.py", ()), ("ppo_torch_compile.py", ("--cudagraphs",)),
], ids=["torch", "torch_compile", "torch_compile-cudagraphs"])
def test_torch_scripts_wait_on_the_gpu_once_per_iteration(script, flags, tmp_path):
    """Under torch's sync debug mode after iteration 0 (which compiles, captures the CUDA graphs and copies the
    parameters to the GPU), on TINY: only the fetch of the logged metrics makes the host wait, once per iteration (the
    env exchange, sampling, the minibatch order, Adam and, with --cudagraphs, the replays never do). The run is the
    same with and without --cudagraphs (their iteration-0 losses agree)."""
    iterations, path = 6, os.path.join(ROOT, script)
    args = [*TINY, "--num-iterations", str(iterations), "--device", "gpu"]
    command = [sys.executable, "-W", "always::UserWarning", "-c", UNDER_SYNC_DEBUG, path, *args, *flags]
    result = subprocess.run([*command, "--log-dir", str(tmp_path), "--run-name", "run"], capture_output=True,
                            text=True, cwd=ROOT, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    waits = collections.Counter((os.path.basename(f), int(line)) for f, line in SYNC_WARNING.findall(result.stderr))
    fetch_line = next(number for number, text in enumerate(open(path), 1) if "fetched = torch.stack(" in text)
    assert waits == {(script, fetch_line): iterations - 1}
    # --cudagraphs replays every call of the policy step (16 per iteration) and of the minibatch update (4) but the
    # first three of each (two warm-ups, the capture, which runs nothing: its first replay does)
    replays = iterations * (16 + 4) - 2 * 2 if flags else 0
    assert f"CUDA graph replays: {replays}" in result.stdout
    if flags:
        plain = run_script(script, *args, "--log-dir", str(tmp_path), "--run-name", "plain", timeout=900)
        assert plain.returncode == 0, plain.stderr[-3000:]
        (scalars, _), (graphed, _) = read_run(str(tmp_path / "plain")), read_run(str(tmp_path / "run"))
        for tag in ("losses/value_loss", "losses/policy_loss", "losses/entropy"):
            assert_close(graphed[tag][0][1], scalars[tag][0][1], tag)
