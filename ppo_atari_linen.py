"""PPO (CleanRL-style, single file) in Flax Linen + optax: the Nature CNN on Atari frames from ale-py's C++ env."""
import time

PROCESS_START = time.perf_counter()  # the benchmark harness's start-up time starts here

import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # on a GPU: allocate as needed (peak memory is logged)

import functools
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import tyro
from ale_py import AtariVectorEnv
from flax.training.train_state import TrainState

# the Nature CNN's convolutions (https://www.nature.com/articles/nature14236): (channels, kernel size, stride)
NATURE_CONVS = ((32, 8, 4), (64, 4, 2), (64, 3, 1))


@dataclass
class Args:
    # experiment
    exp_name: str = os.path.basename(__file__)[: -len(".py")]
    """the name of this experiment (variant), used in the run name"""
    seed: int = 1
    """seed of parameters, environments, actions and minibatch order"""
    env_id: str = "Breakout-v5"
    """Breakout-v5 or Pong-v5 (ale-py's games; their ROMs ship in its wheel)"""
    model_size: Literal["nature"] = "nature"
    """the Nature CNN: convolutions of 32, 64, 64 channels and a dense layer of 512 (the one size)"""
    jit: bool = True
    """compile the per-step policy and bookkeeping, GAE and update with jax.jit (--no-jit runs them op by op)"""
    sync_timing: bool = False
    """synchronise around rollout and update to time them separately"""
    profile: bool = False
    """write a profiler trace of a few steady-state iterations (8-10) next to the event file"""
    device: Literal["auto", "cpu", "gpu"] = "auto"
    """where the agent runs: auto (GPU if present), cpu or gpu; the env always runs on the CPU"""
    log_dir: str = "runs"
    """TensorBoard root folder"""
    run_name: str = ""
    """run folder name (default: {env_id}__{exp_name}__{model_size}__{seed}__{unix time})"""

    # algorithm: CleanRL's ppo_atari_envpool.py
    num_envs: int = 8
    """the number of parallel environments"""
    num_steps: int = 128
    """the number of steps per environment per rollout"""
    num_iterations: int = 100
    """the number of iterations (one rollout + one update each; CleanRL trains 10M env steps, 9,765 iterations)"""
    num_minibatches: int = 4
    """the number of minibatches per epoch"""
    update_epochs: int = 4
    """the number of passes over the batch per update"""
    learning_rate: float = 2.5e-4
    """the learning rate of the Adam optimizer"""
    anneal_lr: bool = True
    """anneal the learning rate linearly to 0 over the iterations"""
    gamma: float = 0.99
    """the discount factor"""
    gae_lambda: float = 0.95
    """the lambda of generalized advantage estimation"""
    clip_coef: float = 0.1
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


# ENV HELPERS: ale-py steps the games in C++ on the CPU; each step's frames cross to the device once, as uint8
ALE_GAMES = {"Breakout-v5": "breakout", "Pong-v5": "pong"}


def make_envs(env_id: str, num_envs: int) -> AtariVectorEnv:
    """CleanRL's Atari wrappers as ale-py's vector env provides them: up to 30 no-op steps and FIRE at a game's start,
    each action repeated for 4 frames with the last two max-pooled, 84x84 grey frames, the last 4 stacked, 108,000
    frames at most (then truncated), no sticky actions; a game that ends resets within the step that ends it. The games
    play whole, their rewards as scored: the learner ends an episode at every life lost and clips rewards to their sign
    (CleanRL's episodic life and reward clipping), while the logged returns are the games'."""
    return AtariVectorEnv(
        ALE_GAMES[env_id], num_envs, autoreset_mode="SameStep", episodic_life=False, reward_clipping=False,
        repeat_action_probability=0.0, noop_max=30, use_fire_reset=True, frameskip=4, maxpool=True, stack_num=4,
        img_height=84, img_width=84, grayscale=True, max_num_frames_per_episode=108_000,
    )


def env_reset(envs: AtariVectorEnv, seed: int) -> tuple:
    """Reset every env: its stacked frames (num_envs, 4, 84, 84) and lives, from which env_step tells a life lost."""
    frames, info = envs.reset(seed=seed)
    return frames, info["lives"].copy()


def env_step(action: np.ndarray, envs: AtariVectorEnv, lives: np.ndarray) -> tuple:
    """Step every env: its frames (uint8) and float32 flags [reward, terminated, truncated, life lost] per env;
    `lives`, each env's before the step, is updated in place. A game that ended is already reset: its frames are the
    new game's, and no life is lost there."""
    frames, reward, terminated, truncated, info = envs.step(action)
    life_lost = info["lives"] < lives
    lives[:] = info["lives"]
    return frames, np.stack([reward, terminated, truncated, life_lost], axis=1).astype(np.float32)


def select_device(choice: str) -> jax.Device:
    """The device asked for (auto: JAX's default, the GPU if present); a RuntimeError if there is none."""
    return jax.devices()[0] if choice == "auto" else jax.devices(choice)[0]


# MODEL
def conv_as_matmul(inputs, kernel, strides, padding, **_):
    """The convolution (NHWC frames, HWIO kernel, no padding) as the frames' patches, sliced with its stride, times the
    kernel: XLA:CPU runs a convolution's gradient inside a loop's body (the update's lax.scan) several times slower
    than a matrix product (docs/variants.md)."""
    if padding != "VALID":
        raise ValueError("conv_as_matmul convolves with no padding only")
    (height, width), (row_stride, col_stride) = kernel.shape[:2], strides
    rows = (inputs.shape[-3] - height) // row_stride + 1
    cols = (inputs.shape[-2] - width) // col_stride + 1
    last_row, last_col = row_stride * (rows - 1) + 1, col_stride * (cols - 1) + 1
    patches = [inputs[..., i : i + last_row : row_stride, j : j + last_col : col_stride, :]
               for i in range(height) for j in range(width)]
    # a patch's features are ordered (kernel row, kernel column, input channel), as the kernel's
    return jnp.concatenate(patches, axis=-1) @ kernel.reshape(-1, kernel.shape[-1])


class Agent(nn.Module):
    """CleanRL's Atari agent: the Nature CNN's convolutions and dense layer with ReLU, shared by the actor and critic
    heads (orthogonal init: gain sqrt(2), the actor's head 0.01, the critic's 1; biases 0). It takes the stacked frames
    as the env gives them (N, 4, 84, 84, uint8), scales them by 1/255 and convolves them channels last (NHWC)."""

    action_dim: int

    def setup(self):
        init = nn.initializers.orthogonal(np.sqrt(2))
        self.convs = [
            nn.Conv(channels, (size, size), (stride, stride), padding="VALID", kernel_init=init,
                    conv_general_dilated=conv_as_matmul)
            for channels, size, stride in NATURE_CONVS
        ]
        self.dense = nn.Dense(512, kernel_init=init)
        self.actor = nn.Dense(self.action_dim, kernel_init=nn.initializers.orthogonal(0.01))
        self.critic = nn.Dense(1, kernel_init=nn.initializers.orthogonal(1.0))

    def torso(self, frames):
        x = jnp.transpose(frames, (0, 2, 3, 1)) / 255.0
        for conv in self.convs:
            x = nn.relu(conv(x))
        return nn.relu(self.dense(x.reshape(x.shape[0], -1)))

    def __call__(self, frames):
        hidden = self.torso(frames)
        return self.actor(hidden), self.critic(hidden).squeeze(-1)

    def value(self, frames):
        return self.critic(self.torso(frames)).squeeze(-1)


def make_agent(key: jax.Array, frame_shape: tuple, action_dim: int):
    """Build the agent and its seeded parameters (init runs the network once: compiled whole, not op by op)."""
    agent = Agent(action_dim)
    return agent, jax.jit(agent.init)(key, jnp.zeros((1, *frame_shape), jnp.uint8))


def scale_by_adam(eps: float) -> optax.GradientTransformation:
    """`optax.scale_by_adam` with a float32 step count, same maths. optax keeps an int32 count, and eagerly `b ** count`
    with a concrete integer becomes `lax.integer_pow` with a static exponent: a compilation per step under --no-jit."""
    adam = optax.scale_by_adam(eps=eps)
    init = lambda params: adam.init(params)._replace(count=jnp.zeros([], jnp.float32))
    return optax.GradientTransformation(init, adam.update)


def make_optimizer(args: Args) -> optax.GradientTransformation:
    """Global-norm clip, then Adam; the LR is held constant within an iteration and annealed between."""
    updates_per_iteration = args.update_epochs * args.num_minibatches

    def learning_rate(count):  # the iteration's LR for each of its optimiser steps
        if not args.anneal_lr:
            return args.learning_rate
        return args.learning_rate * (1.0 - count // updates_per_iteration / args.num_iterations)

    adam = scale_by_adam(eps=args.adam_eps)
    return optax.chain(optax.clip_by_global_norm(args.max_grad_norm), adam, optax.scale_by_learning_rate(learning_rate))



class Storage(NamedTuple):
    obs: jax.Array
    actions: jax.Array
    logprobs: jax.Array
    values: jax.Array
    rewards: jax.Array
    dones: jax.Array


class EpisodeStats(NamedTuple):
    returns: jax.Array
    lengths: jax.Array
    finished_return_sum: jax.Array
    finished_length_sum: jax.Array
    finished_count: jax.Array


class RolloutCarry(NamedTuple):
    obs: jax.Array
    key: jax.Array
    stats: EpisodeStats


def new_iteration_stats(stats: EpisodeStats) -> EpisodeStats:
    """Keep running episodes, zero the per-iteration sums of finished ones."""
    return EpisodeStats(stats.returns, stats.lengths, jnp.zeros(()), jnp.zeros(()), jnp.zeros(()))


def track_episodes(stats: EpisodeStats, reward: jax.Array, done: jax.Array) -> EpisodeStats:
    """Masked per-env update of running returns and lengths, on device."""
    returns, lengths = stats.returns + reward, stats.lengths + 1
    return EpisodeStats(
        returns=jnp.where(done, 0.0, returns), lengths=jnp.where(done, 0, lengths),
        finished_return_sum=stats.finished_return_sum + jnp.sum(jnp.where(done, returns, 0.0)),
        finished_length_sum=stats.finished_length_sum + jnp.sum(jnp.where(done, lengths, 0)),
        finished_count=stats.finished_count + jnp.sum(done),
    )


# ROLLOUT
def policy_step(params: Any, obs: jax.Array, key: jax.Array, agent: Agent):
    """Sample actions, their log-probs and V(obs); the key is split here and the next one returned."""
    key, action_key = jax.random.split(key)
    logits, value = agent.apply(params, obs)
    action = jax.random.categorical(action_key, logits)
    logprob = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], axis=1).squeeze(1)
    return key, action, logprob, value


def start_rollout(params: Any, carry: RolloutCarry, agent: Agent):
    """The rollout's first compiled call: split off the update's key, start the episode sums, sample actions."""
    key, update_key = jax.random.split(carry.key)
    key, action, logprob, value = policy_step(params, carry.obs, key, agent)
    return RolloutCarry(carry.obs, key, new_iteration_stats(carry.stats)), update_key, action, logprob, value


def act_step(params: Any, stats: EpisodeStats, key: jax.Array, frames: jax.Array, flags: jax.Array, agent: Agent):
    """One compiled call per env step: count the step just taken into the games' returns (a game ends when it is
    over or truncated, not at a life lost), then sample the next actions from its frames."""
    reward, terminated, truncated, _ = flags.T
    stats = track_episodes(stats, reward, jnp.logical_or(terminated, truncated))
    return stats, *policy_step(params, frames, key, agent)  # then key, action, logprob, value


def stack_transitions(first_obs: jax.Array, transitions: list) -> Storage:
    """The per-step outputs stacked on a time axis (one call, not one per step); `first_obs` is what step 0 saw. The
    learner's episode ends at every life lost, game over or truncation (CleanRL's, which bootstraps no truncation), and
    its rewards are the scores' signs."""
    actions, logprobs, values, frames, flags = (jnp.stack(field) for field in zip(*transitions))
    reward, terminated, truncated, life_lost = jnp.moveaxis(flags, -1, 0)
    obs = jnp.concatenate([first_obs[None], frames[:-1]])
    dones = (terminated + truncated + life_lost) > 0
    return Storage(obs, actions, logprobs, values, jnp.sign(reward), dones)


def rollout(params: Any, carry: RolloutCarry, start_fn, env_step_fn, act_fn, stack_fn, num_steps: int):
    """Collect `num_steps` vectorised steps with the policy `params`: new carry, storage, V(last obs), update key."""
    carry, update_key, action, logprob, value = start_fn(params, carry)
    frames, key, stats = carry
    transitions = []
    for _ in range(num_steps):
        # one exchange each way: the action to NumPy, the frames and flags to the default device (uncommitted)
        frames, flags = jax.device_put(env_step_fn(jax.device_get(action)))
        taken = (action, logprob, value)
        stats, key, action, logprob, value = act_fn(params, stats, key, frames, flags)
        transitions.append((*taken, frames, flags))
    storage = stack_fn(carry.obs, transitions)
    # the last call's value is V(last obs); its actions are never taken (the next rollout samples with new params)
    return RolloutCarry(frames, key, stats), storage, value, update_key


# GAE
def compute_gae(storage: Storage, last_value, gamma: float, gae_lambda: float):
    """GAE (https://arxiv.org/abs/1506.02438) with auto-reset envs: every ended episode cuts the trace."""
    next_values = jnp.concatenate([storage.values[1:], last_value[None]], axis=0)
    not_done = 1.0 - storage.dones.astype(jnp.float32)
    deltas = storage.rewards + gamma * next_values * not_done - storage.values

    def backward(lastgaelam, step):
        delta, nonterminal = step
        lastgaelam = delta + gamma * gae_lambda * nonterminal * lastgaelam
        return lastgaelam, lastgaelam

    _, advantages = jax.lax.scan(backward, jnp.zeros_like(last_value), (deltas, not_done), reverse=True)
    return advantages, advantages + storage.values


# LOSS
class LossInfo(NamedTuple):
    policy_loss: jax.Array
    value_loss: jax.Array
    entropy: jax.Array
    approx_kl: jax.Array
    old_approx_kl: jax.Array
    clipfrac: jax.Array


class Batch(NamedTuple):
    obs: jax.Array
    actions: jax.Array
    logprobs: jax.Array
    values: jax.Array
    advantages: jax.Array
    returns: jax.Array


def ppo_loss(params, agent: Agent, mb: Batch, clip_coef, clip_vloss, norm_adv, ent_coef, vf_coef):
    """Clipped-surrogate PPO loss (https://arxiv.org/abs/1707.06347) with clipped value loss."""
    logits, newvalue = agent.apply(params, mb.obs)
    log_probs = jax.nn.log_softmax(logits)
    newlogprob = jnp.take_along_axis(log_probs, mb.actions[:, None], axis=1).squeeze(1)
    entropy = -jnp.sum(jnp.exp(log_probs) * log_probs, axis=-1).mean()
    logratio = newlogprob - mb.logprobs
    ratio = jnp.exp(logratio)
    old_approx_kl = (-logratio).mean()
    approx_kl = ((ratio - 1) - logratio).mean()
    clipfrac = (jnp.abs(ratio - 1.0) > clip_coef).astype(jnp.float32).mean()

    mb_advantages = mb.advantages
    if norm_adv:
        mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
    pg_loss1 = -mb_advantages * ratio
    pg_loss2 = -mb_advantages * jnp.clip(ratio, 1 - clip_coef, 1 + clip_coef)
    pg_loss = jnp.maximum(pg_loss1, pg_loss2).mean()

    v_loss_unclipped = (newvalue - mb.returns) ** 2
    if clip_vloss:
        v_clipped = mb.values + jnp.clip(newvalue - mb.values, -clip_coef, clip_coef)
        v_loss = 0.5 * jnp.maximum(v_loss_unclipped, (v_clipped - mb.returns) ** 2).mean()
    else:
        v_loss = 0.5 * v_loss_unclipped.mean()

    loss = pg_loss - ent_coef * entropy + v_loss * vf_coef
    return loss, LossInfo(pg_loss, v_loss, entropy, approx_kl, old_approx_kl, clipfrac)


# UPDATE
def update_minibatch(train_state: TrainState, mb_inds: jax.Array, b: Batch, loss_fn):
    mb = jax.tree.map(lambda x: x[mb_inds], b)
    (_, info), grads = jax.value_and_grad(loss_fn, has_aux=True)(train_state.params, mb=mb)
    return train_state.apply_gradients(grads=grads), info


def update(train_state: TrainState, storage: Storage, advantages, returns, key: jax.Array, agent: Agent, args: Args):
    """`update_epochs` passes over the batch (steps and envs flattened), each in a fresh random minibatch order."""
    b = Batch(storage.obs, storage.actions, storage.logprobs, storage.values, advantages, returns)
    b = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), b)
    epoch_keys = jax.random.split(key, args.update_epochs)
    b_inds = jax.vmap(jax.random.permutation, in_axes=(0, None))(epoch_keys, b.obs.shape[0])
    mb_inds = b_inds.reshape(args.update_epochs * args.num_minibatches, -1)
    loss_fn = functools.partial(
        ppo_loss, agent=agent, clip_coef=args.clip_coef, clip_vloss=args.clip_vloss, norm_adv=args.norm_adv,
        ent_coef=args.ent_coef, vf_coef=args.vf_coef,
    )
    step = functools.partial(update_minibatch, b=b, loss_fn=loss_fn)
    train_state, infos = jax.lax.scan(step, train_state, mb_inds)
    var_y = jnp.var(b.returns)
    explained_var = jnp.where(var_y == 0, jnp.nan, 1 - jnp.var(b.returns - b.values) / var_y)
    return train_state, jax.tree.map(jnp.mean, infos), explained_var



# TRAINING LOOP: the `run.` calls are the benchmark harness (timing, logging, profiling); the rest is PPO
def main(args: Args, run: "Run"):
    device = select_device(args.device)
    jax.config.update("jax_default_device", device)
    jax.config.update("jax_default_matmul_precision", "highest")  # full float32 matrix products, as in torch

    # SEEDING: --seed for the envs; JAX keys for parameters, actions and minibatch order
    key, param_key = jax.random.split(jax.random.PRNGKey(args.seed))
    envs = make_envs(args.env_id, args.num_envs)
    frames, lives = env_reset(envs, args.seed)
    obs = jax.device_put(frames)
    agent, params = make_agent(param_key, obs.shape[1:], envs.single_action_space.n)
    train_state = TrainState.create(apply_fn=agent.apply, params=params, tx=make_optimizer(args))
    zeros = jnp.zeros(args.num_envs)
    stats = EpisodeStats(zeros, zeros.astype(jnp.int32), jnp.zeros(()), jnp.zeros(()), jnp.zeros(()))
    carry = RolloutCarry(obs, key, stats)

    # EXECUTABLES: the same top-level functions, under jax.jit or run eagerly (op by op, no retracing)
    start_fn = functools.partial(start_rollout, agent=agent)
    act_fn = functools.partial(act_step, agent=agent)
    gae_fn = functools.partial(compute_gae, gamma=args.gamma, gae_lambda=args.gae_lambda)
    update_fn = functools.partial(update, agent=agent, args=args)
    stack_fn = stack_transitions
    if args.jit:
        # donated: the rollout carry, its stats and key, and the train state, which the calls replace (XLA reuses them)
        start_fn, act_fn = jax.jit(start_fn, donate_argnums=1), jax.jit(act_fn, donate_argnums=(1, 2))
        stack_fn, gae_fn, update_fn = jax.jit(stack_fn), jax.jit(gae_fn), jax.jit(update_fn, donate_argnums=0)
    else:
        jax.config.update("jax_disable_jit", True)
    env_step_fn = functools.partial(env_step, envs=envs, lives=lives)
    rollout_fn = functools.partial(
        rollout, start_fn=start_fn, env_step_fn=env_step_fn, act_fn=act_fn, stack_fn=stack_fn, num_steps=args.num_steps
    )

    global_step = 0
    for iteration in range(args.num_iterations):
        run.start_iteration(iteration)
        lr = args.learning_rate * (1.0 - iteration / args.num_iterations) if args.anneal_lr else args.learning_rate

        # ROLLOUT + GAE
        carry, storage, last_value, update_key = rollout_fn(train_state.params, carry)
        advantages, returns = gae_fn(storage, last_value)
        run.end_phase("rollout", jax.block_until_ready, (advantages, returns, carry))
        global_step += args.num_envs * args.num_steps

        # UPDATE
        train_state, losses, explained_var = update_fn(train_state, storage, advantages, returns, update_key)
        run.end_phase("update", jax.block_until_ready, (train_state, losses))

        # LOGGING: the one host fetch of this iteration, of the finished games' sums only
        losses, explained_var, finished = jax.device_get((losses, explained_var, carry.stats[2:]))
        losses = dict(losses._asdict(), explained_variance=explained_var)
        run.log_iteration(global_step, {"learning_rate": lr}, losses, *finished)
    envs.close()
    run.finish(peak_device_bytes(device))


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
    if args.env_id not in ALE_GAMES:
        return f"--env-id {args.env_id}: not an Atari game of this script ({', '.join(ALE_GAMES)}): it takes frames"
    try:
        select_device(args.device)
    except RuntimeError:
        return f"--device {args.device}: no such device available to jax"
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
    packages = ("jax", "jaxlib", "flax", "optax", "ale-py", "numpy", "tensorboard")
    compile_mode = "jit" if args.jit else "none"
    device = select_device(args.device)
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
    """A jax.profiler trace, written under `run_dir`/plugins/profile on exit (TensorBoard's profile plugin, Perfetto)."""
    return jax.profiler.trace(run_dir, create_perfetto_trace=True)


def peak_device_bytes(device: jax.Device) -> int | None:
    """Peak device memory of the process (docs/method.md, Logged metrics): JAX's peak; None on the CPU."""
    return (device.memory_stats() or {}).get("peak_bytes_in_use")


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
