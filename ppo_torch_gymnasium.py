"""PPO (CleanRL-style, single file) in PyTorch (eager) on a Gymnasium vector environment stepped in NumPy on the CPU."""
import time

PROCESS_START = time.perf_counter()

import os
import contextlib
import functools
import importlib.metadata
import math
import platform
import resource
import signal
import subprocess
import sys
from dataclasses import asdict, dataclass
from typing import Any, Literal, NamedTuple, Sequence

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import tyro
from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, types_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter

MODEL_SIZES = {"small": (64, 64), "medium": (256, 256, 256), "large": (1024,) * 6}


@dataclass
class Args:
    # experiment
    exp_name: str = os.path.basename(__file__)[: -len(".py")]
    """the name of this experiment (variant), used in the run name"""
    seed: int = 1
    """seed of parameters, environments, actions and minibatch order"""
    env_id: str = "CartPole-v1"
    """a gymnax env id with a Gymnasium counterpart of the same dynamics: CartPole-v1, Acrobot-v1, MountainCar-v0"""
    model_size: Literal["small", "medium", "large"] = "small"
    """hidden layers: small [64, 64], medium [256] x 3, large [1024] x 6"""
    sync_timing: bool = False
    """synchronise around rollout and update to time them separately"""
    profile: bool = False
    """write a profiler trace of a few steady-state iterations (8-10) next to the event file"""
    vectorization: Literal["sync", "vector"] = "sync"
    """sync: a Python loop over env copies (SyncVectorEnv); vector: Gymnasium's NumPy-vectorised env (CartPole-v1)"""
    device: Literal["auto", "cpu", "gpu"] = "auto"
    """where the agent runs: auto (GPU if present), cpu or gpu; the env always runs on the CPU"""
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

    # filled at runtime
    batch_size: int = 0
    """the batch size, num_envs * num_steps (computed at runtime)"""
    minibatch_size: int = 0
    """the minibatch size, batch_size // num_minibatches (computed at runtime)"""


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
    if args.num_envs * args.num_steps < args.num_minibatches:
        return (
            f"minibatch size 0: batch size {args.num_envs * args.num_steps} (num_envs * num_steps) is smaller"
            f" than --num-minibatches {args.num_minibatches}"
        )
    if (args.num_envs * args.num_steps) % args.num_minibatches:
        return (
            f"batch size {args.num_envs * args.num_steps} (num_envs * num_steps) is not divisible"
            f" by --num-minibatches {args.num_minibatches}"
        )
    if args.env_id not in GYMNASIUM_ENVS:
        return (
            f"--env-id {args.env_id}: not one of the gymnax envs with a Gymnasium counterpart of the same dynamics"
            f" ({', '.join(GYMNASIUM_ENVS)})"
        )
    if args.vectorization == "vector" and args.env_id != "CartPole-v1":
        return f"--vectorization vector: Gymnasium has a NumPy-vectorised env for CartPole-v1 only, not {args.env_id}"
    return None


# ENV HELPERS: the env runs in NumPy on the CPU; what the agent needs crosses to the device as one array
# gymnax env id -> the Gymnasium env with the same dynamics, observations, rewards and time limit
GYMNASIUM_ENVS = {"CartPole-v1": "CartPole-v1", "Acrobot-v1": "Acrobot-v1", "MountainCar-v0": "MountainCar-v0"}


def make_envs(env_id: str, num_envs: int, vectorization: str):
    """`num_envs` envs, each reset within the step that ends its episode (same-step autoreset), so the final
    observation of a truncated episode is at hand, as gymnax gives it. sync: copies stepped in turn in this process;
    vector: Gymnasium's NumPy CartPole, every env in one array operation per step."""
    if vectorization == "vector":
        return SameStepCartPole(num_envs)
    return gym.make_vec(
        GYMNASIUM_ENVS[env_id],
        num_envs=num_envs,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
    )


class SameStepCartPole:
    """Gymnasium's NumPy-vectorised CartPole-v1 with same-step autoreset, for the sync env's transitions.

    That env resets an ended episode in the next step (ignoring that step's action, reward 0). Here the envs that
    ended are reset within the step that ended them, env i from its own generator seeded seed + i and drawn as
    CartPoleEnv.reset draws: for the same seed and actions, the same transitions as the sync vector env.
    """

    def __init__(self, num_envs: int):
        self.envs = gym.make_vec("CartPole-v1", num_envs=num_envs, vectorization_mode="vector_entry_point")
        self.single_action_space = self.envs.single_action_space

    def reset(self, seed: int):
        self.envs.reset(seed=seed)
        self.generators = [gym.utils.seeding.np_random(seed + i)[0] for i in range(self.envs.num_envs)]
        return self.reset_ended(np.ones(self.envs.num_envs, bool)), {}

    def reset_ended(self, ended: np.ndarray) -> np.ndarray:
        """Draw new states for the `ended` envs (the env's own reset bounds) and return every env's observation."""
        env = self.envs.unwrapped
        for i in np.flatnonzero(ended):
            env.state[:, i] = self.generators[i].uniform(low=-0.05, high=0.05, size=(4,))
        env.steps[ended], env.prev_done[ended] = 0, False
        return env.state.T.astype(np.float32)

    def step(self, action: np.ndarray):
        final_obs, reward, terminated, truncated, _ = self.envs.step(action)
        ended = np.logical_or(terminated, truncated)
        if not ended.any():
            return final_obs, reward, terminated, truncated, {}
        return self.reset_ended(ended), reward, terminated, truncated, {"final_obs": final_obs, "_final_obs": ended}

    def close(self):
        self.envs.close()


def flatten_obs(obs: np.ndarray) -> np.ndarray:
    """Flatten each env's observation into a float32 vector."""
    return obs.reshape(obs.shape[0], -1).astype(np.float32)


def env_reset(envs: gym.vector.VectorEnv, seed: int) -> np.ndarray:
    """Reset every env (env i seeded with seed + i); the observation comes packed as env_step packs it (reward and
    flags 0, final obs = obs), so the device sees every observation in one memory layout."""
    obs, _ = envs.reset(seed=seed)
    obs = flatten_obs(obs)
    return np.concatenate([obs, np.zeros((obs.shape[0], 3), np.float32), obs], axis=1)


def env_step(action: np.ndarray, envs: gym.vector.VectorEnv) -> np.ndarray:
    """Step every env; what the agent needs comes back as one float32 array (one host-to-device copy): next obs,
    reward, terminated, truncated and final obs side by side on the last axis (see unpack_step).

    An env whose episode ended this step is already reset (its next obs starts the new episode); its last
    observation is in info["final_obs"], and every other env's final obs is its next obs, as in gymnax.
    """
    obs, reward, terminated, truncated, info = envs.step(action)
    final_obs = obs.copy()
    if "_final_obs" in info:
        ended = info["_final_obs"]
        final_obs[ended] = np.stack(info["final_obs"][ended])
    flags = np.stack([reward, terminated, truncated], axis=1).astype(np.float32)
    return np.concatenate([flatten_obs(obs), flags, flatten_obs(final_obs)], axis=1)


class EpisodeStats(NamedTuple):
    returns: np.ndarray
    lengths: np.ndarray
    finished_return_sum: float
    finished_length_sum: float
    finished_count: float


def new_iteration_stats(stats: EpisodeStats) -> EpisodeStats:
    """Keep running episodes, zero the per-iteration sums of finished ones."""
    return stats._replace(finished_return_sum=0.0, finished_length_sum=0.0, finished_count=0.0)


def track_episodes(stats: EpisodeStats, reward: np.ndarray, done: np.ndarray) -> EpisodeStats:
    """Masked per-env update of running returns and lengths, in NumPy on the host, where the env step is."""
    returns = stats.returns + reward
    lengths = stats.lengths + 1
    return EpisodeStats(
        returns=np.where(done, 0.0, returns),
        lengths=np.where(done, 0, lengths),
        finished_return_sum=stats.finished_return_sum + float(np.sum(np.where(done, returns, 0.0))),
        finished_length_sum=stats.finished_length_sum + float(np.sum(np.where(done, lengths, 0))),
        finished_count=stats.finished_count + float(np.sum(done)),
    )


def unpack_step(step):
    """Views of env_step's packed array on the device (one step, or stacked steps): next obs, reward, terminated,
    truncated, final obs."""
    obs_dim = (step.shape[-1] - 3) // 2
    return step[..., :obs_dim], step[..., obs_dim], step[..., obs_dim + 1], step[..., obs_dim + 2], step[..., -obs_dim:]


# MODEL
def layer_init(layer: nn.Linear, gain: float) -> nn.Linear:
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

    def value(self, x):
        return self.critic(x).squeeze(-1)


def make_agent(obs_dim: int, action_dim: int, model_size: str, device: torch.device) -> Agent:
    """Build the agent; its parameters come from torch's global generator (seed it first)."""
    return Agent(obs_dim, MODEL_SIZES[model_size], action_dim).to(device)


def make_optimizer(agent: Agent, args: Args) -> torch.optim.Adam:
    """Adam (the global-norm clip is in update_minibatch); the LR is set once per iteration.

    fused: one kernel steps every parameter (CPU and CUDA) instead of a dozen ops per parameter.
    """
    return torch.optim.Adam(
        agent.parameters(), lr=args.learning_rate, betas=(0.9, 0.999), eps=args.adam_eps, fused=True
    )


class Storage(NamedTuple):
    obs: torch.Tensor
    actions: torch.Tensor
    logprobs: torch.Tensor
    values: torch.Tensor
    rewards: torch.Tensor
    terminated: torch.Tensor
    truncated: torch.Tensor
    final_values: torch.Tensor


class RolloutCarry(NamedTuple):
    obs: torch.Tensor
    stats: EpisodeStats


# ROLLOUT
def gumbel_noise(num_steps: int, num_envs: int, num_actions: int, device: torch.device) -> torch.Tensor:
    """Gumbel(0, 1) noise for a whole rollout, drawn at once: argmax(logits + noise) samples softmax(logits)."""
    return -torch.log(-torch.log(torch.rand(num_steps, num_envs, num_actions, device=device)))


def policy_step(obs: torch.Tensor, gumbel: torch.Tensor, actor: nn.Module):
    """Sample actions with the Gumbel-max trick (no torch.distributions, no host sync); the logits are kept for the
    log-probs."""
    logits = actor(obs)
    return torch.argmax(logits + gumbel, dim=-1).int(), logits


@torch.no_grad()
def rollout(carry: RolloutCarry, agent: Agent, policy_fn, env_step_fn, num_steps: int, num_actions: int,
            bootstrap_truncated: bool, device: torch.device):
    """Collect `num_steps` vectorised steps; returns the new carry, the storage and V(last obs).

    A step runs only what the env needs: the actor, the sampling, the env step and the episode stats (NumPy, on the
    host). The log-probs, the values and V(final observation) are computed once, over the stacked steps.
    """
    obs, stats = carry.obs, new_iteration_stats(carry.stats)
    gumbel = gumbel_noise(num_steps, obs.shape[0], num_actions, obs.device)
    transitions = []
    for t in range(num_steps):
        action, logits = policy_fn(obs, gumbel[t])
        # one exchange each way: the action to the host (NumPy), the packed step to the device
        step = env_step_fn(action.cpu().numpy())
        _, reward, terminated, truncated, _ = unpack_step(step)
        stats = track_episodes(stats, reward, np.logical_or(terminated, truncated))
        step = torch.from_numpy(step).to(device)
        obs = unpack_step(step)[0]
        transitions.append((action, logits, step))
    actions, logits, steps = (torch.stack(field) for field in zip(*transitions))
    next_obs, rewards, terminated, truncated, final_obs = unpack_step(steps)
    obs_seen = torch.cat([carry.obs[None], next_obs[:-1]])
    logprobs = torch.log_softmax(logits, dim=-1).gather(-1, actions.long()[..., None]).squeeze(-1)
    values = agent.value(torch.cat([obs_seen, obs[None]]))  # V of every observation seen, and of the last
    # V(final observation) for the truncated steps' bootstrap (GAE masks the rest); none when it is off
    final_values = agent.value(final_obs) if bootstrap_truncated else torch.zeros_like(rewards)
    storage = Storage(obs_seen, actions, logprobs, values[:-1], rewards, terminated.bool(), truncated.bool(), final_values)
    return RolloutCarry(obs, stats), storage, values[-1]


# GAE
def compute_gae(storage: Storage, last_value, gamma: float, gae_lambda: float, bootstrap_truncated: bool):
    """GAE (https://arxiv.org/abs/1506.02438) with auto-reset envs.

    Every finished episode (terminated or truncated) cuts the trace; a truncated step (not
    terminated) bootstraps from V(final observation) when `bootstrap_truncated`.
    """
    dones = torch.logical_or(storage.terminated, storage.truncated)
    rewards = storage.rewards
    if bootstrap_truncated:
        bootstrap = torch.logical_and(storage.truncated, torch.logical_not(storage.terminated))
        rewards = rewards + gamma * storage.final_values * bootstrap
    next_values = torch.cat([storage.values[1:], last_value[None]], dim=0)
    not_done = 1.0 - dones.float()
    deltas = rewards + gamma * next_values * not_done - storage.values

    lastgaelam = torch.zeros_like(last_value)
    advantages = []
    for delta, nonterminal in zip(deltas.flip(0), not_done.flip(0)):
        lastgaelam = delta + gamma * gae_lambda * nonterminal * lastgaelam
        advantages.append(lastgaelam)
    advantages = torch.stack(advantages).flip(0)
    return advantages, advantages + storage.values


# LOSS
class LossInfo(NamedTuple):
    policy_loss: torch.Tensor
    value_loss: torch.Tensor
    entropy: torch.Tensor
    approx_kl: torch.Tensor
    old_approx_kl: torch.Tensor
    clipfrac: torch.Tensor


class Batch(NamedTuple):
    obs: torch.Tensor
    actions: torch.Tensor
    logprobs: torch.Tensor
    values: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor


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


def update(b: Batch, minibatch_fn, args: Args):
    """`update_epochs` passes over the batch, each in a fresh random minibatch order."""
    b_inds = torch.stack([torch.randperm(args.batch_size, device=b.obs.device) for _ in range(args.update_epochs)])
    mb_inds = b_inds.reshape(-1, args.minibatch_size)
    infos = [minibatch_fn(inds, b) for inds in mb_inds]
    var_y = torch.var(b.returns, correction=0)
    explained_var = torch.where(var_y == 0, torch.nan, 1 - torch.var(b.returns - b.values, correction=0) / var_y)
    return LossInfo(*torch.stack([torch.stack(info) for info in infos]).mean(0)), explained_var


def flatten_batch(storage: Storage, advantages, returns) -> Batch:
    """Merge the (num_steps, num_envs) axes into one batch axis."""
    b = Batch(storage.obs, storage.actions, storage.logprobs, storage.values, advantages, returns)
    return Batch(*(x.reshape((-1,) + x.shape[2:]) for x in b))


# LOGGING
class EventWriter:
    """Minimal TensorBoard writer (scalars and markdown text) on tensorboard's own event files."""

    def __init__(self, log_dir: str):
        self.writer = EventFileWriter(log_dir)

    def _write(self, value: summary_pb2.Summary.Value, step: int):
        self.writer.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary_pb2.Summary(value=[value])))

    def add_scalar(self, tag: str, value: float, step: int):
        self._write(summary_pb2.Summary.Value(tag=tag, simple_value=float(value)), step)

    def add_text(self, tag: str, text: str, step: int = 0):
        metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
        tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING, string_val=[text.encode()])
        self._write(summary_pb2.Summary.Value(tag=tag, metadata=metadata, tensor=tensor), step)

    def close(self):
        self.writer.close()


def markdown_table(header: str, rows: dict) -> str:
    return f"|{header}|value|\n|-|-|\n" + "\n".join(f"|{key}|{value}|" for key, value in rows.items())


def system_info(compile_mode: str, device_name: str) -> dict:
    """Script, compile mode, device, Python and package versions, CPU model, git commit."""
    packages = ("torch", "gymnasium", "numpy", "tensorboard")
    info = {"script": os.path.basename(__file__), "compile_mode": compile_mode, "device": device_name}
    info["python"] = platform.python_version()
    info.update({name: importlib.metadata.version(name) for name in packages})
    info["cpu"] = cpu_model()
    git = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=os.path.dirname(os.path.abspath(__file__)), capture_output=True, text=True
    )
    info["git_commit"] = git.stdout.strip() if git.returncode == 0 else "none"
    return info


def cpu_model() -> str:
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def profile_trace(run_dir: str):
    """A torch.profiler trace (ops and Python stacks), written into `run_dir` on exit (Perfetto, chrome://tracing)."""
    trace_handler = torch.profiler.tensorboard_trace_handler(run_dir, use_gzip=True)
    return torch.profiler.profile(with_stack=True, on_trace_ready=trace_handler)


def select_device(choice: str) -> torch.device:
    """The agent's device: the GPU (if present, for auto) or the CPU; the env runs on the CPU either way."""
    if choice == "auto":
        choice = "gpu" if torch.cuda.is_available() else "cpu"
    if choice == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device")
    return torch.device("cuda", torch.cuda.current_device())


def device_name(torch_device: torch.device) -> str:
    """'cpu: cpu' or 'cuda: <GPU name>', as the gymnax scripts name their device."""
    if torch_device.type == "cuda":
        return f"cuda: {torch.cuda.get_device_name(torch_device)}"
    return "cpu: cpu"


def synchronize(torch_device: torch.device):
    """Wait until torch has finished its queued work (torch on the CPU is synchronous)."""
    if torch_device.type == "cuda":
        torch.cuda.synchronize(torch_device)


def peak_device_bytes(torch_device: torch.device) -> int | None:
    """Peak device memory of the process (docs/method.md, Logged metrics): torch's; None on the CPU."""
    if torch_device.type == "cuda":
        return torch.cuda.max_memory_allocated(torch_device)
    return None


def peak_rss_bytes() -> int:
    """Peak resident host memory of this process: Linux's VmHWM (its ru_maxrss keeps the peak of the process that
    started this one), elsewhere ru_maxrss (bytes on macOS)."""
    if os.path.exists("/proc/self/status"):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def non_finite(values: Sequence[float]) -> str | None:
    """'NaN' or 'inf' when one of the already fetched `values` is not finite, else None."""
    if any(math.isnan(value) for value in values):
        return "NaN"
    if any(math.isinf(value) for value in values):
        return "inf"
    return None


def stop_on_signal(signum: int, frame: Any, run_dir: str):
    """SIGINT/SIGTERM: say where the partial run is and exit 128 + signal through the loop's `finally`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print(f"interrupted by {signal.Signals(signum).name}: partial run (no time/total) in {run_dir}", file=sys.stderr)
    sys.exit(128 + signum)


def fail(message: str, status: int = 2):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(status)


def make_run_dir(log_dir: str, run_name: str) -> str:
    """Create the run folder, or stop with one line before any work (under a file, in /proc: os.access passes root)."""
    run_dir = os.path.join(log_dir, run_name)
    try:
        os.makedirs(run_dir, exist_ok=True)
    except OSError as error:
        fail(f"--log-dir {log_dir}: cannot create the run folder {run_dir} ({error.strerror or error})")
    return run_dir


if __name__ == "__main__":
    args = tyro.cli(Args)
    reason = check_args(args)
    if reason:
        fail(reason)
    try:
        torch_device = select_device(args.device)
    except RuntimeError:
        fail(f"--device {args.device}: no such device available to torch")
    args.batch_size = args.num_envs * args.num_steps
    args.minibatch_size = args.batch_size // args.num_minibatches
    args.run_name = args.run_name or f"{args.env_id}__{args.exp_name}__{args.model_size}__{args.seed}__{int(time.time())}"
    compile_mode = "eager" if args.vectorization == "sync" else "eager-vector"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")

    run_dir = make_run_dir(args.log_dir, args.run_name)
    writer = EventWriter(run_dir)
    writer.add_text("hyperparameters", markdown_table("param", asdict(args)))
    writer.add_text("system", markdown_table("key", system_info(compile_mode, device_name(torch_device))))

    # SEEDING: --seed for the envs (env i gets seed + i); torch's generator for parameters, actions and minibatch order
    torch.manual_seed(args.seed)
    envs = make_envs(args.env_id, args.num_envs, args.vectorization)
    step = env_reset(envs, args.seed)
    obs = unpack_step(torch.from_numpy(step).to(torch_device))[0]
    agent = make_agent(obs.shape[1], envs.single_action_space.n, args.model_size, torch_device)
    optimizer = make_optimizer(agent, args)
    stats = EpisodeStats(np.zeros(args.num_envs, np.float32), np.zeros(args.num_envs, np.int64), 0.0, 0.0, 0.0)
    carry = RolloutCarry(obs, stats)

    # EXECUTABLES: the same top-level functions, run eagerly; the env steps in NumPy
    policy_fn = functools.partial(policy_step, actor=agent.actor)
    env_step_fn = functools.partial(env_step, envs=envs)
    gae_fn = functools.partial(
        compute_gae,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        bootstrap_truncated=args.bootstrap_truncated,
    )
    loss_fn = functools.partial(
        ppo_loss,
        clip_coef=args.clip_coef,
        clip_vloss=args.clip_vloss,
        norm_adv=args.norm_adv,
        ent_coef=args.ent_coef,
        vf_coef=args.vf_coef,
    )
    minibatch_fn = functools.partial(
        update_minibatch,
        agent=agent,
        optimizer=optimizer,
        loss_fn=loss_fn,
        max_grad_norm=args.max_grad_norm,
    )
    rollout_fn = functools.partial(
        rollout,
        agent=agent,
        policy_fn=policy_fn,
        env_step_fn=env_step_fn,
        num_steps=args.num_steps,
        num_actions=envs.single_action_space.n,
        bootstrap_truncated=args.bootstrap_truncated,
        device=torch_device,
    )
    update_fn = functools.partial(update, minibatch_fn=minibatch_fn, args=args)

    # PROFILING: --profile traces iterations 8-10, or those a shorter run has (at least its last); off, nothing
    profile_iterations = range(min(8, args.num_iterations - 1), min(11, args.num_iterations))
    profiling = contextlib.ExitStack()
    global_step = 0
    training_start = time.perf_counter()
    writer.add_scalar("time/startup", training_start - PROCESS_START, 0)
    last_fetch = training_start
    signal.signal(signal.SIGINT, functools.partial(stop_on_signal, run_dir=run_dir))
    signal.signal(signal.SIGTERM, functools.partial(stop_on_signal, run_dir=run_dir))
    try:
        for iteration in range(args.num_iterations):
            iteration_start = time.perf_counter()
            if args.profile and iteration == profile_iterations.start:
                profiling.enter_context(profile_trace(os.path.join(args.log_dir, args.run_name)))
            lr = args.learning_rate * (1.0 - iteration / args.num_iterations) if args.anneal_lr else args.learning_rate
            optimizer.param_groups[0]["lr"] = lr

            # ROLLOUT + GAE
            carry, storage, last_value = rollout_fn(carry)
            advantages, returns = gae_fn(storage, last_value)
            if args.sync_timing:
                synchronize(torch_device)
                rollout_end = time.perf_counter()
            global_step += args.batch_size

            # UPDATE
            b = flatten_batch(storage, advantages, returns)
            losses, explained_var = update_fn(b)
            if args.sync_timing:
                synchronize(torch_device)
                update_end = time.perf_counter()

            # LOGGING: the one host fetch of this iteration
            *loss_values, explained_var = torch.stack([*losses, explained_var]).tolist()
            finished_return_sum, finished_length_sum, finished_count = carry.stats[2:]  # on the host already
            now = time.perf_counter()
            if finished_count > 0:
                writer.add_scalar("charts/episodic_return", finished_return_sum / finished_count, global_step)
                writer.add_scalar("charts/episodic_length", finished_length_sum / finished_count, global_step)
            writer.add_scalar("charts/learning_rate", lr, global_step)
            writer.add_scalar("charts/SPS", global_step / (now - training_start), global_step)
            for name, value in zip(LossInfo._fields, loss_values):
                writer.add_scalar(f"losses/{name}", value, global_step)
            writer.add_scalar("losses/explained_variance", explained_var, global_step)
            writer.add_scalar("time/iteration", now - last_fetch, iteration)
            if args.sync_timing:
                writer.add_scalar("time/rollout", rollout_end - iteration_start, iteration)
                writer.add_scalar("time/update", update_end - rollout_end, iteration)
            print(
                f"iteration {iteration + 1}/{args.num_iterations} global_step={global_step}"
                f" return={finished_return_sum / max(finished_count, 1):.1f} time={now - last_fetch:.3f}s",
                flush=True,
            )
            last_fetch = now
            if args.profile and iteration == profile_iterations[-1]:
                profiling.close()
            diverged = non_finite(loss_values)
            if diverged:
                fail(f"loss is {diverged} at iteration {iteration + 1}; partial run in {run_dir}", 3)

        peak_bytes = peak_device_bytes(torch_device)
        if peak_bytes is not None:
            writer.add_scalar("memory/peak_bytes", peak_bytes, args.num_iterations)
        writer.add_scalar("memory/peak_rss_bytes", peak_rss_bytes(), args.num_iterations)
        writer.add_scalar("time/total", last_fetch - training_start, args.num_iterations)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a late signal must not cut the close short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        writer.close()
        envs.close()
