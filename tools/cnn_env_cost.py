"""An env's share of a CNN PPO iteration (exp14): the seconds its steps take in the benchmark's own regime (the same
number of envs and steps per iteration, uniformly random actions, no policy), and for a JAX env the seconds to compile
them. Prints one JSON object, as tools/continuous_env_cost.py does.

    python tools/cnn_env_cost.py ENV [--num-envs 32] [--num-steps 256] [--calls 5]

A gymnax env (MinAtar's, ppo_linen.py's env code): one jitted `lax.scan` over the steps, timed call by call after the
first (which compiles). An Atari game (Breakout-v5, Pong-v5: ppo_atari_linen.py's env code, ale-py's vector env): the
Python loop over the steps, each handing back the frames and flags as the scripts take them."""
import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

ATARI_IDS = ("Breakout-v5", "Pong-v5")  # ppo_atari_linen.py's ALE_GAMES


def jax_cost(env_id: str, num_envs: int, num_steps: int, calls: int) -> dict:
    import functools

    import jax

    import ppo_linen as script

    start = time.perf_counter()
    env, env_params = script.make_env(env_id)
    num_actions = env.action_space(env_params).n
    reset = jax.jit(functools.partial(script.env_reset, env=env, env_params=env_params, num_envs=num_envs))
    obs, env_state = reset(jax.random.PRNGKey(0))
    jax.block_until_ready(obs)
    reset_seconds = time.perf_counter() - start

    def step(env_state, key):
        action_key, step_key = jax.random.split(key)
        action = jax.random.randint(action_key, (num_envs,), 0, num_actions)
        obs, env_state, reward, *_ = script.env_step(step_key, env_state, action, env, env_params)
        return env_state, obs.sum() + reward.sum()

    @jax.jit
    def rollout(env_state, key):
        return jax.lax.scan(step, env_state, jax.random.split(key, num_steps))

    seconds, key = [], jax.random.PRNGKey(1)
    for _ in range(calls + 1):
        key, call_key = jax.random.split(key)
        start = time.perf_counter()
        env_state, sums = rollout(env_state, call_key)
        jax.block_until_ready(sums)
        seconds.append(time.perf_counter() - start)
    return {"backend": "jax", "reset_compile_seconds": reset_seconds, "first_call_seconds": seconds[0],
            "seconds": seconds[1:]}


def atari_cost(env_id: str, num_envs: int, num_steps: int, calls: int) -> dict:
    import numpy as np

    import ppo_atari_linen as script

    envs = script.make_envs(env_id, num_envs)
    _, lives = script.env_reset(envs, 1)
    rng, num_actions, seconds = np.random.default_rng(0), envs.single_action_space.n, []
    for _ in range(calls + 1):
        start = time.perf_counter()
        for _ in range(num_steps):
            script.env_step(rng.integers(0, num_actions, num_envs), envs, lives)
        seconds.append(time.perf_counter() - start)
    envs.close()
    return {"backend": "ale", "first_call_seconds": seconds[0], "seconds": seconds[1:]}


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(prog="tools/cnn_env_cost.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("env", help="a gymnax env id (Breakout-MinAtar) or an Atari game (Breakout-v5, Pong-v5)")
    parser.add_argument("--num-envs", type=int, default=32)
    parser.add_argument("--num-steps", type=int, default=256)
    parser.add_argument("--calls", type=int, default=5, help="timed calls after the first")
    options = parser.parse_args(argv)
    cost = (atari_cost if options.env in ATARI_IDS else jax_cost)(options.env, options.num_envs, options.num_steps,
                                                                   options.calls)
    print(json.dumps({"env": options.env, "num_envs": options.num_envs, "num_steps": options.num_steps, **cost}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
