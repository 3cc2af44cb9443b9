"""exp13: the same wall-clock budget spent four ways, each way's best agent rerun on fresh seeds; then the report.

    python tools/exp13.py OUT --env ENV [--minutes 3] [--length 100] [--study-seeds 1,2,3] [--population 8]
                          [--seeds-per-trial 2] [--pbt 8] [--score-seeds 3] [--dry-run] [--tiny]

Per study seed, a cell of four tune.py studies of PPO on ENV, each given --minutes on both cores of a 2-core machine
(two processes side by side), over the PPO space's float fields (those an agent of a population has as its own):
  population  random search as ppo_linen_scan.py populations of P agents;
  pruned      TPE + Hyperband, ppo_linen.py trials two at a time (TPE draws at random until 10 trials have
              finished, completed or pruned: the report says how many of each study's trials TPE drew itself, and
              names a study that never left that start-up random search);
  seeds       random search as ppo_linen_scan.py populations of P / K trials x K seeds each (the objective: the K
              seeds' mean);
  pbt         ppo_linen_pbt.py populations of N agents trained with population-based training (an agent's values
              change as it trains; it may copy a better agent).
Every trial runs --length iterations of 16 envs x 128 steps. A study starts nothing once its minutes are spent and is
stopped (SIGTERM) a few seconds after them, so each way has the same minutes; the ways of a cell run one after another
in an order that turns from cell to cell. Then each way's best trial among those ended (told: one clock for every
way, report/cells.py) within the minutes is rerun on K fresh seeds (--score-seeds): a configuration by
ppo_linen_scan.py (one process of K agents), a PBT agent by the replay of its lineage (ppo_linen_pbt.py, one agent per
fresh seed), every way on the same fresh seeds. OUT/exp13.json
records the machine, the load, the commit and every invocation; rerunning the command resumes.
`python -m report.budget OUT` writes OUT/REPORT.md. The estimate comes first; --dry-run stops there. --tiny: 0.3
minutes, 2 iterations of 4 envs x 32 steps, populations of 2, 1 score seed, study seed 1 (a test of the command set,
no result)."""
import argparse
import datetime
import json
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from exp11 import SPACE_FILE, positive, sizes  # noqa: E402 (beside it in tools/)
from exp15 import COSTS, Way, open_plan, rerun, save_plan  # noqa: E402
from report.budget import PLAN_FILE  # noqa: E402 (root first)
from report.cells import best_by, cell_name, load_study, score_path  # noqa: E402
from search import study as study_folder, trial as trial_process  # noqa: E402

GRACE_SECONDS = 10  # after a study's minutes: the stop's margin over tune.py's own start


def ways(options: argparse.Namespace) -> list:
    budget = ("--minutes", f"{options.minutes:g}")
    per_process = options.population // options.seeds_per_trial
    return [Way("population", f"random populations of {options.population}", "ppo_linen_scan.py", "random", "none",
                options.population, budget),
            Way("pruned", "TPE + Hyperband trials", "ppo_linen.py", "tpe", "hyperband", 0, budget),
            Way("seeds", f"random populations of {per_process} trials x {options.seeds_per_trial} seeds",
                "ppo_linen_scan.py", "random", "none", per_process,
                budget + ("--seeds-per-trial", str(options.seeds_per_trial))),
            Way("pbt", f"PBT populations of {options.pbt}", "ppo_linen_pbt.py", "random", "none", 0,
                budget + ("--pbt", str(options.pbt)))]


def fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1000:
        raise argparse.ArgumentTypeError(f"want minutes above 0 (below 1000), got '{text}'")
    return value


def parse(argv: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tools/exp13.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the folder of exp13's studies and report")
    parser.add_argument("--env", required=True, choices=sorted(COSTS), help="the env of every trial")
    parser.add_argument("--minutes", type=fraction, default=3.0, help="each way's budget (default 3)")
    parser.add_argument("--length", type=positive, default=100, help="iterations per trial (default 100)")
    parser.add_argument("--study-seeds", type=sizes, default=[1, 2, 3], help="the repeats' sampler seeds (default "
                        "1,2,3)")
    parser.add_argument("--population", type=positive, default=8, help="agents per population process (default 8)")
    parser.add_argument("--seeds-per-trial", type=positive, default=2, help="K of the seeds way (default 2; it "
                        "must divide --population)")
    parser.add_argument("--pbt", type=positive, default=8, help="agents per PBT process (default 8)")
    parser.add_argument("--score-seeds", type=positive, default=3, help="fresh seeds per rerun (default 3)")
    parser.add_argument("--dry-run", action="store_true", help="print the plan and its estimate only")
    parser.add_argument("--tiny", action="store_true", help="a test of the command set: no result")
    options = parser.parse_args(argv)
    if options.population % options.seeds_per_trial or options.pbt < 2:
        parser.error("--seeds-per-trial must divide --population, and --pbt wants at least 2 agents")
    return options


def estimate_seconds(options: argparse.Namespace) -> float:
    """A cell's seconds: four budgets and their stops, and the reruns (three configurations' processes of K agents
    and one PBT replay process per fresh seed, two at a time)."""
    cost = COSTS[options.env]
    configurations = 3 * (cost.population_start + options.length * options.score_seeds * cost.agent_iteration)
    replays = options.score_seeds * (cost.population_start + options.length * cost.agent_iteration)
    return 4 * (60 * options.minutes + GRACE_SECONDS) + (configurations + replays) / 2


# A CELL: its four studies, each stopped at its minutes, then the reruns
def run_study(out: str, name: str, way: Way, seed: int, workload: list, options: argparse.Namespace) -> dict:
    folder = f"{name}-{way.key}"
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print(f"exp13 {folder}: {way.label}, {options.minutes:g} min, load {load}", flush=True)
    command = [sys.executable, os.path.join(ROOT, "tune.py"), "--trials", "100000", "--out", os.path.join(out, folder),
               "--sampler", way.sampler, "--pruner", way.pruner, "--seed", str(seed), "--workers", "2",
               "--eval-seeds", "0", "--space", os.path.join(out, SPACE_FILE), "--population", str(way.population),
               *way.flags, way.script, "--env-id", options.env, *workload]
    with open(os.path.join(out, folder + ".log"), "w") as log:
        study = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            status = study.wait(60 * options.minutes + GRACE_SECONDS)
        except subprocess.TimeoutExpired:  # what still runs past the minutes: stopped, as Ctrl-C stops a study
            study.send_signal(signal.SIGTERM)
            status = study.wait()
    if status not in (0, 128 + signal.SIGTERM):
        sys.exit(f"exp13.py: the study {folder} failed (exit {status}): see {folder}.log")
    return {"way": way.key, "label": way.label, "folder": folder, "script": way.script, "sampler": way.sampler,
            "pruner": way.pruner, "population": way.population, "flags": list(way.flags), "load": load}


def replay(out: str, name: str, folder: str, number: int, seed: int, workload: list, env: str) -> float | None:
    """A PBT trial's lineage (its run folder's pbt_replay.json) replayed as one agent on the fresh `seed`: its
    objective."""
    with open(os.path.join(out, folder, "runs", f"trial_{number:04d}", "pbt_replay.json")) as f:
        schedule = [{key: value for key, value in agent.items() if key != "seed"} for agent in json.load(f)]
    runs_dir = os.path.join(out, f"{name}-score", "runs")
    os.makedirs(runs_dir, exist_ok=True)
    path = os.path.join(out, f"{name}-score", f"replay{number}.json")
    with open(path, "w") as f:
        json.dump(schedule, f)
    run_name = f"replay{number}_seed{seed}"
    argv = trial_process.command("ppo_linen_pbt.py", ["--env-id", env, *workload], ["--num-seeds", "1", "--hparams",
                                 path], seed, runs_dir, run_name)
    with open(os.path.join(runs_dir, run_name + ".log"), "w") as log:
        subprocess.run(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    return trial_process.objective(os.path.join(runs_dir, run_name))[0]


def score(out: str, name: str, studies: list, seed: int, workload: list, options: argparse.Namespace):
    """Each way's best trial ended within the minutes, rerun on the fresh seeds: a configuration once however many
    ways picked it, a PBT agent by its replay."""
    if os.path.exists(score_path(out, name)):
        return
    moment, configs, keys, picks = 60 * options.minutes, [], [], {}
    seeds = [study_folder.EVAL_SEED + seed + k for k in range(options.score_seeds)]
    for item in studies:
        best = best_by(load_study(out, item["folder"]), moment)
        if best is None:
            picks[item["way"]] = {"equal": None}
            continue
        pbt = item["way"] == "pbt"
        entry = {"replay": f"{item['folder']}/trial_{best.number:04d}"} if pbt else {"params": best.params}
        key = json.dumps(entry, sort_keys=True)
        if key not in keys:
            keys.append(key)
            configs.append((entry, item["folder"], best.number))
        picks[item["way"]] = {"equal": {"trial": best.number, "config": keys.index(key)}}
    print(f"exp13 {name}: {len(configs)} pick(s) rerun on {len(seeds)} fresh seeds", flush=True)

    def run(index: int) -> list:
        entry, folder, number = configs[index]
        if "params" in entry:
            return rerun(out, name, index, entry["params"], seeds, workload, options.env)
        return [replay(out, name, folder, number, fresh, workload, options.env) for fresh in seeds]

    with ThreadPoolExecutor(2) as pool:
        found = list(pool.map(run, range(len(configs))))
    data = {"equal_time_s": moment, "seeds": seeds, "picks": picks,
            "configs": [{**entry, "values": values} for (entry, _, _), values in zip(configs, found)]}
    with open(score_path(out, name), "w") as f:
        json.dump(data, f, indent=1)


def main(argv: list) -> int:
    options = parse(argv)
    workload = ["--num-envs", "16", "--num-steps", "128"]
    if options.tiny:
        options.minutes, options.length, options.study_seeds = 0.3, 2, options.study_seeds[:1]
        options.population, options.seeds_per_trial, options.pbt, options.score_seeds = 2, 1, 2, 1
        workload = ["--num-envs", "4", "--num-steps", "32"]
    workload += ["--num-iterations", str(options.length)]
    order = ways(options)
    seconds = len(options.study_seeds) * estimate_seconds(options)
    print(f"exp13 {options.env}: {len(options.study_seeds)} cell(s) of {len(order)} studies of {options.minutes:g} min "
          f"(study seeds {options.study_seeds}, {options.length} iterations a trial); about {seconds / 60:.0f} min on a "
          "2-core AMD EPYC VM (Zen 5), the reruns more on a slower machine", flush=True)
    if options.dry_run:
        return 0
    out, plan_path, plan = open_plan(options.out, PLAN_FILE, ["tools/exp13.py", *argv], {
        "minutes": options.minutes, "workload": " ".join(workload), "score_seeds": options.score_seeds})
    for number, seed in enumerate(options.study_seeds):
        name = cell_name(options.env, options.length, seed)
        done = {cell["name"]: cell for cell in plan["cells"]}.get(name)
        turn = number % len(order)
        studies = done["studies"] if done else [run_study(out, name, way, seed, workload, options)
                                                for way in order[turn:] + order[:turn]]
        score(out, name, studies, seed, workload, options)
        if not done:
            end = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes")
            plan["cells"].append({"name": name, "env": options.env, "length": options.length, "seed": seed,
                                  "minutes": options.minutes, "studies": studies, "end": end})
            save_plan(plan_path, plan)
    return subprocess.run([sys.executable, "-m", "report.budget", out], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
