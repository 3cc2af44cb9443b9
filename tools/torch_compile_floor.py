"""What torch.compile can save in ppo_torch_compile.py, per call and per iteration, and what it costs to compile.

ppo_torch_compile.py compiles one function, `update_minibatch` (loss, gradients, clip and Adam, functional, in one
graph), and leaves the per-step policy eager. This tool times, on the default workload's shapes (minibatch 1024 rows,
32 envs per rollout step), for each model size: the minibatch update as ppo_torch.py runs it (eager: backward, clip,
fused Adam) against ppo_torch_compile.py's compiled one, and the policy step eager against compiled (caches off, as
the script runs):

  - the first compiled call (the cold compile) and the host time per call after it, eager against compiled,
    alternating blocks of calls (each block as many calls as one iteration makes: 80 minibatch updates, 256 policy
    steps; the large model's update, over a second per call on 2 CPU cores, in blocks of 8), the median block;
  - the saving per iteration and the break-even: how many iterations repay the compile time.

Each size runs in a fresh process, `--rounds` times, sizes alternating; the table gives medians with the range.
Timings mean something only on an otherwise idle machine (load average near 0, nothing else running):

    python tools/torch_compile_floor.py --rounds 3
    python tools/torch_compile_floor.py --rounds 1 --sizes small --blocks 1   # a quick check that the tool runs
"""
import argparse
import functools
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # the registry's package, when run as tools/torch_compile_floor.py

from sweep import variants  # noqa: E402 (after the path)

OBS_DIM, ACTIONS = 4, 2  # CartPole-v1
NUM_ENVS, NUM_STEPS, MINIBATCH, MINIBATCHES = 32, 256, 1024, 80  # the default workload: 10 epochs x 8 minibatches
# calls per timed block: one iteration's worth, except the large update (over a second per call on 2 CPU cores)
BLOCK_CALLS = {"small": {}, "medium": {}, "large": {"update_minibatch": 8}}
LOSS_KWARGS = dict(clip_coef=0.2, clip_vloss=True, norm_adv=True, ent_coef=0.01, vf_coef=0.5)


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def block_seconds(call, count):
    """Host seconds of `count` calls (torch on the CPU is synchronous)."""
    start = time.perf_counter()
    for _ in range(count):
        call()
    return time.perf_counter() - start


def measure(size: str, blocks: int) -> dict:
    """One fresh process: eager and compiled blocks of each function, alternating."""
    eager_m, m = load_script(variants.TORCH.script), load_script(variants.TORCH_COMPILE.script)
    torch = m.torch
    torch.compiler.config.force_disable_caches = True
    torch.set_float32_matmul_precision("highest")
    torch.manual_seed(1)
    args, batch_size = m.Args(model_size=size), NUM_ENVS * NUM_STEPS
    batch = m.Batch(
        torch.randn(batch_size, OBS_DIM), torch.randint(0, ACTIONS, (batch_size,), dtype=torch.int32),
        -torch.rand(batch_size), torch.randn(batch_size), torch.randn(batch_size), torch.randn(batch_size),
    )
    inds = torch.randperm(batch_size)[:MINIBATCH]
    updates = {}  # eager (ppo_torch.py) and compiled (ppo_torch_compile.py): each its own agent and optimizer
    for name, module, update_minibatch in (
        ("eager", eager_m, eager_m.update_minibatch), ("compiled", m, torch.compile(m.update_minibatch, fullgraph=True))
    ):
        agent = module.make_agent(OBS_DIM, ACTIONS, size, torch.device("cpu"))
        updates[name] = functools.partial(
            update_minibatch, inds, batch, agent=agent, optimizer=module.make_optimizer(agent, args),
            loss_fn=functools.partial(module.ppo_loss, **LOSS_KWARGS), max_grad_norm=0.5,
        )
    agent = m.make_agent(OBS_DIM, ACTIONS, size, torch.device("cpu"))
    obs, gumbel = torch.randn(NUM_ENVS, OBS_DIM), m.gumbel_noise(1, NUM_ENVS, ACTIONS, torch.device("cpu"))[0]
    compiled_policy = torch.compile(m.policy_step)
    functions = {  # name: (eager call, compiled call, calls per iteration, with gradients)
        "update_minibatch": (updates["eager"], updates["compiled"], MINIBATCHES, True),
        "policy_step": (
            lambda: m.policy_step(obs, gumbel, network=agent.act),
            lambda: compiled_policy(obs, gumbel, network=agent.act), NUM_STEPS, False,
        ),
    }
    result = {}
    for name, (eager, compiled, count, grad) in functions.items():
        with torch.set_grad_enabled(grad):
            eager()  # warm: lazy optimizer state, allocator
            compile_seconds = block_seconds(compiled, 1)
            eager_blocks, compiled_blocks = [], []
            calls = BLOCK_CALLS[size].get(name, count)
            for _ in range(blocks):
                eager_blocks.append(block_seconds(eager, calls))
                compiled_blocks.append(block_seconds(compiled, calls))
        result[name] = {
            "compile_s": compile_seconds, "calls_per_iteration": count,
            "eager_ms": 1000 * statistics.median(eager_blocks) / calls,
            "compiled_ms": 1000 * statistics.median(compiled_blocks) / calls,
        }
    return result


def spread(values, scale=1.0, digits=3):
    values = sorted(value * scale for value in values)
    return f"{statistics.median(values):.{digits}g} [{values[0]:.{digits}g}–{values[-1]:.{digits}g}]"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="fresh processes per size (default 3)")
    parser.add_argument("--sizes", nargs="+", default=["small", "medium", "large"], choices=["small", "medium", "large"])
    parser.add_argument("--blocks", type=int, default=3, help="alternating eager/compiled blocks per process (default 3)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.blocks < 1:
        print("error: --rounds and --blocks must be at least 1", file=sys.stderr)
        return 2
    if args.worker:
        print(json.dumps(measure(args.worker, args.blocks)))
        return 0
    with open("/proc/loadavg") if os.path.exists("/proc/loadavg") else open(os.devnull) as f:
        print(f"load average before: {f.read().strip() or 'unknown'}", flush=True)
    runs = {size: [] for size in args.sizes}
    for round_index in range(args.rounds):
        order = args.sizes if round_index % 2 == 0 else args.sizes[::-1]
        for size in order:
            print(f"round {round_index + 1}/{args.rounds}: {size} ...", flush=True)
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", size, "--blocks",
                                  str(args.blocks)], capture_output=True, text=True)
            if out.returncode != 0:
                print(f"error: the {size} worker failed: {out.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
                return 1
            runs[size].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print("\n| size | function | calls per iteration | eager ms per call | compiled ms per call | compiled / eager "
          "| cold compile s | saving per iteration s | break-even iterations |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for size, results in runs.items():
        for name in results[0]:
            rows = [result[name] for result in results]
            count = rows[0]["calls_per_iteration"]
            savings = [count * (row["eager_ms"] - row["compiled_ms"]) / 1000 for row in rows]
            even = [row["compile_s"] / saving if saving > 0 else float("inf") for row, saving in zip(rows, savings)]
            print(f"| {size} | `{name}` | {count} | {spread([r['eager_ms'] for r in rows])} "
                  f"| {spread([r['compiled_ms'] for r in rows])} "
                  f"| {spread([r['compiled_ms'] / r['eager_ms'] for r in rows])} "
                  f"| {spread([r['compile_s'] for r in rows])} | {spread(savings)} "
                  f"| {'never' if all(e == float('inf') for e in even) else spread(even)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
