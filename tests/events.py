"""Writes synthetic TensorBoard runs and sweep folders in the exact format of the ppo_*.py scripts."""

import itertools
import json
import os
import socket
import time
from pathlib import Path

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.types_pb2 import DT_STRING
from tensorboard.summary.writer.record_writer import RecordWriter

from sweep.experiments import GRID_ENVS

ENVS = GRID_ENVS
SIZES = ("small", "medium", "large")
COMPILED_PAIRS = (("ppo_linen", "jit"), ("ppo_nnx_cached", "cached"), ("ppo_torch_compile", "compile"))
ALL_PAIRS = (
    ("ppo_linen", "none"), ("ppo_linen", "jit"), ("ppo_nnx", "none"), ("ppo_nnx", "jit"),
    ("ppo_nnx_cached", "cached"), ("ppo_torch", "none"), ("ppo_torch", "env-jit"), ("ppo_torch_compile", "compile"),
)
BACKEND_PAIRS = (("ppo_linen", "jit"), ("ppo_torch", "env-jit"), ("ppo_linen_gymnasium", "jit"),
                 ("ppo_torch_gymnasium", "eager"))
LOSS_TAGS = (
    "losses/value_loss", "losses/policy_loss", "losses/entropy", "losses/approx_kl",
    "losses/old_approx_kl", "losses/clipfrac", "losses/explained_variance",
)


def scalar(tag, value, step):
    """An event holding one simple_value scalar."""
    return Event(step=step, summary=Summary(value=[Summary.Value(tag=tag, simple_value=value)]))


def text(tag, header, table):
    """An event holding a markdown table as a text-plugin string tensor, at step 0."""
    markdown = f"|{header}|value|\n|-|-|\n" + "\n".join(f"|{key}|{value}|" for key, value in table.items())
    value = Summary.Value(
        tag=tag,
        metadata=SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text")),
        tensor=TensorProto(dtype=DT_STRING, string_val=[markdown.encode()]),
    )
    return Event(step=0, summary=Summary(value=[value]))


def write_run(
    run_dir,
    iteration_seconds,
    *,
    variant="ppo_linen",
    compile_mode="jit",
    env_id="CartPole-v1",
    model_size="small",
    seed=1,
    sync_timing=False,
    startup=2.0,
    rollout_fraction=0.25,
    returns=None,
    peak_bytes=1 << 20,
    peak_rss_bytes=300 << 20,
    finished=True,
    num_envs=32,
    num_steps=256,
    update_epochs=10,
    num_minibatches=8,
):
    """Writes one run's event file into run_dir; returns run_dir.

    iteration_seconds gives time/iteration per iteration; time/total is their sum. With sync_timing,
    time/rollout and time/update split each iteration by rollout_fraction. returns[i] is the episodic
    return logged at iteration i (None: no episode ended). finished=False leaves out time/total; peak_bytes or
    peak_rss_bytes None leaves out memory/peak_bytes or memory/peak_rss_bytes.
    """
    num_iterations = len(iteration_seconds)
    batch = num_envs * num_steps
    returns = [10.0 * (i + 1) for i in range(num_iterations)] if returns is None else returns
    hyperparameters = {
        "exp_name": variant, "seed": seed, "env_id": env_id, "model_size": model_size, "num_envs": num_envs,
        "num_steps": num_steps, "num_iterations": num_iterations, "update_epochs": update_epochs,
        "num_minibatches": num_minibatches, "bootstrap_truncated": True, "learning_rate": 0.00025,
        "sync_timing": sync_timing, "device": "auto", "log_dir": "runs",
    }
    system = {
        "script": f"{variant}.py", "compile_mode": compile_mode, "device": "cpu", "python": "3.11.7",
        "jax": "0.10.2", "flax": "0.12.8", "cpu": "Synthetic CPU", "git_commit": "0" * 40,
    }
    if variant.startswith("ppo_torch"):
        system["torch"] = "2.13.0"
    events = [text("hyperparameters", "param", hyperparameters), text("system", "key", system)]
    events.append(scalar("time/startup", startup, 0))
    for iteration, seconds in enumerate(iteration_seconds):
        global_step = (iteration + 1) * batch
        if returns[iteration] is not None:
            events.append(scalar("charts/episodic_return", returns[iteration], global_step))
            events.append(scalar("charts/episodic_length", 100.0, global_step))
        events.append(scalar("charts/learning_rate", 0.00025 * (1 - iteration / num_iterations), global_step))
        elapsed = sum(iteration_seconds[: iteration + 1])
        events.append(scalar("charts/SPS", global_step / elapsed, global_step))
        events += [scalar(tag, 0.5, global_step) for tag in LOSS_TAGS]
        events.append(scalar("time/iteration", seconds, iteration))
        if sync_timing:
            events.append(scalar("time/rollout", seconds * rollout_fraction, iteration))
            events.append(scalar("time/update", seconds * (1 - rollout_fraction), iteration))
    if finished:
        if peak_bytes is not None:
            events.append(scalar("memory/peak_bytes", peak_bytes, num_iterations))
        if peak_rss_bytes is not None:
            events.append(scalar("memory/peak_rss_bytes", peak_rss_bytes, num_iterations))
        events.append(scalar("time/total", sum(iteration_seconds), num_iterations))
    write_events(run_dir, events)
    return Path(run_dir)


FILE_NUMBERS = itertools.count()


def write_events(run_dir, events):
    """The events into a new event file of run_dir, named and headed as tensorboard's EventFileWriter does, written in
    this thread: EventFileWriter's writer thread, fed through a queue of 10 events, costs the many synthetic runs of
    the report tests more than the writing itself."""
    os.makedirs(run_dir, exist_ok=True)
    name = f"events.out.tfevents.{time.time():010.0f}.{socket.gethostname()}.{os.getpid()}.{next(FILE_NUMBERS)}"
    with open(os.path.join(run_dir, name), "wb") as f:
        writer = RecordWriter(f)
        for event in [Event(wall_time=time.time(), file_version="brain.Event:2"), *events]:
            writer.write(event.SerializeToString())


def synthetic_iteration_seconds(variant, compile_mode, env_relative, model_size, seed, num_iterations):
    """Plausible iteration times: a compile-sized iteration 0, a warming 1–7, a noisy steady state."""
    speed = {"none": 8.0, "env-jit": 3.0, "jit": 1.0, "cached": 0.9, "compile": 1.5}.get(compile_mode, 1.0)
    steady = 0.01 * speed * env_relative * {"small": 1, "medium": 2, "large": 6}[model_size]
    rng = np.random.default_rng(seed)
    seconds = steady * rng.uniform(0.9, 1.1, num_iterations)
    seconds[1:8] *= 1.5
    seconds[0] = steady * (2 if compile_mode == "none" else 200)
    return [float(s) for s in seconds]


def write_sweep(root, envs=ENVS, seeds=(1, 2, 3), num_iterations=100, sizes=SIZES, exp4=False):
    """Writes the reference grid (the study's) with synthetic times under root: system.json, env_timing.json, runs/<exp>/.

    exp4 adds the env-backend experiment (its four variants on every env and size). Returns the number of runs
    written (warm-up included).
    """
    root = Path(root)
    relative = {env: 1.0 + 3.0 * i for i, env in enumerate(envs)}
    grid = [("warmup", variant, mode, envs[0], "small", False) for variant, mode in COMPILED_PAIRS]
    grid += [("exp1", v, m, env, size, False) for env in envs for v, m in COMPILED_PAIRS for size in sizes]
    grid += [("exp2", v, m, env, "small", True) for env in envs for v, m in ALL_PAIRS]
    exp3_env = "Acrobot-v1" if "Acrobot-v1" in envs else envs[0]
    grid += [("exp3", v, m, exp3_env, size, True) for v, m in ALL_PAIRS for size in sizes]
    grid += [("exp4", v, m, env, size, False) for env in envs for v, m in BACKEND_PAIRS for size in sizes if exp4]
    count = 0
    for exp, variant, mode, env, size, sync in grid:
        for seed in seeds if exp != "warmup" else seeds[:1]:
            seconds = synthetic_iteration_seconds(variant, mode, relative[env], size, seed, num_iterations)
            returns = [None if i % 3 == 2 else 5.0 * i + seed for i in range(num_iterations)]
            run_dir = root / "runs" / exp / f"{exp}__{variant}__{mode}__{env}__{size}__{seed}"
            write_run(run_dir, seconds, variant=variant, compile_mode=mode, env_id=env, model_size=size,
                      seed=seed, sync_timing=sync, returns=returns)
            count += 1
    write_json(root / "system.json", {
        "cpu": "Synthetic CPU", "gpu": None, "driver": None, "python": "3.11.7",
        "packages": {"jax": "0.10.2", "torch": "2.13.0"}, "git_commit": "0" * 40, "hostname": "synthetic",
        "date": "2026-01-01T00:00:00", "command": "benchmark.sh",
    })
    write_json(root / "env_timing.json", {
        "num_envs": 32, "num_steps": 256, "repeats": 3, "device": "cpu",
        "envs": {env: {"step_seconds": 1e-5 * r, "relative": r} for env, r in relative.items()},
    })
    return count


def write_json(path, data):
    """Writes data as indented JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


def exp5_run_name(variant, mode, env, num_envs, seed, sync=False):
    """benchmark.sh's name of an exp5 run: exp5__<script>__<mode>__<env>__small__n<N>[__sync]__<seed>."""
    return f"exp5__{variant}__{mode}__{env}__small__n{num_envs}{'__sync' if sync else ''}__{seed}"


def write_exp5_runs(root, costs, envs=("CartPole-v1",), num_envs=(8, 32, 128, 512, 2048), sync_num_envs=(),
                    num_iterations=12, seeds=(1,), peak_bytes=None):
    """Writes exp5 runs under root/runs/exp5/ whose steady iterations take exactly a + b·N seconds.

    costs: {(variant, mode): (a, b)}. Iteration 0 takes 100 × that, iterations 1–7 1.5 ×; the runs at sync_num_envs
    are written again with sync timing (a quarter of each iteration in the rollout). Peak RSS: 300 MiB + N KiB.
    """
    for (variant, mode), (a, b) in costs.items():
        for env, n, seed in itertools.product(envs, num_envs, seeds):
            steady = a + b * n
            seconds = [100 * steady] + [1.5 * steady] * 7 + [steady] * (num_iterations - 8)
            for sync in (False, True) if n in sync_num_envs else (False,):
                write_run(Path(root) / "runs" / "exp5" / exp5_run_name(variant, mode, env, n, seed, sync),
                          seconds[:num_iterations], variant=variant, compile_mode=mode, env_id=env, seed=seed,
                          num_envs=n, sync_timing=sync, peak_bytes=peak_bytes, peak_rss_bytes=(300 << 20) + (n << 10))


def write_exp6_group(root, variant, mode, agents, wall, processes, parallel, env="CartPole-v1", iteration_seconds=None,
                     seed=1, finished_agents=None, group_json=True):
    """Writes one exp6 group under root/runs/exp6/: a run folder per agent (seeds seed, seed + 1, …) and group.json.

    finished_agents leaves the other agents' runs unfinished; group_json=False writes no group.json, a dict writes
    that instead of the group's own. Returns the group folder.
    """
    group = Path(root) / "runs" / "exp6" / f"exp6__{variant}__{mode}__{env}__small__a{agents}__{seed}"
    seconds = iteration_seconds or [5.0] + [0.1] * 11
    finished = agents if finished_agents is None else finished_agents
    for agent in range(agents):
        write_run(group / f"agent{agent}", seconds, variant=variant, compile_mode=mode, env_id=env, seed=seed + agent,
                  finished=agent < finished, returns=[10.0 * (i + 1) + agent for i in range(len(seconds))])
    data = {"script": variant, "mode": mode, "env_id": env, "agents": agents, "processes": processes,
            "parallel": parallel, "wall_seconds": wall, "cores": 2}
    if group_json:
        write_json(group / "group.json", group_json if isinstance(group_json, dict) else data)
    return group
