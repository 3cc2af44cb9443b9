"""PPO (CleanRL-style, single file) in PyTorch + torch.compile: the Nature CNN on Atari frames from ale-py's C++ env."""
import time

PROCESS_START = time.perf_counter()  # the benchmark harness's start-up time starts here

import os

import functools
from collections import namedtuple
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
import torch.nn as nn
import tyro
from ale_py import AtariVectorEnv

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


def select_device(choice: str) -> torch.device:
    """The agent's device: the GPU (if present, for auto) or the CPU; the env runs on the CPU either way."""
    if choice == "gpu" and not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device")
    return torch.device("cuda" if choice == "gpu" or choice == "auto" and torch.cuda.is_available() else "cpu")


# MODEL
def layer_init(layer: nn.Module, gain: float) -> nn.Module:
    """Orthogonal weight with `gain`, zero bias (CleanRL's layer_init)."""
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


class Agent(nn.Module):
    """CleanRL's Atari agent: the Nature CNN's convolutions and dense layer with ReLU, shared by the actor and critic
    heads (orthogonal init: gain sqrt(2), the actor's head 0.01, the critic's 1; biases 0). It takes the stacked frames
    as the env gives them (N, 4, 84, 84, uint8), scales them by 1/255 and convolves them channels first (NCHW)."""

    def __init__(self, frame_shape: tuple, action_dim: int):
        super().__init__()
        layers, channels, size = [], frame_shape[0], frame_shape[1]
        for out_channels, kernel, stride in NATURE_CONVS:
            layers += [layer_init(nn.Conv2d(channels, out_channels, kernel, stride), np.sqrt(2)), nn.ReLU()]
            channels, size = out_channels, (size - kernel) // stride + 1
        dense = layer_init(nn.Linear(channels * size * size, 512), np.sqrt(2))
        self.network = nn.Sequential(*layers, nn.Flatten(), dense, nn.ReLU())
        self.actor = layer_init(nn.Linear(512, action_dim), 0.01)
        self.critic = layer_init(nn.Linear(512, 1), 1.0)

    def forward(self, frames):
        hidden = self.network(frames / 255.0)
        return self.actor(hidden), self.critic(hidden).squeeze(-1)

    def value(self, frames):
        return self.critic(self.network(frames / 255.0)).squeeze(-1)


def make_agent(frame_shape: tuple, action_dim: int, device: torch.device) -> Agent:
    """Build the agent; its parameters come from torch's global generator (seed it first)."""
    return Agent(frame_shape, action_dim).to(device)


# Adam's state for update_minibatch's functional step, on the device (as CUDA graphs need): the step count, the moments
# (parameter name -> tensor), the LR as a tensor set once per iteration (a changing Python float would recompile), eps
AdamState = namedtuple("AdamState", "step exp_avg exp_avg_sq lr eps")


def make_optimizer(agent: Agent, args: Args) -> AdamState:
    """Adam with betas (0.9, 0.999) (the global-norm clip and the step itself are in update_minibatch)."""
    step, lr = (torch.tensor(value, device=next(agent.parameters()).device) for value in (0.0, args.learning_rate))
    exp_avg, exp_avg_sq = ({name: torch.zeros_like(p) for name, p in agent.named_parameters()} for _ in range(2))
    return AdamState(step, exp_avg, exp_avg_sq, lr, args.adam_eps)


EpisodeStats = namedtuple("EpisodeStats", "returns lengths finished_return_sum finished_length_sum finished_count")


def new_iteration_stats(stats: EpisodeStats) -> EpisodeStats:
    """Keep running episodes, zero the per-iteration sums of finished ones."""
    return stats._replace(finished_return_sum=0.0, finished_length_sum=0.0, finished_count=0.0)


def track_episodes(stats: EpisodeStats, reward: np.ndarray, done: np.ndarray) -> EpisodeStats:
    """Masked per-env update of running returns and lengths, in NumPy on the host, where the env step is."""
    returns, lengths = stats.returns + reward, stats.lengths + 1
    return EpisodeStats(
        returns=np.where(done, 0.0, returns), lengths=np.where(done, 0, lengths),
        finished_return_sum=stats.finished_return_sum + float(np.sum(np.where(done, returns, 0.0))),
        finished_length_sum=stats.finished_length_sum + float(np.sum(np.where(done, lengths, 0))),
        finished_count=stats.finished_count + float(np.sum(done)),
    )


Storage = namedtuple("Storage", "obs actions logprobs values rewards dones")
RolloutCarry = namedtuple("RolloutCarry", "obs stats")


# ROLLOUT
def gumbel_noise(num_steps: int, num_envs: int, num_actions: int, device: torch.device) -> torch.Tensor:
    """Gumbel(0, 1) noise for a whole rollout, drawn at once: argmax(logits + noise) samples softmax(logits)."""
    uniform = torch.rand(num_steps, num_envs, num_actions, device=device)
    return -torch.log(-torch.log(uniform.clamp_(min=torch.finfo(uniform.dtype).tiny)))  # U = 0 would give -inf


def policy_step(obs: torch.Tensor, gumbel: torch.Tensor, agent: Agent):
    """Sample actions with the Gumbel-max trick (no torch.distributions, no host sync); keep the logits and V(obs)."""
    logits, value = agent(obs)
    return torch.argmax(logits + gumbel, dim=-1).int(), logits, value


@torch.no_grad()
def rollout(carry: RolloutCarry, agent: Agent, policy_fn, env_step_fn, num_steps: int, num_actions: int):
    """Collect `num_steps` vectorised steps; returns the new carry, the storage and V(last obs). The learner's episode
    ends at every life lost, game over or truncation (CleanRL's, which bootstraps no truncation), and its rewards are
    the scores' signs; the games' own returns are counted in NumPy, where the env steps."""
    obs, stats = carry.obs, new_iteration_stats(carry.stats)
    gumbel = gumbel_noise(num_steps, obs.shape[0], num_actions, obs.device)
    frames = torch.empty(num_steps, *obs.shape, dtype=torch.uint8, device=obs.device)
    flags = torch.empty(num_steps, obs.shape[0], 4, device=obs.device)  # reward, terminated, truncated, life lost
    actions, logits, values = [], [], []
    for t in range(num_steps):
        action, step_logits, value = policy_fn(obs, gumbel[t])
        # one exchange each way: the action to the host (NumPy), the frames and flags to the device, into the storage
        step_frames, step_flags = env_step_fn(action.cpu().numpy())
        reward, terminated, truncated, _ = step_flags.T
        stats = track_episodes(stats, reward, np.logical_or(terminated, truncated))
        frames[t], flags[t] = torch.from_numpy(step_frames), torch.from_numpy(step_flags)
        obs = frames[t]
        actions.append(action)
        logits.append(step_logits)
        values.append(value)
    actions, logits, values = torch.stack(actions), torch.stack(logits), torch.stack(values)
    obs_seen = torch.cat([carry.obs[None], frames[:-1]])
    logprobs = torch.log_softmax(logits, dim=-1).gather(-1, actions.long()[..., None]).squeeze(-1)
    rewards, terminated, truncated, life_lost = flags.unbind(-1)
    dones = (terminated + truncated + life_lost) > 0
    storage = Storage(obs_seen, actions, logprobs, values, torch.sign(rewards), dones)
    return RolloutCarry(obs, stats), storage, agent.value(obs)


# GAE
def compute_gae(storage: Storage, last_value, gamma: float, gae_lambda: float):
    """GAE (https://arxiv.org/abs/1506.02438) with auto-reset envs: every ended episode cuts the trace."""
    next_values = torch.cat([storage.values[1:], last_value[None]], dim=0)
    not_done = 1.0 - storage.dones.float()
    deltas = storage.rewards + gamma * next_values * not_done - storage.values

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
def update_minibatch(mb_inds: torch.Tensor, b: Batch, agent: Agent, optimizer: AdamState, loss_fn, max_grad_norm: float):
    """One optimiser step on one minibatch: loss, gradients, global-norm clip, Adam. Functional (torch.func), so that
    torch.compile makes the whole step one graph: `loss.backward()` and `optimizer.step()` would break it in three."""
    mb = Batch(*(x[mb_inds] for x in b))
    params = {name: param.detach() for name, param in agent.named_parameters()}  # the agent's storage, updated in place

    def loss_of(params):
        return loss_fn(functools.partial(torch.func.functional_call, agent, params), mb)

    grads, (_, info) = torch.func.grad_and_value(loss_of, has_aux=True)(params)
    clip = torch.clamp(max_grad_norm / (nn.utils.get_total_norm(grads.values()) + 1e-6), max=1.0)  # clip_grad_norm_
    # torch.optim.Adam's update (https://arxiv.org/abs/1412.6980), as its capturable single-tensor step computes it
    b1, b2 = 0.9, 0.999
    optimizer.step.add_(1)
    step_size, bias_correction2_sqrt = optimizer.lr / (1 - b1**optimizer.step), (1 - b2**optimizer.step).sqrt()
    for name, param in params.items():
        grad = grads[name] * clip
        exp_avg, exp_avg_sq = optimizer.exp_avg[name].lerp_(grad, 1 - b1), optimizer.exp_avg_sq[name]
        exp_avg_sq.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        param.sub_(step_size * exp_avg / (exp_avg_sq.sqrt() / bias_correction2_sqrt + optimizer.eps))
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
    torch_device = select_device(args.device)
    torch.set_float32_matmul_precision("highest")  # full float32 matrix products (no TF32), as in the JAX scripts

    # compile from scratch as JAX does (TORCHINDUCTOR_FORCE_DISABLE_CACHES=0 overrides): iteration 0 times the compiler
    torch.compiler.config.force_disable_caches = True

    # SEEDING: --seed for the envs; torch's generator for parameters, actions and minibatch order
    torch.manual_seed(args.seed)
    envs = make_envs(args.env_id, args.num_envs)
    frames, lives = env_reset(envs, args.seed)
    obs = torch.from_numpy(frames).to(torch_device)
    agent = make_agent(tuple(obs.shape[1:]), envs.single_action_space.n, torch_device)
    optimizer = make_optimizer(agent, args)
    stats = EpisodeStats(np.zeros(args.num_envs, np.float32), np.zeros(args.num_envs, np.int64), 0.0, 0.0, 0.0)
    carry = RolloutCarry(obs, stats)

    # EXECUTABLES: torch.compile on the minibatch update, one graph, and on the per-step policy; the env steps in C++
    policy_fn = torch.compile(functools.partial(policy_step, agent=agent), fullgraph=True)
    env_step_fn = functools.partial(env_step, envs=envs, lives=lives)
    loss_fn = functools.partial(ppo_loss, clip_coef=args.clip_coef, clip_vloss=args.clip_vloss, norm_adv=args.norm_adv,
                                ent_coef=args.ent_coef, vf_coef=args.vf_coef)
    minibatch_fn = functools.partial(torch.compile(update_minibatch, fullgraph=True), agent=agent, optimizer=optimizer,
                                     loss_fn=loss_fn, max_grad_norm=args.max_grad_norm)
    rollout_fn = functools.partial(rollout, agent=agent, policy_fn=policy_fn, env_step_fn=env_step_fn,
                                   num_steps=args.num_steps, num_actions=envs.single_action_space.n)

    for iteration in range(args.num_iterations):
        run.start_iteration(iteration)
        lr = args.learning_rate * (1.0 - iteration / args.num_iterations) if args.anneal_lr else args.learning_rate
        optimizer.lr.fill_(lr)

        # ROLLOUT + GAE
        carry, storage, last_value = rollout_fn(carry)
        advantages, returns = compute_gae(storage, last_value, args.gamma, args.gae_lambda)
        run.end_phase("rollout", synchronize, torch_device)
        global_step = (iteration + 1) * args.num_envs * args.num_steps

        # UPDATE
        losses, explained_var = update(storage, advantages, returns, minibatch_fn, args)
        run.end_phase("update", synchronize, torch_device)

        # LOGGING: the one host fetch of this iteration
        fetched = torch.stack([*losses, explained_var]).tolist()
        losses = dict(zip([*LossInfo._fields, "explained_variance"], fetched))
        # the finished games' sums and count (on the host)
        run.log_iteration(global_step, {"learning_rate": lr}, losses, *carry.stats[2:])
    envs.close()
    run.finish(peak_device_bytes(torch_device))


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
        return f"--device {args.device}: no such device available to torch"
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
    packages = ("torch", "ale-py", "numpy", "tensorboard")
    compile_mode, device = "compile", select_device(args.device)
    device_name = f"gpu: {torch.cuda.get_device_name(device)}" if device.type == "cuda" else "cpu: cpu"
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


def synchronize(torch_device: torch.device):
    """Wait until torch has finished its queued work (torch on the CPU is synchronous)."""
    if torch_device.type == "cuda":
        torch.cuda.synchronize(torch_device)


def peak_device_bytes(torch_device: torch.device) -> int | None:
    """Peak device memory of the process (docs/method.md, Logged metrics): torch's; None on the CPU."""
    return torch.cuda.max_memory_allocated(torch_device) if torch_device.type == "cuda" else None


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
