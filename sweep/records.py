"""What a sweep records besides its runs and its machine (sweep/machine.py writes system.json's fields), and what it
checks before and after them: env_timing.json (how costly each env is to step, in the benchmark's own regime),
whether a run finished (its event file holds time/total), and whether this Python can import what the scripts
import.

env_timing.json measures every env with `num_envs` environments stepped by `jax.vmap(env.step)` inside a
`jax.lax.scan` of `num_steps` steps under `jax.jit`, random actions, one warm-up call, then the median of `repeats`
timed calls, reported per vectorised step; `relative` is that time over the fastest env's, the x axis of the
report's "duration against env complexity" charts.
"""
import argparse
import ast
import glob
import importlib
import json
import os
import statistics
import sys
import time

from sweep.machine import system_info


# ENV TIMING
def env_step_seconds(env_id: str, num_envs: int, num_steps: int, repeats: int) -> float:
    """Median seconds per vectorised step of `env_id`, in the benchmark's rollout regime."""
    import gymnax  # imported here: the sweep's other records and checks need no framework
    import jax

    if ":" in env_id:  # module:EnvId, built as the scripts build it (the module's make_gymnax)
        module, name = env_id.split(":", 1)
        env, env_params = importlib.import_module(module).make_gymnax(name)
    else:
        env, env_params = gymnax.make(env_id)
    num_actions = env.action_space(env_params).n
    reset_key, step_key, action_key = jax.random.split(jax.random.key(0), 3)
    obs, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(reset_key, num_envs), env_params)
    step_keys = jax.random.split(step_key, (num_steps, num_envs))
    actions = jax.random.randint(action_key, (num_steps, num_envs), 0, num_actions)
    vmapped_step = jax.vmap(env.step, in_axes=(0, 0, 0, None))

    @jax.jit
    def rollout(obs, state, step_keys, actions):
        def one_step(carry, inputs):
            obs, state = carry
            keys, action = inputs
            obs, state, reward, terminated, truncated, _ = vmapped_step(keys, state, action, env_params)
            return (obs, state), (reward, terminated, truncated)

        return jax.lax.scan(one_step, (obs, state), (step_keys, actions))

    jax.block_until_ready(rollout(obs, state, step_keys, actions))  # compile and warm up
    durations = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(rollout(obs, state, step_keys, actions))
        durations.append(time.perf_counter() - start)
    return statistics.median(durations) / num_steps


def env_timing(env_ids, num_envs: int = 32, num_steps: int = 256, repeats: int = 5) -> dict:
    import jax

    device = jax.devices()[0]
    seconds = {env_id: env_step_seconds(env_id, num_envs, num_steps, repeats) for env_id in env_ids}
    fastest = min(seconds.values())
    return {
        "num_envs": num_envs,
        "num_steps": num_steps,
        "repeats": repeats,
        "device": f"{device.platform}: {device.device_kind}",
        "envs": {env_id: {"step_seconds": s, "relative": s / fastest} for env_id, s in seconds.items()},
    }


def record_machine(out: str, env_ids, command: str | None, repeats: int = 5):
    """Writes OUT/system.json and OUT/env_timing.json, and prints each env's step time."""
    os.makedirs(out, exist_ok=True)
    write_json(os.path.join(out, "system.json"), system_info(command))
    timing = env_timing(env_ids, repeats=repeats)
    write_json(os.path.join(out, "env_timing.json"), timing)
    print(f"env step time ({timing['num_envs']} envs, {timing['device']}):")
    for env_id, entry in timing["envs"].items():
        print(f"  {env_id:<24} {entry['step_seconds'] * 1e6:9.1f} us  x{entry['relative']:.2f}")


# FINISHED RUNS
def run_finished(run_dir: str) -> bool:
    """True when an event file in `run_dir` holds the `time/total` scalar, which every script writes last."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    for path in glob.glob(os.path.join(run_dir, "events.out.tfevents.*")):
        for event in EventFileLoader(path).Load():
            if any(value.tag == "time/total" for value in event.summary.value):
                return True
    return False


# PACKAGES THE SCRIPTS NEED
def imported_packages(script: str) -> set[str]:
    """Top-level names of the non-standard-library packages `script` imports."""
    with open(script) as f:
        tree = ast.parse(f.read(), script)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names)


def import_problems(scripts) -> list[str]:
    """What keeps the scripts from running here: a script missing or unparsable, a package that does not import."""
    problems, packages = [], set()
    for script in scripts:
        try:
            packages |= imported_packages(script)
        except OSError:
            problems.append(f"{script} (missing)")
        except SyntaxError as error:
            problems.append(f"{script} (SyntaxError, line {error.lineno})")
    for name in sorted(packages):
        try:
            importlib.import_module(name)
        except Exception as error:  # an ImportError, or a broken install failing at import time
            problems.append(f"{name} ({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''})")
    return problems


def write_json(path: str, data: dict):
    with open(path, "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")


def main(argv=None):
    """python -m sweep.records OUT [ENV ...]: OUT/system.json and the env step times alone (default: every grid env)."""
    from sweep.experiments import GRID_ENVS

    parser = argparse.ArgumentParser(prog="python -m sweep.records", description=main.__doc__.split(": ", 1)[1])
    parser.add_argument("out", help="the folder that receives system.json and env_timing.json")
    parser.add_argument("envs", nargs="*", default=list(GRID_ENVS), help="the gymnax envs to time")
    args = parser.parse_args(argv)
    record_machine(args.out, args.envs, None)


if __name__ == "__main__":
    main()
