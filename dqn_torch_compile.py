"""DQN (CleanRL-style, single file) in PyTorch + torch.compile on a gymnax env stepped in JAX on the same device."""
import time

PROCESS_START = time.perf_counter()  # the benchmark harness's start-up time starts here

import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX shares the GPU with torch: allocate as needed

import functools
import importlib
from collections import namedtuple
from dataclasses import dataclass
from typing import Any, Literal

import gymnax
import jax
import jax.numpy as jnp
import torch
import torch.nn as nn
import torch.utils._pytree as pytree
import tyro

HIDDEN_SIZES = (120, 84)  # CleanRL's Q-network for CartPole-v1


@dataclass
class Args:
    # experiment
    exp_name: str = os.path.basename(__file__)[: -len(".py")]
    """the name of this experiment (variant), used in the run name"""
    seed: int = 1
    """seed of parameters, environments, exploration and replay sampling"""
    env_id: str = "CartPole-v1"
    """any gymnax environment with a discrete action space, or module:EnvId (the module's make_gymnax)"""
    model_size: Literal["small"] = "small"
    """the Q-network: small = CleanRL's, 120 and 84 ReLU units (the one size)"""
    cudagraphs: bool = False
    """replay CUDA graphs of the acting step and the compiled gradient step (GPU only)"""
    sync_timing: bool = False
    """not here: an iteration interleaves acting and learning at every step, they cannot be timed apart"""
    profile: bool = False
    """write a profiler trace of a few steady-state iterations (8-10) next to the event file"""
    device: Literal["auto", "cpu", "gpu"] = "auto"
    """where to run: auto (GPU if present), cpu or gpu"""
    log_dir: str = "runs"
    """TensorBoard root folder"""
    run_name: str = ""
    """run folder name (default: {env_id}__{exp_name}__{model_size}__{seed}__{unix time})"""

    # algorithm: CleanRL's dqn.py, its names and defaults; every count and frequency in transitions (all envs')
    total_timesteps: int = 500000
    """the number of transitions to train on"""
    learning_rate: float = 2.5e-4
    """the learning rate of the Adam optimizer"""
    num_envs: int = 1
    """the number of parallel environments"""
    buffer_size: int = 10000
    """the replay memory's capacity, in transitions"""
    gamma: float = 0.99
    """the discount factor"""
    tau: float = 1.0
    """the target network's update rate (1: a copy of the Q-network)"""
    target_network_frequency: int = 500
    """transitions between updates of the target network"""
    batch_size: int = 128
    """the number of transitions sampled from the replay memory per gradient step"""
    start_e: float = 1.0
    """the starting epsilon of epsilon-greedy exploration"""
    end_e: float = 0.05
    """the final epsilon"""
    exploration_fraction: float = 0.5
    """the fraction of total-timesteps over which epsilon falls from start-e to end-e"""
    learning_starts: int = 10000
    """transitions before the first gradient step"""
    train_frequency: int = 10
    """transitions between gradient steps"""
    iteration_steps: int = 10000
    """transitions per iteration: the unit of logging and timing (iteration 0 holds learning-starts' transitions)"""

    @property
    def num_iterations(self) -> int:
        return self.total_timesteps // self.iteration_steps


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
    """Keep running episodes, zero the per-iteration sums of finished ones."""
    zero = jnp.zeros(())
    return stats._replace(finished_return_sum=zero, finished_length_sum=zero, finished_count=zero)


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
class QNetwork(nn.Module):
    """An MLP from observation to one Q-value per action, ReLU between its layers; torch's default init (CleanRL's)."""

    def __init__(self, obs_dim: int, action_dim: int):
        super().__init__()
        sizes = (obs_dim, *HIDDEN_SIZES)
        layers = [layer for n_in, n_out in zip(sizes[:-1], sizes[1:]) for layer in (nn.Linear(n_in, n_out), nn.ReLU())]
        self.network = nn.Sequential(*layers, nn.Linear(sizes[-1], action_dim))

    def forward(self, x):
        return self.network(x)


def make_q_network(obs_dim: int, action_dim: int, device: torch.device) -> QNetwork:
    """Build the Q-network; its parameters come from torch's global generator (seed it first)."""
    return QNetwork(obs_dim, action_dim).to(device)


# REPLAY MEMORY: preallocated tensors on the device, a ring written num_envs transitions at a time
Transitions = namedtuple("Transitions", "obs next_obs actions rewards terminated")  # next_obs: final obs at an end


class ReplayBuffer:
    def __init__(self, capacity: int, obs_dim: int, device: torch.device):
        obs, next_obs = (torch.zeros(capacity, obs_dim, device=device) for _ in range(2))
        rewards, terminated = (torch.zeros(capacity, device=device) for _ in range(2))
        self.data = Transitions(obs, next_obs, torch.zeros(capacity, dtype=torch.int32, device=device), rewards, terminated)
        self.ring = torch.arange(2 * capacity, device=device) % capacity  # index views for a write across the end
        self.position, self.size, self.capacity = 0, 0, capacity

    def add(self, transitions: Transitions):
        count = transitions.obs.shape[0]
        index = self.ring[self.position : self.position + count]
        for stored, new in zip(self.data, transitions):
            stored[index] = new
        self.position, self.size = (self.position + count) % self.capacity, min(self.size + count, self.capacity)

    def sample(self, batch_size: int) -> Transitions:
        """A batch drawn uniformly, with replacement, from the stored transitions."""
        index = torch.randint(self.size, (batch_size,), device=self.data.obs.device)
        return Transitions(*(stored[index] for stored in self.data))


# SCHEDULES: every count is of transitions; g, the index of a transition, counts from 0
def linear_schedule(start_e: float, end_e: float, duration: float, t: int) -> float:
    """Epsilon at transition t: from start_e down to end_e over `duration` transitions, then end_e."""
    slope = (end_e - start_e) / duration
    return max(slope * t + start_e, end_e)


def due(first: int, last: int, learning_starts: int, every: int) -> int:
    """How many transitions g in [first, last] are past learning_starts with g % every == 0: CleanRL trains (and
    updates the target network) after transition g when g > learning_starts and g is a multiple of the frequency."""
    first = max(first, learning_starts + 1)
    return last // every - (first - 1) // every if first <= last else 0


# ACTING: the exploration's coins and random actions drawn in JAX, an iteration's at once, from the env's key stream
Exploration = namedtuple("Exploration", "coins random_actions")  # [steps, num_envs] each


def draw_exploration(key: jax.Array, steps: int, num_envs: int, num_actions: int) -> Exploration:
    """An iteration's exploration draws, from the env's key stream (dqn_linen.py draws the same)."""
    coin_key, action_key = jax.random.split(key)
    return Exploration(jax.random.uniform(coin_key, (steps, num_envs)),
                       jax.random.randint(action_key, (steps, num_envs), 0, num_actions))


def start_iteration(carry: EnvCarry, steps: int, num_actions: int):
    """One compiled call per iteration: the per-iteration sums zeroed and the iteration's exploration drawn."""
    key, explore_key = jax.random.split(carry.key)
    exploration = draw_exploration(explore_key, steps, carry.stats.returns.shape[0], num_actions)
    return EnvCarry(key, carry.env_state, new_iteration_stats(carry.stats)), exploration


@torch.no_grad()
def act(obs: torch.Tensor, epsilon: float, coins: torch.Tensor, random_actions: torch.Tensor, q_network: QNetwork):
    """Epsilon-greedy, per env: the random action where the coin is below epsilon, else the greedy one (no host sync)."""
    q_values = q_network(obs)
    return torch.where(coins < epsilon, random_actions, torch.argmax(q_values, dim=-1).int())


# LOSS
def td_loss(q_network: QNetwork, target_network: QNetwork, batch: Transitions, gamma: float):
    """The mean squared TD error of the taken actions against r + gamma (1 - terminated) max_a Q_target(s', a), and
    their mean Q-value (a truncated transition bootstraps: its next_obs is the final observation)."""
    with torch.no_grad():
        next_q = target_network(batch.next_obs).max(dim=-1).values
        td_target = batch.rewards + gamma * (1.0 - batch.terminated) * next_q
    q = q_network(batch.obs).gather(1, batch.actions.long()[:, None]).squeeze(1)
    return nn.functional.mse_loss(q, td_target), q.mean()


# UPDATE
# Adam's state for gradient_step's functional step, on the device (as CUDA graphs need): the step count, the moments
# (parameter name -> tensor), the learning rate, eps
AdamState = namedtuple("AdamState", "step exp_avg exp_avg_sq lr eps")


def make_optimizer(q_network: QNetwork, learning_rate: float) -> AdamState:
    """Adam with torch's defaults (betas 0.9, 0.999, eps 1e-8); the step itself is in gradient_step."""
    step = torch.tensor(0.0, device=next(q_network.parameters()).device)
    exp_avg, exp_avg_sq = ({name: torch.zeros_like(p) for name, p in q_network.named_parameters()} for _ in range(2))
    return AdamState(step, exp_avg, exp_avg_sq, learning_rate, 1e-8)


def gradient_step(batch: Transitions, q_network: QNetwork, optimizer: AdamState, loss_fn):
    """One Adam step on a batch from the replay memory; the loss and mean Q-value, on the device. Functional
    (torch.func), so that torch.compile makes the whole step one graph: `loss.backward()` and `optimizer.step()` would
    break it in three."""
    params = {name: param.detach() for name, param in q_network.named_parameters()}  # its storage, updated in place

    def loss_of(params):
        return loss_fn(functools.partial(torch.func.functional_call, q_network, params), batch=batch)

    grads, (loss, q) = torch.func.grad_and_value(loss_of, has_aux=True)(params)
    # torch.optim.Adam's update (https://arxiv.org/abs/1412.6980), as its capturable single-tensor step computes it
    b1, b2 = 0.9, 0.999
    optimizer.step.add_(1)
    step_size, bias_correction2_sqrt = optimizer.lr / (1 - b1**optimizer.step), (1 - b2**optimizer.step).sqrt()
    for name, param in params.items():
        exp_avg, exp_avg_sq = optimizer.exp_avg[name].lerp_(grads[name], 1 - b1), optimizer.exp_avg_sq[name]
        exp_avg_sq.mul_(b2).addcmul_(grads[name], grads[name], value=1 - b2)
        param.sub_(step_size * exp_avg / (exp_avg_sq.sqrt() / bias_correction2_sqrt + optimizer.eps))
    return loss.detach(), q.detach()


@torch.no_grad()
def update_target(target_network: QNetwork, q_network: QNetwork, tau: float):
    for target, online in zip(target_network.parameters(), q_network.parameters()):
        target.copy_(tau * online + (1.0 - tau) * target)


# CUDA GRAPHS
class CudaGraph:
    """Replay `fn` (a step, compiled or not) as one CUDA graph. The first `warmup` calls run for real on a side stream
    (compilation, lazy set-up), the next captures the graph; each call then copies its arguments into the static inputs
    (a Python float, epsilon, into a 0-d tensor), replays, and clones the outputs out of the graph's memory, which the
    next replay overwrites."""

    def __init__(self, fn, warmup: int = 2):
        self.fn, self.warmup, self.graph, self.stream = fn, warmup, None, torch.cuda.Stream()

    def __call__(self, *args):
        if self.warmup:
            self.warmup -= 1
            self.stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self.stream):
                out = self.fn(*args)
            torch.cuda.current_stream().wait_stream(self.stream)
            return out
        if self.graph is None:
            self.static_args = pytree.tree_map(lambda x: torch.tensor(x, device="cuda") if isinstance(x, float)
                                               else x.new_empty_strided(x.shape, x.stride()), args)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):  # records the kernels, runs none: the first replay below does
                self.static_out = self.fn(*self.static_args)
        pytree.tree_map(lambda static, new: static.copy_(new) if isinstance(new, torch.Tensor) else static.fill_(new),
                        self.static_args, args)
        self.graph.replay()
        return pytree.tree_map(torch.clone, self.static_out)


# TRAINING LOOP: the `run.` calls are the benchmark harness (timing, logging, profiling); the rest is DQN
def main(args: Args, run: "Run"):
    device, torch_device = select_device(args.device)
    jax.config.update("jax_default_device", device)
    torch.set_float32_matmul_precision("highest")  # full float32 matrix products (no TF32), as in JAX
    # compile from scratch as JAX does (TORCHINDUCTOR_FORCE_DISABLE_CACHES=0 overrides): iteration 0 times the compiler
    torch.compiler.config.force_disable_caches = True

    # SEEDING: JAX keys for the envs and the exploration (dqn_linen.py's); torch's generator for parameters and replay
    env_key, reset_key = jax.random.split(jax.random.PRNGKey(args.seed))
    torch.manual_seed(args.seed)
    env, env_params = make_env(args.env_id)
    step, env_state = env_reset(reset_key, env, env_params, args.num_envs)
    obs, num_actions = unpack_step(torch.from_dlpack(step))[0], env.action_space(env_params).n
    q_network = make_q_network(obs.shape[1], num_actions, torch_device)
    target_network = make_q_network(obs.shape[1], num_actions, torch_device)
    target_network.load_state_dict(q_network.state_dict())
    optimizer = make_optimizer(q_network, args.learning_rate)
    buffer = ReplayBuffer(args.buffer_size, obs.shape[1], torch_device)
    zeros = jnp.zeros(args.num_envs)
    stats = EpisodeStats(zeros, zeros.astype(jnp.int32), jnp.zeros(()), jnp.zeros(()), jnp.zeros(()))
    env_carry = jax.device_put(EnvCarry(env_key, env_state, stats), device)

    # EXECUTABLES: torch.compile where it repays its compile time: the gradient step, one graph (acting, a few small ops
    # per env step, costs as much compiled; the replay memory and the target update stay eager); the env step under
    # jax.jit (carry donated); --cudagraphs replays CUDA graphs of acting and of the gradient step. The action crosses to
    # JAX as a NumPy view on the CPU, through DLPack on the GPU
    steps_per_iteration = args.iteration_steps // args.num_envs
    start_iteration_fn = jax.jit(functools.partial(start_iteration, steps=steps_per_iteration, num_actions=num_actions),
                                 donate_argnums=0)
    env_step_fn = jax.jit(functools.partial(env_step, env=env, env_params=env_params), donate_argnums=0)
    to_env = torch.Tensor.numpy if torch_device.type == "cpu" else jax.dlpack.from_dlpack
    loss_fn = functools.partial(td_loss, target_network=target_network, gamma=args.gamma)
    act_fn = functools.partial(act, q_network=q_network)
    gradient_step_fn = functools.partial(torch.compile(gradient_step, fullgraph=True), q_network=q_network,
                                         optimizer=optimizer, loss_fn=loss_fn)
    if args.cudagraphs:
        act_fn, gradient_step_fn = CudaGraph(act_fn), CudaGraph(gradient_step_fn)
    duration, transitions = args.exploration_fraction * args.total_timesteps, 0

    for iteration in range(args.num_iterations):
        run.start_iteration(iteration)
        env_carry, exploration = start_iteration_fn(env_carry)
        coins, random_actions = (torch.from_dlpack(x) for x in exploration)
        sums, steps = torch.zeros(2, device=torch_device), 0
        for t in range(steps_per_iteration):
            # ACT, STEP, STORE: one exchange each way (the action to JAX, the packed step back by DLPack)
            epsilon = linear_schedule(args.start_e, args.end_e, duration, transitions)
            action = act_fn(obs, epsilon, coins[t], random_actions[t])
            env_carry, step = env_step_fn(env_carry, to_env(action))
            next_obs, reward, terminated, _, final_obs = unpack_step(torch.from_dlpack(step))
            buffer.add(Transitions(obs, final_obs, action, reward, terminated))
            obs, first, transitions = next_obs, transitions, transitions + args.num_envs

            # LEARN: the gradient steps and target update these transitions make due
            for _ in range(due(first, transitions - 1, args.learning_starts, args.train_frequency)):
                sums += torch.stack(gradient_step_fn(buffer.sample(args.batch_size)))
                steps += 1
            if due(first, transitions - 1, args.learning_starts, args.target_network_frequency):
                update_target(target_network, q_network, args.tau)

        # LOGGING: the one host fetch of this iteration; no loss before the first gradient step
        fetched = torch.cat([sums, torch.stack([torch.from_dlpack(x) for x in env_carry.stats[2:]])]).tolist()
        losses = {"td_loss": fetched[0] / steps, "q_values": fetched[1] / steps} if steps else {}
        epsilon = linear_schedule(args.start_e, args.end_e, duration, transitions - args.num_envs)
        run.log_iteration(transitions, {"epsilon": epsilon}, losses, *fetched[2:])
    run.finish(peak_device_bytes(device, torch_device))


# ======================================================================================================================
# BENCHMARK HARNESS: what makes a run of this script a benchmark run, not the algorithm: argument checks, the run folder
# and its TensorBoard event file, the system text, the clocks (start-up, each iteration, total), --profile, peak
# memory, the stop on a NaN loss and on SIGINT/SIGTERM. A reader copying the script for their own project may delete
# this section: main() calls it through run.start_iteration, run.log_iteration and run.finish, and the last lines of
# the file start it.
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
    counts = ("total_timesteps", "num_envs", "buffer_size", "target_network_frequency", "batch_size", "train_frequency",
              "iteration_steps")
    rules = (
        ("must be positive", lambda value: value > 0, counts + ("learning_rate",)),
        ("must be >= 0", lambda value: value >= 0, ("learning_starts",)),
        ("must be in (0, 1]", lambda value: 0 < value <= 1, ("gamma", "tau", "exploration_fraction")),
        ("must be in [0, 1]", lambda value: 0 <= value <= 1, ("start_e", "end_e")),
    )
    for requirement, valid, names in rules:
        for name in names:
            if not valid(getattr(args, name)):
                return f"--{name.replace('_', '-')} {requirement}, got {getattr(args, name)}"
    if args.buffer_size < args.batch_size:
        return f"--buffer-size {args.buffer_size} is smaller than one batch (--batch-size {args.batch_size})"
    if args.buffer_size < args.num_envs:
        return f"--buffer-size {args.buffer_size} is smaller than one step's transitions (--num-envs {args.num_envs})"
    if args.learning_starts >= args.total_timesteps:
        return f"--learning-starts {args.learning_starts} is not below --total-timesteps {args.total_timesteps}"
    if args.total_timesteps % args.iteration_steps or args.iteration_steps % args.num_envs:
        return (f"--total-timesteps {args.total_timesteps} must be a multiple of --iteration-steps "
                f"{args.iteration_steps}, and that of --num-envs {args.num_envs}")
    if args.sync_timing:
        return "--sync-timing: an iteration acts and learns at every step here; they cannot be timed apart"
    if ":" not in args.env_id and args.env_id not in gymnax.registered_envs:
        return f"unknown env '{args.env_id}': not a registered gymnax environment, nor module:EnvId"
    try:
        env, env_params = make_env(args.env_id)
    except (ImportError, AttributeError, ValueError) as error:
        return f"--env-id {args.env_id}: {error}"
    if not isinstance(env.action_space(env_params), spaces.Discrete):
        return f"env '{args.env_id}' has a continuous action space; DQN needs discrete actions"
    try:
        _, torch_device = select_device(args.device)
    except RuntimeError:
        return f"--device {args.device}: no such device available to jax and torch"
    if args.cudagraphs and torch_device.type != "cuda":
        return "--cudagraphs needs a CUDA GPU; this run is on the CPU"
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
    compile_mode, (device, _) = "compile+cudagraphs" if args.cudagraphs else "compile", select_device(args.device)
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
        self.profiling, self.stopped_by = contextlib.ExitStack(), None
        signal.signal(signal.SIGINT, self.stop_on_signal)
        signal.signal(signal.SIGTERM, self.stop_on_signal)

    def start_iteration(self, iteration: int):
        now = time.perf_counter()
        if iteration == 0:  # the texts hold every setting now, those main() computes too
            self.writer.add_table("hyperparameters", "param", asdict(self.args))
            self.writer.add_table("system", "key", system_info(self.args))
            self.writer.add_scalar("time/startup", now - PROCESS_START, 0)
            self.training_start = self.last_fetch = now
        self.iteration = iteration
        if self.args.profile and iteration == self.profile_iterations.start:
            self.profiling.enter_context(profile_trace(self.run_dir))

    def log_iteration(self, global_step, charts: dict, losses: dict, finished_return_sum, finished_length_sum,
                      finished_count):
        """Write the iteration's scalars (their values fetched already), print its line, stop on a NaN or inf loss."""
        if self.stopped_by:  # the handler's exit was swallowed by the code it interrupted (seen in torch.compile)
            sys.exit(128 + self.stopped_by)
        now, iteration, add_scalar = time.perf_counter(), self.iteration, self.writer.add_scalar
        if finished_count > 0:
            add_scalar("charts/episodic_return", finished_return_sum / finished_count, global_step)
            add_scalar("charts/episodic_length", finished_length_sum / finished_count, global_step)
        for name, value in charts.items():  # the algorithm's own: DQN's epsilon
            add_scalar(f"charts/{name}", value, global_step)
        add_scalar("charts/SPS", global_step / (now - self.training_start), global_step)
        for name, value in losses.items():
            add_scalar(f"losses/{name}", value, global_step)
        add_scalar("time/iteration", now - self.last_fetch, iteration)
        mean_return = finished_return_sum / finished_count if finished_count else math.nan  # nan: no episode ended
        print(f"iteration {iteration + 1}/{self.args.num_iterations} global_step={global_step}"
              f" return={mean_return:.1f} time={now - self.last_fetch:.3f}s", flush=True)
        self.last_fetch = now
        if self.args.profile and iteration == self.profile_iterations[-1]:
            self.close_profiler()
        # a NaN or inf loss stops the run
        diverged = [value for value in losses.values() if not math.isfinite(value)]
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
