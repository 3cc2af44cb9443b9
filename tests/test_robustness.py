"""Every script: bad numbers are refused up front, diverged and interrupted runs end cleanly, memory tags agree."""
import glob
import math
import os
import re
import signal
import struct
import subprocess
import sys

import pytest

from helpers import (
    DQN_SCRIPTS, DQN_TINY, ENV_REFUSALS, PROBED_SCRIPTS, ROOT, SCRIPTS, TINY, assert_clean_error, bad_command_lines,
    bad_values, command_lines, frameworks, read_run, runtime_scripts,
)

LOSS_TAGS = ["losses/value_loss", "losses/policy_loss", "losses/entropy", "losses/approx_kl", "losses/old_approx_kl"]
DQN_LOSS_TAGS = ["losses/td_loss", "losses/q_values"]
ALL_SCRIPTS = SCRIPTS + DQN_SCRIPTS
# the stop on a NaN loss and the signal handlers are the harness's Run, the same line for line in every script of a
# family (tests/test_harness.py): the divergence and signal tests run once per runtime (helpers.runtime: algorithm,
# frameworks, env backend, fused training), in the full suite
RUNTIME_SCRIPTS = runtime_scripts(ALL_SCRIPTS)



@pytest.fixture(params=PROBED_SCRIPTS)
def probe(request, shared_runs):
    """The script and its report from the CLI probe, which checks every script in one process."""
    return request.param, shared_runs.cli()[request.param].report


@pytest.mark.background("cli")
def test_check_args_refuses_every_bad_value(probe):
    script, report = probe
    assert len(report["reasons"]) == len(bad_values(script))
    for (argv, expected), reason in zip(bad_values(script), report["reasons"]):
        assert reason and expected in reason, (argv, reason)


@pytest.mark.background("cli")
def test_check_args_accepts_the_edges_of_every_range(probe):
    _, report = probe
    assert report["boundary"] is None


@pytest.mark.background("cli")
@pytest.mark.parametrize("script,name", [(script, name) for script in PROBED_SCRIPTS
                                         for name in bad_command_lines(script)])
def test_bad_command_line_exits_2_with_one_line_before_creating_anything(script, name, shared_runs):
    probe = shared_runs.cli()[script]
    outcome = probe.report["command_lines"][bad_command_lines(script).index(name)]
    if outcome.get("skipped"):
        pytest.skip("this machine has a GPU")
    expected = command_lines(script)[name][1].format(file=os.path.join(probe.folder, "file"))
    if script in ENV_REFUSALS and name in ("unknown env", "continuous actions"):  # a script of three envs
        expected = ENV_REFUSALS[script]
    result = subprocess.CompletedProcess([], outcome["status"], "", outcome["stderr"])
    assert result.returncode == 2
    assert_clean_error(result, probe.log_dir, expected)
    assert os.listdir(probe.folder) == ["file"] and os.path.isfile(os.path.join(probe.folder, "file"))


@pytest.mark.background("cli")
def test_peak_device_bytes_adds_every_framework_on_the_device_and_is_none_on_cpu(probe):
    script, report = probe
    # a torch script on gymnax holds JAX's env buffers as well as torch's tensors
    expected = {"jax": [1000, None], "torch+jax": [1000, 1500, None], "torch": [None, 500, None]}
    assert report["peaks"] == expected[frameworks(script)]


@pytest.mark.background("cli")
def test_peak_rss_bytes_is_the_process_high_water_mark_in_bytes(probe):
    _, report = probe
    # the script's own peak, not its parent's (pytest, far larger: Linux's ru_maxrss would report that one); a
    # high-water mark only grows (the process's own threads may allocate between the reads): read before and after
    assert 0.95 * report["peak_rss_bytes_before"] <= report["vm_hwm_kib"] * 1024 <= 1.05 * report["peak_rss_bytes"]


def whole_records(run_dir: str) -> bool:
    """The event file is a whole number of TFRecords (length, crc, data, crc): nothing cut off mid-record."""
    (path,) = glob.glob(os.path.join(run_dir, "events.out.tfevents.*"))
    with open(path, "rb") as f:
        data = f.read()
    offset = 0
    while offset + 12 <= len(data):
        offset += 12 + struct.unpack_from("<Q", data, offset)[0] + 4
    return offset == len(data)


def last_line(stderr: str) -> str:
    """The script's own closing line (a cold torch.compile may warn before it); never a traceback."""
    assert "Traceback" not in stderr, stderr[-3000:]
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len([line for line in lines if line.startswith(("error:", "interrupted"))]) == 1, stderr[-3000:]
    return lines[-1]


@pytest.mark.slow
@pytest.mark.background("diverged")
@pytest.mark.parametrize("script", RUNTIME_SCRIPTS)
def test_diverged_run_exits_3_naming_the_iteration_and_keeps_the_iterations_before(script, shared_runs):
    run = shared_runs.diverged(script)
    result, run_dir = run.result, run.run_dir
    assert result.returncode == 3, result.stderr[-3000:]
    match = re.fullmatch(r"error: loss is (NaN|inf) at iteration (\d+); partial run in (.*)", last_line(result.stderr))
    assert match and match[3] == run_dir, result.stderr[-3000:]
    diverged = int(match[2])
    assert 2 <= diverged < 20
    assert whole_records(run_dir)
    scalars, texts = read_run(run_dir)
    assert [step for step, _ in scalars["time/iteration"]] == list(range(diverged))
    assert "time/total" not in scalars and "hyperparameters" in texts
    loss_tags = DQN_LOSS_TAGS if script in DQN_SCRIPTS else LOSS_TAGS  # DQN's from its first gradient step on
    assert all(math.isfinite(value) for tag in loss_tags for _, value in scalars[tag][:-1])
    assert not all(math.isfinite(scalars[tag][-1][1]) for tag in loss_tags)


@pytest.mark.slow
@pytest.mark.background("interrupted")
@pytest.mark.parametrize("script,signame", [
    *((script, "SIGTERM") for script in RUNTIME_SCRIPTS), (SCRIPTS[0], "SIGINT"),
])
def test_signal_closes_the_event_file_and_exits_128_plus_signal(script, signame, shared_runs):
    run = shared_runs.interrupted(script, signame)
    result, run_dir = run.result, run.run_dir
    assert result.stdout, result.stderr[-3000:]  # the first iteration came before the signal
    assert result.returncode == 128 + signal.Signals[signame]
    assert last_line(result.stderr) == f"interrupted by {signame}: partial run (no time/total) in {run_dir}"
    assert whole_records(run_dir)
    scalars, texts = read_run(run_dir)
    assert scalars["time/iteration"] and "time/total" not in scalars and "hyperparameters" in texts


# A signal's SystemExit raised where the handler ran inside library code can come out of that code as another error
# (jit's C++ cache lookup comparing NNX graph metadata) or not at all (once, in torch.compile's compilation, the run
# went on to its end): here the env's step, traced under jit, signals its own process and turns the SystemExit into a
# ValueError or swallows it (the driver's first argument says which). Inside a garbage-collection callback (JAX's runs
# at every collection) Python would print it as an ignored exception, traceback and all: there a callback of the
# driver's signals the process once the script's handler is in place
SIGNAL_IN_LIBRARY = """
import gc, os, runpy, signal, sys
import gymnax
make, swallow = gymnax.make, sys.argv[1] == "swallowed"
def make_signalling(*args, **kwargs):
    env, env_params = make(*args, **kwargs)
    step = env.step
    def step_signalling(*step_args):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        except SystemExit as error:
            if not swallow:
                raise ValueError("metadata fields are hashable and have simple equality semantics") from error
        return step(*step_args)
    env.step = step_signalling
    return env, env_params
def collect_signalling(phase, info):
    if phase == "start" and not fired and callable(signal.getsignal(signal.SIGTERM)):
        fired.append(phase)
        os.kill(os.getpid(), signal.SIGTERM)
fired = []
if sys.argv[1] == "in_a_gc_callback":
    gc.callbacks.append(collect_signalling)
else:
    gymnax.make = make_signalling
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.slow
@pytest.mark.parametrize("script,exit_comes_out", [
    ("ppo_linen.py", "as_another_error"), ("ppo_linen.py", "swallowed"), ("ppo_linen_scan.py", "swallowed"),
    ("ppo_linen.py", "in_a_gc_callback"), ("dqn_linen.py", "in_a_gc_callback"),
    ("ppo_continuous_linen.py", "in_a_gc_callback"), ("ppo_linen_scan.py", "in_a_gc_callback"),
])
def test_a_signal_exit_that_library_code_converts_or_swallows_still_ends_the_run_partial_exiting_128_plus_signal(
    script, exit_comes_out, tmp_path
):
    result = subprocess.run(
        [sys.executable, "-c", SIGNAL_IN_LIBRARY, exit_comes_out, os.path.join(ROOT, script),
         *(DQN_TINY if script in DQN_SCRIPTS else TINY),
         "--log-dir", str(tmp_path), "--run-name", "run"],
        capture_output=True, text=True, timeout=300,
    )
    run_dir = os.path.join(tmp_path, "run")
    assert result.returncode == 128 + signal.SIGTERM, result.stderr[-3000:]
    assert last_line(result.stderr) == f"interrupted by SIGTERM: partial run (no time/total) in {run_dir}"
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr, result.stderr[-3000:]
    assert whole_records(run_dir)
    scalars, texts = read_run(run_dir)
    assert "time/total" not in scalars and "hyperparameters" in texts
