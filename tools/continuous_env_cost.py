"""An env's share of a continuous-action PPO iteration: the seconds its steps take in the benchmark's own regime (the
same number of envs and steps per iteration, the normalisers included, random actions, no policy), and for a JAX env
the seconds to compile them. Prints one JSON object.

    python tools/continuous_env_cost.py ENV [--num-envs 8] [--num-steps 256] [--calls 5] [--brax-backend mjx]

A JAX env (gymnax's or Brax's, ppo_continuous_linen.py's env code): one jitted `lax.scan` over the steps, timed
call by call after the first (which compiles). A Gymnasium env (MuJoCo's C engine, ppo_continuous_linen_gymnasium.py's
env code): the Python loop over the steps of its vector env."""
import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

GYMNASIUM_IDS = ("Hopper-v5", "Ant-v5")  # the MuJoCo envs; Pendulum-v1 is measured in JAX unless --gymnasium


def jax_cost(env_id: str, num_envs: int, num_steps: int, calls: int, brax_backend: str) -> dict:
    import functools

    import jax

    import ppo_continuous_linen as script

    start = time.perf_counter()
    env, env_params = script.make_env(env_id, brax_backend, 1000)
    space = env.action_space(env_params)
    reset = jax.jit(functools.partial(script.env_reset, env=env, env_params=env_params, num_envs=num_envs))
    obs, env_state, norm = reset(jax.random.PRNGKey(0))
    jax.block_until_ready(obs)
    reset_seconds = time.perf_counter() - start

    def step(carry, key):
        env_state, norm = carry
        action_key, step_key = jax.random.split(key)
        action = jax.random.uniform(action_key, (num_envs, *space.shape), minval=space.low, maxval=space.high)
        obs, env_state, norm, *_ = script.env_step(step_key, env_state, norm, action, env, env_params, 0.99)
        return (env_state, norm), obs.sum()

    @jax.jit
    def rollout(env_state, norm, key):
        return jax.lax.scan(step, (env_state, norm), jax.random.split(key, num_steps))

    seconds, key = [], jax.random.PRNGKey(1)
    for call in range(calls + 1):
        key, call_key = jax.random.split(key)
        start = time.perf_counter()
        (env_state, norm), sums = rollout(env_state, norm, call_key)
        jax.block_until_ready(sums)
        seconds.append(time.perf_counter() - start)
    return {"backend": "jax", "reset_compile_seconds": reset_seconds, "first_call_seconds": seconds[0],
            "seconds": seconds[1:]}


def gymnasium_cost(env_id: str, num_envs: int, num_steps: int, calls: int) -> dict:
    import numpy as np

    import ppo_continuous_linen_gymnasium as script

    envs = script.make_envs(env_id, num_envs, "sync")
    _, norm = script.env_reset(envs, 1)
    low, high = envs.single_action_space.low, envs.single_action_space.high
    rng, seconds = np.random.default_rng(0), []
    for call in range(calls + 1):
        start = time.perf_counter()
        for _ in range(num_steps):
            action = rng.uniform(low, high, (num_envs, *low.shape)).astype(np.float32)
            _, norm = script.env_step(norm, action, envs, 0.99)
        seconds.append(time.perf_counter() - start)
    envs.close()
    return {"backend": "gymnasium", "first_call_seconds": seconds[0], "seconds": seconds[1:]}


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(prog="tools/continuous_env_cost.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("env", help="a gymnax or Brax env id, or a Gymnasium MuJoCo one (Hopper-v5, Ant-v5)")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--num-steps", type=int, default=256)
    parser.add_argument("--calls", type=int, default=5, help="timed calls after the first")
    parser.add_argument("--brax-backend", default="mjx")
    parser.add_argument("--gymnasium", action="store_true", help="Gymnasium's env of this id (Pendulum-v1)")
    options = parser.parse_args(argv)
    if options.gymnasium or options.env in GYMNASIUM_IDS:
        cost = gymnasium_cost(options.env, options.num_envs, options.num_steps, options.calls)
    else:
        cost = jax_cost(options.env, options.num_envs, options.num_steps, options.calls, options.brax_backend)
    print(json.dumps({"env": options.env, "num_envs": options.num_envs, "num_steps": options.num_steps, **cost}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
