"""PPO (CleanRL-style, single file) in PyTorch (eager) on a gymnax environment stepped in JAX on the same device."""
import time

PROCESS_START = time.perf_counter()  # the benchmark harness's start-up time starts here

import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX shares the GPU with torch: allocate as needed

import functools
import importlib
from collections import namedtuple
from dataclasses import dataclass
from typing import Any, Literal, Sequence

import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import torch
import torch.nn as nn
import tyro

MODEL_SIZES = {"small": (64, 64), "medium": (256, 256, 256), "large": (1024,) * 6}
CNN_SIZES = {"small": (16, 128), "medium": (64, 512), "large": (128, 1024)}  # conv channels, dense units


@dataclass
class Args:
    # experiment
    exp_name: str = os.path.basename(__file__)[: -len(".py")]
    """the name of this experiment (variant), used in the run name"""
    seed: int = 1
    """seed of parameters, environments, actions and minibatch order"""
    env_id: str = "CartPole-v1"
    """any gymnax environment with a discrete action space, or module:EnvId (the module's make_gymnax)"""
    model_size: Literal["small", "medium", "large"] = "small"
    """hidden layers: small [64, 64], medium [256] x 3, large [1024] x 6; a CNN's conv channels and dense units:
    small 16, 128 (MinAtar's), medium 64, 512, large 128, 1024"""
    network: Literal["mlp", "cnn"] = "mlp"
    """mlp: separate actor and critic MLPs; cnn (frames, as MinAtar's): a 3x3 conv and a dense layer under both heads"""
    jit_env: bool = True
    """compile the vectorised env reset/step with jax.jit (--no-jit-env runs them eagerly, op by op)"""
    sync_timing: bool = False
    """synchronise around rollout and update to time them separately"""
    profile: bool = False
    """write a profiler trace of a few steady-state iterations (8-10) next to the event file"""
    device: Literal["auto", "cpu", "gpu"] = "auto"
    """where to run: auto (GPU if present), cpu or gpu"""
    log_dir: str = "runs"
    """TensorBoard root folder"""
    run_name: str = ""
    """run folder name (default: {env_id}__{exp_name}__{model_size}__{seed}__{unix time})"""

    # algorithm
    num_envs: int = 32
    """the number of parallel environments"""
    num_steps: int = 256
    """the number of steps per environment per rollout"""
    num_iterations: int = 100
    """the number of iterations (one rollout + one update each)"""
    num_minibatches: int = 8
    """the number of minibatches per epoch"""
    update_epochs: int = 10
    """the number of passes over the batch per update"""
    learning_rate: float = 2.5e-4
    """the learning rate of the Adam optimizer"""
    anneal_lr: bool = True
    """anneal the learning rate linearly to 0 over the iterations"""
    gamma: float = 0.99
    """the discount factor"""
    gae_lambda: float = 0.95
    """the lambda of generalized advantage estimation"""
    clip_coef: float = 0.2
    """the surrogate clipping coefficient"""
    clip_vloss: bool = True
    """clip the value loss"""
    norm_adv: bool = True
    """normalise advantages per minibatch"""
    ent_coef: float = 0.01
    """the entropy coefficient"""
    vf_coef: float = 0.5
    """the value-function coefficient"""
    max_grad_norm: float = 0.5
    """the maximum global gradient norm"""
    adam_eps: float = 1e-5
    """the epsilon of Adam"""
    bootstrap_truncated: bool = True
    """bootstrap truncated episodes from V(final observation); off: truncation counts as termination"""


# ENV HELPERS: the env runs in JAX; only the arrays the loop needs cross to torch, zero-copy through DLPack
def make_env(env_id: str):
    """gymnax's env and its params; for `module:EnvId` (an env the project or the user ships, Gymnasium's
    convention), the module's `make_gymnax(EnvId)`, which returns what gymnax.make does."""
    if ":" in env_id:
        module, name = env_id.split(":", 1)
        return importlib.import_module(module).make_gymnax(name)
    return gymnax.make(env_id)


def flatten_obs(obs: jax.Array) -> jax.Array:
    """Flatten each env's observation into a float32 vector (MinAtar 10x10xC -> 100*C)."""
    return obs.reshape(obs.shape[0], -1).astype(jnp.float32)


def env_reset(key: jax.Array, env: Any, env_params: Any, num_envs: int):
    """Reset every env, packed as env_step packs a step (flags 0, final obs = obs): one memory layout, no recompiles."""
    obs, env_state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, num_envs), env_params)
    obs = flatten_obs(obs)
    return jnp.concatenate([obs, jnp.zeros((num_envs, 3)), obs], axis=1), env_state


EpisodeStats = namedtuple("EpisodeStats", "returns lengths finished_return_sum finished_length_sum finished_count")
EnvCarry = namedtuple("EnvCarry", "key env_state stats")  # what the env step carries from step to step, all in JAX


def new_iteration_stats(stats: EpisodeStats) -> EpisodeStats:
    """Keep running episodes, zero the per-iteration sums of finished ones (on the device, as the sums were)."""
    zero = functools.partial(jnp.zeros_like, stats.finished_count)  # three buffers: the env step donates each
    return stats._replace(finished_return_sum=zero(), finished_length_sum=zero(), finished_count=zero())


def track_episodes(stats: EpisodeStats, reward: jax.Array, done: jax.Array) -> EpisodeStats:
    """Masked per-env update of running returns and lengths, on device."""
    returns, lengths = stats.returns + reward, stats.lengths + 1
    return EpisodeStats(
        returns=jnp.where(done, 0.0, returns), lengths=jnp.where(done, 0, lengths),
        finished_return_sum=stats.finished_return_sum + jnp.sum(jnp.where(done, returns, 0.0)),
        finished_length_sum=stats.finished_length_sum + jnp.sum(jnp.where(done, lengths, 0)),
        finished_count=stats.finished_count + jnp.sum(done),
    )


def env_step(carry: EnvCarry, action: jax.Array, env: Any, env_params: Any):
    """Step every env and track its episodes in one compiled call. What torch needs crosses as one float32 array (one
    DLPack exchange): next obs, reward, terminated, truncated and final obs side by side (see unpack_step)."""
    key, step_key = jax.random.split(carry.key)
    keys = jax.random.split(step_key, action.shape[0])
    vmapped_step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    obs, env_state, reward, terminated, truncated, info = vmapped_step(keys, carry.env_state, action, env_params)
    stats = track_episodes(carry.stats, reward, jnp.logical_or(terminated, truncated))
    flags = jnp.stack([reward, terminated, truncated], axis=1).astype(jnp.float32)
    step = jnp.concatenate([flatten_obs(obs), flags, flatten_obs(info["final_observation"])], axis=1)
    return EnvCarry(key, env_state, stats), step


def unpack_step(step: torch.Tensor):
    """Views of env_step's packed array (a step or steps): next obs, reward, terminated, truncated, final obs."""
    obs_dim = (step.shape[-1] - 3) // 2
    return step[..., :obs_dim], step[..., obs_dim], step[..., obs_dim + 1], step[..., obs_dim + 2], step[..., -obs_dim:]


def select_device(choice: str) -> tuple[jax.Device, torch.device]:
    """One device for both frameworks: the env (JAX) and the agent (torch) share the GPU, or the CPU."""
    if choice == "auto":
        choice = "gpu" if torch.cuda.is_available() and jax.default_backend() == "gpu" else "cpu"
    if choice == "gpu" and not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device")
    return jax.devices(choice)[0], torch.device("cuda" if choice == "gpu" else "cpu")


# MODEL
def layer_init(layer: nn.Module, gain: float) -> nn.Module:
    """Orthogonal weight with `gain`, zero bias (CleanRL's layer_init)."""
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


def mlp(in_dim: int, hidden_sizes: Sequence[int], out_dim: int, out_gain: float) -> nn.Sequential:
    layers = []
    for size in hidden_sizes:
        layers += [layer_init(nn.Linear(in_dim, size), np.sqrt(2)), nn.Tanh()]
        in_dim = size
    return nn.Sequential(*layers, layer_init(nn.Linear(in_dim, out_dim), out_gain))


class Agent(nn.Module):
    """Separate actor and critic MLPs with tanh (orthogonal init, biases 0)."""

    def __init__(self, obs_dim: int, hidden_sizes: Sequence[int], action_dim: int):
        super().__init__()
        self.actor = mlp(obs_dim, hidden_sizes, action_dim, 0.01)
        self.critic = mlp(obs_dim, hidden_sizes, 1, 1.0)

    def forward(self, x):
        return self.actor(x), self.critic(x).squeeze(-1)

    def act(self, x):  # a rollout step's network: the actor alone (the critic runs once, on the stacked steps)
        return self.actor(x), None

    def value(self, x):
        return self.critic(x).squeeze(-1)


class CNNAgent(nn.Module):
    """MinAtar's network (https://arxiv.org/abs/1903.03176): a 3x3 conv and a dense layer with ReLU, shared by the
    actor and critic heads (orthogonal init, biases 0). It views each flat observation as its frame: the env's NHWC
    is NCHW with channels last in memory, which torch convolves as it is."""

    def __init__(self, frame_shape: Sequence[int], sizes: Sequence[int], action_dim: int):
        super().__init__()
        (height, width, in_channels), (channels, units) = frame_shape, sizes
        self.frame_shape = tuple(frame_shape)
        self.torso = nn.Sequential(
            layer_init(nn.Conv2d(in_channels, channels, 3), np.sqrt(2)), nn.ReLU(), nn.Flatten(),
            layer_init(nn.Linear(channels * (height - 2) * (width - 2), units), np.sqrt(2)), nn.ReLU(),
        )
        self.actor_head = layer_init(nn.Linear(units, action_dim), 0.01)
        self.critic_head = layer_init(nn.Linear(units, 1), 1.0)

    def hidden(self, x):  # (..., H * W * C) -> (..., units)
        return self.torso(x.reshape(-1, *self.frame_shape).permute(0, 3, 1, 2)).unflatten(0, x.shape[:-1])

    def forward(self, x):
        hidden = self.hidden(x)
        return self.actor_head(hidden), self.critic_head(hidden).squeeze(-1)

    def act(self, x):  # a rollout step's network: both heads, so that the shared torso runs once per observation
        return self(x)

    def value(self, x):
        return self.critic_head(self.hidden(x)).squeeze(-1)


def make_agent(obs_dim: int, action_dim: int, model_size: str, device: torch.device, frame_shape: Sequence[int] = ()):
    """Build the agent, the MLPs or the CNN over frames of `frame_shape` (H, W, C); its parameters come from torch's
    global generator (seed it first)."""
    if frame_shape:
        return CNNAgent(frame_shape, CNN_SIZES[model_size], action_dim).to(device)
    return Agent(obs_dim, MODEL_SIZES[model_size], action_dim).to(device)


def make_optimizer(agent: Agent, args: Args) -> torch.optim.Adam:
    """Adam (betas 0.9, 0.999: torch's defaults), fused: one kernel steps every parameter (clip: update_minibatch)."""
    return torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=args.adam_eps, fused=True)


Storage = namedtuple("Storage", "obs actions logprobs values rewards terminated truncated final_values")
RolloutCarry = namedtuple("RolloutCarry", "env obs")


# ROLLOUT
def gumbel_noise(num_steps: int, num_envs: int, num_actions: int, device: torch.device) -> torch.Tensor:
    """Gumbel(0, 1) noise for a whole rollout, drawn at once: argmax(logits + noise) samples softmax(logits)."""
    uniform = torch.rand(num_steps, num_envs, num_actions, device=device)
    return -torch.log(-torch.log(uniform.clamp_(min=torch.finfo(uniform.dtype).tiny)))  # U = 0 would give -inf


def policy_step(obs: torch.Tensor, gumbel: torch.Tensor, network):
    """Sample actions with the Gumbel-max trick (no torch.distributions, no host sync); keep the logits, and the values
    where `network` (the agent's `act`) computes them."""
    logits, value = network(obs)
    return torch.argmax(logits + gumbel, dim=-1).int(), logits, value


@torch.no_grad()
def rollout(carry: RolloutCarry, agent: Agent, policy_fn, env_step_fn, to_env, num_steps: int, num_actions: int,
            bootstrap_truncated: bool):
    """Collect `num_steps` vectorised steps; returns the new carry, the storage and V(last obs). A step runs only what
    the env needs (actor, sampling, env step); log-probs, values and V(final obs) come from the stacked steps."""
    env_carry, obs = carry.env._replace(stats=new_iteration_stats(carry.env.stats)), carry.obs
    gumbel = gumbel_noise(num_steps, obs.shape[0], num_actions, obs.device)
    steps = torch.empty(num_steps, obs.shape[0], 2 * obs.shape[1] + 3, device=obs.device)  # see unpack_step
    actions, logits, values = [], [], []
    for t in range(num_steps):
        action, step_logits, step_value = policy_fn(obs, gumbel[t])
        # one exchange each way: the action to JAX, the packed step back to torch (DLPack), copied into the storage
        env_carry, step = env_step_fn(env_carry, to_env(action))
        steps[t] = torch.from_dlpack(step)
        obs = unpack_step(steps[t])[0]
        actions.append(action)
        logits.append(step_logits)
        values.append(step_value)
    actions, logits = torch.stack(actions), torch.stack(logits)
    next_obs, rewards, terminated, truncated, final_obs = unpack_step(steps)
    obs_seen = torch.cat([carry.obs[None], next_obs[:-1]])
    logprobs = torch.log_softmax(logits, dim=-1).gather(-1, actions.long()[..., None]).squeeze(-1)
    # V of every observation seen (the CNN's came with the logits: its torso is shared), and V(final observation) for
    # the truncated steps' bootstrap (GAE masks the rest)
    values = agent.value(obs_seen) if values[0] is None else torch.stack(values)
    last_value = agent.value(obs)
    final_values = agent.value(final_obs) if bootstrap_truncated else torch.zeros_like(rewards)
    storage = Storage(obs_seen, actions, logprobs, values, rewards, terminated.bool(), truncated.bool(), final_values)
    return RolloutCarry(env_carry, obs), storage, last_value


# GAE
def compute_gae(storage: Storage, last_value, gamma: float, gae_lambda: float, bootstrap_truncated: bool):
    """GAE (https://arxiv.org/abs/1506.02438) with auto-reset envs: every finished episode cuts the trace; a truncated
    step (not terminated) bootstraps from V(final observation) when `bootstrap_truncated`."""
    dones = torch.logical_or(storage.terminated, storage.truncated)
    rewards = storage.rewards
    if bootstrap_truncated:
        bootstrap = torch.logical_and(storage.truncated, torch.logical_not(storage.terminated))
        rewards = rewards + gamma * storage.final_values * bootstrap
    next_values = torch.cat([storage.values[1:], last_value[None]], dim=0)
    not_done = 1.0 - dones.float()
    deltas = rewards + gamma * next_values * not_done - storage.values

    advantages, lastgaelam = torch.zeros_like(deltas), torch.zeros_like(last_value)
    for t in reversed(range(len(deltas))):
        advantages[t] = lastgaelam = deltas[t] + gamma * gae_lambda * not_done[t] * lastgaelam
    return advantages, advantages + storage.values


# LOSS
LossInfo = namedtuple("LossInfo", "policy_loss value_loss entropy approx_kl old_approx_kl clipfrac")
Batch = namedtuple("Batch", "obs actions logprobs values advantages returns")


def ppo_loss(agent: Agent, mb: Batch, clip_coef, clip_vloss, norm_adv, ent_coef, vf_coef):
    """Clipped-surrogate PPO loss (https://arxiv.org/abs/1707.06347) with clipped value loss."""
    logits, newvalue = agent(mb.obs)
    log_probs = torch.log_softmax(logits, dim=-1)
    newlogprob = log_probs.gather(1, mb.actions.long()[:, None]).squeeze(1)
    entropy = -torch.sum(torch.exp(log_probs) * log_probs, dim=-1).mean()
    logratio = newlogprob - mb.logprobs
    ratio = torch.exp(logratio)
    with torch.no_grad():
        old_approx_kl = (-logratio).mean()
        approx_kl = ((ratio - 1) - logratio).mean()
        clipfrac = (torch.abs(ratio - 1.0) > clip_coef).float().mean()

    mb_advantages = mb.advantages
    if norm_adv:
        mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std(correction=0) + 1e-8)
    pg_loss1 = -mb_advantages * ratio
    pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
    pg_loss = torch.maximum(pg_loss1, pg_loss2).mean()

    v_loss_unclipped = (newvalue - mb.returns) ** 2
    if clip_vloss:
        v_clipped = mb.values + torch.clamp(newvalue - mb.values, -clip_coef, clip_coef)
        v_loss = 0.5 * torch.maximum(v_loss_unclipped, (v_clipped - mb.returns) ** 2).mean()
    else:
        v_loss = 0.5 * v_loss_unclipped.mean()

    loss = pg_loss - ent_coef * entropy + v_loss * vf_coef
    return loss, LossInfo(pg_loss, v_loss, entropy, approx_kl, old_approx_kl, clipfrac)


# UPDATE
def update_minibatch(mb_inds: torch.Tensor, b: Batch, agent: Agent, optimizer, loss_fn, max_grad_norm: float):
    """One optimiser step on one minibatch: loss, backward, global-norm clip, Adam."""
    mb = Batch(*(x[mb_inds] for x in b))
    loss, info = loss_fn(agent, mb)
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
    optimizer.step()
    return LossInfo(*(value.detach() for value in info))


def update(storage: Storage, advantages, returns, minibatch_fn, args: Args):
    """`update_epochs` passes over the batch (steps and envs flattened), each in a fresh random minibatch order."""
    b = Batch(storage.obs, storage.actions, storage.logprobs, storage.values, advantages, returns)
    b = Batch(*(x.reshape((-1,) + x.shape[2:]) for x in b))
    b_inds = torch.stack([torch.randperm(len(b.obs), device=b.obs.device) for _ in range(args.update_epochs)])
    mb_inds = b_inds.reshape(args.update_epochs * args.num_minibatches, -1)
    infos = [minibatch_fn(inds, b) for inds in mb_inds]
    var_y = torch.var(b.returns, correction=0)
    explained_var = torch.where(var_y == 0, torch.nan, 1 - torch.var(b.returns - b.values, correction=0) / var_y)
    return LossInfo(*torch.stack([torch.stack(info) for info in infos]).mean(0)), explained_var


# TRAINING LOOP: the `run.` calls are the benchmark harness (timing, logging, profiling); the rest is PPO
def main(args: Args, run: "Run"):
    device, torch_device = select_device(args.device)
    jax.config.update("jax_default_device", device)
    torch.set_float32_matmul_precision("highest")  # full float32 matrix products (no TF32), as in JAX

    # SEEDING: JAX keys for the envs; torch's generator for parameters, actions and minibatch order
    key, env_key = jax.random.split(jax.random.PRNGKey(args.seed))
    torch.manual_seed(args.seed)
    env, env_params = make_env(args.env_id)
    step, env_state = env_reset(env_key, env, env_params, args.num_envs)
    obs = unpack_step(torch.from_dlpack(step))[0]
    frame_shape = env.observation_space(env_params).shape if args.network == "cnn" else ()
    agent = make_agent(obs.shape[1], env.action_space(env_params).n, args.model_size, torch_device, frame_shape)
    optimizer = make_optimizer(agent, args)
    zeros = jnp.zeros(args.num_envs)
    stats = EpisodeStats(zeros, zeros.astype(jnp.int32), jnp.zeros(()), jnp.zeros(()), jnp.zeros(()))
    # committed to the device like every later env output, or the env step compiles twice
    carry = RolloutCarry(jax.device_put(EnvCarry(key, env_state, stats), device), obs)

    # EXECUTABLES: run eagerly; the env step under jax.jit (its carry donated) or op by op. The action crosses to JAX as
    # a NumPy view on the CPU (faster than DLPack there, measured), through DLPack on the GPU (no copy, no host sync)
    policy_fn = functools.partial(policy_step, network=agent.act)
    if not args.jit_env:
        jax.config.update("jax_disable_jit", True)  # jax.jit then calls the env step as it is, op by op
    env_step_fn = jax.jit(functools.partial(env_step, env=env, env_params=env_params), donate_argnums=0)
    to_env = torch.Tensor.numpy if torch_device.type == "cpu" else jax.dlpack.from_dlpack
    loss_fn = functools.partial(ppo_loss, clip_coef=args.clip_coef, clip_vloss=args.clip_vloss, norm_adv=args.norm_adv,
                                ent_coef=args.ent_coef, vf_coef=args.vf_coef)
    minibatch_fn = functools.partial(update_minibatch, agent=agent, optimizer=optimizer, loss_fn=loss_fn,
                                     max_grad_norm=args.max_grad_norm)
    rollout_fn = functools.partial(rollout, agent=agent, policy_fn=policy_fn, env_step_fn=env_step_fn, to_env=to_env,
                                   num_steps=args.num_steps, num_actions=env.action_space(env_params).n,
                                   bootstrap_truncated=args.bootstrap_truncated)

    for iteration in range(args.num_iterations):
        run.start_iteration(iteration)
        lr = args.learning_rate * (1.0 - iteration / args.num_iterations) if args.anneal_lr else args.learning_rate
        optimizer.param_groups[0]["lr"] = lr

        # ROLLOUT + GAE
        carry, storage, last_value = rollout_fn(carry)
        advantages, returns = compute_gae(storage, last_value, args.gamma, args.gae_lambda, args.bootstrap_truncated)
        run.end_phase("rollout", synchronize, torch_device, carry.env)
        global_step = (iteration + 1) * args.num_envs * args.num_steps

        # UPDATE
        losses, explained_var = update(storage, advantages, returns, minibatch_fn, args)
        run.end_phase("update", synchronize, torch_device, ())

        # LOGGING: the one host fetch of this iteration
        fetched = torch.stack([*losses, explained_var, *map(torch.from_dlpack, carry.env.stats[2:])]).tolist()
        losses = dict(zip([*LossInfo._fields, "explained_variance"], fetched))
        run.log_iteration(global_step, {"learning_rate": lr}, losses, *fetched[-3:])  # finished episodes: sums, count
    run.finish(peak_device_bytes(device, torch_device))


# ======================================================================================================================
# BENCHMARK HARNESS: what makes a run of this script a benchmark run, not the algorithm: argument checks, the run folder
# and its TensorBoard event file, the system text, the clocks (start-up, each iteration, the --sync-timing phases,
# total), --profile, peak memory, the stop on a NaN loss and on SIGINT/SIGTERM. A reader copying the script for their
# own project may delete this section: main() calls it through run.start_iteration, run.end_phase, run.log_iteration
# and run.finish, and the last lines of the file start it.
# ======================================================================================================================
import contextlib
import gc
import importlib.metadata
import math
import platform
import resource
import signal
import subprocess
import sys
from dataclasses import asdict

from gymnax.environments import spaces
from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, types_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter


def check_args(args: Args) -> str | None:
    """Return why `args` cannot run, or None when they can; checked before anything is created."""
    counts = ("num_envs", "num_steps", "num_iterations", "num_minibatches", "update_epochs")
    rules = (
        ("must be positive", lambda value: value > 0, counts + ("learning_rate", "clip_coef", "max_grad_norm", "adam_eps")),
        ("must be >= 0", lambda value: value >= 0, ("ent_coef", "vf_coef")),
        ("must be in (0, 1]", lambda value: 0 < value <= 1, ("gamma", "gae_lambda")),
    )
    for requirement, valid, names in rules:
        for name in names:
            if not valid(getattr(args, name)):
                return f"--{name.replace('_', '-')} {requirement}, got {getattr(args, name)}"
    batch, minibatches = args.num_envs * args.num_steps, args.num_minibatches
    if batch < minibatches:
        return f"minibatch size 0: batch size {batch} (num_envs * num_steps) < --num-minibatches {minibatches}"
    if batch % minibatches:
        return f"batch size {batch} (num_envs * num_steps) is not divisible by --num-minibatches {minibatches}"
    if ":" not in args.env_id and args.env_id not in gymnax.registered_envs:
        return f"unknown env '{args.env_id}': not a registered gymnax environment, nor module:EnvId"
    try:
        env, env_params = make_env(args.env_id)
    except (ImportError, AttributeError, ValueError) as error:
        return f"--env-id {args.env_id}: {error}"
    if not isinstance(env.action_space(env_params), spaces.Discrete):
        return f"env '{args.env_id}' has a continuous action space; PPO here needs discrete actions"
    if args.network == "cnn" and len(env.observation_space(env_params).shape) != 3:
        shape = env.observation_space(env_params).shape
        return f"--network cnn needs frames (height, width, channels); env '{args.env_id}' observes shape {shape}"
    try:
        select_device(args.device)
    except RuntimeError:
        return f"--device {args.device}: no such device available to jax and torch"
    return None


class EventWriter:
    """A minimal TensorBoard writer on tensorboard's own event files: scalars, and markdown tables as text."""

    def __init__(self, log_dir: str):
        self.writer = EventFileWriter(log_dir)

    def write(self, value: summary_pb2.Summary.Value, step: int):
        self.writer.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary_pb2.Summary(value=[value])))

    def add_scalar(self, tag: str, value: float, step: int):
        self.write(summary_pb2.Summary.Value(tag=tag, simple_value=float(value)), step)

    def add_table(self, tag: str, header: str, rows: dict):
        text = f"|{header}|value|\n|-|-|\n" + "\n".join(f"|{key}|{value}|" for key, value in rows.items())
        metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
        tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING, string_val=[text.encode()])
        self.write(summary_pb2.Summary.Value(tag=tag, metadata=metadata, tensor=tensor), 0)


def system_info(args: Args) -> dict:
    """Script, compile mode, device, Python and package versions, CPU model, git commit."""
    packages = ("jax", "jaxlib", "torch", "gymnax", "numpy", "tensorboard")
    compile_mode, (device, _) = "env-jit" if args.jit_env else "none", select_device(args.device)
    device_name = f"{device.platform}: {device.device_kind}"
    here = os.path.dirname(os.path.abspath(__file__))
    git = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True)
    return {
        "script": os.path.basename(__file__), "compile_mode": compile_mode, "device": device_name,
        "python": platform.python_version(), **{name: importlib.metadata.version(name) for name in packages},
        "cpu": cpu_model(), "git_commit": git.stdout.strip() if git.returncode == 0 else "none",
    }


def cpu_model() -> str:
    names = []
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
    return names[0] if names else platform.processor() or platform.machine()


def profile_trace(run_dir: str):
    """A torch.profiler trace (ops and Python stacks), written into `run_dir` on exit (Perfetto, chrome://tracing)."""
    trace_handler = torch.profiler.tensorboard_trace_handler(run_dir, use_gzip=True)
    return torch.profiler.profile(with_stack=True, on_trace_ready=trace_handler)


def synchronize(torch_device: torch.device, jax_arrays: Any):
    """Wait until JAX has finished `jax_arrays` and torch its queued work (torch on the CPU is synchronous)."""
    jax.block_until_ready(jax_arrays)
    if torch_device.type == "cuda":
        torch.cuda.synchronize(torch_device)


def peak_device_bytes(device: jax.Device, torch_device: torch.device) -> int | None:
    """Peak device memory of the process (docs/method.md, Logged metrics): JAX's env peak + torch's; None on the CPU."""
    torch_peak = torch.cuda.max_memory_allocated(torch_device) if torch_device.type == "cuda" else None
    return sum(filter(None, [(device.memory_stats() or {}).get("peak_bytes_in_use"), torch_peak])) or None


def peak_rss_bytes() -> int:
    """Peak resident memory: Linux's VmHWM (ru_maxrss there keeps the parent's peak), elsewhere ru_maxrss."""
    with contextlib.suppress(OSError), open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def fail(message: str, status: int = 2):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(status)


def exits_are_dropped_in(frame) -> bool:
    """Whether a signal handler interrupted a garbage-collection callback (JAX registers one) or a finaliser, where
    Python prints the exception raised as "Exception ignored" with a traceback, and goes on."""
    callbacks = {callback.__code__ for callback in gc.callbacks if hasattr(callback, "__code__")}
    return frame is not None and (frame.f_code in callbacks or frame.f_code.co_name == "__del__")


class Run:
    """One benchmark run: its folder and event file, its clocks and its profiler; main() reports each iteration here."""

    def __init__(self, args: Args):
        if reason := check_args(args):
            fail(reason)
        default_name = f"{args.env_id}__{args.exp_name}__{args.model_size}__{args.seed}__{int(time.time())}"
        args.run_name = args.run_name or default_name
        self.args, self.run_dir = args, os.path.join(args.log_dir, args.run_name)
        try:  # before any work: a folder that cannot be made (under a file, in /proc, where os.access passes root)
            os.makedirs(self.run_dir, exist_ok=True)
        except OSError as error:
            fail(f"--log-dir {args.log_dir}: cannot create the run folder {self.run_dir} ({error.strerror or error})")
        self.writer = EventWriter(self.run_dir)
        # --profile traces iterations 8-10, or those a shorter run has (at least its last)
        self.profile_iterations = range(min(8, args.num_iterations - 1), min(11, args.num_iterations))
        self.profiling, self.phase_ends, self.stopped_by = contextlib.ExitStack(), {}, None
        signal.signal(signal.SIGINT, self.stop_on_signal)
        signal.signal(signal.SIGTERM, self.stop_on_signal)

    def start_iteration(self, iteration: int):
        now = time.perf_counter()
        if iteration == 0:  # the texts hold every setting now, those main() computes too
            self.writer.add_table("hyperparameters", "param", asdict(self.args))
            self.writer.add_table("system", "key", system_info(self.args))
            self.writer.add_scalar("time/startup", now - PROCESS_START, 0)
            self.training_start = self.last_fetch = now
        self.iteration, self.iteration_start = iteration, now
        if self.args.profile and iteration == self.profile_iterations.start:
            self.profiling.enter_context(profile_trace(self.run_dir))

    def end_phase(self, phase: str, synchronize_fn, *arrays):
        """With --sync-timing, wait until the phase's work is done and note the time; otherwise do nothing (no sync)."""
        if self.args.sync_timing:
            synchronize_fn(*arrays)
            self.phase_ends[phase] = time.perf_counter()

    def log_iteration(self, global_step, charts: dict, losses: dict, finished_return_sum, finished_length_sum,
                      finished_count):
        """Write the iteration's scalars (their values fetched already), print its line, stop on a NaN or inf loss."""
        if self.stopped_by:  # the handler's exit was swallowed by the code it interrupted (seen in torch.compile)
            sys.exit(128 + self.stopped_by)
        now, iteration, add_scalar = time.perf_counter(), self.iteration, self.writer.add_scalar
        if finished_count > 0:
            add_scalar("charts/episodic_return", finished_return_sum / finished_count, global_step)
            add_scalar("charts/episodic_length", finished_length_sum / finished_count, global_step)
        for name, value in charts.items():  # the algorithm's own: PPO's learning rate
            add_scalar(f"charts/{name}", value, global_step)
        add_scalar("charts/SPS", global_step / (now - self.training_start), global_step)
        for name, value in losses.items():
            add_scalar(f"losses/{name}", value, global_step)
        add_scalar("time/iteration", now - self.last_fetch, iteration)
        if self.args.sync_timing:
            add_scalar("time/rollout", self.phase_ends["rollout"] - self.iteration_start, iteration)
            add_scalar("time/update", self.phase_ends["update"] - self.phase_ends["rollout"], iteration)
        mean_return = finished_return_sum / finished_count if finished_count else math.nan  # nan: no episode ended
        print(f"iteration {iteration + 1}/{self.args.num_iterations} global_step={global_step}"
              f" return={mean_return:.1f} time={now - self.last_fetch:.3f}s", flush=True)
        self.last_fetch = now
        if self.args.profile and iteration == self.profile_iterations[-1]:
            self.close_profiler()
        # a NaN or inf loss stops the run; explained variance is NaN by design when the returns do not vary
        diverged = [value for name, value in losses.items() if name != "explained_variance" and not math.isfinite(value)]
        if diverged:
            nan_or_inf = "NaN" if any(map(math.isnan, diverged)) else "inf"
            fail(f"loss is {nan_or_inf} at iteration {iteration + 1}; partial run in {self.run_dir}", 3)

    def finish(self, peak_bytes: int | None):
        """The run's last scalars; time/total, written last, marks it finished."""
        if peak_bytes is not None:
            self.writer.add_scalar("memory/peak_bytes", peak_bytes, self.args.num_iterations)
        self.writer.add_scalar("memory/peak_rss_bytes", peak_rss_bytes(), self.args.num_iterations)
        self.writer.add_scalar("time/total", self.last_fetch - self.training_start, self.args.num_iterations)

    def stop_on_signal(self, signum: int, frame: Any):
        """SIGINT/SIGTERM: say where the partial run is and exit 128 + signal (the event file closes on the way out)."""
        self.ignore_signals()
        self.stopped_by = signal.Signals(signum)
        print(f"interrupted by {self.stopped_by.name}: partial run (no time/total) in {self.run_dir}", file=sys.stderr)
        if not exits_are_dropped_in(frame):  # else the run's next check exits (log_iteration)
            sys.exit(128 + signum)

    def ignore_signals(self):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def close_profiler(self):
        """Write the trace with SIGINT/SIGTERM held back (one inside the trace writer would leave a corrupt file), then
        pass a signal that came to the handler it was for."""
        held = []
        handlers = {signum: signal.signal(signum, lambda signum, frame: held.append(signum))
                    for signum in (signal.SIGINT, signal.SIGTERM)}
        self.profiling.close()
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        if held and callable(handlers[held[0]]):
            handlers[held[0]](held[0], None)

    def close(self):
        self.ignore_signals()  # a late signal must not cut the close short
        self.profiling.close()  # a run stopped in its profiled iterations still writes its trace
        self.writer.writer.close()
        if self.stopped_by:  # its exit may have come out as another error, where C++ code (jit's cache) called us
            sys.exit(128 + self.stopped_by)


if __name__ == "__main__":
    run = Run(tyro.cli(Args))
    try:
        main(run.args, run)
    finally:
        run.close()
