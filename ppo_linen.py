"""PPO (CleanRL-style, single file) in Flax Linen + optax on a gymnax environment."""
import time

PROCESS_START = time.perf_counter()

import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

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

import flax.linen as nn
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import optax
import tyro
from flax.training.train_state import TrainState
from gymnax.environments import spaces
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
    """any gymnax environment with a discrete action space"""
    model_size: Literal["small", "medium", "large"] = "small"
    """hidden layers: small [64, 64], medium [256] x 3, large [1024] x 6"""
    jit: bool = True
    """compile rollout, GAE and update with jax.jit (--no-jit runs them eagerly, op by op)"""
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
    if args.env_id not in gymnax.registered_envs:
        return f"unknown env '{args.env_id}': not a registered gymnax environment"
    env, env_params = gymnax.make(args.env_id)
    if not isinstance(env.action_space(env_params), spaces.Discrete):
        return f"env '{args.env_id}' has a continuous action space; PPO here needs discrete actions"
    return None


# ENV HELPERS
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
    final_obs = flatten_obs(info["final_observation"])
    return flatten_obs(obs), env_state, reward, terminated, truncated, final_obs


# MODEL
def mlp(x: jax.Array, hidden_sizes: Sequence[int], out_dim: int, out_gain: float) -> jax.Array:
    for size in hidden_sizes:
        x = nn.tanh(nn.Dense(size, kernel_init=nn.initializers.orthogonal(np.sqrt(2)))(x))
    return nn.Dense(out_dim, kernel_init=nn.initializers.orthogonal(out_gain))(x)


class Actor(nn.Module):
    hidden_sizes: Sequence[int]
    action_dim: int

    @nn.compact
    def __call__(self, x):
        return mlp(x, self.hidden_sizes, self.action_dim, 0.01)


class Critic(nn.Module):
    hidden_sizes: Sequence[int]

    @nn.compact
    def __call__(self, x):
        return mlp(x, self.hidden_sizes, 1, 1.0).squeeze(-1)


class Agent(nn.Module):
    """Separate actor and critic MLPs with tanh (orthogonal init, biases 0)."""

    hidden_sizes: Sequence[int]
    action_dim: int

    def setup(self):
        self.actor = Actor(self.hidden_sizes, self.action_dim)
        self.critic = Critic(self.hidden_sizes)

    def __call__(self, x):
        return self.actor(x), self.critic(x)

    def value(self, x):
        return self.critic(x)


def make_agent(key: jax.Array, obs_dim: int, action_dim: int, model_size: str):
    """Build the agent and its seeded parameters."""
    agent = Agent(MODEL_SIZES[model_size], action_dim)
    params = agent.init(key, jnp.zeros((1, obs_dim), jnp.float32))
    return agent, params


class AdamState(NamedTuple):
    count: jax.Array
    mu: Any
    nu: Any


def scale_by_adam(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> optax.GradientTransformation:
    """`optax.scale_by_adam` with a float32 step count, same maths.

    optax keeps an int32 count, and eagerly `b ** count` with a concrete integer becomes
    `lax.integer_pow` with a static exponent: a new compilation every optimiser step under --no-jit.
    """

    def init(params):
        mu, nu = jax.tree.map(jnp.zeros_like, params), jax.tree.map(jnp.zeros_like, params)  # two buffers: both donated
        return AdamState(jnp.zeros([], jnp.float32), mu, nu)

    def update(grads, state, params=None):
        mu = jax.tree.map(lambda m, g: (1 - b1) * g + b1 * m, state.mu, grads)
        nu = jax.tree.map(lambda v, g: (1 - b2) * g * g + b2 * v, state.nu, grads)
        count = state.count + 1
        updates = jax.tree.map(lambda m, v: (m / (1 - b1**count)) / (jnp.sqrt(v / (1 - b2**count)) + eps), mu, nu)
        return updates, AdamState(count, mu, nu)

    return optax.GradientTransformation(init, update)


def make_optimizer(args: Args) -> optax.GradientTransformation:
    """Global-norm clip, then Adam; the LR is held constant within an iteration and annealed between."""
    updates_per_iteration = args.update_epochs * args.num_minibatches

    def learning_rate(count):
        if not args.anneal_lr:
            return args.learning_rate
        iteration = count // updates_per_iteration
        return args.learning_rate * (1.0 - iteration / args.num_iterations)

    return optax.chain(
        optax.clip_by_global_norm(args.max_grad_norm),
        scale_by_adam(eps=args.adam_eps),
        optax.scale_by_learning_rate(learning_rate),
    )


class Storage(NamedTuple):
    obs: jax.Array
    actions: jax.Array
    logprobs: jax.Array
    values: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    final_values: jax.Array


class EpisodeStats(NamedTuple):
    returns: jax.Array
    lengths: jax.Array
    finished_return_sum: jax.Array
    finished_length_sum: jax.Array
    finished_count: jax.Array


class RolloutCarry(NamedTuple):
    env_state: Any
    obs: jax.Array
    key: jax.Array
    stats: EpisodeStats


def new_iteration_stats(stats: EpisodeStats) -> EpisodeStats:
    """Keep running episodes, zero the per-iteration sums of finished ones."""
    return stats._replace(
        finished_return_sum=jnp.zeros(()), finished_length_sum=jnp.zeros(()), finished_count=jnp.zeros(())
    )


def track_episodes(stats: EpisodeStats, reward: jax.Array, done: jax.Array) -> EpisodeStats:
    """Masked per-env update of running returns and lengths, on device."""
    returns = stats.returns + reward
    lengths = stats.lengths + 1
    return EpisodeStats(
        returns=jnp.where(done, 0.0, returns),
        lengths=jnp.where(done, 0, lengths),
        finished_return_sum=stats.finished_return_sum + jnp.sum(jnp.where(done, returns, 0.0)),
        finished_length_sum=stats.finished_length_sum + jnp.sum(jnp.where(done, lengths, 0)),
        finished_count=stats.finished_count + jnp.sum(done),
    )


# ROLLOUT
def rollout_step(
    carry: RolloutCarry, _, params: Any, agent: Agent, env: Any, env_params: Any, bootstrap_truncated: bool
):
    key, action_key, step_key = jax.random.split(carry.key, 3)
    logits, value = agent.apply(params, carry.obs)
    action = jax.random.categorical(action_key, logits)
    logprob = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], axis=1).squeeze(1)
    next_obs, env_state, reward, terminated, truncated, final_obs = env_step(
        step_key, carry.env_state, action, env, env_params
    )
    if bootstrap_truncated:  # static: off, V(final obs) is never computed (GAE then ignores final_values)
        final_value = agent.apply(params, final_obs, method=Agent.value)
    else:
        final_value = jnp.zeros_like(value)
    stats = track_episodes(carry.stats, reward, jnp.logical_or(terminated, truncated))
    transition = Storage(carry.obs, action, logprob, value, reward, terminated, truncated, final_value)
    return RolloutCarry(env_state, next_obs, key, stats), transition


def rollout(
    params: Any, carry: RolloutCarry, agent: Agent, env: Any, env_params: Any, num_steps: int, bootstrap_truncated: bool
):
    """Collect `num_steps` vectorised steps with the policy `params` (closed over by the scan, not carried); returns the
    new carry, the storage, V(last obs) and the key of the update that follows."""
    key, update_key = jax.random.split(carry.key)
    carry = carry._replace(key=key, stats=new_iteration_stats(carry.stats))
    step = functools.partial(
        rollout_step,
        params=params,
        agent=agent,
        env=env,
        env_params=env_params,
        bootstrap_truncated=bootstrap_truncated,
    )
    carry, storage = jax.lax.scan(step, carry, length=num_steps)
    last_value = agent.apply(params, carry.obs, method=Agent.value)
    return carry, storage, last_value, update_key


# GAE
def compute_gae(storage: Storage, last_value, gamma: float, gae_lambda: float, bootstrap_truncated: bool):
    """GAE (https://arxiv.org/abs/1506.02438) with auto-reset envs.

    Every finished episode (terminated or truncated) cuts the trace; a truncated step (not
    terminated) bootstraps from V(final observation) when `bootstrap_truncated`.
    """
    dones = jnp.logical_or(storage.terminated, storage.truncated)
    rewards = storage.rewards
    if bootstrap_truncated:
        bootstrap = jnp.logical_and(storage.truncated, jnp.logical_not(storage.terminated))
        rewards = rewards + gamma * storage.final_values * bootstrap
    next_values = jnp.concatenate([storage.values[1:], last_value[None]], axis=0)
    not_done = 1.0 - dones.astype(jnp.float32)
    deltas = rewards + gamma * next_values * not_done - storage.values

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
    b = flatten_batch(storage, advantages, returns)
    epoch_keys = jax.random.split(key, args.update_epochs)
    b_inds = jax.vmap(jax.random.permutation, in_axes=(0, None))(epoch_keys, args.batch_size)
    mb_inds = b_inds.reshape(-1, args.minibatch_size)
    loss_fn = functools.partial(
        ppo_loss,
        agent=agent,
        clip_coef=args.clip_coef,
        clip_vloss=args.clip_vloss,
        norm_adv=args.norm_adv,
        ent_coef=args.ent_coef,
        vf_coef=args.vf_coef,
    )
    step = functools.partial(update_minibatch, b=b, loss_fn=loss_fn)
    train_state, infos = jax.lax.scan(step, train_state, mb_inds)
    var_y = jnp.var(b.returns)
    explained_var = jnp.where(var_y == 0, jnp.nan, 1 - jnp.var(b.returns - b.values) / var_y)
    return train_state, jax.tree.map(jnp.mean, infos), explained_var


def flatten_batch(storage: Storage, advantages, returns) -> Batch:
    """Merge the (num_steps, num_envs) axes into one batch axis."""
    b = Batch(storage.obs, storage.actions, storage.logprobs, storage.values, advantages, returns)
    return jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), b)


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
    packages = ("jax", "jaxlib", "flax", "optax", "gymnax", "numpy", "tensorboard")
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
    """A jax.profiler trace, written under `run_dir`/plugins/profile on exit (TensorBoard's profile plugin, Perfetto)."""
    return jax.profiler.trace(run_dir, create_perfetto_trace=True)


def select_device(choice: str) -> jax.Device:
    if choice == "cpu":
        return jax.devices("cpu")[0]
    if choice == "gpu":
        return jax.devices("gpu")[0]
    return jax.devices()[0]


def peak_device_bytes(device: jax.Device) -> int | None:
    """Peak device memory of the process (docs/method.md, Logged metrics): JAX's peak; None on the CPU, where none is reported."""
    return (device.memory_stats() or {}).get("peak_bytes_in_use")


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
        device = select_device(args.device)
    except RuntimeError:
        fail(f"--device {args.device}: no such device available to jax")
    args.batch_size = args.num_envs * args.num_steps
    args.minibatch_size = args.batch_size // args.num_minibatches
    args.run_name = args.run_name or f"{args.env_id}__{args.exp_name}__{args.model_size}__{args.seed}__{int(time.time())}"
    compile_mode = "jit" if args.jit else "none"
    jax.config.update("jax_default_device", device)
    jax.config.update("jax_default_matmul_precision", "highest")

    run_dir = make_run_dir(args.log_dir, args.run_name)
    writer = EventWriter(run_dir)
    writer.add_text("hyperparameters", markdown_table("param", asdict(args)))
    writer.add_text("system", markdown_table("key", system_info(compile_mode, f"{device.platform}: {device.device_kind}")))

    # SEEDING
    key = jax.random.PRNGKey(args.seed)
    key, param_key, env_key = jax.random.split(key, 3)
    env, env_params = gymnax.make(args.env_id)
    obs, env_state = env_reset(env_key, env, env_params, args.num_envs)
    agent, params = make_agent(param_key, obs.shape[1], env.action_space(env_params).n, args.model_size)
    train_state = TrainState.create(apply_fn=agent.apply, params=params, tx=make_optimizer(args))
    zeros = jnp.zeros(args.num_envs)
    stats = EpisodeStats(zeros, zeros.astype(jnp.int32), jnp.zeros(()), jnp.zeros(()), jnp.zeros(()))
    carry = RolloutCarry(env_state, obs, key, stats)

    # EXECUTABLES: the same top-level functions, under jax.jit or run eagerly (op by op, no retracing)
    rollout_fn = functools.partial(
        rollout,
        agent=agent,
        env=env,
        env_params=env_params,
        num_steps=args.num_steps,
        bootstrap_truncated=args.bootstrap_truncated,
    )
    gae_fn = functools.partial(
        compute_gae, gamma=args.gamma, gae_lambda=args.gae_lambda, bootstrap_truncated=args.bootstrap_truncated
    )
    update_fn = functools.partial(update, agent=agent, args=args)
    if args.jit:
        # donated: the rollout carry and the train state, which each call replaces (XLA reuses their buffers)
        rollout_fn = jax.jit(rollout_fn, donate_argnums=1)
        gae_fn = jax.jit(gae_fn)
        update_fn = jax.jit(update_fn, donate_argnums=0)
    else:
        jax.config.update("jax_disable_jit", True)

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

            # ROLLOUT + GAE
            carry, storage, last_value, update_key = rollout_fn(train_state.params, carry)
            advantages, returns = gae_fn(storage, last_value)
            if args.sync_timing:
                jax.block_until_ready((advantages, returns, carry))
                rollout_end = time.perf_counter()
            global_step += args.batch_size

            # UPDATE
            train_state, losses, explained_var = update_fn(train_state, storage, advantages, returns, update_key)
            if args.sync_timing:
                jax.block_until_ready((train_state, losses))
                update_end = time.perf_counter()

            # LOGGING: the one host fetch of this iteration, of the finished episodes' sums only (the running episodes'
            # per-env arrays stay on the device: a host view of a CPU buffer would keep the rollout from reusing it)
            finished = carry.stats._replace(returns=None, lengths=None)
            losses, explained_var, stats = jax.device_get((losses, explained_var, finished))
            now = time.perf_counter()
            if stats.finished_count > 0:
                writer.add_scalar("charts/episodic_return", stats.finished_return_sum / stats.finished_count, global_step)
                writer.add_scalar("charts/episodic_length", stats.finished_length_sum / stats.finished_count, global_step)
            writer.add_scalar("charts/learning_rate", lr, global_step)
            writer.add_scalar("charts/SPS", global_step / (now - training_start), global_step)
            for name, value in losses._asdict().items():
                writer.add_scalar(f"losses/{name}", value, global_step)
            writer.add_scalar("losses/explained_variance", explained_var, global_step)
            writer.add_scalar("time/iteration", now - last_fetch, iteration)
            if args.sync_timing:
                writer.add_scalar("time/rollout", rollout_end - iteration_start, iteration)
                writer.add_scalar("time/update", update_end - rollout_end, iteration)
            print(
                f"iteration {iteration + 1}/{args.num_iterations} global_step={global_step}"
                f" return={stats.finished_return_sum / max(stats.finished_count, 1):.1f} time={now - last_fetch:.3f}s",
                flush=True,
            )
            last_fetch = now
            if args.profile and iteration == profile_iterations[-1]:
                profiling.close()
            diverged = non_finite(losses)
            if diverged:
                fail(f"loss is {diverged} at iteration {iteration + 1}; partial run in {run_dir}", 3)

        peak_bytes = peak_device_bytes(device)
        if peak_bytes is not None:
            writer.add_scalar("memory/peak_bytes", peak_bytes, args.num_iterations)
        writer.add_scalar("memory/peak_rss_bytes", peak_rss_bytes(), args.num_iterations)
        writer.add_scalar("time/total", last_fetch - training_start, args.num_iterations)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a late signal must not cut the close short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        writer.close()
