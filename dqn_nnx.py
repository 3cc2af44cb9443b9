"""DQN (CleanRL-style, single file) in Flax NNX (tree mode) + optax on a gymnax environment, each iteration one compiled
call."""
import time

PROCESS_START = time.perf_counter()  # the benchmark harness's start-up time starts here

import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # on a GPU: allocate as needed (peak memory is logged)

import functools
import importlib
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import flax
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import optax
import tyro
from flax import nnx

# NNX tree mode (objects as plain pytrees: the fastest mode for PPO here), pinned: a new Flax default must not change
# the measure
flax.config.update("nnx_graph_mode", False)
flax.config.update("nnx_graph_updates", False)

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
    sync_timing: bool = False
    """not here: an iteration is one compiled call that acts and learns, they cannot be timed apart"""
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


# ENV HELPERS
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
    obs, env_state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, num_envs), env_params)
    return flatten_obs(obs), env_state


def env_step(key: jax.Array, env_state: Any, action: jax.Array, env: Any, env_params: Any):
    keys = jax.random.split(key, action.shape[0])
    obs, env_state, reward, terminated, truncated, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
        keys, env_state, action, env_params
    )
    return flatten_obs(obs), env_state, reward, terminated, truncated, flatten_obs(info["final_observation"])


def select_device(choice: str) -> jax.Device:
    """The device asked for (auto: JAX's default, the GPU if present); a RuntimeError if there is none."""
    return jax.devices()[0] if choice == "auto" else jax.devices(choice)[0]


# MODEL
def uniform_fan_in(fan_in: int):
    """torch's default init of nn.Linear (CleanRL's): uniform in +-1/sqrt(fan_in), for the weights and the biases."""
    bound = 1 / np.sqrt(fan_in)
    return lambda key, shape, dtype=jnp.float32: jax.random.uniform(key, shape, dtype, -bound, bound)


class QNetwork(nnx.Module):
    """An MLP from observation to one Q-value per action, ReLU between its layers."""

    def __init__(self, obs_dim: int, action_dim: int, rngs: nnx.Rngs):
        sizes, layers = (obs_dim, *HIDDEN_SIZES), []
        for n_in, n_out in zip(sizes[:-1], sizes[1:]):
            init = uniform_fan_in(n_in)
            layers += [nnx.Linear(n_in, n_out, kernel_init=init, bias_init=init, rngs=rngs), nnx.relu]
        init = uniform_fan_in(sizes[-1])
        self.network = nnx.Sequential(*layers, nnx.Linear(sizes[-1], action_dim, kernel_init=init, bias_init=init,
                                                          rngs=rngs))

    def __call__(self, x):
        return self.network(x)


def make_q_network(key: jax.Array, obs_dim: int, action_dim: int) -> QNetwork:
    """Build the Q-network with its seeded parameters."""
    return QNetwork(obs_dim, action_dim, nnx.Rngs(params=key))


# REPLAY MEMORY: preallocated arrays in the training carry, a ring written num_envs transitions at a time
class Transitions(NamedTuple):
    obs: jax.Array
    next_obs: jax.Array  # the final observation where the episode ended (the next one is a reset's)
    actions: jax.Array
    rewards: jax.Array
    terminated: jax.Array


class ReplayBuffer(NamedTuple):
    data: Transitions
    position: jax.Array  # where the next transition goes
    size: jax.Array  # how many are stored


def make_buffer(capacity: int, obs_dim: int) -> ReplayBuffer:
    data = Transitions(jnp.zeros((capacity, obs_dim)), jnp.zeros((capacity, obs_dim)), jnp.zeros(capacity, jnp.int32),
                       jnp.zeros(capacity), jnp.zeros(capacity))
    return ReplayBuffer(data, jnp.int32(0), jnp.int32(0))


def buffer_add(buffer: ReplayBuffer, transitions: Transitions) -> ReplayBuffer:
    capacity, count = buffer.data.obs.shape[0], transitions.obs.shape[0]
    index = (buffer.position + jnp.arange(count)) % capacity
    data = jax.tree.map(lambda stored, new: stored.at[index].set(new), buffer.data, transitions)
    return ReplayBuffer(data, (buffer.position + count) % capacity, jnp.minimum(buffer.size + count, capacity))


def buffer_sample(buffer: ReplayBuffer, key: jax.Array, batch_size: int) -> Transitions:
    """A batch drawn uniformly, with replacement, from the stored transitions."""
    index = jax.random.randint(key, (batch_size,), 0, buffer.size)
    return jax.tree.map(lambda stored: stored[index], buffer.data)


# SCHEDULES: every count is of transitions; g, the index of a transition, counts from 0
def linear_schedule(start_e: float, end_e: float, duration: float, t):
    """Epsilon at transition t: from start_e down to end_e over `duration` transitions, then end_e."""
    slope = (end_e - start_e) / duration
    return jnp.maximum(slope * t + start_e, end_e)


def due(first, last, learning_starts: int, every: int):
    """How many transitions g in [first, last] are past learning_starts with g % every == 0: CleanRL trains (and
    updates the target network) after transition g when g > learning_starts and g is a multiple of the frequency."""
    first = jnp.maximum(first, learning_starts + 1)
    return jnp.where(first <= last, last // every - (first - 1) // every, 0)


# ACTING
class Exploration(NamedTuple):
    coins: jax.Array  # [steps, num_envs] uniform in [0, 1): the env explores where its coin is below epsilon
    random_actions: jax.Array  # [steps, num_envs] the action it then takes


def draw_exploration(key: jax.Array, steps: int, num_envs: int, num_actions: int) -> Exploration:
    """An iteration's exploration draws, from the env's key stream (dqn_torch.py draws the same)."""
    coin_key, action_key = jax.random.split(key)
    return Exploration(jax.random.uniform(coin_key, (steps, num_envs)),
                       jax.random.randint(action_key, (steps, num_envs), 0, num_actions))


def act(q_network: QNetwork, obs: jax.Array, epsilon, exploration: Exploration):
    """Epsilon-greedy, per env: the random action where the coin is below epsilon, else the greedy one."""
    q_values = q_network(obs)
    return jnp.where(exploration.coins < epsilon, exploration.random_actions, jnp.argmax(q_values, axis=-1))


class EpisodeStats(NamedTuple):
    returns: jax.Array
    lengths: jax.Array
    finished_return_sum: jax.Array
    finished_length_sum: jax.Array
    finished_count: jax.Array


def track_episodes(stats: EpisodeStats, reward: jax.Array, done: jax.Array) -> EpisodeStats:
    """Masked per-env update of running returns and lengths, on device."""
    returns, lengths = stats.returns + reward, stats.lengths + 1
    return EpisodeStats(
        returns=jnp.where(done, 0.0, returns), lengths=jnp.where(done, 0, lengths),
        finished_return_sum=stats.finished_return_sum + jnp.sum(jnp.where(done, returns, 0.0)),
        finished_length_sum=stats.finished_length_sum + jnp.sum(jnp.where(done, lengths, 0)),
        finished_count=stats.finished_count + jnp.sum(done),
    )


# LOSS
def td_loss(q_network: QNetwork, target_network: QNetwork, batch: Transitions, gamma: float):
    """The mean squared TD error of the taken actions against r + gamma (1 - terminated) max_a Q_target(s', a), and
    their mean Q-value (a truncated transition bootstraps: its next_obs is the final observation)."""
    next_q = jnp.max(target_network(batch.next_obs), axis=-1)
    td_target = batch.rewards + gamma * (1.0 - batch.terminated) * next_q
    q = jnp.take_along_axis(q_network(batch.obs), batch.actions[:, None], axis=1).squeeze(1)
    return jnp.mean((td_target - q) ** 2), jnp.mean(q)


# UPDATE
class LossSums(NamedTuple):
    td_loss: jax.Array
    q_values: jax.Array
    gradient_steps: jax.Array


class GradientCarry(NamedTuple):
    """What the gradient steps' loop carries: the Q-network and its optimizer (NNX objects, updated in place), the
    replay sampling's key and the loss sums."""

    q_network: QNetwork
    optimizer: nnx.Optimizer
    key: jax.Array
    sums: LossSums


def gradient_step(_, carry: GradientCarry, target_network: QNetwork, buffer: ReplayBuffer, loss_fn, batch_size: int):
    """One Adam step on a batch sampled from the replay memory; the loss added to the iteration's sums."""
    key, sample_key = jax.random.split(carry.key)
    batch = buffer_sample(buffer, sample_key, batch_size)
    (loss, q), grads = nnx.value_and_grad(loss_fn, has_aux=True)(carry.q_network, target_network, batch=batch)
    carry.optimizer.update(carry.q_network, grads)
    sums = LossSums(carry.sums.td_loss + loss, carry.sums.q_values + q, carry.sums.gradient_steps + 1)
    return GradientCarry(carry.q_network, carry.optimizer, key, sums)


# TRAINING LOOP: one iteration (iteration_steps transitions) is one compiled call, nnx.scan over the env steps; the
# NNX objects (Q-network, target network, optimizer) go in as arguments and are updated in place, never returned
class TrainCarry(NamedTuple):
    buffer: ReplayBuffer
    env_state: Any
    obs: jax.Array
    env_key: jax.Array  # the env steps' and the exploration's, split as dqn_torch.py splits them
    key: jax.Array  # the replay sampling's
    stats: EpisodeStats
    transitions: jax.Array  # taken so far (all envs')
    sums: LossSums


def env_transition(q_network: QNetwork, target_network: QNetwork, optimizer: nnx.Optimizer, carry: TrainCarry,
                   exploration: Exploration, env: Any, env_params: Any, args: Args):
    """One step of every env: act, step, store; then the gradient steps and target update those transitions make due."""
    env_key, step_key = jax.random.split(carry.env_key)
    epsilon = linear_schedule(args.start_e, args.end_e, args.exploration_fraction * args.total_timesteps,
                              carry.transitions)
    action = act(q_network, carry.obs, epsilon, exploration)
    next_obs, env_state, reward, terminated, truncated, final_obs = env_step(step_key, carry.env_state, action, env,
                                                                            env_params)
    buffer = buffer_add(carry.buffer, Transitions(carry.obs, final_obs, action, reward, terminated.astype(jnp.float32)))
    stats = track_episodes(carry.stats, reward, jnp.logical_or(terminated, truncated))
    first, last = carry.transitions, carry.transitions + args.num_envs - 1
    loss_fn = functools.partial(td_loss, gamma=args.gamma)
    step = functools.partial(gradient_step, target_network=target_network, buffer=buffer, loss_fn=loss_fn,
                             batch_size=args.batch_size)
    steps = due(first, last, args.learning_starts, args.train_frequency)
    learned = nnx.fori_loop(0, steps, step, GradientCarry(q_network, optimizer, carry.key, carry.sums))
    update_target = due(first, last, args.learning_starts, args.target_network_frequency) > 0
    target_params = jax.tree.map(lambda target, online: jnp.where(update_target, args.tau * online
                                                                  + (1.0 - args.tau) * target, target),
                                 nnx.state(target_network, nnx.Param), nnx.state(q_network, nnx.Param))
    nnx.update(target_network, target_params)
    return TrainCarry(buffer, env_state, next_obs, env_key, learned.key, stats, carry.transitions + args.num_envs,
                      learned.sums), None


def train_iteration(q_network: QNetwork, target_network: QNetwork, optimizer: nnx.Optimizer, carry: TrainCarry,
                    env: Any, env_params: Any, args: Args) -> TrainCarry:
    """`iteration_steps` transitions: the per-iteration sums zeroed, the exploration drawn, lax.scan over the steps."""
    zero, steps = jnp.zeros(()), args.iteration_steps // args.num_envs
    stats = carry.stats._replace(finished_return_sum=zero, finished_length_sum=zero, finished_count=zero)
    env_key, explore_key = jax.random.split(carry.env_key)
    exploration = draw_exploration(explore_key, steps, args.num_envs, env.action_space(env_params).n)
    carry = carry._replace(env_key=env_key, stats=stats, sums=LossSums(zero, zero, jnp.int32(0)))
    step = functools.partial(env_transition, env=env, env_params=env_params, args=args)
    scan = nnx.scan(step, in_axes=(None, None, None, nnx.Carry, 0), out_axes=(nnx.Carry, 0))
    carry, _ = scan(q_network, target_network, optimizer, carry, exploration)
    return carry


def main(args: Args, run: "Run"):
    device = select_device(args.device)
    jax.config.update("jax_default_device", device)
    jax.config.update("jax_default_matmul_precision", "highest")  # full float32 matrix products, as in torch

    # SEEDING: the env's keys as dqn_torch.py's (the same transitions for the same actions); the agent's of their own
    env_key, reset_key = jax.random.split(jax.random.PRNGKey(args.seed))
    param_key, key = jax.random.split(jax.random.fold_in(jax.random.PRNGKey(args.seed), 1))
    env, env_params = make_env(args.env_id)
    obs, env_state = env_reset(reset_key, env, env_params, args.num_envs)
    q_network = make_q_network(param_key, obs.shape[1], env.action_space(env_params).n)
    optimizer = nnx.Optimizer(q_network, optax.adam(args.learning_rate), wrt=nnx.Param)
    zeros = jnp.zeros(args.num_envs)
    stats = EpisodeStats(zeros, zeros.astype(jnp.int32), jnp.zeros(()), jnp.zeros(()), jnp.zeros(()))
    target_network = make_q_network(param_key, obs.shape[1], env.action_space(env_params).n)  # its own buffers: donated
    carry = TrainCarry(make_buffer(args.buffer_size, obs.shape[1]), env_state, obs, env_key, key, stats, jnp.int32(0),
                       LossSums(jnp.zeros(()), jnp.zeros(()), jnp.int32(0)))

    # EXECUTABLE: the iteration compiled in tree mode with the NNX objects bound once by nnx.jit_partial; donated: the
    # bound objects (argument 0 of a jit_partial call) and the carry, so that XLA reuses the replay memory's buffers
    iteration_fn = nnx.jit_partial(functools.partial(train_iteration, env=env, env_params=env_params, args=args),
                                   q_network, target_network, optimizer, graph=False, donate_argnums=(0, 1))
    duration = args.exploration_fraction * args.total_timesteps

    for iteration in range(args.num_iterations):
        run.start_iteration(iteration)
        carry = iteration_fn(carry)
        global_step = (iteration + 1) * args.iteration_steps

        # LOGGING: the one host fetch of this iteration; no loss before the first gradient step
        sums, finished = jax.device_get((carry.sums, carry.stats[2:]))
        steps = int(sums.gradient_steps)
        losses = {"td_loss": sums.td_loss / steps, "q_values": sums.q_values / steps} if steps else {}
        epsilon = float(linear_schedule(args.start_e, args.end_e, duration, global_step - args.num_envs))
        run.log_iteration(global_step, {"epsilon": epsilon}, losses, *finished)
    run.finish(peak_device_bytes(device))


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
        return "--sync-timing: an iteration acts and learns in one compiled call here; they cannot be timed apart"
    if ":" not in args.env_id and args.env_id not in gymnax.registered_envs:
        return f"unknown env '{args.env_id}': not a registered gymnax environment, nor module:EnvId"
    try:
        env, env_params = make_env(args.env_id)
    except (ImportError, AttributeError, ValueError) as error:
        return f"--env-id {args.env_id}: {error}"
    if not isinstance(env.action_space(env_params), spaces.Discrete):
        return f"env '{args.env_id}' has a continuous action space; DQN needs discrete actions"
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
    packages = ("jax", "jaxlib", "flax", "optax", "gymnax", "numpy", "tensorboard")
    compile_mode, device = "tree", select_device(args.device)
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
