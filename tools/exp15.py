"""exp15: the search at the trial lengths users run: the same PPO search three ways at several trial lengths, each
(length, study seed) a cell of three tune.py studies, then every way's best rerun on fresh seeds; then the report.

    python tools/exp15.py OUT --env ENV [--lengths 25,244,1000] [--study-seeds 1,2,3] [--trials N]
                          [--population P] [--score-seeds K] [--dry-run] [--tiny]

The three ways, each on both cores of a 2-core machine:
  population  ppo_linen_scan.py populations of P agents, two processes side by side; a random sampler seeded per
              trial number over the PPO space's float fields (the fields an agent of a population can have as its
              own), no pruner;
  trials      ppo_linen.py trials in processes, two at a time: the same N configurations, no pruner;
  pruned      ppo_linen.py trials in processes, two at a time, Hyperband-pruned, N trials: with N up to 10 the
              random sampler of the other two ways (TPE would not leave its random start-up, which lasts until 10
              trials have finished: it would be random search all the same, named TPE), so the pruned study draws
              the same configurations; with more, TPE.
Every trial runs 16 envs x 128 steps per iteration (2,048 env steps; 244 iterations are CleanRL's 500k steps for
CartPole-v1). The ways of a cell run one after another in an order that turns from cell to cell (alternated).
After a cell's studies: the equal time T is the wall time of its fastest way; each way's best trial by time T and at
its end is rerun on K fresh seeds, all with ppo_linen_scan.py (one process of K agents per configuration, two side by
side), so every way is scored by the same runs. One clock for every way: a trial ends at its tell, in a process
or in a population (report/cells.py), for the equal time and the picks by it. OUT/exp15.json records the machine,
the load, the commit and every invocation; OUT/<env>-L<length>-s<seed>-<way> are the studies,
OUT/<env>-L<length>-s<seed>-score.json the rerun; rerunning the command resumes. `python -m report.lengths OUT`
writes OUT/REPORT.md. The estimate comes first; --dry-run stops there. --tiny: 2 trials of 2 iterations of 4 envs x
32 steps, populations of 1, 1 score seed, one length and seed (a test of the command set, no result)."""
import argparse
import datetime
import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from exp11 import SPACE_FILE, commit, positive, sizes, write_float_space  # noqa: E402 (beside it in tools/)
from report.cells import cell_name, equal_time, load_study, score_path, ways_best  # noqa: E402 (root first)
from report.lengths import PLAN_FILE  # noqa: E402
from search import study as study_folder, trial as trial_process  # noqa: E402
from search.storage import TPE_STARTUP  # noqa: E402
from search.population import agent_folder  # noqa: E402
from sweep.machine import LEARNING_CHECK, command_set_machine  # noqa: E402

SCORER = "ppo_linen_scan.py"


class Cost(NamedTuple):
    """An env's costs on a 2-core AMD EPYC (Zen 5), two processes side by side, fitted to the medians of
    results/cpu-2core-exp15 (its 25- and longest-iteration cells): a trial process's start-up and its seconds per
    iteration, a population process's start-up and its seconds per agent-iteration."""
    start: float
    iteration: float
    population_start: float
    agent_iteration: float


COSTS = {"CartPole-v1": Cost(7.1, 0.021, 13.8, 0.0197), "Breakout-MinAtar": Cost(8.2, 0.056, 16.0, 0.055)}


class Way(NamedTuple):
    key: str
    label: str
    script: str
    sampler: str
    pruner: str
    population: int  # agents per process; 0: trials in processes
    flags: tuple = ()  # tune.py's other options for this way


def ways(population: int, trials: int) -> list:
    """The three ways; the pruned one samples with TPE only where its study is long enough to leave TPE's random
    start-up (more than TPE_STARTUP trials), else with the others' random sampler, and is named by what it samples."""
    sampler = "tpe" if trials > TPE_STARTUP else "random"
    return [Way("population", f"ppo_linen_scan.py populations of {population}, 2 side by side", "ppo_linen_scan.py",
                "random", "none", population),
            Way("trials", "ppo_linen.py trials, 2 at a time", "ppo_linen.py", "random", "none", 0),
            Way("pruned", f"ppo_linen.py trials, 2 at a time, {'TPE' if sampler == 'tpe' else 'random search'} + "
                "Hyperband", "ppo_linen.py", sampler, "hyperband", 0)]


def parse(argv: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tools/exp15.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the folder of exp15's studies and report")
    parser.add_argument("--env", required=True, choices=sorted(COSTS), help="the env of every trial")
    parser.add_argument("--lengths", type=sizes, default=[25, 244, 1000], help="iterations per trial (default "
                        "25,244,1000)")
    parser.add_argument("--study-seeds", type=sizes, default=[1, 2, 3], help="the repeats' sampler seeds (default "
                        "1,2,3)")
    parser.add_argument("--trials", type=positive, default=8, help="configurations per study (default 8)")
    parser.add_argument("--population", type=positive, default=4, help="agents per population process (default 4)")
    parser.add_argument("--score-seeds", type=positive, default=3, help="fresh seeds per rerun (default 3)")
    parser.add_argument("--dry-run", action="store_true", help="print the plan and its estimate only")
    parser.add_argument("--tiny", action="store_true", help="a test of the command set: no result")
    return parser.parse_args(argv)


# THE ESTIMATE
def estimate_seconds(cost: Cost, length: int, options: argparse.Namespace) -> float:
    """A cell's seconds: two trial studies (pruned: at most), the populations, and the reruns of about 4 distinct
    configurations."""
    trials = math.ceil(options.trials / 2) * (cost.start + length * cost.iteration)
    agents = min(options.population, math.ceil(options.trials / 2))
    population = math.ceil(options.trials / (2 * agents)) * (cost.population_start + length * agents *
                                                               cost.agent_iteration)
    scores = 2 * (cost.population_start + length * options.score_seeds * cost.agent_iteration)
    return 2 * trials + population + scores


def cells(options: argparse.Namespace) -> list:
    """(length, study seed) in run order: each seed's lengths, shortest first."""
    return [(length, seed) for seed in options.study_seeds for length in options.lengths]


# A CELL: its three studies, then the reruns
def run_study(out: str, name: str, way: Way, seed: int, workload: list, options: argparse.Namespace) -> dict:
    folder = f"{name}-{way.key}"
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print(f"exp15 {folder}: {way.label}, {options.trials} trials, load {load}", flush=True)
    command = [sys.executable, os.path.join(ROOT, "tune.py"), "--trials", str(options.trials), "--out",
               os.path.join(out, folder), "--sampler", way.sampler, "--pruner", way.pruner, "--seed", str(seed),
               "--workers", "2", "--eval-seeds", "0", "--space", os.path.join(out, SPACE_FILE), "--population",
               str(way.population), *way.flags, way.script, "--env-id", options.env, *workload]
    ended = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(os.path.join(out, folder + ".log"), "w") as f:
        f.write(ended.stdout)
    if ended.returncode != 0:
        sys.exit(f"exp15.py: the study {folder} failed (exit {ended.returncode}): see {folder}.log")
    return {"way": way.key, "label": way.label, "folder": folder, "script": way.script, "sampler": way.sampler,
            "pruner": way.pruner, "population": way.population, "load": load}


def rerun(out: str, name: str, index: int, params: dict, seeds: list, workload: list, env: str) -> list:
    """One configuration on the fresh seeds, as the agents of one scorer process: each seed's objective (None when
    its run has none)."""
    runs_dir = os.path.join(out, f"{name}-score", "runs")
    os.makedirs(runs_dir, exist_ok=True)
    hparams = os.path.join(out, f"{name}-score", f"config{index}.json")
    with open(hparams, "w") as f:
        json.dump([{"seed": seed, **params} for seed in seeds], f, indent=1)
    argv = trial_process.command(SCORER, ["--env-id", env, *workload], ["--num-seeds", str(len(seeds)), "--hparams",
                                 hparams], seeds[0], runs_dir, f"config{index}")
    log = os.path.join(out, f"{name}-score", f"config{index}.log")
    with open(log, "w") as f:
        ended = subprocess.run(argv, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT)
    if ended.returncode != 0:
        sys.exit(f"exp15.py: the rerun of {name}'s configuration {index} failed (exit {ended.returncode}): see {log}")
    return [trial_process.objective(agent_folder(runs_dir, f"config{index}", seed, len(seeds)))[0] for seed in seeds]


def score(out: str, name: str, studies: list, seed: int, workload: list, options: argparse.Namespace,
          moment: float | None = None):
    """Each way's best by the equal time (the fastest study's wall time unless `moment`, s) and at its end, rerun on
    the fresh seeds (distinct configurations once)."""
    if os.path.exists(score_path(out, name)):
        return
    loaded = {item["way"]: load_study(out, item["folder"]) for item in studies}
    moment = equal_time(loaded.values()) if moment is None else moment
    picks, configs = ways_best(loaded, moment), []
    for pick in picks.values():
        for trial in filter(None, pick.values()):
            if trial.params not in configs:
                configs.append(trial.params)
    seeds = [study_folder.EVAL_SEED + seed + k for k in range(options.score_seeds)]
    print(f"exp15 {name}: {len(configs)} configuration(s) rerun on {len(seeds)} fresh seeds", flush=True)
    with ThreadPoolExecutor(2) as pool:
        values = list(pool.map(lambda item: rerun(out, name, item[0], item[1], seeds, workload, options.env),
                               enumerate(configs)))
    data = {"equal_time_s": moment, "seeds": seeds,
            "configs": [{"params": params, "values": found} for params, found in zip(configs, values)],
            "picks": {way: {at: (None if trial is None else {"trial": trial.number, "config": configs.index(
                trial.params)}) for at, trial in pick.items()} for way, pick in picks.items()}}
    with open(score_path(out, name), "w") as f:
        json.dump(data, f, indent=1)


def read_plan(path: str) -> dict:
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return {**command_set_machine(), "invocations": [], "cells": []}


def save_plan(path: str, plan: dict):
    with open(path + ".tmp", "w") as f:
        json.dump(plan, f, indent=1)
    os.replace(path + ".tmp", path)


def open_plan(target: str, plan_file: str, argv: list, settings: dict) -> tuple[str, str, dict]:
    """OUT made, the learning check said, the float space written, and OUT/plan_file read with this invocation
    recorded (its argv, date, commit, load and `settings`): OUT, the plan's path and the plan."""
    out = os.path.abspath(target)
    os.makedirs(out, exist_ok=True)
    print(LEARNING_CHECK, flush=True)
    write_float_space(out)
    plan_path = os.path.join(out, plan_file)
    plan = read_plan(plan_path)
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes")
    plan["invocations"].append({"argv": argv, "date": now, "commit": commit(),
                                "load": " ".join(open("/proc/loadavg").read().split()[:3]), **settings})
    save_plan(plan_path, plan)
    return out, plan_path, plan


def main(argv: list) -> int:
    options = parse(argv)
    workload = ["--num-envs", "16", "--num-steps", "128"]
    if options.tiny:
        options.lengths, options.study_seeds, options.trials = [2], options.study_seeds[:1], 2
        options.population, options.score_seeds, workload = 1, 1, ["--num-envs", "4", "--num-steps", "32"]
    order = ways(options.population, options.trials)
    seconds = sum(estimate_seconds(COSTS[options.env], length, options) for length, _ in cells(options))
    print(f"exp15 {options.env}: {len(cells(options))} cell(s) of {len(order)} studies of {options.trials} trials "
          f"(lengths {options.lengths}, study seeds {options.study_seeds}); about {seconds / 60:.0f} min on a 2-core "
          "AMD EPYC VM (Zen 5), more on a slower machine", flush=True)
    if options.dry_run:
        return 0
    out, plan_path, plan = open_plan(options.out, PLAN_FILE, ["tools/exp15.py", *argv], {
        "trials": options.trials, "workload": " ".join(workload), "score_seeds": options.score_seeds})
    for number, (length, seed) in enumerate(cells(options)):
        name = cell_name(options.env, length, seed)
        turn = number % len(order)
        studies = [run_study(out, name, way, seed, [*workload, "--num-iterations", str(length)], options)
                   for way in order[turn:] + order[:turn]]
        score(out, name, studies, seed, [*workload, "--num-iterations", str(length)], options)
        plan["cells"] = [cell for cell in plan["cells"] if cell["name"] != name]
        end = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes")
        plan["cells"].append({"name": name, "env": options.env, "length": length, "seed": seed,
                              "trials": options.trials, "studies": studies, "end": end})
        save_plan(plan_path, plan)
    return subprocess.run([sys.executable, "-m", "report.lengths", out], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
