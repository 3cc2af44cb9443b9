"""A stand-in written the way CleanRL's scripts are now, for tune.py's tests of scripts that are not ours: a tyro
`Args` dataclass, its own run name, TensorBoard events under runs/{run_name} of the working folder, CleanRL's episode
lines and no iteration line. It trains nothing: tests/ppo_cleanrl_argparse.py's `train`, with tyro's flags."""
import os
from dataclasses import dataclass

import tyro

from ppo_cleanrl_argparse import train  # the same training stand-in, beside it in tests/


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


if __name__ == "__main__":
    train(tyro.cli(Args))
