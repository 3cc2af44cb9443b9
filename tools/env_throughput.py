"""Env-steps per second of each env backend against the number of envs N: the env alone, uniformly random actions.

Backends, each stepping N copies of one env (env-steps = steps x N):
  - sync: Gymnasium's SyncVectorEnv (`gymnasium.make_vec(..., vectorization_mode="sync")`), a Python loop over N envs;
  - async: Gymnasium's AsyncVectorEnv (`vectorization_mode="async"`), one subprocess per env, measured only up to
    `--async-max-envs` (thousands of processes do not fit the machine): the larger N are reported as skipped;
  - numpy: the env's NumPy-vectorised vector env (`vectorization_mode="vector_entry_point"`: Gymnasium's
    CartPoleVectorEnv, doors.DoorsVectorEnv);
  - jax-step: the gymnax env, `jax.vmap` of env.step (which auto-resets) with the random actions drawn inside, jitted
    with its carry (obs, env state, key, the last reward and done, a step counter) donated, called once per step;
  - jax-scan: the same step inside `jax.lax.scan`: a whole timed run is one compiled call.
Envs: CartPole-v1 (gymnax's and Gymnasium's) and doors:Doors-v0 (the repository's Doors, both backends).

Method: every backend x env runs in a fresh process of this tool (`--worker`), one after the other, so that no JAX
thread pool or subprocess of another measurement runs beside it; the worker measures each N in turn. Per N: the env is
made and reset (setup, not timed with the steps), one step is timed as the first call (JAX: tracing and compilation
included) and one more as the warm step; if the warm step takes over `--max-step-seconds`, that N is skipped with a
note. Otherwise each of `--repeats` timed runs steps for at least `--seconds`: its number of steps is planned from the
warm step, and a run that ends sooner is discarded (its steps counted as warm-up) and redone with more steps
(jax-scan compiles and runs each new length once before timing it). The Gymnasium actions are drawn inside the timed
loop (one `np.random.Generator.integers` call per step for all envs); a JAX run is waited for (`block_until_ready`)
before the clock stops. The median over the repeats is reported, with the min-max.

Writes into --out: env_throughput.json (every measurement and the machine), env_throughput.png (log-log, one panel per
env, one line per backend) and REPORT.md (the answer first: the fastest backend at each N and where one backend
overtakes another). Timings mean something only on an otherwise idle machine (load average near 0):

    python tools/env_throughput.py --out results/env-throughput
    python tools/env_throughput.py --out /tmp/env-throughput --num-envs 1 4 --seconds 0.05 --repeats 1 \\
        --async-max-envs 2   # a quick check that the tool runs
"""
import argparse
import datetime
import importlib
import importlib.metadata
import itertools
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, NamedTuple

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROG = "env_throughput.py"
BACKENDS = ("sync", "async", "numpy", "jax-step", "jax-scan")
ENVS = ("CartPole-v1", "doors:Doors-v0")
VECTORIZATION = {"sync": "sync", "async": "async", "numpy": "vector_entry_point"}
PACKAGES = ("jax", "jaxlib", "gymnax", "gymnasium", "numpy")
NUM_ENVS = (1, 8, 64, 512, 4096, 32768)
RESULT = "RESULT "
MARGIN = 1.2  # a run is planned to last this much more than --seconds


# WORKER: one backend x env, every N in turn, one JSON line per N on stdout
class Carry(NamedTuple):
    """What a compiled JAX step carries from one step to the next (reward and done kept so that XLA computes them, as
    an agent would need them; steps counts the steps on the device)."""
    obs: Any
    env_state: Any
    key: Any
    reward: Any
    done: Any
    steps: Any


class GymnasiumCarry(NamedTuple):
    envs: Any
    rng: np.random.Generator
    num_actions: int


class Setup(NamedTuple):
    """A backend ready to step: run(carry, steps) -> carry returns once the steps are done."""
    run: Callable
    carry: Any
    compiles_per_length: bool  # a new number of steps compiles a new function (jax-scan)
    close: Callable
    device: str
    counted: Callable  # carry -> the steps the backend counted itself, or None


class Timing(NamedTuple):
    steps: int
    seconds: float


def gymnasium_run(carry: GymnasiumCarry, steps: int) -> GymnasiumCarry:
    """`steps` steps of every env, the random actions drawn in the loop."""
    for _ in range(steps):
        carry.envs.step(carry.rng.integers(0, carry.num_actions, carry.envs.num_envs))
    return carry


def gymnasium_setup(backend: str, env_id: str, num_envs: int) -> Setup:
    import gymnasium as gym

    envs = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode=VECTORIZATION[backend])
    envs.reset(seed=0)
    carry = GymnasiumCarry(envs, np.random.default_rng(0), int(envs.single_action_space.n))
    return Setup(gymnasium_run, carry, False, envs.close, "cpu (NumPy)", lambda carry: None)


def make_gymnax(env_id: str):
    """gymnax's env and its params; for `module:EnvId`, the module's make_gymnax(EnvId), as the scripts do."""
    import gymnax

    if ":" in env_id:
        module, name = env_id.split(":", 1)
        return importlib.import_module(module).make_gymnax(name)
    return gymnax.make(env_id)


def transition(env, env_params, num_envs: int, num_actions: int) -> Callable:
    """One step of the N envs on random actions drawn from the carry's key: Carry -> Carry."""
    import jax
    import jax.numpy as jnp

    def step(carry: Carry) -> Carry:
        key, action_key, step_key = jax.random.split(carry.key, 3)
        action = jax.random.randint(action_key, (num_envs,), 0, num_actions)
        obs, env_state, reward, terminated, truncated, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            jax.random.split(step_key, num_envs), carry.env_state, action, env_params)
        # the reward as float32, not weakly typed (gymnax's CartPole's is): the carry keeps one type, one compilation
        return Carry(obs, env_state, key, reward.astype(jnp.float32), terminated | truncated, carry.steps + 1)

    return step


def stepwise(step: Callable) -> Callable:
    """jax-step: the jitted step called from Python once per step, the carry donated."""
    import jax

    compiled = jax.jit(step, donate_argnums=0)

    def run(carry: Carry, steps: int) -> Carry:
        for _ in range(steps):
            carry = compiled(carry)
        return jax.block_until_ready(carry)

    return run


def scanned(step: Callable) -> Callable:
    """jax-scan: `steps` steps in one compiled call (one compilation per number of steps)."""
    import jax

    def rollout(carry: Carry, steps: int) -> Carry:
        return jax.lax.scan(lambda inner, _: (step(inner), None), carry, length=steps)[0]

    compiled = jax.jit(rollout, static_argnums=1, donate_argnums=0)
    return lambda carry, steps: jax.block_until_ready(compiled(carry, steps))


def jax_setup(backend: str, env_id: str, num_envs: int) -> Setup:
    import jax
    import jax.numpy as jnp

    env, env_params = make_gymnax(env_id)
    step = transition(env, env_params, num_envs, env.action_space(env_params).n)

    def initial_carry(key) -> Carry:
        key, reset_key = jax.random.split(key)
        obs, env_state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(reset_key, num_envs), env_params)
        return Carry(obs, env_state, key, jnp.zeros(num_envs, jnp.float32), jnp.zeros(num_envs, bool), jnp.int32(0))

    run = stepwise(step) if backend == "jax-step" else scanned(step)
    device = jax.devices()[0]
    return Setup(run, jax.block_until_ready(jax.jit(initial_carry)(jax.random.key(0))), backend == "jax-scan",
                 lambda: None, f"{device.platform}: {device.device_kind}", lambda carry: int(carry.steps))


def timed(run: Callable, carry, steps: int) -> tuple[Any, float]:
    start = time.perf_counter()
    carry = run(carry, steps)
    return carry, time.perf_counter() - start


def rescaled(steps: int, elapsed: float, seconds: float) -> int:
    """The steps a run needs to last `seconds` (with a margin), from one that ran `steps` in `elapsed`."""
    if elapsed <= 0:
        return steps * 10
    return max(steps + 1, math.ceil(steps * seconds * MARGIN / elapsed))


def timed_repeat(run: Callable, carry, steps: int, seconds: float, compiles_per_length: bool):
    """One timed run of at least `seconds`; a shorter one is redone with more steps. Returns the carry, the Timing
    and the steps run outside it (warm-up)."""
    warmup_steps = 0
    carry, elapsed = timed(run, carry, steps)
    while elapsed < seconds:
        warmup_steps += steps
        steps = rescaled(steps, elapsed, seconds)
        if compiles_per_length:
            carry = run(carry, steps)
            warmup_steps += steps
        carry, elapsed = timed(run, carry, steps)
    return carry, Timing(steps, elapsed), warmup_steps


def measure(run: Callable, carry, num_envs: int, seconds: float, repeats: int, max_step_seconds: float,
            compiles_per_length: bool) -> tuple[dict, Any]:
    """The first call, the warm step and the timed repeats of one backend at N = num_envs; the record and the
    carry."""
    carry, first_call = timed(run, carry, 1)
    carry, warm_step = timed(run, carry, 1)
    record = {"first_call_seconds": first_call, "warm_step_seconds": warm_step}
    if warm_step > max_step_seconds:
        note = f"one step took {warm_step:.3g} s at warm-up, over --max-step-seconds {max_step_seconds:g}"
        return {**record, "status": "skipped", "note": note}, carry
    steps, warmup_steps, timings = rescaled(1, warm_step, seconds), 2, []
    if compiles_per_length:
        carry = run(carry, steps)
        warmup_steps += steps
    for _ in range(repeats):
        carry, timing, wasted = timed_repeat(run, carry, steps, seconds, compiles_per_length)
        steps, warmup_steps = timing.steps, warmup_steps + wasted
        timings.append(timing)
    rates = [timing.steps * num_envs / timing.seconds for timing in timings]
    return {**record, "status": "ok", "warmup_steps": warmup_steps,
            "repeat_steps": [timing.steps for timing in timings],
            "repeat_seconds": [timing.seconds for timing in timings],
            "env_steps_per_second": {"median": statistics.median(rates), "min": min(rates), "max": max(rates)}}, carry


def measure_backend(backend: str, env_id: str, num_envs: int, seconds: float, repeats: int,
                    max_step_seconds: float) -> dict:
    """Set up one backend x env at N = num_envs, measure it and close it: the JSON record."""
    start = time.perf_counter()
    setup = (jax_setup if backend.startswith("jax") else gymnasium_setup)(backend, env_id, num_envs)
    setup_seconds = time.perf_counter() - start
    record, carry = measure(setup.run, setup.carry, num_envs, seconds, repeats, max_step_seconds,
                            setup.compiles_per_length)
    counted = setup.counted(carry)
    setup.close()
    record = {"backend": backend, "env": env_id, "num_envs": num_envs, "device": setup.device,
              "setup_seconds": setup_seconds, **record}
    return record if counted is None else {**record, "device_steps": counted}


def worker(argv: list[str]):
    parser = Parser(prog=PROG, description="one backend x env, every N in turn (started by the tool itself)")
    parser.add_argument("backend", choices=BACKENDS)
    parser.add_argument("env", choices=ENVS)
    add_protocol_arguments(parser)
    args = parser.parse_args(argv)
    sys.path.insert(0, ROOT)  # the envs the repository ships (doors) import from its root
    for num_envs in args.num_envs:
        record = measure_backend(args.backend, args.env, num_envs, args.seconds, args.repeats, args.max_step_seconds)
        print(RESULT + json.dumps(record), flush=True)


# PARENT: one worker per backend x env, then the JSON, the chart and the report
class Job(NamedTuple):
    backend: str
    env: str
    num_envs: list[int]  # the N the worker measures
    skipped: list[dict]  # the N it does not, with the reason


class Crossover(NamedTuple):
    """`leader` beats `follower` at every common N from `num_envs` on, not at the common N before it; `ratio` is
    leader / follower at the largest common N, `at_num_envs`."""
    leader: str
    follower: str
    num_envs: int
    ratio: float
    at_num_envs: int


def crossovers(curves: dict[str, dict[int, float]]) -> list[Crossover]:
    """Every pair of backends whose curves (backend -> {N: env-steps per second}) cross: the smallest measured N from
    which one beats the other at every larger common N. A backend ahead at every common N does not cross; a tie at
    the largest common N leaves the pair uncrossed. Sorted by N, then by names."""
    found = []
    for leader, follower in itertools.permutations(curves, 2):
        common = sorted(set(curves[leader]) & set(curves[follower]))
        ahead = [curves[leader][n] > curves[follower][n] for n in common]
        if not ahead or all(ahead) or not ahead[-1]:
            continue
        first = len(ahead) - ahead[::-1].index(False)
        last = common[-1]
        found.append(Crossover(leader, follower, common[first], curves[leader][last] / curves[follower][last], last))
    return sorted(found, key=lambda crossover: (crossover.num_envs, crossover.leader, crossover.follower))


def fastest(curves: dict[str, dict[int, float]]) -> list[tuple[str, int, int]]:
    """The fastest backend at each measured N, as runs (backend, first N, last N) of consecutive N."""
    runs = []
    for n in sorted(set().union(*curves.values())):
        best = max((backend for backend in curves if n in curves[backend]), key=lambda backend: curves[backend][n])
        if runs and runs[-1][0] == best:
            runs[-1] = (best, runs[-1][1], n)
        else:
            runs.append((best, n, n))
    return runs


def curves_of(measurements: list[dict], env: str) -> dict[str, dict[int, float]]:
    """backend -> {N: median env-steps per second} of the env's measured (not skipped) points."""
    curves = {}
    for record in measurements:
        if record["env"] == env and record["status"] == "ok":
            curves.setdefault(record["backend"], {})[record["num_envs"]] = record["env_steps_per_second"]["median"]
    return curves


def plan(backends: list[str], envs: list[str], num_envs: list[int], async_max_envs: int) -> list[Job]:
    """One job per backend x env; async leaves out the N over its cap, as skipped."""
    jobs = []
    for env, backend in itertools.product(envs, backends):
        capped = backend == "async"
        kept = [n for n in num_envs if not capped or n <= async_max_envs]
        note = f"async runs one process per env: N over --async-max-envs {async_max_envs} is not measured"
        skipped = [{"backend": backend, "env": env, "num_envs": n, "status": "skipped", "note": note}
                   for n in num_envs if n not in kept]
        jobs.append(Job(backend, env, kept, skipped))
    return jobs


def worker_command(job: Job, protocol: list[str]) -> list[str]:
    """The worker's command line; `protocol`: its --seconds, --repeats and --max-step-seconds."""
    return [sys.executable, os.path.abspath(__file__), "--worker", job.backend, job.env,
            "--num-envs", *map(str, job.num_envs), *protocol]


def run_worker(command: list[str], job: Job, on_record: Callable) -> list[dict]:
    """Run one worker, passing each record to on_record as it comes; an N the worker did not report (it failed) is
    recorded as failed, with the worker's last line on stderr."""
    records = []
    with tempfile.TemporaryFile("w+") as errors:
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=errors, text=True)
        for line in process.stdout:
            if line.startswith(RESULT):
                records.append(json.loads(line[len(RESULT):]))
                on_record(records[-1])
        process.wait()
        errors.seek(0)
        lines = [line.strip() for line in errors if line.strip()]
    reported = {record["num_envs"] for record in records}
    note = f"the worker failed (exit status {process.returncode}): {lines[-1] if lines else 'no message'}"
    failed = [{"backend": job.backend, "env": job.env, "num_envs": n, "status": "failed", "note": note}
              for n in job.num_envs if n not in reported]
    for record in failed:
        on_record(record)
    return records + failed


def duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


class Progress:
    """Progress on stderr: what ran, how fast, and an estimate of the time left (the mean time per measurement so
    far, or `guess` seconds per measurement before the first)."""

    def __init__(self, total: int, guess: float):
        self.total, self.guess, self.done, self.start = total, guess, 0, time.perf_counter()

    def __call__(self, record: dict):
        self.done += 1
        elapsed = time.perf_counter() - self.start
        left = (self.total - self.done) * elapsed / self.done
        if record["status"] == "ok":
            outcome = (f"{rate(record['env_steps_per_second']['median'])} env-steps/s "
                       f"(first call {record['first_call_seconds']:.3g} s)")
        else:
            outcome = f"{record['status']}: {record['note']}"
        print(f"[{self.done}/{self.total}] {record['backend']} {record['env']} N = {record['num_envs']}: {outcome}; "
              f"about {duration(left)} left", file=sys.stderr, flush=True)

    def starting(self, job: Job):
        left = (self.total - self.done) * ((time.perf_counter() - self.start) / self.done if self.done else self.guess)
        print(f"{job.backend} {job.env}: N = {', '.join(map(str, job.num_envs))} in a fresh process; "
              f"about {duration(left)} left", file=sys.stderr, flush=True)


def run_all(jobs: list[Job], protocol: list[str], guess: float) -> list[dict]:
    """Every job's worker in turn, with progress; the measurements, the skipped ones included."""
    progress = Progress(sum(len(job.num_envs) for job in jobs), guess)
    measurements = []
    for job in jobs:
        if job.num_envs:
            progress.starting(job)
            measurements += run_worker(worker_command(job, protocol), job, progress)
        measurements += job.skipped
    return measurements


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
    except OSError:
        names = []
    return names[0] if names else platform.processor() or "unknown"


def version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def machine(load_start: tuple, load_end: tuple, date: str) -> dict:
    return {"cpu_model": cpu_model(), "cpu_count": os.cpu_count(), "usable_cores": len(os.sched_getaffinity(0)),
            "load_average_start": list(load_start), "load_average_end": list(load_end), "date": date,
            "python": platform.python_version(), "packages": {package: version(package) for package in PACKAGES}}


# OUTPUT
def rate(value: float) -> str:
    """Env-steps per second, 3 significant digits: 1.23M."""
    value = float(f"{value:.3g}")  # rounded first: 999.6k is 1M, not 1e+03k
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def span(first: int, last: int) -> str:
    return f"N = {first}" if first == last else f"N = {first}–{last}"


def summary(envs: list[str], measurements: list[dict], async_max_envs: int) -> str:
    """The answer: per env, the fastest backend at each N and every crossover; then what was not measured."""
    lines = []
    for env in envs:
        curves = curves_of(measurements, env)
        if not curves:
            lines.append(f"- **{env}**: nothing measured.")
            continue
        runs = ", ".join(f"{backend} at {span(first, last)}" for backend, first, last in fastest(curves))
        lines.append(f"- **{env}**: fastest: {runs}.")
        found = crossovers(curves)
        lines += [f"  - {c.leader} overtakes {c.follower} from N = {c.num_envs} "
                  f"({c.ratio:.3g}x at N = {c.at_num_envs})" for c in found]
        if not found:
            lines.append("  - no backend overtakes another over the measured N.")
    unmeasured = [record for record in measurements if record["status"] != "ok"]
    if any(record["backend"] == "async" and record["num_envs"] > async_max_envs for record in unmeasured):
        lines.append(f"- async (one subprocess per env) is measured only up to N = {async_max_envs} "
                     "(--async-max-envs).")
    if any(record["backend"] != "async" or record["num_envs"] <= async_max_envs for record in unmeasured):
        lines.append("- Some measurements were skipped or failed: see \"Not measured\" below.")
    return "\n".join(lines)


def cell(record: dict | None) -> str:
    if record is None:
        return "–"
    if record["status"] != "ok":
        return record["status"]
    rates = record["env_steps_per_second"]
    return f"{rate(rates['median'])} ({rate(rates['min'])}–{rate(rates['max'])})"


def first_call_cell(record: dict | None) -> str:
    return f"{record['first_call_seconds']:.3g}" if record and "first_call_seconds" in record else "–"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def env_tables(env: str, backends: list[str], num_envs: list[int], measurements: list[dict]) -> str:
    """The env's table of env-steps per second (median, min–max) and of first-call seconds, N x backend."""
    found = {(record["backend"], record["num_envs"]): record for record in measurements if record["env"] == env}
    rates = [[str(n)] + [cell(found.get((backend, n))) for backend in backends] for n in num_envs]
    first = [[str(n)] + [first_call_cell(found.get((backend, n))) for backend in backends] for n in num_envs]
    return (f"### {env}\n\nEnv-steps per second, median (min–max) over the repeats:\n\n"
            + table(["N"] + backends, rates)
            + "\n\nFirst call, seconds (excluded from the rates; JAX: tracing and compilation included):\n\n"
            + table(["N"] + backends, first))


def method(settings: dict) -> str:
    return (
        "Each backend steps N copies of the env on uniformly random actions, with no agent; env-steps = steps x N. "
        "Every backend x env runs in a fresh process of the tool, one at a time, each N in turn. Per N, the env is "
        "made and reset (setup_seconds in the JSON), one step is timed as the first call (JAX: tracing and "
        "compilation included) and one more as the warm step; a warm step over "
        f"{settings['max_step_seconds']:g} s (--max-step-seconds) skips that N with a note. Then "
        f"{settings['repeats']} timed run(s) (--repeats) of at least {settings['seconds']:g} s (--seconds) each: "
        "the steps of a run are planned from the warm step, and a run that ends sooner is redone with more steps "
        "(its steps count as warm-up; jax-scan compiles and runs each new length once before timing it). The rates "
        "are the median over the runs, with the min–max.\n\n"
        "- sync: `gymnasium.make_vec(env, N, vectorization_mode=\"sync\")`, a Python loop over the envs.\n"
        "- async: `vectorization_mode=\"async\"`, one subprocess per env, up to N = "
        f"{settings['async_max_envs']} (--async-max-envs).\n"
        "- numpy: `vectorization_mode=\"vector_entry_point\"` (Gymnasium's CartPoleVectorEnv, doors.DoorsVectorEnv).\n"
        "- The Gymnasium backends draw the actions in the timed loop: one `np.random.Generator.integers` call per "
        "step for all envs. Each keeps its own autoreset mode (sync, async and CartPoleVectorEnv: the step after "
        "an episode's end resets that env; DoorsVectorEnv: the step that ends it).\n"
        "- jax-step: the gymnax env, `jax.vmap(env.step)` (auto-reset) with the actions drawn from the carried key, "
        "jitted with the carry (obs, env state, key, last reward and done, a step counter) donated, called from "
        "Python once per step.\n"
        "- jax-scan: the same step in `jax.lax.scan`, a timed run one compiled call.\n"
        "- A JAX run is waited for (`block_until_ready`) before the clock stops. The device counts the steps it "
        "ran (device_steps in the JSON: the warm-up and the timed steps together).")


def machine_text(info: dict, measurements: list[dict]) -> str:
    devices = sorted({record["device"] for record in measurements if record["backend"].startswith("jax")
                      and "device" in record})
    packages = ", ".join(f"{name} {number}" for name, number in info["packages"].items())
    return "\n".join([
        f"- CPU: {info['cpu_model']}, {info['cpu_count']} cores ({info['usable_cores']} usable by this process)",
        f"- JAX device: {', '.join(devices) or 'none used'}",
        f"- load average (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in info['load_average_start'])} at the start, "
        f"{' '.join(f'{x:.2f}' for x in info['load_average_end'])} at the end",
        f"- Python {info['python']}; {packages}",
        f"- date: {info['date']}"])


def report(settings: dict, info: dict, measurements: list[dict]) -> str:
    unmeasured = [f"- {r['backend']} {r['env']} N = {r['num_envs']}: {r['status']}: {r['note']}"
                  for r in measurements if r["status"] != "ok"]
    tables = "\n\n".join(env_tables(env, settings["backends"], settings["num_envs"], measurements)
                         for env in settings["envs"])
    return "\n\n".join([
        "# Env throughput: env-steps per second against the number of envs N",
        summary(settings["envs"], measurements, settings["async_max_envs"]),
        "![env-steps per second against N, log-log, one panel per env](env_throughput.png)",
        "## Env-steps per second\n\n" + tables,
        "## Not measured\n\n" + ("\n".join(unmeasured) or "Every requested measurement was made."),
        "## Method\n\n" + method(settings),
        "## Machine\n\n" + machine_text(info, measurements)]) + "\n"


def plot(envs: list[str], backends: list[str], num_envs: list[int], measurements: list[dict], path: str):
    """Env-steps per second against N, log-log, one panel per env, one line per backend, min–max as error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, axes = plt.subplots(1, len(envs), figsize=(6 * len(envs), 4.5), squeeze=False)
    for ax, env in zip(axes[0], envs):
        for backend in backends:
            points = sorted((r["num_envs"], r["env_steps_per_second"]) for r in measurements
                            if r["env"] == env and r["backend"] == backend and r["status"] == "ok")
            if not points:
                continue
            n = [point[0] for point in points]
            median = np.array([point[1]["median"] for point in points])
            spread = [median - [point[1]["min"] for point in points], [point[1]["max"] for point in points] - median]
            color = f"C{BACKENDS.index(backend)}"  # one color per backend in every panel
            ax.errorbar(n, median, yerr=spread, marker="o", capsize=3, label=backend, color=color)
        ax.set(xscale="log", yscale="log", title=env, xlabel="number of envs N", ylabel="env-steps per second")
        ax.set_xticks(num_envs, [str(n) for n in num_envs])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.grid(True, which="major", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# COMMAND LINE
class Parser(argparse.ArgumentParser):
    """Bad input: one line on stderr, starting with the tool's name, and exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{PROG}: {message}\n")


def positive_int(text: str) -> int:
    if not text.strip().lstrip("+").isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got '{text}'")
    return int(text)


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got '{text}'")
    return value


def add_protocol_arguments(parser: argparse.ArgumentParser):
    parser.add_argument("--num-envs", nargs="+", type=positive_int, default=list(NUM_ENVS), metavar="N",
                        help="numbers of envs (default: %(default)s)")
    parser.add_argument("--seconds", type=positive_float, default=1.0,
                        help="least stepping time of each timed run, after warm-up (default: %(default)s)")
    parser.add_argument("--repeats", type=positive_int, default=3, help="timed runs per measurement (median)")
    parser.add_argument("--max-step-seconds", type=positive_float, default=0.5,
                        help="skip (with a note) an N whose warm step takes longer (default: %(default)s)")


def main():
    parser = Parser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for env_throughput.json, env_throughput.png, REPORT.md")
    parser.add_argument("--envs", nargs="+", choices=ENVS, default=list(ENVS))
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument("--async-max-envs", type=positive_int, default=64,
                        help="the largest N async runs (one process per env; default: %(default)s)")
    add_protocol_arguments(parser)
    args = parser.parse_args()
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as error:
        parser.error(f"--out {args.out}: {error.strerror}")
    settings = {"envs": list(dict.fromkeys(args.envs)), "backends": list(dict.fromkeys(args.backends)),
                "num_envs": sorted(set(args.num_envs)), "seconds": args.seconds, "repeats": args.repeats,
                "max_step_seconds": args.max_step_seconds, "async_max_envs": args.async_max_envs}
    load_start, date = os.getloadavg(), datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    jobs = plan(settings["backends"], settings["envs"], settings["num_envs"], args.async_max_envs)
    protocol = ["--seconds", repr(args.seconds), "--repeats", str(args.repeats),
                "--max-step-seconds", repr(args.max_step_seconds)]
    measurements = run_all(jobs, protocol, guess=(args.repeats + 2) * args.seconds * MARGIN + 1)
    info = machine(load_start, os.getloadavg(), date)
    order = {name: index for index, name in enumerate(settings["envs"] + settings["backends"])}
    measurements.sort(key=lambda r: (order[r["env"]], order[r["backend"]], r["num_envs"]))
    with open(os.path.join(args.out, "env_throughput.json"), "w") as f:
        json.dump({"settings": settings, "machine": info, "measurements": measurements}, f, indent=1)
    plot(settings["envs"], settings["backends"], settings["num_envs"], measurements,
         os.path.join(args.out, "env_throughput.png"))
    with open(os.path.join(args.out, "REPORT.md"), "w") as f:
        f.write(report(settings, info, measurements))
    print(summary(settings["envs"], measurements, args.async_max_envs))
    failed = sum(record["status"] == "failed" for record in measurements)
    if failed:
        sys.exit(f"{PROG}: {failed} measurement(s) failed: see {os.path.join(args.out, 'REPORT.md')}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2:])
    else:
        main()
