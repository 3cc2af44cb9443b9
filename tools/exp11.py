"""exp11: the same PPO search three ways: trials in processes of ppo_torch.py and of ppo_linen.py, and populations of
ppo_linen_scan.py (N configurations as the vmapped agents of one process); tune.py's studies, then their report.

    python tools/exp11.py OUT [--trials N] [--iterations I] [--eval-seeds K] [--populations 8,32,64]
                          [--population-workers W] [--tiny]

Per env (CartPole-v1, Breakout-MinAtar; the small model), every way runs the same N configurations: a random
sampler seeded per trial number over the PPO space's float fields (the fields an agent of a population can have as
its own; the others keep the scripts' defaults), no pruner, trial n with seed 1 + n. The trials in processes run two
at a time (--workers 2: both cores); a population study runs W population processes at a time (default 2, both cores;
fewer where the trials fill fewer populations of its size). The best
configuration of each study is rerun on K fresh seeds. Each study is a folder OUT/<env>-<way> (rerunning this
command resumes every one of them), OUT/exp11.json says what ran where, and `python -m report.population OUT` writes
OUT/REPORT.md. Defaults: N = 64 trials of I = 25 iterations of 16 envs x 128 steps (51,200 env steps), K = 3;
53 minutes on a 2-core AMD EPYC VM (results/cpu-2core-exp11, docs/results.md). --tiny: 3 trials of 2 iterations
of 4 envs x 32 steps, populations of 2, 1 re-evaluation seed, CartPole-v1 only (a test of the command set, no
result). Its estimate comes first (--dry-run: only it, nothing written)."""
import argparse
import datetime
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from search.space import DEFAULT_SPACES  # noqa: E402 (the repository's root first)
from sweep.machine import LEARNING_CHECK, command_set_machine  # noqa: E402

ENVS = ("CartPole-v1", "Breakout-MinAtar")
PLAN_FILE, SPACE_FILE = "exp11.json", "space.json"
# the first sitting's pace (results/cpu-2core-exp11: 53 minutes on a 2-core AMD EPYC VM, its generation not recorded):
# the seconds of a trial of 25 iterations per way (the two envs' mean; a population of N: its size's, or the nearest
# size's), and of one re-evaluation seed of a study
TRIAL_SECONDS = {"torch": 7.3, "linen": 7.36, 8: 3.3, 32: 1.77, 64: 1.52}
PACE_ITERATIONS, EVAL_SEED_SECONDS = 25, 15


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"want a positive integer, got '{text}'")
    return int(text)


def sizes(text: str) -> list:
    try:
        return [positive(word) for word in text.split(",")]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"want positive integers separated by commas, got '{text}'") from None


def parse(argv: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tools/exp11.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the folder of exp11's studies and report")
    parser.add_argument("--trials", type=positive, help="configurations per study (default 64; --tiny: 3)")
    parser.add_argument("--iterations", type=positive, default=25, help="PPO iterations per trial (default 25)")
    parser.add_argument("--eval-seeds", type=int, default=3, help="the best configuration rerun on this many seeds")
    parser.add_argument("--populations", type=sizes, default=[8, 32, 64], help="population sizes (default 8,32,64)")
    parser.add_argument("--population-workers", type=positive, default=2,
                        help="population processes side by side (default 2: both cores; docs/results.md measures it)")
    parser.add_argument("--tiny", action="store_true", help="a test of the command set: no result")
    parser.add_argument("--dry-run", action="store_true", help="print the estimate only, write nothing")
    return parser.parse_args(argv)


def studies(populations: list, trials: int, population_workers: int) -> list:
    """(key, label, script, workers, population) of each way, in run order: a population study's workers no more than
    the populations its trials fill."""
    ways = [("torch", "ppo_torch.py trials, 2 at a time", "ppo_torch.py", 2, 0),
            ("linen", "ppo_linen.py trials, 2 at a time", "ppo_linen.py", 2, 0)]
    for n in populations:
        workers = min(population_workers, -(-trials // n))
        at_a_time = f", {workers} at a time" if workers > 1 else ""
        ways.append((f"population{n}", f"ppo_linen_scan.py populations of {n}{at_a_time}", "ppo_linen_scan.py", workers,
                     n))
    return ways


def estimate(envs: tuple, ways: list, options: argparse.Namespace) -> str:
    """The studies and their minutes at the first sitting's pace, scaled by the trials and iterations."""
    sizes = [size for size in TRIAL_SECONDS if isinstance(size, int)]
    seconds = 0.0
    for key, _, _, _, population in ways:
        pace = TRIAL_SECONDS[min(sizes, key=lambda size: abs(size - population))] if population else TRIAL_SECONDS[key]
        seconds += pace * options.trials * options.iterations / PACE_ITERATIONS + EVAL_SEED_SECONDS * options.eval_seeds
    return (f"exp11: {len(envs) * len(ways)} studies of {options.trials} trials of {options.iterations} iterations, "
            f"about {len(envs) * seconds / 60:.0f} min at the pace of its first sitting (a 2-core AMD EPYC VM; another "
            "CPU, or a busy one, takes longer)")


def write_float_space(out: str, algorithm: str = "ppo"):
    """OUT/space.json: the algorithm's space's float fields, those an agent of a population can have as its own."""
    space = {name: entry for name, entry in DEFAULT_SPACES[algorithm].items() if entry["type"] == "float"}
    with open(os.path.join(out, SPACE_FILE), "w") as f:
        json.dump(space, f, indent=1)


def commit() -> str:
    found = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return found.stdout.strip() or "none"


def run_study(out: str, env: str, way: tuple, options: argparse.Namespace, workload: list) -> dict:
    key, label, script, workers, population = way
    folder = f"{env}-{key}"
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print(f"exp11 {folder}: {label}, {options.trials} trials, load {load}", flush=True)
    command = [sys.executable, os.path.join(ROOT, "tune.py"), "--trials", str(options.trials), "--out",
               os.path.join(out, folder), "--sampler", "random", "--pruner", "none", "--seed", "1", "--workers",
               str(workers), "--eval-seeds", str(options.eval_seeds), "--space", os.path.join(out, SPACE_FILE),
               "--population", str(population), script, "--env-id", env, *workload]
    ended = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(os.path.join(out, folder + ".log"), "w") as f:
        f.write(ended.stdout)
    if ended.returncode != 0:
        sys.exit(f"exp11.py: the study {folder} failed (exit {ended.returncode}): see {folder}.log")
    return {"part": env, "folder": folder, "label": label, "script": script, "workers": workers,
            "population": population, "load": load}


def main(argv: list) -> int:
    options = parse(argv)
    options.trials = options.trials or (3 if options.tiny else 64)
    if options.eval_seeds < 0:
        sys.exit("exp11.py: --eval-seeds wants 0 or more")
    envs, workload = ENVS, ["--num-envs", "16", "--num-steps", "128", "--num-iterations", str(options.iterations)]
    if options.tiny:
        envs, options.eval_seeds, options.populations, options.iterations = ENVS[:1], 1, [2], 2
        workload = ["--num-envs", "4", "--num-steps", "32", "--num-iterations", "2"]
    print(estimate(envs, studies(options.populations, options.trials, options.population_workers), options), flush=True)
    if options.dry_run:
        return 0
    out = os.path.abspath(options.out)
    os.makedirs(out, exist_ok=True)
    print(LEARNING_CHECK, flush=True)
    write_float_space(out)
    plan = {**command_set_machine(), "load": " ".join(open("/proc/loadavg").read().split()[:3]),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"), "commit": commit(),
            "trials": options.trials, "workload": " ".join(workload), "eval_seeds": options.eval_seeds,
            "studies": []}
    for env in envs:
        for way in studies(options.populations, options.trials, options.population_workers):
            plan["studies"].append(run_study(out, env, way, options, workload))
            with open(os.path.join(out, PLAN_FILE), "w") as f:
                json.dump(plan, f, indent=1)
    plan["end"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes")
    with open(os.path.join(out, PLAN_FILE), "w") as f:
        json.dump(plan, f, indent=1)
    return subprocess.run([sys.executable, "-m", "report.population", out], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
