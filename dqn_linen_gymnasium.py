"""DQN (CleanRL-style, single file) in Flax Linen + optax on a Gymnasium vector env on the CPU: CleanRL's dqn_jax.py
design, acting and the gradient step jitted."""
import time

PROCESS_START = time.perf_counter()  # the benchmark harness's start-up time starts here

import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # on a GPU: allocate as needed (peak memory is logged)

import functools
from collections import namedtuple
from dataclasses import dataclass
from typing import Any, Literal

import flax.linen as nn
import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
import optax
import tyro
from flax.training.train_state import TrainState

HIDDEN_SIZES = (120, 84)  # CleanRL's Q-network for CartPole-v1


@dataclass
class Args:
    # experiment
    exp_name: str = os.path.basename(__file__)[: -len(".py")]
    """the name of this experiment (variant), used in the run name"""
    seed: int = 1
    """seed of parameters, environments, exploration and replay sampling"""
    env_id: str = "CartPole-v1"
    """a gymnax env id with a Gymnasium counterpart of the same dynamics (CartPole-v1, Acrobot-v1, MountainCar-v0),
    or module:EnvId, a Gymnasium env the module registers"""
    model_size: Literal["small"] = "small"
    """the Q-network: small = CleanRL's, 120 and 84 ReLU units (the one size)"""
    jit: bool = True
    """compile acting and the gradient step with jax.jit (--no-jit runs them eagerly, op by op)"""
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


# ENV HELPERS: the env runs in NumPy on the CPU, and so does the replay memory; the agent reads what it needs
# gymnax env id -> the Gymnasium env with the same dynamics, observations, rewards and time limit
GYMNASIUM_ENVS = {"CartPole-v1": "CartPole-v1", "Acrobot-v1": "Acrobot-v1", "MountainCar-v0": "MountainCar-v0"}


def gymnasium_id(env_id: str) -> str:
    """The Gymnasium env of the same MDP: the gymnax env's counterpart, or `module:EnvId` as given (an env the
    project or the user ships; gymnasium.make imports the module, which registers it)."""
    return env_id if ":" in env_id else GYMNASIUM_ENVS[env_id]


def make_envs(env_id: str, num_envs: int) -> gym.vector.VectorEnv:
    """`num_envs` envs stepped in turn, each reset within the step that ends its episode (same-step autoreset: a
    truncated episode's final obs is at hand, as in gymnax)."""
    same_step = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
    return gym.make_vec(gymnasium_id(env_id), num_envs=num_envs, vectorization_mode="sync", vector_kwargs=same_step)


def flatten_obs(obs: np.ndarray) -> np.ndarray:
    """Flatten each env's observation into a float32 vector."""
    return obs.reshape(obs.shape[0], -1).astype(np.float32, copy=False)


def env_step(action: np.ndarray, envs: gym.vector.VectorEnv):
    """Step every env: next obs, reward, terminated, truncated and the final obs (an ended env is already reset, its
    final obs in info["final_obs"]; any other's is its next obs)."""
    obs, reward, terminated, truncated, info = envs.step(action)
    final_obs = obs.copy()
    if "_final_obs" in info:
        ended = info["_final_obs"]
        final_obs[ended] = np.stack(info["final_obs"][ended])
    return flatten_obs(obs), reward.astype(np.float32), terminated, truncated, flatten_obs(final_obs)


EpisodeStats = namedtuple("EpisodeStats", "returns lengths finished_return_sum finished_length_sum finished_count")


def new_iteration_stats(stats: EpisodeStats) -> EpisodeStats:
    """Keep running episodes, zero the per-iteration sums of finished ones."""
    return stats._replace(finished_return_sum=0.0, finished_length_sum=0.0, finished_count=0.0)


def track_episodes(stats: EpisodeStats, reward: np.ndarray, done: np.ndarray) -> EpisodeStats:
    """Per-env running returns and lengths, updated in place in NumPy on the host (where the env step is); the sums
    of the episodes that ended, which most steps have none of."""
    returns, lengths = stats.returns, stats.lengths
    returns += reward
    lengths += 1
    if not done.any():
        return stats
    ended = stats._replace(finished_return_sum=stats.finished_return_sum + float(returns[done].sum()),
                           finished_length_sum=stats.finished_length_sum + float(lengths[done].sum()),
                           finished_count=stats.finished_count + float(done.sum()))
    returns[done], lengths[done] = 0.0, 0
    return ended


# REPLAY MEMORY: preallocated NumPy arrays on the host (CleanRL's design), a ring written num_envs transitions at a time
Transitions = namedtuple("Transitions", "obs next_obs actions rewards terminated")  # next_obs: final obs at an end


class ReplayBuffer:
    def __init__(self, capacity: int, obs_dim: int):
        obs, next_obs = (np.zeros((capacity, obs_dim), np.float32) for _ in range(2))
        rewards, terminated = (np.zeros(capacity, np.float32) for _ in range(2))
        self.data = Transitions(obs, next_obs, np.zeros(capacity, np.int32), rewards, terminated)
        self.ring = np.arange(2 * capacity) % capacity  # index views for a write across the end
        self.position, self.size, self.capacity = 0, 0, capacity

    def add(self, transitions: Transitions):
        count = transitions.obs.shape[0]
        index = self.ring[self.position : self.position + count]
        for stored, new in zip(self.data, transitions):
            stored[index] = new
        self.position, self.size = (self.position + count) % self.capacity, min(self.size + count, self.capacity)

    def sample(self, batch_size: int, rng: np.random.Generator) -> Transitions:
        """A batch drawn uniformly, with replacement, from the stored transitions."""
        index = rng.integers(self.size, size=batch_size)
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


# ACTING: the exploration's coins and random actions drawn from the script's NumPy generator, an iteration's at once
Exploration = namedtuple("Exploration", "coins random_actions")  # [steps, num_envs] each


def draw_exploration(rng: np.random.Generator, steps: int, num_envs: int, num_actions: int) -> Exploration:
    """An iteration's exploration draws (one generator call each, not two per env step)."""
    return Exploration(rng.random((steps, num_envs)), rng.integers(num_actions, size=(steps, num_envs)))


def act(obs: np.ndarray, epsilon: float, coins: np.ndarray, random_actions: np.ndarray, greedy_fn) -> np.ndarray:
    """Epsilon-greedy, per env: the random action where the coin is below epsilon, else the greedy one; the
    Q-network runs only if some env needs it."""
    explore = coins < epsilon
    return random_actions if explore.all() else np.where(explore, random_actions, greedy_fn(obs))


def select_device(choice: str) -> jax.Device:
    """The device asked for (auto: JAX's default, the GPU if present); a RuntimeError if there is none."""
    return jax.devices()[0] if choice == "auto" else jax.devices(choice)[0]


# MODEL
def uniform_fan_in(fan_in: int):
    """torch's default init of nn.Linear (CleanRL's): uniform in +-1/sqrt(fan_in), for the weights and the biases."""
    bound = 1 / np.sqrt(fan_in)
    return lambda key, shape, dtype=jnp.float32: jax.random.uniform(key, shape, dtype, -bound, bound)


class QNetwork(nn.Module):
    """An MLP from observation to one Q-value per action, ReLU between its layers."""

    action_dim: int

    @nn.compact
    def __call__(self, x):
        for size in HIDDEN_SIZES:
            init = uniform_fan_in(x.shape[-1])
            x = nn.relu(nn.Dense(size, kernel_init=init, bias_init=init)(x))
        init = uniform_fan_in(x.shape[-1])
        return nn.Dense(self.action_dim, kernel_init=init, bias_init=init)(x)


def make_q_network(key: jax.Array, obs_dim: int, action_dim: int):
    """Build the Q-network and its seeded parameters."""
    q_network = QNetwork(action_dim)
    return q_network, q_network.init(key, jnp.zeros((1, obs_dim), jnp.float32))


# LOSS
def td_loss(params: Any, target_params: Any, q_network: QNetwork, batch: Transitions, gamma: float):
    """The mean squared TD error of the taken actions against r + gamma (1 - terminated) max_a Q_target(s', a), and
    their mean Q-value (a truncated transition bootstraps: its next_obs is the final observation)."""
    next_q = jnp.max(q_network.apply(target_params, batch.next_obs), axis=-1)
    td_target = batch.rewards + gamma * (1.0 - batch.terminated) * next_q
    q = jnp.take_along_axis(q_network.apply(params, batch.obs), batch.actions[:, None], axis=1).squeeze(1)
    return jnp.mean((td_target - q) ** 2), jnp.mean(q)


# UPDATE
def gradient_step(train_state: TrainState, target_params: Any, sums: jax.Array, batch: Transitions, loss_fn):
    """One Adam step on a batch from the replay memory; the loss and mean Q-value added to the iteration's sums."""
    (loss, q), grads = jax.value_and_grad(loss_fn, has_aux=True)(train_state.params, target_params, batch=batch)
    return train_state.apply_gradients(grads=grads), sums + jnp.stack([loss, q])


def update_target(target_params: Any, params: Any, tau: float):
    return jax.tree.map(lambda target, online: tau * online + (1.0 - tau) * target, target_params, params)


def greedy(params: Any, obs: jax.Array, q_network: QNetwork) -> jax.Array:
    return jnp.argmax(q_network.apply(params, obs), axis=-1)


# TRAINING LOOP: the `run.` calls are the benchmark harness (timing, logging, profiling); the rest is DQN
def main(args: Args, run: "Run"):
    device = select_device(args.device)
    jax.config.update("jax_default_device", device)
    jax.config.update("jax_default_matmul_precision", "highest")  # full float32 matrix products, as in torch

    # SEEDING: env i from --seed + i; NumPy's generator for exploration and replay sampling; a JAX key for parameters
    rng = np.random.default_rng(args.seed)
    envs = make_envs(args.env_id, args.num_envs)
    obs = flatten_obs(envs.reset(seed=args.seed)[0])
    num_actions = envs.single_action_space.n
    q_network, params = make_q_network(jax.random.PRNGKey(args.seed), obs.shape[1], num_actions)
    train_state = TrainState.create(apply_fn=q_network.apply, params=params, tx=optax.adam(args.learning_rate))
    target_params = jax.tree.map(jnp.copy, params)  # buffers of its own: the gradient step donates the train state
    buffer = ReplayBuffer(args.buffer_size, obs.shape[1])
    stats = EpisodeStats(np.zeros(args.num_envs), np.zeros(args.num_envs, np.int64), 0.0, 0.0, 0.0)

    # EXECUTABLES: acting (the greedy actions) and the gradient step under jax.jit, or run eagerly (op by op)
    greedy_fn = functools.partial(greedy, q_network=q_network)
    loss_fn = functools.partial(td_loss, q_network=q_network, gamma=args.gamma)
    step_fn = functools.partial(gradient_step, loss_fn=loss_fn)
    if args.jit:
        greedy_fn, step_fn = jax.jit(greedy_fn), jax.jit(step_fn, donate_argnums=(0, 2))
    else:
        jax.config.update("jax_disable_jit", True)
    steps_per_iteration = args.iteration_steps // args.num_envs
    duration, transitions = args.exploration_fraction * args.total_timesteps, 0

    for iteration in range(args.num_iterations):
        run.start_iteration(iteration)
        stats = new_iteration_stats(stats)
        sums, steps = jnp.zeros(2), 0
        coins, random_actions = draw_exploration(rng, steps_per_iteration, args.num_envs, num_actions)
        for t in range(steps_per_iteration):
            # ACT, STEP, STORE
            epsilon = linear_schedule(args.start_e, args.end_e, duration, transitions)
            action = act(obs, epsilon, coins[t], random_actions[t],
                         lambda obs: np.asarray(greedy_fn(train_state.params, obs)))
            next_obs, reward, terminated, truncated, final_obs = env_step(action, envs)
            buffer.add(Transitions(obs, final_obs, action, reward, terminated))
            stats = track_episodes(stats, reward, np.logical_or(terminated, truncated))
            obs, first, transitions = next_obs, transitions, transitions + args.num_envs

            # LEARN: the gradient steps and target update these transitions make due
            for _ in range(due(first, transitions - 1, args.learning_starts, args.train_frequency)):
                train_state, sums = step_fn(train_state, target_params, sums, buffer.sample(args.batch_size, rng))
                steps += 1
            if due(first, transitions - 1, args.learning_starts, args.target_network_frequency):
                target_params = update_target(target_params, train_state.params, args.tau)

        # LOGGING: the one fetch of the iteration's losses (the episodes' sums are on the host already)
        fetched = jax.device_get(sums).tolist()
        losses = {"td_loss": fetched[0] / steps, "q_values": fetched[1] / steps} if steps else {}
        epsilon = linear_schedule(args.start_e, args.end_e, duration, transitions - args.num_envs)
        run.log_iteration(transitions, {"epsilon": epsilon}, losses, *stats[2:])
    envs.close()
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

from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, types_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter


def gymnasium_spec(env_id: str) -> gym.envs.registration.EnvSpec:
    """The registered spec of `module:EnvId`, its module imported first (as gymnasium.make does)."""
    module, name = env_id.split(":", 1)
    importlib.import_module(module)
    return gym.spec(name)


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
    if ":" in args.env_id:
        try:
            gymnasium_spec(args.env_id)
        except (ImportError, gym.error.Error) as error:
            return f"--env-id {args.env_id}: {error}"
    elif args.env_id not in GYMNASIUM_ENVS:
        return (
            f"--env-id {args.env_id}: not one of the gymnax envs with a Gymnasium counterpart of the same dynamics"
            f" ({', '.join(GYMNASIUM_ENVS)})"
        )
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
    packages = ("jax", "jaxlib", "flax", "optax", "gymnasium", "numpy", "tensorboard")
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
