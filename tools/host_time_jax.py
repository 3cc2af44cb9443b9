"""Host time per call and per iteration of each JAX variant (Linen, NNX graph / cached / tree, Equinox).

Every variant is its own script, run unchanged in a fresh process (its own main block, default config unless told
otherwise) with its compile entry points wrapped: each outermost call of the script's rollout, compute_gae and update
records the host time until it returns (the work itself is asynchronous, so this is what the host spends dispatching
it), and the script's one host fetch per iteration (`jax.device_get`) marks the end of each iteration, as the script's
own `time/iteration` does. Per run: the median host time per call over the calls after the first, the first call
(tracing + compilation), and the iterations in the study's windows: iteration 0 (from the first compiled call to the
first fetch), the mean of iterations 1-7 and the median of iterations 8 onwards. The variants alternate, the order
reversed every other round, and the tables give the median over the rounds. Start-up is not measured here (the tool
imports the libraries before the script starts); the benchmark's own runs log it.

Timings mean something only on an otherwise idle machine (load average near 0, nothing else running):

    python tools/host_time_jax.py --rounds 3 --model-size small
    python tools/host_time_jax.py --rounds 3 --model-size medium --variants "Linen jax.jit" "Equinox jax.jit"
    python tools/host_time_jax.py --rounds 1 --num-iterations 3 --tiny   # a quick check that the tool runs
"""
import argparse
import json
import os
import runpy
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # the registry's package, when run as tools/host_time_jax.py

from sweep import variants  # noqa: E402 (after the path)

# label: (the registry's row, whose script runs with its flags; the entry points it compiles through, as
# "module:attribute"); a script not in the repository is skipped. For the bound variants, the binding is outermost:
# its calls are timed, not the nnx.jit inside. The NNX scripts compile GAE (arrays only) with jax.jit; Equinox
# compiles its all-array modules with jax.jit.
VARIANTS = {
    "Linen jax.jit": (variants.LINEN, ["jax:jit"]),
    "nnx.jit": (variants.NNX, ["flax.nnx:jit", "jax:jit"]),
    "nnx.cached_partial(nnx.jit)": (variants.NNX_CACHED, ["flax.nnx:cached_partial", "flax.nnx:jit", "jax:jit"]),
    "nnx.jit_partial (tree)": (variants.NNX_TREE, ["flax.nnx:jit_partial", "jax:jit"]),
    "Equinox jax.jit": (variants.EQUINOX, ["jax:jit"]),
}
CALLS = ("rollout", "compute_gae", "update")
TINY = ["--num-envs", "4", "--num-steps", "16", "--num-minibatches", "2", "--update-epochs", "2"]
STEADY_START = 8  # the first iteration of the study's steady-state window (iterations 8-99)


def measure(script: str, entry_points: list[str], script_args: list[str]) -> dict:
    """Run `script` as __main__ in this process with `entry_points` wrapped; return its timings in seconds."""
    import importlib.util

    import jax

    calls, fetches, depth = {}, [], [0]

    def timed(name, fun):
        def call(*args, **kwargs):
            if depth[0]:
                return fun(*args, **kwargs)
            depth[0] += 1
            start = time.perf_counter()
            try:
                return fun(*args, **kwargs)
            finally:
                calls.setdefault(name, []).append((start, time.perf_counter() - start))
                depth[0] -= 1

        call.__name__ = name
        return call

    def wrap(entry):
        def wrapped(fun, *args, **kwargs):
            name = getattr(getattr(fun, "func", fun), "__name__", None)
            compiled = entry(fun, *args, **kwargs)
            return timed(name, compiled) if name in CALLS else compiled  # not what a library compiles for itself

        return wrapped

    def device_get(tree):
        out = real_device_get(tree)
        fetches.append(time.perf_counter())
        return out

    # import what the scripts import before wrapping, so that library code decorated at import keeps the real entries
    for module in ("gymnax", "optax", "flax.nnx", "equinox"):
        if importlib.util.find_spec(module.split(".")[0]):
            importlib.import_module(module)
    for entry_point in entry_points:
        module_name, attribute = entry_point.split(":")
        module = importlib.import_module(module_name)
        setattr(module, attribute, wrap(getattr(module, attribute)))
    real_device_get, jax.device_get = jax.device_get, device_get
    sys.argv = [script, *script_args]
    runpy.run_path(script, run_name="__main__")

    first_start = min(calls[name][0][0] for name in CALLS if name in calls)
    iterations = [fetches[0] - first_start] + [b - a for a, b in zip(fetches, fetches[1:])]
    result = {"iteration_0": iterations[0], "iterations_1_7": statistics.mean(iterations[1:STEADY_START])}
    if len(iterations) > STEADY_START:
        result["iterations_steady"] = statistics.median(iterations[STEADY_START:])
    for name, timings in calls.items():
        result[f"{name}_calls"] = len(timings)
        result[f"{name}_first"] = timings[0][1]
        result[f"{name}_steady"] = statistics.median(seconds for _, seconds in timings[1:])
    return result


def run_variant(script: str, entry_points: list[str], script_args: list[str], log_dir: str, run_name: str) -> dict:
    """One fresh process of `script`; its timings. A script's own error line (bad input) is passed on as it is."""
    command = [
        sys.executable, os.path.abspath(__file__), "--measure", script, *entry_points, "--",
        *script_args, "--log-dir", log_dir, "--run-name", run_name,
    ]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    if result.returncode == 0 and lines:
        return json.loads(lines[-1][len("RESULT "):])
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    sys.exit(errors[-1] if errors else f"error: {script} failed:\n{result.stderr[-3000:]}")


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def calls_timed(runs: list[dict]) -> str:
    """How many calls of each function one run timed: one per iteration, or the wrapping went wrong."""
    counts = {" / ".join(str(run.get(f"{name}_calls", 0)) for name in CALLS) for run in runs}
    return ", ".join(sorted(counts))


def report(results: dict, num_iterations: int) -> str:
    """Medians over the rounds: host ms per call (after the first), the first calls and the iteration windows."""

    def median(label, key, scale):
        values = [run[key] for run in results[label] if key in run]
        return f"{statistics.median(values) * scale:.3g}" if values else "-"

    labels = list(results)
    per_call = [
        [f"{name} (ms per call)"] + [median(label, f"{name}_steady", 1e3) for label in labels] for name in CALLS
    ]
    first = [[f"{name} first call (s)"] + [median(label, f"{name}_first", 1) for label in labels] for name in CALLS]
    last = min(num_iterations, STEADY_START) - 1
    iteration = [
        ["iteration 0 (s)"] + [median(label, "iteration_0", 1) for label in labels],
        [f"iterations 1-{last}, mean (ms)"] + [median(label, "iterations_1_7", 1e3) for label in labels],
    ]
    if num_iterations > STEADY_START:
        iteration.append(
            [f"iterations {STEADY_START}-{num_iterations - 1}, median (ms)"]
            + [median(label, "iterations_steady", 1e3) for label in labels]
        )
    iteration.append(
        ["calls timed per run (" + " / ".join(CALLS) + ")"] + [calls_timed(results[label]) for label in labels]
    )
    rounds = min(len(runs) for runs in results.values())
    return (
        f"median over {rounds} round(s)\n\n" + table(["host time"] + labels, per_call) + "\n\n"
        + table(["first calls and iterations"] + labels, first + iteration)
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each variant (fresh processes, alternating)")
    parser.add_argument("--model-size", default="small", choices=["small", "medium", "large"])
    parser.add_argument("--env-id", default="CartPole-v1")
    parser.add_argument("--num-iterations", type=int, default=30, help="iterations per run (iteration 0 included)")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "gpu"])
    parser.add_argument("--tiny", action="store_true", help="the test suite's smallest config (checks the tool only)")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    args = parser.parse_args()
    if args.rounds < 1 or args.num_iterations < 2:
        sys.exit("error: --rounds must be at least 1 and --num-iterations at least 2")
    labels = [label for label in args.variants if os.path.exists(os.path.join(ROOT, VARIANTS[label][0].file))]
    for label in sorted(set(args.variants) - set(labels)):
        print(f"skipped {label}: {VARIANTS[label][0].file} is not in this repository", file=sys.stderr)
    script_args = [
        "--model-size", args.model_size, "--env-id", args.env_id, "--num-iterations", str(args.num_iterations),
        "--device", args.device, *(TINY if args.tiny else []),
    ]
    results = {label: [] for label in labels}
    with tempfile.TemporaryDirectory() as log_dir:
        for round_index in range(args.rounds):
            order = labels if round_index % 2 == 0 else labels[::-1]
            for label in order:
                row, entry_points = VARIANTS[label]
                run_name = f"{row.script}__{round_index}"
                results[label].append(run_variant(row.file, entry_points, [*row.flags, *script_args], log_dir,
                                                  run_name))
                print(f"round {round_index + 1}/{args.rounds}: {label} ({row.file}) done", file=sys.stderr, flush=True)
    print(report(results, args.num_iterations))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--measure":
        split = sys.argv.index("--")
        timings = measure(os.path.join(ROOT, sys.argv[2]), sys.argv[3:split], sys.argv[split + 1 :])
        print("RESULT " + json.dumps(timings), flush=True)
    else:
        main()
