"""A stand-in for ppo_linen_scan.py in tune.py --population's tests: its contract (--num-seeds agents, each with the
seed and values of its --hparams object, in run folders {run_name}__seed{s}; a diverged agent stops alone with its
error line, exit 3 at the end; SIGTERM) in a fraction of a second. An agent's return is what tests/dqn_standin.py returns
for its seed and learning rate: a study of populations and one of trials in processes find the same values."""
import json
import math
import os
import signal
import sys
import time
from dataclasses import dataclass, replace
from typing import NamedTuple

import tyro
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from dqn_standin import scalar


@dataclass
class Args:
    seed: int = 1
    """seed of agent 0"""
    log_dir: str = "runs"
    """TensorBoard root folder"""
    run_name: str = "standin"
    """run folder name"""
    num_seeds: int = 1
    """agents in this process"""
    hparams: str = ""
    """a JSON list of --num-seeds objects: each agent's seed and HParams values"""
    num_iterations: int = 5
    """iterations"""
    learning_rate: float = 2.5e-4
    """the learning rate"""
    ent_coef: float = 0.01
    """the entropy coefficient"""
    clip_coef: float = 0.2
    """the clipping coefficient"""
    gamma: float = 0.99
    """the discount factor"""
    gae_lambda: float = 0.95
    """GAE's lambda"""
    vf_coef: float = 0.5
    """the value coefficient"""
    max_grad_norm: float = 0.5
    """the gradient norm's clip"""
    num_minibatches: int = 8
    """minibatches (one value per process)"""
    update_epochs: int = 10
    """epochs (one value per process)"""
    iteration_seconds: float = 0.02
    """how long an iteration takes"""
    nan_above: float = math.inf
    """an agent whose learning rate is above this diverges at iteration 2 (its run stops, exit 3 at the end)"""
    kill_once: str = ""
    """a file: if it does not exist, create it and SIGKILL this process at iteration 2 (a population killed once)"""


class HParams(NamedTuple):
    learning_rate: float
    ent_coef: float
    clip_coef: float
    gamma: float
    gae_lambda: float
    vf_coef: float
    max_grad_norm: float


def main(args: Args):
    given = [{}] * args.num_seeds
    if args.hparams:
        with open(args.hparams) as f:
            given = json.load(f)
    agents = [replace(args, **{"seed": args.seed + i, **values}) for i, values in enumerate(given)]
    names = [f"{args.run_name}__seed{agent.seed}" if args.num_seeds > 1 else args.run_name for agent in agents]
    writers = [EventFileWriter(os.path.join(args.log_dir, name)) for name in names]
    running = set(range(len(agents)))

    def stop(signum, frame):
        for writer in writers:
            writer.close()
        print(f"interrupted by {signal.Signals(signum).name}: partial runs (no time/total)", file=sys.stderr)
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for iteration in range(args.num_iterations):
        time.sleep(args.iteration_seconds)
        if iteration == 1 and args.kill_once and not os.path.exists(args.kill_once):
            open(args.kill_once, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        step = (iteration + 1) * 1000
        for i in sorted(running):
            agent = agents[i]
            if iteration == 1 and agent.learning_rate > args.nan_above:
                running.discard(i)
                writers[i].close()
                run_dir = os.path.join(args.log_dir, names[i])
                print(f"error: loss is NaN at iteration 2; partial run in {run_dir}", file=sys.stderr, flush=True)
                continue
            quality = max(0.0, 1 - abs(math.log10(agent.learning_rate) + 3) / 2)
            mean_return = 100 * quality * (iteration + 1) / args.num_iterations + agent.seed % 7
            scalar(writers[i], "charts/episodic_return", mean_return, step)
            print(f"iteration {iteration + 1}/{args.num_iterations} global_step={step} return={mean_return:.1f}"
                  " time=0.020s", flush=True)
    for i in running:
        scalar(writers[i], "time/total", 1.0, args.num_iterations)
        writers[i].close()
    sys.exit(3 if len(running) < len(agents) else 0)


if __name__ == "__main__":
    main(tyro.cli(Args))
