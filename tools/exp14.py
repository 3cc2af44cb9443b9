"""exp14: what a CNN changes. Every framework's PPO with a convolutional network: MinAtar's CNN (small and wide) on
Breakout-MinAtar in JAX, the Nature CNN on Breakout-v5 in ale-py's C++ env; each env's share of an iteration; then
their report.

    python tools/exp14.py OUT [--repeats 3] [--tiny] [--dry-run]

The cases, each at its scripts' own workload: MinAtar's CNN (`--network cnn`) at `--model-size small` (16 channels,
128 units) for 15 iterations, timed to a mean return of 1.5 as well (the CNN learning test's threshold), and at
`medium`, the wide one (64 channels, 512 units), for 6; the gymnax scripts' defaults (32 envs x 256 steps, 10 epochs of
8 minibatches), in Linen, NNX (`cached_partial` and tree mode), Equinox, torch and torch.compile. The Atari scripts
at CleanRL's workload (8 envs x 128 steps, 4 epochs of 4 minibatches) for 10 iterations: 8 steady ones a run (the
report's window, iterations 2 on; the first sitting ran 6, 4 steady). Repeat r runs every case's
scripts once, in the same order, seed r: the repeats alternate. Each env's step cost is measured first, alone, in the
same regime (tools/cnn_env_cost.py, 3 processes each). The JAX processes share one compilation cache (OUT/jax-cache):
the first repeat compiles cold, the later ones load what it compiled. OUT/exp14.json says what ran where; `python -m
report.cnn OUT` writes OUT/REPORT.md. --tiny: 1 repeat of 2 iterations of 4 envs x 16 steps, MinAtar small and
Atari (a test of the command set, no result). The estimate of its runs and minutes comes first (--dry-run: only
it, nothing written). Rerun with the same settings, it resumes OUT: what exp14.json holds stands, the rest runs."""
import argparse
import datetime
import json
import os
import subprocess
import sys
from typing import NamedTuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from sweep import variants as v  # noqa: E402 (the repository's root first)
from sweep.experiments import EXP14  # noqa: E402
from sweep.machine import LEARNING_CHECK, command_set_machine  # noqa: E402
from exp11 import commit, positive  # noqa: E402 (tools/, this file's folder)
from exp12 import jax_cache, load, resumed, save  # noqa: E402

PLAN_FILE = "exp14.json"


def workload_flags(num_envs: int, num_steps: int, update_epochs: int, num_minibatches: int) -> tuple:
    """A case's workload as the scripts' flags."""
    return ("--num-envs", str(num_envs), "--num-steps", str(num_steps), "--num-minibatches", str(num_minibatches),
            "--update-epochs", str(update_epochs))


MINATAR_WORKLOAD = workload_flags(32, 256, 10, 8)  # the sweep's reference workload, the gymnax scripts' defaults
ATARI_WORKLOAD = workload_flags(*EXP14.ATARI_WORKLOAD)
TINY_WORKLOAD = workload_flags(4, 16, 2, 2)
ENV_COST_PROCESSES = 3


class Case(NamedTuple):
    case: str  # the report's name of the case
    env: str
    backend: str  # what steps the env
    variants: tuple
    network: tuple  # the flags that choose the network
    workload: tuple
    iterations: int
    seconds: float  # a run's wall time, start-up included, at the first sitting's pace (a 2-core Zen 4, 2026-11-30)
    threshold: float | None = None  # a mean return each run is timed to


MINATAR, ATARI = (EXP14.MINATAR_ENV, "small"), (EXP14.ATARI_ENV, EXP14.ATARI_SIZE)
WIDE = (EXP14.MINATAR_ENV, "medium")
CASES = (
    Case(EXP14.CASES[MINATAR], MINATAR[0], v.GYMNAX, EXP14.MINATAR_VARIANTS, ("--network", "cnn", "--model-size",
         MINATAR[1]), MINATAR_WORKLOAD, 15, 25, 1.5),
    Case(EXP14.CASES[WIDE], WIDE[0], v.GYMNAX, EXP14.MINATAR_VARIANTS, ("--network", "cnn", "--model-size", WIDE[1]),
         MINATAR_WORKLOAD, 6, 56),
    # 10 iterations, 8 steady (the first sitting's 6 gave 4); its seconds: the first sitting's 32 at 6 iterations, plus
    # 4 steady iterations of about 3.1 s (its scripts' median steady iteration there)
    Case(EXP14.CASES[ATARI], ATARI[0], v.ALE, EXP14.ATARI_VARIANTS, (), ATARI_WORKLOAD, 10, 45),
)
ENV_COST_SECONDS = 60  # both envs' step costs, every process (the first sitting's)


def estimate(cases, repeats: int) -> str:
    """The sitting's runs and minutes at the first sitting's pace: what the command set prints before it starts."""
    runs = repeats * sum(len(case.variants) for case in cases)
    seconds = ENV_COST_SECONDS + repeats * sum(case.seconds * len(case.variants) for case in cases)
    return (f"exp14: {runs} runs in {repeats} repeat{'s' * (repeats > 1)}, about {seconds / 60:.0f} min at the pace "
            "of its first sitting (a 2-core Zen 4 EPYC; another CPU, or a busy one, takes longer)")


def parse(argv: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tools/exp14.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the folder of exp14's runs and report")
    parser.add_argument("--repeats", type=positive, default=3, help="runs of each (case, script), alternated")
    parser.add_argument("--tiny", action="store_true", help="a test of the command set: no result")
    parser.add_argument("--dry-run", action="store_true", help="print the estimate only, write nothing")
    return parser.parse_args(argv)


def env_costs(env_id: str, workload: tuple, tiny: bool) -> list:
    """The env's steps per iteration, timed in fresh processes (no compilation cache)."""
    command = [sys.executable, os.path.join(ROOT, "tools", "cnn_env_cost.py"), env_id, "--num-envs", workload[1],
               "--num-steps", workload[3], *(["--calls", "1"] * tiny)]
    costs = []
    for _ in range(1 if tiny else ENV_COST_PROCESSES):
        ended = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if ended.returncode != 0:
            sys.exit(f"exp14.py: the env cost of {env_id} failed: {ended.stderr.strip().splitlines()[-1:]}")
        costs.append(json.loads(ended.stdout.strip().splitlines()[-1]))
    return costs


def run(out: str, case: Case, variant: v.Variant, repeat: int) -> dict:
    name = f"{case.case.replace(' ', '').replace(',', '-')}__{variant.script}__{variant.mode}__{repeat}"
    print(f"exp14 {name} (load {load()})", flush=True)
    command = [sys.executable, os.path.join(ROOT, variant.file), *variant.flags, "--env-id", case.env, *case.network,
               *case.workload, "--num-iterations", str(case.iterations), "--seed", str(repeat), "--log-dir",
               os.path.join(out, "runs"), "--run-name", name]
    ended = subprocess.run(command, cwd=ROOT, env=jax_cache(out), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    if ended.returncode != 0:
        with open(os.path.join(out, name + ".log"), "w") as f:
            f.write(ended.stdout)
        sys.exit(f"exp14.py: {name} failed (exit {ended.returncode}): see {name}.log")
    return {"case": case.case, "env": case.env, "backend": case.backend, "label": variant.label, "repeat": repeat,
            "run": name, "threshold": case.threshold}


def main(argv: list) -> int:
    options = parse(argv)
    cases, repeats = CASES, options.repeats
    if options.tiny:
        cases = [case._replace(workload=TINY_WORKLOAD, iterations=2, seconds=10) for case in CASES
                 if case.threshold or case.backend == "ALE"]
        repeats = 1
    print(estimate(cases, repeats), flush=True)
    if options.dry_run:
        return 0
    out = os.path.abspath(options.out)
    os.makedirs(out, exist_ok=True)
    print(LEARNING_CHECK, flush=True)
    cache = os.path.join(out, "jax-cache")
    plan = {**command_set_machine(), "cache_empty_at_start": not (os.path.isdir(cache) and os.listdir(cache)),
            "load": load(), "commit": commit(), "iterations": ", ".join(f"{case.iterations} ({case.case})"
                                                                      for case in cases),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
            "cases": [{"case": case.case, "env": case.env, "backend": case.backend,
                       "workload": " ".join((*case.network, *case.workload)), "threshold": case.threshold}
                      for case in cases], "env_costs": [], "runs": []}
    plan = resumed(out, PLAN_FILE, plan, ("iterations", "cases"))
    timed = {(cost["env"], cost["backend"]) for cost in plan["env_costs"]}
    for env_id, backend, workload in dict.fromkeys((case.env, case.backend, case.workload) for case in cases):
        if (env_id, backend) not in timed:
            print(f"exp14 env cost: {env_id} ({backend}), load {load()}", flush=True)
            plan["env_costs"].append({"env": env_id, "backend": backend,
                                      "processes": env_costs(env_id, workload, options.tiny)})
            save(out, plan, PLAN_FILE)
    done = {(entry["case"], entry["label"], entry["repeat"]) for entry in plan["runs"]}
    left = [(case, variant, repeat) for repeat in range(1, repeats + 1) for case in cases for variant in case.variants
            if (case.case, variant.label, repeat) not in done]
    if done:
        print(f"exp14: {len(done)} runs already in {out}, {len(left)} to run", flush=True)
    for case, variant, repeat in left:
        plan["runs"].append(run(out, case, variant, repeat))
        save(out, plan, PLAN_FILE)
    save(out, plan, PLAN_FILE, ended=True)
    return subprocess.run([sys.executable, "-m", "report.cnn", out], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
