"""exp12: does the framework matter less when the env is expensive? The continuous-action PPO scripts on a cheap env
(Pendulum-v1) and on expensive ones (Brax's hopper and ant in JAX, MuJoCo's Hopper-v5 in C), and each env's share of
an iteration; then their report.

    python tools/exp12.py OUT [--repeats 3] [--iterations 6] [--tiny] [--dry-run]

One workload for every env, sized for a 2-core CPU: the scripts' defaults (8 envs x 256 steps, 10 epochs of 32
minibatches, the small model), --iterations iterations. Every script runs every env it can: the JAX-env scripts
(Linen, NNX, Equinox, torch eager and compiled, through DLPack) Pendulum-v1 in gymnax, hopper and ant in Brax (its
MJX backend); the Gymnasium scripts (torch, Linen) Pendulum-v1 and Hopper-v5. Repeat r runs every (env, script) once,
in the same order, seed r: the repeats alternate. Each env's step cost is measured first, alone, in the same regime
(tools/continuous_env_cost.py, 3 processes each), and Brax's envs on each of its backends (one process each: why
MJX). The JAX processes share one compilation cache (OUT/jax-cache): the
first repeat compiles cold (its iteration 0 is the compile cost), the later ones load what it compiled, which leaves
the steady iterations, the numbers compared, as they were. OUT/exp12.json says what ran where; `python -m
report.continuous OUT` writes OUT/REPORT.md. --tiny: 1 repeat of 2 iterations of 4 envs x 16 steps, Pendulum-v1 only
(a test of the command set, no result). Its estimate comes first (--dry-run: only it, nothing written). Rerun with
the same settings, it resumes OUT: what exp12.json holds stands, the rest runs."""
import argparse
import datetime
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from sweep import variants as v  # noqa: E402 (the repository's root first)
from sweep.experiments import EXP12  # noqa: E402
from sweep.machine import LEARNING_CHECK, command_set_machine  # noqa: E402
from exp11 import commit, positive  # noqa: E402 (tools/, this file's folder)

PLAN_FILE = "exp12.json"
JAX_ENV_VARIANTS, GYMNASIUM_VARIANTS = EXP12.JAX_ENV_VARIANTS, EXP12.GYMNASIUM_VARIANTS  # --grid reference's too
# (env id, what steps it, its cost's class, the variants that run it), cheap first
ENVS = (("Pendulum-v1", "gymnax", "cheap", JAX_ENV_VARIANTS), ("Pendulum-v1", "Gymnasium", "cheap", GYMNASIUM_VARIANTS),
        ("hopper", "Brax", "expensive", JAX_ENV_VARIANTS), ("ant", "Brax", "expensive", JAX_ENV_VARIANTS),
        ("Hopper-v5", "MuJoCo", "expensive", GYMNASIUM_VARIANTS))
NUM_ENVS, NUM_STEPS, UPDATE_EPOCHS, NUM_MINIBATCHES = EXP12.CPU_WORKLOAD  # --grid reference's too
WORKLOAD = ["--num-envs", str(NUM_ENVS), "--num-steps", str(NUM_STEPS), "--num-minibatches", str(NUM_MINIBATCHES),
            "--update-epochs", str(UPDATE_EPOCHS)]
TINY_WORKLOAD = ["--num-envs", "4", "--num-steps", "16", "--num-minibatches", "2", "--update-epochs", "2"]
ENV_COST_PROCESSES = 3
BRAX_BACKENDS = ("mjx", "generalized", "positional", "spring")
# the first sitting's pace (results/cpu-2core-exp12: 25 minutes for 57 runs of 6 iterations, the env costs included,
# on a 2-core AMD EPYC VM, its generation not recorded)
PACE_RUNS, PACE_ITERATIONS, PACE_MINUTES = 57, 6, 25


def parse(argv: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tools/exp12.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the folder of exp12's runs and report")
    parser.add_argument("--repeats", type=positive, default=3, help="runs of each (env, script), alternated")
    parser.add_argument("--iterations", type=positive, default=6, help="PPO iterations per run (default 6)")
    parser.add_argument("--tiny", action="store_true", help="a test of the command set: no result")
    parser.add_argument("--dry-run", action="store_true", help="print the estimate only, write nothing")
    return parser.parse_args(argv)


def estimate(envs: tuple, repeats: int, iterations: int) -> str:
    """The runs and their minutes at the first sitting's pace, scaled by the runs and iterations (rough: a run's start
    and compilation do not scale with its iterations)."""
    runs = repeats * sum(len(variants) for *_, variants in envs)
    minutes = PACE_MINUTES * runs / PACE_RUNS * iterations / PACE_ITERATIONS
    return (f"exp12: {runs} runs in {repeats} repeat{'s' * (repeats > 1)} of {iterations} iterations, about "
            f"{minutes:.0f} min at the pace of its first sitting (a 2-core AMD EPYC VM; another CPU, or a busy one, "
            "takes longer)")


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def save(out: str, plan: dict, name: str, ended: bool = False):
    """Writes the command set's plan into OUT/name after each run (a sitting cut short keeps what ran); ended: with the
    time it ended."""
    if ended:
        plan["end"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes")
    with open(os.path.join(out, name), "w") as f:
        json.dump(plan, f, indent=1)


def resumed(out: str, name: str, plan: dict, settings: tuple) -> dict:
    """The plan to go on with: OUT/name's where an earlier invocation wrote it with the same settings (those fields of
    the plan), its runs and env costs kept and this invocation's start added to its "resumed" list; else plan. A folder
    of other settings is refused."""
    try:
        with open(os.path.join(out, name)) as f:
            previous = json.load(f)
    except FileNotFoundError:
        return plan
    differ = [key for key in settings if previous.get(key) != plan[key]]
    if differ:
        sys.exit(f"{name.split('.')[0]}.py: {out} holds a sitting of other settings (its {', '.join(differ)}); rerun "
                 "with its settings to resume it, or give another OUT")
    previous.pop("end", None)
    previous.setdefault("resumed", []).append({key: plan[key] for key in ("date", "load", "commit", "machine")})
    return previous


def jax_cache(out: str) -> dict:
    """The environment of every process: one persistent JAX compilation cache, every compilation kept."""
    return {**os.environ, "JAX_COMPILATION_CACHE_DIR": os.path.join(out, "jax-cache"),
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0", "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1"}


def env_costs(env_id: str, backend: str, workload: list, tiny: bool, processes: int = ENV_COST_PROCESSES,
              brax_backend: str = "mjx") -> list:
    """The env's steps per iteration, timed in `processes` fresh processes (no compilation cache)."""
    command = [sys.executable, os.path.join(ROOT, "tools", "continuous_env_cost.py"), env_id, "--brax-backend",
               brax_backend, "--num-envs", workload[1], "--num-steps", workload[3], *(["--calls", "1"] * tiny)]
    if backend == "Gymnasium":
        command.append("--gymnasium")
    costs = []
    for _ in range(1 if tiny else processes):
        ended = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if ended.returncode != 0:
            sys.exit(f"exp12.py: the env cost of {env_id} failed: {ended.stderr.strip().splitlines()[-1:]}")
        costs.append(json.loads(ended.stdout.strip().splitlines()[-1]))
    return costs


def run(out: str, env_id: str, backend: str, variant: v.Variant, repeat: int, workload: list, iterations: int) -> dict:
    name = f"{env_id}__{variant.script}__{variant.mode}__{repeat}"
    print(f"exp12 {name} (load {load()})", flush=True)
    command = [sys.executable, os.path.join(ROOT, variant.file), *variant.flags, "--env-id", env_id, *workload,
               "--num-iterations", str(iterations), "--seed", str(repeat), "--log-dir", os.path.join(out, "runs"),
               "--run-name", name]
    ended = subprocess.run(command, cwd=ROOT, env=jax_cache(out), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    if ended.returncode != 0:
        with open(os.path.join(out, name + ".log"), "w") as f:
            f.write(ended.stdout)
        sys.exit(f"exp12.py: {name} failed (exit {ended.returncode}): see {name}.log")
    return {"env": env_id, "backend": backend, "label": variant.label, "repeat": repeat, "run": name}


def main(argv: list) -> int:
    options = parse(argv)
    envs, workload, repeats, iterations = ENVS, WORKLOAD, options.repeats, options.iterations
    if options.tiny:
        envs, workload, repeats, iterations = ENVS[:2], TINY_WORKLOAD, 1, 2
    print(estimate(envs, repeats, iterations), flush=True)
    if options.dry_run:
        return 0
    out = os.path.abspath(options.out)
    os.makedirs(out, exist_ok=True)
    print(LEARNING_CHECK, flush=True)
    cache = os.path.join(out, "jax-cache")
    plan = {**command_set_machine(), "cache_empty_at_start": not (os.path.isdir(cache) and os.listdir(cache)),
            "load": load(), "commit": commit(), "iterations": iterations,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
            "workload": " ".join(workload), "envs": [list(env[:3]) for env in envs], "env_costs": [],
            "brax_backends": [], "runs": []}
    plan = resumed(out, PLAN_FILE, plan, ("workload", "iterations", "envs"))
    timed = {(cost["env"], cost["backend"]) for cost in plan["env_costs"]}
    for env_id, backend, _, _ in envs:
        if (env_id, backend) not in timed:
            print(f"exp12 env cost: {env_id} ({backend}), load {load()}", flush=True)
            plan["env_costs"].append({"env": env_id, "backend": backend,
                                      "processes": env_costs(env_id, backend, workload, options.tiny)})
            save(out, plan, PLAN_FILE)
    timed = {(cost["env"], cost["brax_backend"]) for cost in plan["brax_backends"]}
    brax_envs = () if options.tiny else [env[0] for env in envs if env[1] == "Brax"]
    for env_id, brax_backend in [(env_id, brax_backend) for env_id in brax_envs for brax_backend in BRAX_BACKENDS
                                 if (env_id, brax_backend) not in timed]:
        print(f"exp12 Brax backend: {env_id} on {brax_backend}, load {load()}", flush=True)
        cost = env_costs(env_id, "Brax", workload, False, 1, brax_backend)[0]
        plan["brax_backends"].append({"env": env_id, "brax_backend": brax_backend, **cost})
        save(out, plan, PLAN_FILE)
    done = {(entry["env"], entry["backend"], entry["label"], entry["repeat"]) for entry in plan["runs"]}
    left = [(env_id, backend, variant, repeat) for repeat in range(1, repeats + 1)
            for env_id, backend, _, variants in envs for variant in variants
            if (env_id, backend, variant.label, repeat) not in done]
    if done:
        print(f"exp12: {len(done)} runs already in {out}, {len(left)} to run", flush=True)
    for env_id, backend, variant, repeat in left:
        plan["runs"].append(run(out, env_id, backend, variant, repeat, workload, iterations))
        save(out, plan, PLAN_FILE)
    save(out, plan, PLAN_FILE, ended=True)
    return subprocess.run([sys.executable, "-m", "report.continuous", out], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
