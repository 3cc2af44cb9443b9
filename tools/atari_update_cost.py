"""The seconds of one PPO update of the Nature CNN (exp14's Atari workload: 8 envs x 128 steps, 4 epochs of 4
minibatches) by each way a CPU can convolve it, the scripts' own update functions on one random batch of frames.
Prints one JSON object, as tools/cnn_env_cost.py does.

    python tools/atari_update_cost.py WAY [--calls 3]
    XLA_FLAGS=--xla_cpu_use_onednn=true python tools/atari_update_cost.py xla

WAY: `patches` (ppo_atari_linen.py as it is: the patches sliced, times the kernel), `xla` (the same update with
nn.Conv's own lax.conv_general_dilated: XLA:CPU's convolution, which XLA_FLAGS may hand to oneDNN), or `torch`
(ppo_atari_torch.py's eager update: nn.Conv2d, oneDNN's). The first call compiles (JAX) or warms up (torch); the
calls after it are the steady update. Time whole processes, taken in turn (docs/method.md)."""
import argparse
import functools
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

WAYS = ("patches", "xla", "torch")
FRAME, ACTION_DIM = (4, 84, 84), 4  # Breakout-v5's stacked frames and actions


def random_rollout(num_steps: int, num_envs: int) -> dict:
    """A rollout's arrays as the scripts store them (frames uint8), seeded."""
    rng = np.random.default_rng(0)
    return {"obs": rng.integers(0, 256, (num_steps, num_envs, *FRAME), dtype=np.uint8),
            "actions": rng.integers(0, ACTION_DIM, (num_steps, num_envs)).astype(np.int32),
            "logprobs": np.full((num_steps, num_envs), -np.log(ACTION_DIM), np.float32),
            "values": rng.normal(size=(num_steps, num_envs)).astype(np.float32),
            "advantages": rng.normal(size=(num_steps, num_envs)).astype(np.float32),
            "returns": rng.normal(size=(num_steps, num_envs)).astype(np.float32)}


def jax_update(way: str, arrays: dict):
    """A call of ppo_atari_linen.py's compiled update, with its convolution (`patches`) or XLA's (`xla`)."""
    import jax
    import jax.numpy as jnp
    from flax.training.train_state import TrainState

    import ppo_atari_linen as script

    jax.config.update("jax_default_matmul_precision", "highest")  # as the script's main() sets it
    if way == "xla":
        script.conv_as_matmul = jax.lax.conv_general_dilated  # what nn.Conv calls when the scripts pass nothing
    args = script.Args()
    agent, params = script.make_agent(jax.random.PRNGKey(1), FRAME, ACTION_DIM)
    state = TrainState.create(apply_fn=agent.apply, params=params, tx=script.make_optimizer(args))
    zeros = jnp.zeros(arrays["values"].shape)
    storage = script.Storage(*(jnp.asarray(arrays[name]) for name in ("obs", "actions", "logprobs", "values")),
                             zeros, zeros)
    update = jax.jit(functools.partial(script.update, agent=agent, args=args))
    advantages, returns = jnp.asarray(arrays["advantages"]), jnp.asarray(arrays["returns"])

    def call(key):
        _, infos, explained_var = update(state, storage, advantages, returns, jax.random.PRNGKey(key))
        jax.block_until_ready(explained_var)

    return call


def torch_update(arrays: dict):
    """A call of ppo_atari_torch.py's eager update on the same batch."""
    import torch

    import ppo_atari_torch as script

    torch.set_float32_matmul_precision("highest")
    torch.manual_seed(1)
    args = script.Args()
    agent = script.make_agent(FRAME, ACTION_DIM, torch.device("cpu"))
    optimizer = script.make_optimizer(agent, args)
    storage = script.Storage(*(torch.from_numpy(arrays[name]) for name in ("obs", "actions", "logprobs", "values")),
                             *(torch.zeros(arrays["values"].shape) for _ in range(2)))
    loss_fn = functools.partial(script.ppo_loss, clip_coef=args.clip_coef, clip_vloss=args.clip_vloss,
                                norm_adv=args.norm_adv, ent_coef=args.ent_coef, vf_coef=args.vf_coef)
    minibatch_fn = functools.partial(script.update_minibatch, agent=agent, optimizer=optimizer, loss_fn=loss_fn,
                                     max_grad_norm=args.max_grad_norm)
    advantages, returns = torch.from_numpy(arrays["advantages"]), torch.from_numpy(arrays["returns"])
    return lambda key: script.update(storage, advantages, returns, minibatch_fn, args)


class Parser(argparse.ArgumentParser):
    """Bad input: one `error:` line on stderr and exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv=None) -> int:
    parser = Parser(prog="atari_update_cost.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("way", choices=WAYS, help="how the update convolves")
    parser.add_argument("--calls", type=int, default=3, help="steady calls after the first (default 3)")
    options = parser.parse_args(argv)
    if options.calls < 1:
        parser.error("--calls must be at least 1")
    arrays = random_rollout(128, 8)
    call = torch_update(arrays) if options.way == "torch" else jax_update(options.way, arrays)
    seconds = []
    for key in range(options.calls + 1):
        start = time.perf_counter()
        call(key)
        seconds.append(time.perf_counter() - start)
    print(json.dumps({"way": options.way, "xla_flags": os.environ.get("XLA_FLAGS", ""), "first_call_seconds":
                      seconds[0], "seconds": seconds[1:], "median_seconds": float(np.median(seconds[1:]))}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
