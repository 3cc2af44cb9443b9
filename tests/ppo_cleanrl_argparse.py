"""A stand-in written the way CleanRL's older scripts are, for tune.py's tests of scripts that are not ours: argparse
flags, its own run name, TensorBoard events under runs/{run_name} of the working folder, CleanRL's episode lines and
no iteration line. It trains nothing: its return rises over the steps, the more the closer learning_rate is to 1e-3,
plus seed % 7 (tests/dqn_standin.py's rule). The event file is written with tensorboard's writer, not torch's
SummaryWriter, to start in a fraction of a second."""
import argparse
import math
import os
import time

from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--exp-name", type=str, default=os.path.basename(__file__)[: -len(".py")],
                        help="the name of this experiment")
    parser.add_argument("--seed", type=int, default=1, help="seed of the experiment")
    parser.add_argument("--env-id", type=str, default="CartPole-v1", help="the id of the environment")
    parser.add_argument("--total-timesteps", type=int, default=2048, help="total timesteps of the experiments")
    parser.add_argument("--learning-rate", type=float, default=2.5e-4, help="the learning rate of the optimizer")
    parser.add_argument("--num-envs", type=int, default=4, help="the number of parallel game environments")
    parser.add_argument("--num-steps", type=int, default=128, help="the number of steps per policy rollout")
    parser.add_argument("--gamma", type=float, default=0.99, help="the discount factor gamma")
    parser.add_argument("--gae-lambda", type=float, default=0.95, help="the lambda for the GAE")
    parser.add_argument("--num-minibatches", type=int, default=4, help="the number of mini-batches")
    parser.add_argument("--update-epochs", type=int, default=4, help="the K epochs to update the policy")
    parser.add_argument("--clip-coef", type=float, default=0.2, help="the surrogate clipping coefficient")
    parser.add_argument("--ent-coef", type=float, default=0.01, help="coefficient of the entropy")
    parser.add_argument("--vf-coef", type=float, default=0.5, help="coefficient of the value function")
    parser.add_argument("--max-grad-norm", type=float, default=0.5, help="the maximum norm for the gradient clipping")
    return parser.parse_args()


def scalar(writer, tag, value, step):
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)])
    writer.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary))


def train(args):
    """CleanRL's run name and writer, an episode line per iteration; nothing learnt."""
    run_name = f"{args.env_id}__{args.exp_name}__{args.seed}__{int(time.time())}"
    writer = EventFileWriter(f"runs/{run_name}")
    quality = max(0.0, 1 - abs(math.log10(args.learning_rate) + 3) / 2)
    batch_size = args.num_envs * args.num_steps
    iterations = args.total_timesteps // batch_size
    for iteration in range(1, iterations + 1):
        global_step = iteration * batch_size
        episodic_return = 100 * quality * iteration / iterations + args.seed % 7
        print(f"global_step={global_step}, episodic_return={episodic_return}")
        scalar(writer, "charts/episodic_return", episodic_return, global_step)
    writer.close()


if __name__ == "__main__":
    train(parse_args())
