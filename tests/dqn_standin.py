"""A stand-in for a dqn_*.py script in tune.py's tests: the harness's contract (Args, iteration lines, event file,
time/total last, exit 3 on a NaN loss, SIGTERM ends it keeping its event file) in a fraction of a second per trial.
Its return rises over the iterations, the more the closer learning_rate is to 1e-3."""
import math
import os
import signal
import sys
import time
from dataclasses import dataclass

import tyro
from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter


@dataclass
class Args:
    seed: int = 1
    """seed"""
    log_dir: str = "runs"
    """TensorBoard root folder"""
    run_name: str = "standin"
    """run folder name"""
    total_timesteps: int = 5000
    """transitions"""
    iteration_steps: int = 1000
    """transitions per iteration"""
    env_id: str = "CartPole-v1"
    """the env (taken, as the scripts' flag, and unused)"""
    num_envs: int = 1
    """parallel environments (taken, as the scripts' flag, and unused)"""
    learning_starts: int = 0
    """transitions before the first gradient step (taken and unused)"""
    learning_rate: float = 2.5e-4
    """the learning rate"""
    gamma: float = 0.99
    """the discount factor"""
    buffer_size: int = 10000
    """the replay memory's capacity"""
    batch_size: int = 128
    """transitions per gradient step"""
    train_frequency: int = 10
    """transitions between gradient steps"""
    target_network_frequency: int = 500
    """transitions between target updates"""
    exploration_fraction: float = 0.5
    """the fraction of the steps over which epsilon falls"""
    end_e: float = 0.05
    """the final epsilon"""
    iteration_seconds: float = 0.02
    """how long an iteration takes"""
    nan_above: float = math.inf
    """a learning rate above this ends the run with a NaN loss (exit 3), as a diverging script does"""
    no_episode: bool = False
    """no episode ever ends (no charts/episodic_return)"""


def scalar(writer, tag, value, step):
    value = summary_pb2.Summary.Value(tag=tag, simple_value=value)
    writer.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary_pb2.Summary(value=[value])))


def main(args: Args):
    if args.total_timesteps % args.iteration_steps:  # the scripts' argument check, which exits 2
        print(f"error: --total-timesteps {args.total_timesteps} must be a multiple of --iteration-steps "
              f"{args.iteration_steps}", file=sys.stderr)
        sys.exit(2)
    run_dir = os.path.join(args.log_dir, args.run_name)
    writer = EventFileWriter(run_dir)

    def stop(signum, frame):
        writer.close()
        print(f"interrupted by {signal.Signals(signum).name}: partial run (no time/total) in {run_dir}", file=sys.stderr)
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}", flush=True)  # tune.py's --workers share
    iterations = args.total_timesteps // args.iteration_steps
    quality = max(0.0, 1 - abs(math.log10(args.learning_rate) + 3) / 2)
    for iteration in range(iterations):
        time.sleep(args.iteration_seconds)
        step = (iteration + 1) * args.iteration_steps
        if args.learning_rate > args.nan_above:
            writer.close()
            print(f"error: loss is NaN at iteration {iteration + 1}; partial run in {run_dir}", file=sys.stderr)
            sys.exit(3)
        mean_return = math.nan if args.no_episode else 100 * quality * (iteration + 1) / iterations + args.seed % 7
        if not args.no_episode:
            scalar(writer, "charts/episodic_return", mean_return, step)
        scalar(writer, "charts/SPS", 1000.0, step)
        print(f"iteration {iteration + 1}/{iterations} global_step={step} return={mean_return:.1f} time=0.020s",
              flush=True)
    scalar(writer, "time/total", 1.0, iterations)
    writer.close()


if __name__ == "__main__":
    main(tyro.cli(Args))
