"""tools/env_throughput.py: one run end to end on the tiniest settings (both envs, every backend), its measuring
protocol on fakes (compile excluded, slow steps skipped, env-steps counted), the crossover logic on synthetic curves,
and its bad input."""
import itertools
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import doors
import env_throughput as et
from helpers import FAST_COMPILE, ROOT

TOOL = os.path.join(ROOT, "tools", "env_throughput.py")
NUM_ENVS = [2, 4]
TINY = ["--num-envs", "2", "4", "--seconds", "0.05", "--repeats", "1", "--async-max-envs", "2"]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """One run of the tool: its output folder, its JSON and its completed process."""
    out = tmp_path_factory.mktemp("env-throughput")
    result = subprocess.run([sys.executable, TOOL, "--out", str(out), *TINY], cwd=ROOT, capture_output=True,
                            text=True, timeout=600, env={**os.environ, "XLA_FLAGS": FAST_COMPILE})
    assert result.returncode == 0, result.stderr[-3000:]
    with open(out / "env_throughput.json") as f:
        return out, json.load(f), result


@pytest.mark.slow  # the end-to-end run: ten fresh worker processes, about 20 s
def test_tool_writes_every_backend_env_and_n_measured_or_marked_skipped(tiny_run):
    out, data, result = tiny_run
    found = {(r["backend"], r["env"], r["num_envs"]): r for r in data["measurements"]}
    assert sorted(found) == sorted(itertools.product(et.BACKENDS, et.ENVS, NUM_ENVS))
    skipped = {key for key, record in found.items() if record["status"] != "ok"}
    assert skipped == {("async", env, 4) for env in et.ENVS}
    assert all("--async-max-envs 2" in found[key]["note"] for key in skipped)
    assert (out / "env_throughput.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    machine = data["machine"]
    assert machine["cpu_model"] and machine["cpu_count"] >= 1 and machine["date"]
    assert len(machine["load_average_start"]) == len(machine["load_average_end"]) == 3
    assert all(machine["packages"][name] != "not installed" for name in ("jax", "gymnax", "gymnasium", "numpy"))
    report = (out / "REPORT.md").read_text()
    sections = ["# Env throughput", "- **CartPole-v1**: fastest: ", "- **doors:Doors-v0**: fastest: ",
                "measured only up to N = 2", "![", "## Env-steps per second", "## Not measured", "## Method",
                "## Machine"]
    assert [report.index(section) for section in sections] == sorted(report.index(section) for section in sections)
    assert report.count("| N | " + " | ".join(et.BACKENDS) + " |") == 2 * len(et.ENVS)
    assert "| 4 | " in report and report.count(" | skipped |") == len(et.ENVS)
    progress = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == len(found) - len(skipped) and progress[-1].startswith(f"[{len(progress)}/")
    assert all("left" in line for line in result.stderr.splitlines())


@pytest.mark.slow  # the end-to-end run: ten fresh worker processes, about 20 s
def test_rates_are_the_counted_env_steps_over_at_least_the_seconds_asked(tiny_run):
    _, data, _ = tiny_run
    for record in data["measurements"]:
        if record["status"] != "ok":
            continue
        rates = [steps * record["num_envs"] / seconds
                 for steps, seconds in zip(record["repeat_steps"], record["repeat_seconds"])]
        assert record["env_steps_per_second"] == {"median": rates[0], "min": rates[0], "max": rates[0]}
        assert min(record["repeat_seconds"]) >= 0.05


@pytest.mark.slow  # the end-to-end run: ten fresh worker processes, about 20 s
def test_jax_measurements_exclude_the_compile_and_the_device_ran_the_steps_counted(tiny_run):
    """The first call (tracing and compilation) is reported apart and is far slower than a timed step; the device's
    own step counter saw every step the host counted, warm-up and timed, and no more."""
    _, data, _ = tiny_run
    jax_records = [r for r in data["measurements"] if r["backend"].startswith("jax")]
    assert len(jax_records) == 2 * len(et.ENVS) * len(NUM_ENVS)
    for record in jax_records:
        timed_step = max(s / n for s, n in zip(record["repeat_seconds"], record["repeat_steps"]))
        assert record["first_call_seconds"] > 10 * timed_step, record
        assert record["device_steps"] == record["warmup_steps"] + sum(record["repeat_steps"]), record


class FakeCompiler:
    """A run that takes `compile_seconds` the first time it sees a number of steps (every time one is new, if
    `per_length`) and `step_seconds` per step."""

    def __init__(self, compile_seconds: float, step_seconds: float, per_length: bool):
        self.compile_seconds, self.step_seconds, self.per_length = compile_seconds, step_seconds, per_length
        self.seen = set()

    def __call__(self, carry, steps):
        if not self.seen or (self.per_length and steps not in self.seen):
            time.sleep(self.compile_seconds)
        self.seen.add(steps)
        time.sleep(steps * self.step_seconds)
        return carry + steps


@pytest.mark.parametrize("per_length", [False, True])
def test_measure_reports_the_compile_apart_and_times_none_of_it(per_length):
    run = FakeCompiler(compile_seconds=0.3, step_seconds=0.002, per_length=per_length)
    record, steps_run = et.measure(run, 0, num_envs=3, seconds=0.03, repeats=3, max_step_seconds=0.5,
                                   compiles_per_length=per_length)
    assert record["status"] == "ok" and record["first_call_seconds"] >= 0.3
    assert all(0.03 <= seconds < 0.25 for seconds in record["repeat_seconds"]), record
    assert steps_run == record["warmup_steps"] + sum(record["repeat_steps"])


@pytest.mark.parametrize("per_length", [False, True])
def test_a_run_shorter_than_the_seconds_asked_is_redone_longer_and_not_timed(per_length):
    """The warm step (one call) over-estimates a step where a call costs more than its steps (dispatch): the runs
    planned from it fall short and are redone with more steps, every timed run lasts the seconds asked."""

    def run(carry, steps):
        time.sleep(0.01 + steps * 0.0002)
        return carry + steps

    record, steps_run = et.measure(run, 0, num_envs=2, seconds=0.05, repeats=2, max_step_seconds=0.5,
                                   compiles_per_length=per_length)
    assert all(seconds >= 0.05 for seconds in record["repeat_seconds"]), record
    assert record["warmup_steps"] > 2 + (per_length and min(record["repeat_steps"]))
    assert steps_run == record["warmup_steps"] + sum(record["repeat_steps"])


def test_measure_skips_a_step_over_the_limit_with_a_note():
    record, steps_run = et.measure(FakeCompiler(0, 0.03, False), 0, num_envs=1, seconds=0.01, repeats=3,
                                   max_step_seconds=0.01, compiles_per_length=False)
    assert record["status"] == "skipped" and "--max-step-seconds 0.01" in record["note"]
    assert "repeat_steps" not in record and steps_run == 2


class CountingDoors(doors.DoorsVectorEnv):
    """Doors' vector env, counting the env-steps and checking the actions it gets."""

    env_steps = 0

    def step(self, actions):
        assert actions.shape == (self.num_envs,) and 0 <= actions.min() and actions.max() < 5
        self.env_steps += len(actions)
        return super().step(actions)


@pytest.mark.parametrize("num_envs", [1, 3])
def test_gymnasium_env_steps_counted_are_the_env_steps_the_env_ran(num_envs):
    envs = CountingDoors(num_envs)
    envs.reset(seed=0)
    carry = et.GymnasiumCarry(envs, np.random.default_rng(0), 5)
    record, _ = et.measure(et.gymnasium_run, carry, num_envs, seconds=0.02, repeats=2, max_step_seconds=0.5,
                           compiles_per_length=False)
    assert envs.env_steps == num_envs * (record["warmup_steps"] + sum(record["repeat_steps"]))
    rates = [num_envs * steps / seconds for steps, seconds in zip(record["repeat_steps"], record["repeat_seconds"])]
    assert record["env_steps_per_second"] == {"median": np.median(rates), "min": min(rates), "max": max(rates)}


@pytest.mark.parametrize("curves, expected", [
    # crosses once: a overtakes b between N = 8 and 64
    ({"a": {1: 1, 8: 2, 64: 8, 512: 40}, "b": {1: 4, 8: 5, 64: 6, 512: 8}}, [("a", "b", 64, 5.0, 512)]),
    # never crosses: a ahead at every N, either order of the backends
    ({"a": {1: 5, 8: 6, 64: 7}, "b": {1: 1, 8: 2, 64: 3}}, []),
    ({"b": {1: 1, 8: 2, 64: 3}, "a": {1: 5, 8: 6, 64: 7}}, []),
    # crosses at the first point: behind at the first N only, ahead from the second
    ({"a": {1: 1, 8: 10, 64: 100}, "b": {1: 2, 8: 5, 64: 50}}, [("a", "b", 8, 2.0, 64)]),
    # ties: equal curves, a tie at the last N, a tie at the first N then ahead
    ({"a": {1: 1, 8: 2}, "b": {1: 1, 8: 2}}, []),
    ({"a": {1: 1, 8: 4}, "b": {1: 2, 8: 4}}, []),
    ({"a": {1: 2, 8: 6, 64: 9}, "b": {1: 2, 8: 3, 64: 3}}, [("a", "b", 8, 3.0, 64)]),
    # crosses twice: b from 8, a again from 512 (the last crossing is the one that holds)
    ({"a": {1: 3, 8: 1, 64: 1, 512: 6}, "b": {1: 2, 8: 2, 64: 2, 512: 2}}, [("a", "b", 512, 3.0, 512)]),
    # only the N both measured count: b has no N = 1, a none of 512
    ({"a": {1: 9, 8: 1, 64: 10}, "b": {8: 2, 64: 5, 512: 50}}, [("a", "b", 64, 2.0, 64)]),
    # three backends, two crossings, sorted by N
    ({"numpy": {1: 10, 64: 20, 4096: 30}, "jax-step": {1: 1, 64: 25, 4096: 300},
      "jax-scan": {1: 5, 64: 100, 4096: 3000}},
     [("jax-scan", "numpy", 64, 100.0, 4096), ("jax-step", "numpy", 64, 10.0, 4096)]),
])
def test_crossovers_on_synthetic_curves(curves, expected):
    assert et.crossovers(curves) == [et.Crossover(*crossover) for crossover in expected]


def test_fastest_backend_at_each_n_as_runs_of_n():
    curves = {"numpy": {1: 10, 8: 20, 64: 30, 512: 1}, "jax-scan": {1: 5, 8: 6, 64: 300, 512: 900},
              "sync": {1: 11}}
    assert et.fastest(curves) == [("sync", 1, 1), ("numpy", 8, 8), ("jax-scan", 64, 512)]


def test_summary_names_the_fastest_and_each_crossover_with_its_ratio():
    rates = {("numpy", 1): 10, ("numpy", 64): 20, ("jax-scan", 1): 5, ("jax-scan", 64): 60}
    measurements = [{"backend": backend, "env": "CartPole-v1", "num_envs": n, "status": "ok",
                     "env_steps_per_second": {"median": rate}} for (backend, n), rate in rates.items()]
    measurements.append({"backend": "async", "env": "CartPole-v1", "num_envs": 128, "status": "skipped", "note": ""})
    assert et.summary(["CartPole-v1"], measurements, async_max_envs=64).splitlines() == [
        "- **CartPole-v1**: fastest: numpy at N = 1, jax-scan at N = 64.",
        "  - jax-scan overtakes numpy from N = 64 (3x at N = 64)",
        "- async (one subprocess per env) is measured only up to N = 64 (--async-max-envs).",
    ]


def test_plan_leaves_async_over_its_cap_out_as_skipped():
    jobs = et.plan(["sync", "async"], ["CartPole-v1"], [1, 8, 64], async_max_envs=8)
    assert [(job.backend, job.num_envs) for job in jobs] == [("sync", [1, 8, 64]), ("async", [1, 8])]
    assert [(r["num_envs"], r["status"]) for r in jobs[1].skipped] == [(64, "skipped")] and not jobs[0].skipped


def test_a_failed_worker_leaves_its_unreported_n_marked_failed_with_its_error():
    job = et.Job("numpy", "CartPole-v1", [2, 4], [])
    line = et.RESULT + json.dumps({"backend": "numpy", "env": "CartPole-v1", "num_envs": 2, "status": "ok"})
    command = [sys.executable, "-c", f"print({line!r}, flush=True); raise SystemExit('out of memory')"]
    seen = []
    records = et.run_worker(command, job, seen.append)
    assert seen == records and [(r["num_envs"], r["status"]) for r in records] == [(2, "ok"), (4, "failed")]
    assert records[1]["note"] == "the worker failed (exit status 1): out of memory"


@pytest.mark.parametrize("argv, message", [
    (["--envs", "Pong-v0"], "argument --envs: invalid choice: 'Pong-v0'"),
    (["--num-envs", "8", "0"], "argument --num-envs: must be a positive integer, got '0'"),
    (["--num-envs", "-4"], "argument --num-envs: must be a positive integer, got '-4'"),
    (["--seconds", "0"], "argument --seconds: must be a positive number of seconds, got '0'"),
    (["--seconds", "nan"], "argument --seconds: must be a positive number of seconds, got 'nan'"),
    (["--seconds", "soon"], "argument --seconds: must be a positive number of seconds, got 'soon'"),
    (["--repeats", "0"], "argument --repeats: must be a positive integer, got '0'"),
    (None, "the following arguments are required: --out"),
    (["--out", os.path.join(ROOT, "doors.py")], "--out " + os.path.join(ROOT, "doors.py") + ": File exists"),
])
def test_bad_input_is_one_line_and_exit_status_2(argv, message, tmp_path):
    argv = argv if argv is None or argv[0] == "--out" else ["--out", str(tmp_path / "out"), *argv]
    result = subprocess.run([sys.executable, TOOL, *(argv or [])], cwd=ROOT, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [result.stderr.strip()] and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"env_throughput.py: {message}"), result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value,text", [(999_600, "1M"), (1_234_567, "1.23M"), (999.4, "999"), (80_100, "80.1k")])
def test_a_rate_is_rounded_before_its_unit_is_chosen(value, text):
    assert et.rate(value) == text
