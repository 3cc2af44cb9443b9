"""Every script: bad numbers are refused up front, diverged and interrupted runs end cleanly, memory tags agree."""
import glob
import json
import math
import os
import re
import signal
import struct
import subprocess
import sys

import pytest

from helpers import GYMNASIUM_SCRIPTS, JAX_SCRIPTS, ROOT, SCRIPTS, TINY, assert_clean_error, read_run, run_script

# (argv, what the error names): every value check_args must refuse
BAD_VALUES = [
    (["--learning-rate", "0"], "--learning-rate must be positive"),
    (["--learning-rate", "-1"], "--learning-rate must be positive"),
    (["--learning-rate", "nan"], "--learning-rate must be positive"),
    (["--gamma", "0"], "--gamma must be in (0, 1]"),
    (["--gamma", "1.01"], "--gamma must be in (0, 1]"),
    (["--gae-lambda", "-0.5"], "--gae-lambda must be in (0, 1]"),
    (["--gae-lambda", "2"], "--gae-lambda must be in (0, 1]"),
    (["--clip-coef", "0"], "--clip-coef must be positive"),
    (["--ent-coef", "-0.01"], "--ent-coef must be >= 0"),
    (["--vf-coef", "-0.5"], "--vf-coef must be >= 0"),
    (["--max-grad-norm", "0"], "--max-grad-norm must be positive"),
    (["--adam-eps", "-1e-5"], "--adam-eps must be positive"),
    (["--num-envs", "2", "--num-steps", "2", "--num-minibatches", "8"], "minibatch size 0"),
]
# the edges of every range above, all allowed
BOUNDARY_VALUES = ["--gamma", "1", "--gae-lambda", "1", "--ent-coef", "0", "--vf-coef", "0", "--learning-rate", "1e30"]
# (argv, what the error names): bad command lines, each run as __main__ in the probe's process; "{file}" is a regular
# file, "{log_dir}" a fresh folder; /proc refuses mkdir though os.access lets root (who runs these tests) write there
BAD_COMMAND_LINES = [
    (["--learning-rate", "-1", "--log-dir", "{log_dir}"], "--learning-rate must be positive"),
    (["--log-dir", "{file}/runs"], "cannot create the run folder {file}/runs/"),
    (["--log-dir", "/proc/benchback-no-such-folder"], "cannot create the run folder /proc/benchback-no-such-folder/"),
]
LOSS_TAGS = ["losses/value_loss", "losses/policy_loss", "losses/entropy", "losses/approx_kl", "losses/old_approx_kl"]
# one update per iteration at an absurd learning rate: iteration 1 is finite, iteration 2 is not
# the fast subset runs the divergence and signal tests on one script per framework family (their loop code is the
# same line for line); the other scripts, and torch.compile's cold compile, run in the full suite
FAST = {"ppo_linen.py", "ppo_torch.py"}
FAST_SIGNALS = {("ppo_linen.py", "SIGINT"), ("ppo_torch.py", "SIGTERM")}
DIVERGING = [
    "--num-envs", "4", "--num-steps", "16", "--num-minibatches", "1", "--update-epochs", "1", "--learning-rate", "1e30",
]

# In one process per script: check_args on every bad value (parsed by tyro as the CLI would), the memory helpers
# on stand-in devices, then the script itself run as __main__ on one bad command line.
PROBE = r"""
import contextlib, importlib.util, io, json, resource, runpy, sys, types
import tyro
script, bad_argvs, boundary_argv, command_lines, frameworks = sys.argv[1:]
spec = importlib.util.spec_from_file_location("probed", script)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
report = {"reasons": [module.check_args(tyro.cli(module.Args, args=argv)) for argv in json.loads(bad_argvs)]}
report["boundary"] = module.check_args(tyro.cli(module.Args, args=json.loads(boundary_argv)))
jax_gpu = types.SimpleNamespace(memory_stats=lambda: {"peak_bytes_in_use": 1000})
if frameworks == "torch+jax":
    module.torch.cuda.max_memory_allocated = lambda device: 500
    cpu, cuda = module.torch.device("cpu"), module.torch.device("cuda")
    report["peaks"] = [
        module.peak_device_bytes(jax_gpu, cpu), module.peak_device_bytes(jax_gpu, cuda),
        module.peak_device_bytes(*module.select_device("cpu")),
    ]
elif frameworks == "torch":
    module.torch.cuda.max_memory_allocated = lambda device: 500
    cpu, cuda = module.torch.device("cpu"), module.torch.device("cuda")
    report["peaks"] = [
        module.peak_device_bytes(cpu), module.peak_device_bytes(cuda), module.peak_device_bytes(module.select_device("cpu")),
    ]
else:
    report["peaks"] = [module.peak_device_bytes(jax_gpu), module.peak_device_bytes(module.select_device("cpu"))]
report["peak_rss_bytes_before"] = module.peak_rss_bytes()
with open("/proc/self/status") as status:
    report["vm_hwm_kib"] = int(next(line for line in status if line.startswith("VmHWM:")).split()[1])
report["peak_rss_bytes"] = module.peak_rss_bytes()
report["command_lines"] = []
for argv in json.loads(command_lines):
    sys.argv, stderr, status = [script, *argv], io.StringIO(), None
    with contextlib.redirect_stderr(stderr):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as exit:
            status = exit.code
    report["command_lines"].append({"status": status, "stderr": stderr.getvalue()})
print(json.dumps(report), flush=True)
"""


def frameworks(script):
    """What the script runs on the device: JAX alone, torch alone (on Gymnasium envs) or both (torch on gymnax)."""
    if script in JAX_SCRIPTS:
        return "jax"
    return "torch" if script in GYMNASIUM_SCRIPTS else "torch+jax"


def slow_unless_fast(cases):
    """Mark slow the real runs of every script outside FAST."""
    return [pytest.param(*case, marks=[] if case[0] in FAST else [pytest.mark.slow]) for case in cases]


@pytest.fixture(scope="module", params=SCRIPTS)
def probe(request, tmp_path_factory):
    script, tmp = request.param, tmp_path_factory.mktemp("probe")
    (tmp / "file").write_text("a file, not a folder")
    bad_argvs = [argv for argv, _ in BAD_VALUES]
    log_dir = str(tmp / "runs")
    command_lines = [[arg.format(file=tmp / "file", log_dir=log_dir) for arg in argv] for argv, _ in BAD_COMMAND_LINES]
    result = subprocess.run(
        [sys.executable, "-c", PROBE, os.path.join(ROOT, script), json.dumps(bad_argvs), json.dumps(BOUNDARY_VALUES),
         json.dumps(command_lines), frameworks(script)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0 and result.stdout, result.stderr[-3000:]
    return script, json.loads(result.stdout), tmp, log_dir


def test_check_args_refuses_every_bad_value(probe):
    _, report, _, _ = probe
    for (argv, expected), reason in zip(BAD_VALUES, report["reasons"]):
        assert reason and expected in reason, (argv, reason)


def test_check_args_accepts_the_edges_of_every_range(probe):
    _, report, _, _ = probe
    assert report["boundary"] is None


@pytest.mark.parametrize("case", range(len(BAD_COMMAND_LINES)), ids=["bad value", "log dir under a file", "log dir in proc"])
def test_bad_command_line_exits_2_with_one_line_before_creating_anything(probe, case):
    _, report, tmp, log_dir = probe
    outcome = report["command_lines"][case]
    expected = BAD_COMMAND_LINES[case][1].format(file=tmp / "file")
    result = subprocess.CompletedProcess([], outcome["status"], "", outcome["stderr"])
    assert result.returncode == 2
    assert_clean_error(result, log_dir, expected)
    assert sorted(os.listdir(tmp)) == ["file"] and (tmp / "file").is_file()


def test_peak_device_bytes_adds_every_framework_on_the_device_and_is_none_on_cpu(probe):
    script, report, _, _ = probe
    # a torch script on gymnax holds JAX's env buffers as well as torch's tensors
    expected = {"jax": [1000, None], "torch+jax": [1000, 1500, None], "torch": [None, 500, None]}
    assert report["peaks"] == expected[frameworks(script)]


def test_peak_rss_bytes_is_the_process_high_water_mark_in_bytes(probe):
    _, report, _, _ = probe
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


@pytest.mark.parametrize("script", slow_unless_fast([(script,) for script in SCRIPTS]))
def test_diverged_run_exits_3_naming_the_iteration_and_keeps_the_iterations_before(script, tmp_path):
    log_dir, run_dir = str(tmp_path / "runs"), str(tmp_path / "runs" / "nan")
    result = run_script(script, *DIVERGING, "--num-iterations", "20", "--log-dir", log_dir, "--run-name", "nan")
    assert result.returncode == 3, result.stderr[-3000:]
    match = re.fullmatch(r"error: loss is (NaN|inf) at iteration (\d+); partial run in (.*)", last_line(result.stderr))
    assert match and match[3] == run_dir, result.stderr[-3000:]
    diverged = int(match[2])
    assert 2 <= diverged < 20
    assert whole_records(run_dir)
    scalars, texts = read_run(run_dir)
    assert [step for step, _ in scalars["time/iteration"]] == list(range(diverged))
    assert "time/total" not in scalars and "hyperparameters" in texts
    assert all(math.isfinite(value) for tag in LOSS_TAGS for _, value in scalars[tag][:-1])
    assert not all(math.isfinite(scalars[tag][-1][1]) for tag in LOSS_TAGS)


@pytest.mark.parametrize("script,signame", [  # the fast subset: one signal in each framework family
    pytest.param(script, signame, marks=[] if (script, signame) in FAST_SIGNALS else [pytest.mark.slow])
    for script, signame in [(script, "SIGTERM") for script in SCRIPTS] + [(SCRIPTS[0], "SIGINT")]
])
def test_signal_closes_the_event_file_and_exits_128_plus_signal(script, signame, tmp_path):
    signum = signal.Signals[signame]
    run_dir = str(tmp_path / "runs" / "cut")
    with open(tmp_path / "stderr", "w+") as stderr:
        process = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, script), *TINY, "--num-iterations", "2000",
             "--log-dir", str(tmp_path / "runs"), "--run-name", "cut"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=stderr, text=True,
        )
        started = next((line for line in process.stdout if line.startswith("iteration ")), None)
        process.send_signal(signum)
        process.communicate(timeout=300)
        stderr.seek(0)
        assert started, stderr.read()[-3000:]
        assert process.returncode == 128 + signum
        expected = f"interrupted by {signame}: partial run (no time/total) in {run_dir}"
        assert last_line(stderr.read()) == expected
    assert whole_records(run_dir)
    scalars, texts = read_run(run_dir)
    assert scalars["time/iteration"] and "time/total" not in scalars and "hyperparameters" in texts
