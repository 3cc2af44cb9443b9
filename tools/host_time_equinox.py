"""Equinox beside Linen and NNX: host time per call of each jit wrapper, steady state, start-up and iteration 0.

Two measurements, both at the benchmark's default config (CartPole-v1, 32 envs x 256 steps):

  per-call  all variants in ONE process, round-robin iteration by iteration (so they share the machine's load):
            the median host time until each call returns (rollout, GAE, update; the work itself is asynchronous,
            except under eqx.filter_jit, which waits for it) and the median whole iteration (ending with the
            scripts' one host fetch). Variants: Linen `jax.jit`, `nnx.jit`, `nnx.cached_partial(nnx.jit)`,
            `eqx.filter_jit`, and what an Equinox user does against filter_jit's per-call cost: partition once,
            plain `jax.jit` on the arrays.
  runs      ppo_linen.py, ppo_nnx.py, ppo_nnx_cached.py, ppo_nnx_tree.py and ppo_equinox.py in fresh processes,
            alternating (the order reversed every other round): median [min-max] of time/startup, iteration 0,
            iterations 1-7 (mean) and iterations 8-99 (median), read with plot.py's own reader.

Timings mean something only on an otherwise idle machine (load average below 0.5, nothing else running).

    python tools/host_time_equinox.py per-call --model-size small
    python tools/host_time_equinox.py runs --rounds 3 --model-size small
    python tools/host_time_equinox.py runs --rounds 1 --num-steps 16 --num-iterations 10   # a quick check of the tool
"""
import argparse
import functools
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import equinox as eqx  # noqa: E402
import gymnax  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from flax import nnx  # noqa: E402
from flax.training.train_state import TrainState  # noqa: E402

import plot  # noqa: E402
import ppo_equinox  # noqa: E402
import ppo_linen  # noqa: E402
import ppo_nnx  # noqa: E402
import ppo_nnx_cached  # noqa: E402

SCRIPTS = ["ppo_linen.py", "ppo_nnx.py", "ppo_nnx_cached.py", "ppo_nnx_tree.py", "ppo_equinox.py"]
CALLS = ("rollout", "GAE", "update", "iteration")


def seeded_start(module, args, env, env_params):
    """Key, parameter key, first observation, env state and episode stats, seeded like the scripts' main blocks."""
    key, param_key, env_key = jax.random.split(jax.random.PRNGKey(args.seed), 3)
    obs, env_state = module.env_reset(env_key, env, env_params, args.num_envs)
    zeros = jnp.zeros(args.num_envs)
    stats = module.EpisodeStats(zeros, zeros.astype(jnp.int32), jnp.zeros(()), jnp.zeros(()), jnp.zeros(()))
    return key, param_key, obs, env_state, stats


def timed(times, name, fn, *args):
    """Call fn and record the host time until it returns (not until its result is ready)."""
    start = time.perf_counter()
    result = fn(*args)
    times[name].append(time.perf_counter() - start)
    return result


def gae_partial(module, args):
    return functools.partial(
        module.compute_gae, gamma=args.gamma, gae_lambda=args.gae_lambda, bootstrap_truncated=args.bootstrap_truncated
    )


class CarryLoop:
    """The loop body of ppo_linen.py and ppo_equinox.py: carry and train state through rollout, GAE and update."""

    module = ppo_linen
    model_field = "params"  # the field of the train state that holds the model

    def iteration(self, times):
        model = getattr(self.train_state, self.model_field)
        self.carry, storage, last_value, update_key = timed(times, "rollout", self.rollout_fn, model, self.carry)
        advantages, returns = timed(times, "GAE", self.gae_fn, storage, last_value)
        self.train_state, losses, explained_var = timed(
            times, "update", self.update_fn, self.train_state, storage, advantages, returns, update_key
        )
        return losses, explained_var, self.carry.stats


class Linen(CarryLoop):
    """ppo_linen.py's loop: jax.jit on the three functions."""

    def __init__(self, args, env, env_params):
        key, param_key, obs, env_state, stats = seeded_start(ppo_linen, args, env, env_params)
        agent, params = ppo_linen.make_agent(param_key, obs.shape[1], env.action_space(env_params).n, args.model_size)
        self.train_state = TrainState.create(apply_fn=agent.apply, params=params, tx=ppo_linen.make_optimizer(args))
        self.carry = ppo_linen.RolloutCarry(env_state, obs, key, stats)
        self.rollout_fn = jax.jit(
            functools.partial(
                ppo_linen.rollout, agent=agent, env=env, env_params=env_params, num_steps=args.num_steps,
                bootstrap_truncated=args.bootstrap_truncated,
            )
        )
        self.gae_fn = jax.jit(gae_partial(ppo_linen, args))
        self.update_fn = jax.jit(functools.partial(ppo_linen.update, agent=agent, args=args))


class NNX:
    """ppo_nnx.py's loop (nnx.jit, objects passed every call) or, with `cached`, ppo_nnx_cached.py's."""

    def __init__(self, args, env, env_params, cached=False):
        module = ppo_nnx_cached if cached else ppo_nnx
        key, param_key, obs, env_state, stats = seeded_start(module, args, env, env_params)
        self.agent = module.make_agent(param_key, obs.shape[1], env.action_space(env_params).n, args.model_size)
        self.optimizer = nnx.Optimizer(self.agent, module.make_optimizer(args), wrt=nnx.Param)
        self.rollout_state = module.RolloutState(env_state, obs, key, stats)
        rollout_fn = nnx.jit(
            functools.partial(
                module.rollout, env=env, env_params=env_params, num_steps=args.num_steps,
                bootstrap_truncated=args.bootstrap_truncated,
            )
        )
        update_fn = nnx.jit(functools.partial(module.update, args=args))
        self.gae_fn = jax.jit(gae_partial(module, args))
        if cached:
            self.rollout_fn = nnx.cached_partial(rollout_fn, self.agent, self.rollout_state)
            self.update_fn = nnx.cached_partial(update_fn, self.agent, self.optimizer)
        else:
            self.rollout_fn = functools.partial(rollout_fn, self.agent, self.rollout_state)
            self.update_fn = functools.partial(update_fn, self.agent, self.optimizer)

    def iteration(self, times):
        storage, last_value, update_key = timed(times, "rollout", self.rollout_fn)
        advantages, returns = timed(times, "GAE", self.gae_fn, storage, last_value)
        losses, explained_var = timed(times, "update", self.update_fn, storage, advantages, returns, update_key)
        return losses, explained_var, self.rollout_state.stats.get_value()


def jit_on_arrays(fn, holder):
    """An Equinox user's answer to filter_jit's per-call cost: partition the object holding the model once
    (eqx.partition) and call a plain jax.jit on its array half, closing over the rest. ppo_equinox.py's modules hold
    only arrays, so the rest is empty (checked here) and the array half is the object itself: jax.jit takes it as is."""
    _, static = eqx.partition(holder, eqx.is_array)
    assert not jax.tree.leaves(static), "non-array leaves: close over them and jit a function of the array half"
    return jax.jit(fn)


class Equinox(CarryLoop):
    """ppo_equinox.py's loop, under eqx.filter_jit or (`on_arrays`) jit_on_arrays."""

    module = ppo_equinox
    model_field = "agent"

    def __init__(self, args, env, env_params, on_arrays=False):
        key, param_key, obs, env_state, stats = seeded_start(ppo_equinox, args, env, env_params)
        agent = ppo_equinox.make_agent(param_key, obs.shape[1], env.action_space(env_params).n, args.model_size)
        optimizer = ppo_equinox.make_optimizer(args)
        self.train_state = ppo_equinox.TrainState(agent, optimizer.init(eqx.filter(agent, eqx.is_array)))
        self.carry = ppo_equinox.RolloutCarry(env_state, obs, key, stats)
        rollout_fn = functools.partial(
            ppo_equinox.rollout, env=env, env_params=env_params, num_steps=args.num_steps,
            bootstrap_truncated=args.bootstrap_truncated,
        )
        gae_fn = gae_partial(ppo_equinox, args)
        update_fn = functools.partial(ppo_equinox.update, optimizer=optimizer, args=args)
        if on_arrays:
            self.rollout_fn = jit_on_arrays(rollout_fn, (agent, self.carry))
            self.gae_fn = jax.jit(gae_fn)
            self.update_fn = jit_on_arrays(update_fn, self.train_state)
        else:
            self.rollout_fn, self.gae_fn, self.update_fn = map(eqx.filter_jit, (rollout_fn, gae_fn, update_fn))


VARIANTS = {
    "Linen `jax.jit`": Linen,
    "`nnx.jit`": NNX,
    "`nnx.cached_partial`": functools.partial(NNX, cached=True),
    "`eqx.filter_jit`": Equinox,
    "Equinox, `jax.jit` on arrays": functools.partial(Equinox, on_arrays=True),
}


def per_call(options):
    jax.config.update("jax_default_matmul_precision", "highest")
    env, env_params = gymnax.make(options.env_id)
    variants = {}
    for name, make in VARIANTS.items():
        args = ppo_linen.Args(model_size=options.model_size, env_id=options.env_id)
        args.batch_size = args.num_envs * args.num_steps
        args.minibatch_size = args.batch_size // args.num_minibatches
        variants[name] = make(args, env, env_params)
    times = {name: defaultdict(list) for name in variants}
    for iteration in range(options.warmup + options.iterations):
        for name, variant in variants.items():
            start = time.perf_counter()
            jax.device_get(variant.iteration(times[name]))  # the scripts' one host fetch per iteration
            times[name]["iteration"].append(time.perf_counter() - start)
        print(f"round {iteration + 1}/{options.warmup + options.iterations}", file=sys.stderr, flush=True)
    print(f"median host time per call, ms ({options.env_id}, {options.model_size}, {options.iterations} iterations"
          f" after {options.warmup} warm-up; 'iteration' includes the work and the one host fetch;"
          " eqx.filter_jit blocks until its computation is done, so its calls include their work)\n")
    print("| call | " + " | ".join(variants) + " |")
    print("| --- |" + " --- |" * len(variants))
    for call in CALLS:
        medians = [1e3 * np.median(times[name][call][options.warmup:]) for name in variants]
        print(f"| {call} | " + " | ".join(f"{value:.3f}" for value in medians) + " |")


def runs(options):
    log_dir = Path(options.log_dir or tempfile.mkdtemp(prefix="host_time_equinox_"))
    for round_index in range(options.rounds):
        for script in SCRIPTS if round_index % 2 == 0 else SCRIPTS[::-1]:
            name = f"{script[:-3]}__{round_index}"
            print(f"round {round_index + 1}/{options.rounds}: {script}", file=sys.stderr, flush=True)
            subprocess.run(
                [sys.executable, str(ROOT / script), "--model-size", options.model_size, "--env-id", options.env_id,
                 "--log-dir", str(log_dir), "--run-name", name, *options.script_args],
                check=True, stdout=subprocess.DEVNULL,
            )
    columns = {"startup_s": "start-up", "iter0_s": "iteration 0", "iter1_7_mean_s": "iterations 1-7 (mean)",
               "iter8_99_median_s": "iterations 8-99 (median)", "total_s": "time/total"}
    print(f"median [min-max] over {options.rounds} fresh runs each, seconds ({options.env_id}, {options.model_size};"
          f" event files in {log_dir})\n")
    print("| script | " + " | ".join(columns.values()) + " |")
    print("| --- |" + " --- |" * len(columns))
    for script in SCRIPTS:
        rows = [plot.summary_row(plot.load_run(path)) for path in sorted(log_dir.glob(f"{script[:-3]}__*/events.*"))]
        cells = []
        for column in columns:
            values = [row[column] for row in rows]
            cells.append(f"{np.median(values):.3g} [{min(values):.3g}-{max(values):.3g}]")
        print(f"| `{script}` | " + " | ".join(cells) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    for command in ("per-call", "runs"):
        sub = commands.add_parser(command)
        sub.add_argument("--model-size", choices=sorted(ppo_linen.MODEL_SIZES), default="small")
        sub.add_argument("--env-id", default="CartPole-v1")
    commands.choices["per-call"].add_argument("--iterations", type=int, default=30, help="measured rounds")
    commands.choices["per-call"].add_argument("--warmup", type=int, default=3, help="rounds left out (compilation)")
    commands.choices["runs"].add_argument("--rounds", type=int, default=3, help="fresh runs of each script")
    commands.choices["runs"].add_argument("--log-dir", default="", help="where the runs go (default: a new temp dir)")
    options, options.script_args = parser.parse_known_args()  # runs passes flags it does not know to every script
    if options.command == "per-call" and options.script_args:
        parser.error(f"unrecognized arguments: {' '.join(options.script_args)}")
    per_call(options) if options.command == "per-call" else runs(options)


if __name__ == "__main__":
    main()
