"""A stand-in written the way CleanRL's scripts are now, for tune.py's tests of scripts that are not ours: a tyro
`Args` dataclass, its own run name, TensorBoard events under runs/{run_name} of the working folder, CleanRL's episode
lines and no iteration line. It trains nothing: tests/ppo_cleanrl_argparse.py's rule, with tyro's flags."""
import math
import os
import time
from dataclasses import dataclass

import tyro
from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter


@dataclass
class Args:
    exp_name: str = os.path.basename(__file__)[: -len(".py")]
    """the name of this experiment"""
    seed: int = 1
    """seed of the experiment"""
    env_id: str = "CartPole-v1"
    """the id of the environment"""
    total_timesteps: int = 2048
    """total timesteps of the experiments"""
    learning_rate: float = 2.5e-4
    """the learning rate of the optimizer"""
    num_envs: int = 4
    """the number of parallel game environments"""
    num_steps: int = 128
    """the number of steps per policy rollout"""
    gamma: float = 0.99
    """the discount factor gamma"""
    gae_lambda: float = 0.95
    """the lambda for the general advantage estimation"""
    num_minibatches: int = 4
    """the number of mini-batches"""
    update_epochs: int = 4
    """the K epochs to update the policy"""
    clip_coef: float = 0.2
    """the surrogate clipping coefficient"""
    ent_coef: float = 0.01
    """coefficient of the entropy"""
    vf_coef: float = 0.5
    """coefficient of the value function"""
    max_grad_norm: float = 0.5
    """the maximum norm for the gradient clipping"""


def scalar(writer, tag, value, step):
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)])
    writer.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary))


if __name__ == "__main__":
    args = tyro.cli(Args)
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
