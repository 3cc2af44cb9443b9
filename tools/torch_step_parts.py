"""Where one rollout step of ppo_torch.py (or ppo_torch_native.py) goes on the CPU: its parts timed apart against the
whole step.

ppo_torch.py steps a gymnax env in JAX and acts with a torch policy, handing arrays across once each way per step.
This tool loads the script's own functions (policy_step, env_step under jax.jit with its carry donated, unpack_step),
builds them as main() does for --device cpu and times, per call, on the default workload's shapes (32 envs):

  - policy_step: the actor's forward and Gumbel-max sampling, under torch.no_grad as in the rollout;
  - the action as a NumPy view (how the action crosses to JAX on the CPU);
  - the jitted env step, its result awaited each call (the rollout must have it before the next action);
  - torch.from_dlpack of a ready packed step, its copy into the storage and unpack_step's views;
  - the whole step: the same calls in one loop, as rollout() makes them.

With --script ppo_torch_native the parts are those of its env written in torch: policy_step, the env's dynamics
(env.step), its flags and reward (env.terminated, env.reward), the reset states (reset_state) and the episode
tracking (track_episodes); the whole step is rollout_step as the eager mode runs it, and one more row the same step
compiled (torch.compile, as --compile runs it).

Each row is a block of --calls calls; the rows alternate within each of --rounds rounds, the order reversed every other
round, after one warm-up block each. The table gives the median over the rounds of the microseconds per call, with the
range, the sum of the parts' medians, and the whole step over that sum. Timings mean something only on an otherwise
idle machine (load average near 0, nothing else running):

    python tools/torch_step_parts.py --rounds 5 --calls 2000
    python tools/torch_step_parts.py --script ppo_torch_native --rounds 5 --calls 2000
    python tools/torch_step_parts.py --rounds 2 --calls 20   # a quick check that the tool runs
"""
import argparse
import functools
import importlib.util
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # the registry's package, when run as tools/torch_step_parts.py

from sweep import variants  # noqa: E402 (after the path)



def load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Steps:
    """ppo_torch.py's rollout pieces on the CPU, built as its main() builds them, and the state they carry."""

    VARIANT = variants.TORCH  # whose step
    PARTS = {  # label: the method that times it
        "`policy_step` (actor forward, Gumbel-max sampling)": "policy",
        "the action as a NumPy view": "action_view",
        "the jitted env step, its result awaited": "env_step_awaited",
        "`torch.from_dlpack` of the packed step, the copy into the storage, the views": "from_dlpack",
    }
    EXTRA = {}  # rows timed beside the whole step, not parts of it

    def __init__(self, env_id: str, model_size: str, num_envs: int, calls: int):
        self.m = m = load_script(self.VARIANT.script)
        jax, jnp, torch = m.jax, m.jnp, m.torch
        device, torch_device = m.select_device("cpu")
        jax.config.update("jax_default_device", device)
        torch.set_float32_matmul_precision("highest")
        key, env_key = jax.random.split(jax.random.PRNGKey(1))
        torch.manual_seed(1)
        env, env_params = m.gymnax.make(env_id)
        step, env_state = m.env_reset(env_key, env, env_params, num_envs)
        self.obs = m.unpack_step(torch.from_dlpack(step))[0]
        num_actions = env.action_space(env_params).n
        agent = m.make_agent(self.obs.shape[1], num_actions, model_size, torch_device)
        zeros = jnp.zeros(num_envs)
        stats = m.EpisodeStats(zeros, zeros.astype(jnp.int32), jnp.zeros(()), jnp.zeros(()), jnp.zeros(()))
        self.env_carry = jax.device_put(m.EnvCarry(key, env_state, stats), device)
        self.policy_fn = functools.partial(m.policy_step, network=agent.act)
        self.env_step_fn = jax.jit(functools.partial(m.env_step, env=env, env_params=env_params), donate_argnums=0)
        self.gumbel = m.gumbel_noise(calls, num_envs, num_actions, torch_device)
        self.storage = torch.empty(calls, num_envs, 2 * self.obs.shape[1] + 3)
        self.action = self.policy_fn(self.obs, self.gumbel[0])[0]
        self.env_carry, self.ready_step = self.env_step_fn(self.env_carry, self.action.numpy())
        jax.block_until_ready(self.ready_step)

    def policy(self, t: int):
        self.action = self.policy_fn(self.obs, self.gumbel[t])[0]

    def action_view(self, t: int):
        self.action.numpy()

    def env_step_awaited(self, t: int):
        # a fresh view each call, as each rollout step passes one (JAX takes in a new host buffer each time): the
        # view's own row, under 1 us, is counted here again
        self.env_carry, step = self.env_step_fn(self.env_carry, self.action.numpy())
        self.m.jax.block_until_ready(step)

    def from_dlpack(self, t: int):
        self.storage[t] = self.m.torch.from_dlpack(self.ready_step)
        self.m.unpack_step(self.storage[t])

    def whole_step(self, t: int):
        action = self.policy_fn(self.obs, self.gumbel[t])[0]
        self.env_carry, step = self.env_step_fn(self.env_carry, action.numpy())
        self.storage[t] = self.m.torch.from_dlpack(step)
        self.obs = self.m.unpack_step(self.storage[t])[0]


class NativeSteps:
    """ppo_torch_native.py's rollout pieces on the CPU, built as its main() builds them, and the state they carry."""

    VARIANT = variants.TORCH_NATIVE
    ENVS = ("CartPole-v1", "Acrobot-v1", "MountainCar-v0")  # the envs written in torch
    PARTS = {
        "`policy_step` (actor forward, Gumbel-max sampling)": "policy",
        "the env's dynamics (`env.step`)": "dynamics",
        "its flags and reward (`env.terminated`, `env.reward`)": "flags",
        "the reset states (`reset_state`)": "reset",
        "the episode tracking (`track_episodes`)": "track",
    }
    EXTRA = {"the whole step compiled (`rollout_step` under torch.compile)": "compiled_step"}

    def __init__(self, env_id: str, model_size: str, num_envs: int, calls: int):
        self.m = m = load_script(self.VARIANT.script)
        torch = m.torch
        torch.set_float32_matmul_precision("highest")
        torch.manual_seed(1)
        self.env = m.ENVS[env_id]()
        step, state = m.env_reset(self.env, num_envs, torch.Generator().manual_seed(1))
        self.obs = m.unpack_step(step)[0]
        agent = m.make_agent(self.obs.shape[1], self.env.num_actions, model_size, torch.device("cpu"))
        zeros = torch.zeros(num_envs)
        stats = m.EpisodeStats(zeros, zeros.int(), *(torch.zeros(()) for _ in range(3)))
        self.env_carry = m.EnvCarry(state, zeros.int(), stats)
        self.policy_fn = functools.partial(m.policy_step, actor=agent.actor)
        self.step_fn = functools.partial(m.rollout_step, actor=agent.actor, env=self.env)
        self.compiled_fn = functools.partial(torch.compile(m.rollout_step, fullgraph=True), actor=agent.actor,
                                             env=self.env)
        self.gumbel = m.gumbel_noise(calls, num_envs, self.env.num_actions, torch.device("cpu"))
        self.noise = torch.rand(calls, num_envs, self.env.state_dim)
        self.action = self.policy_fn(self.obs, self.gumbel[0])[0]
        self.no_reward, self.none_done = zeros, zeros.bool()

    def policy(self, t: int):
        self.action = self.policy_fn(self.obs, self.gumbel[t])[0]

    def dynamics(self, t: int):
        self.env.step(self.env_carry.state, self.action)

    def flags(self, t: int):
        state = self.env_carry.state
        self.env.terminated(state), self.env.reward(state, state)

    def reset(self, t: int):
        self.m.reset_state(self.env, self.noise[t])

    def track(self, t: int):
        self.m.track_episodes(self.env_carry.stats, self.no_reward, self.none_done)

    def whole_step(self, t: int):
        _, _, self.env_carry, step = self.step_fn(self.obs, self.env_carry, self.gumbel[t], self.noise[t])
        self.obs = self.m.unpack_step(step)[0]

    def compiled_step(self, t: int):
        _, _, self.env_carry, step = self.compiled_fn(self.obs, self.env_carry, self.gumbel[t], self.noise[t])
        self.obs = self.m.unpack_step(step)[0]


SCRIPTS = {steps.VARIANT.script: steps for steps in (Steps, NativeSteps)}  # --script: the first the default
WHOLE = "the whole step, the same calls in one loop"


def block_microseconds(call, calls: int) -> float:
    """Microseconds per call over a block of `calls` calls (torch on the CPU is synchronous; JAX's wait is explicit)."""
    start = time.perf_counter()
    for t in range(calls):
        call(t)
    return 1e6 * (time.perf_counter() - start) / calls


def measure(steps: Steps, rounds: int, calls: int) -> dict:
    """{label: [microseconds per call, one per round]}, the rows alternating, the order reversed every other round."""
    labels = [*steps.PARTS, WHOLE, *steps.EXTRA]
    methods = {label: getattr(steps, {**steps.PARTS, **steps.EXTRA}.get(label, "whole_step")) for label in labels}
    with steps.m.torch.no_grad():
        for label in labels:  # warm-up: compilation, lazy set-up, the allocator
            block_microseconds(methods[label], calls)
        times = {label: [] for label in labels}
        for round_index in range(rounds):
            for label in labels if round_index % 2 == 0 else labels[::-1]:
                times[label].append(block_microseconds(methods[label], calls))
            print(f"round {round_index + 1}/{rounds} done", file=sys.stderr, flush=True)
    return times


def spread(values: list) -> str:
    return f"{statistics.median(values):.1f} [{min(values):.1f}–{max(values):.1f}]"


def table(times: dict, steps) -> list:
    """The markdown table's lines: each part, the sum of the parts' medians, the whole step and its ratio to the sum,
    then the rows timed beside the step."""
    parts_sum = sum(statistics.median(times[label]) for label in steps.PARTS)
    whole = statistics.median(times[WHOLE])
    lines = ["| part of one rollout step | µs per call, median [range over rounds] |", "| --- | --- |"]
    lines += [f"| {label} | {spread(times[label])} |" for label in steps.PARTS]
    lines += [f"| **sum of the parts** | **{parts_sum:.1f}** |", f"| {WHOLE} | {spread(times[WHOLE])} |",
              f"| the whole step / the sum of the parts | {whole / parts_sum:.2f} |"]
    return lines + [f"| {label} | {spread(times[label])} |" for label in steps.EXTRA]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = next(iter(SCRIPTS))
    parser.add_argument("--script", default=default, choices=list(SCRIPTS), help=f"whose step (default {default})")
    parser.add_argument("--env-id", default="CartPole-v1", help="a gymnax env with discrete actions (default CartPole-v1)")
    parser.add_argument("--model-size", default="small", choices=["small", "medium", "large"])
    parser.add_argument("--num-envs", type=int, default=32, help="envs stepped per call (default 32)")
    parser.add_argument("--calls", type=int, default=2000, help="calls per timed block (default 2000)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds of blocks (default 5)")
    args = parser.parse_args(argv)
    if min(args.num_envs, args.calls, args.rounds) < 1:
        print("error: --num-envs, --calls and --rounds must be at least 1", file=sys.stderr)
        return 2
    steps_class = SCRIPTS[args.script]
    if steps_class is NativeSteps:
        if args.env_id not in NativeSteps.ENVS:
            *others, last = NativeSteps.ENVS
            print(f"error: --env-id {args.env_id}: {NativeSteps.VARIANT.file} has {', '.join(others)} and {last}",
                  file=sys.stderr)
            return 2
    else:
        import gymnax  # after the argument checks: importing JAX takes seconds

        if args.env_id not in gymnax.registered_envs:
            print(f"error: unknown env '{args.env_id}': not a registered gymnax environment", file=sys.stderr)
            return 2
    with open("/proc/loadavg") if os.path.exists("/proc/loadavg") else open(os.devnull) as f:
        print(f"load average before: {f.read().strip() or 'unknown'}", flush=True)
    steps = steps_class(args.env_id, args.model_size, args.num_envs, args.calls)
    times = measure(steps, args.rounds, args.calls)
    print(f"\n{args.script}.py, {args.env_id}, {args.num_envs} envs, {args.model_size}, {args.rounds} rounds of "
          f"{args.calls} calls\n")
    print("\n".join(table(times, steps)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
