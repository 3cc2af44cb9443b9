"""--profile writes a readable profiler trace of the steady-state iterations next to the event file (jax.profiler for
the JAX scripts, torch.profiler for the torch ones): what the trace holds, in detail for one script per framework, and
that every script writes one (from its shared sync-timing run, which also profiles)."""
import glob
import importlib
import gzip
import json
import os
import signal
from pathlib import Path

import pytest

from helpers import JAX_SCRIPTS, SCRIPTS, auto_device


def profiled_run(script, shared_runs):
    """The script's shared profiled run (TINY, 3 iterations: iteration 2 is traced, iteration 0 and its compilation
    are not)."""
    return Path(shared_runs.profiled(script).run_dir)


@pytest.mark.slow
@pytest.mark.background("profiled")
@pytest.mark.parametrize("script", ["ppo_linen.py"])
def test_profile_jax_writes_a_tensorboard_profile_and_a_perfetto_trace_of_rollout_and_update(script, shared_runs):
    run_dir = profiled_run(script, shared_runs)
    # TensorBoard's profile plugin reads {run}/plugins/profile/{session}/*.xplane.pb
    (session,) = glob.glob(str(run_dir / "plugins" / "profile" / "*"))
    assert [os.path.getsize(path) > 0 for path in glob.glob(os.path.join(session, "*.xplane.pb"))] == [True]
    with gzip.open(os.path.join(session, "perfetto_trace.json.gz")) as f:
        names = {event.get("name", "") for event in json.load(f)["traceEvents"]}
    # the traced iteration ran the jitted rollout and update (the executions carry the jitted functions' names)
    assert any("rollout" in name for name in names) and any("update" in name for name in names), sorted(names)[:50]


@pytest.mark.slow
@pytest.mark.background("profiled")
@pytest.mark.parametrize("script", ["ppo_torch.py"])
def test_profile_torch_writes_a_chrome_trace_with_the_policy_action_hand_over_dlpack_and_update_steps(script, shared_runs):
    run_dir = profiled_run(script, shared_runs)
    (path,) = glob.glob(str(run_dir / "*.pt.trace.json.gz"))
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    names = [event.get("name", "") for event in events]
    # Python stacks name the script's functions (the jitted env step is one C++ call, seen by the hand-overs around it:
    # the action as a NumPy view on the CPU, through JAX's DLPack on a GPU, the packed step back through torch's); the
    # ops below them are torch's
    hand_over = "method numpy of Tensor" if auto_device() == "cpu" else os.path.join("jax", "_src", "dlpack.py")
    for function in ("policy_step", hand_over, os.path.join("torch", "utils", "dlpack.py"), "update_minibatch"):
        assert any(function in name for name in names), function
    assert "aten::linear" in names and "aten::_fused_adam_" in names
    # one rollout of TINY's 16 steps: the trace holds one iteration, not iteration 0 as well
    assert sum(name.endswith(": policy_step") for name in names) == 16


def trace_names(run_dir: str, script: str) -> set:
    """The event names of the one profiler trace in run_dir (a JAX script's Perfetto trace, with its non-empty XPlane
    beside it; a torch script's Chrome trace)."""
    if script in JAX_SCRIPTS:
        (session,) = glob.glob(os.path.join(run_dir, "plugins", "profile", "*"))
        assert [os.path.getsize(path) > 0 for path in glob.glob(os.path.join(session, "*.xplane.pb"))] == [True]
        path = os.path.join(session, "perfetto_trace.json.gz")
    else:
        (path,) = glob.glob(os.path.join(run_dir, "*.pt.trace.json.gz"))
    with gzip.open(path) as f:
        return {event.get("name", "") for event in json.load(f)["traceEvents"]}


@pytest.mark.slow
@pytest.mark.background("profiled")
@pytest.mark.parametrize("script", SCRIPTS)
def test_profile_in_every_script_writes_a_readable_trace_of_the_policy_and_update(script, shared_runs):
    names = trace_names(str(profiled_run(script, shared_runs)), script)
    if script in JAX_SCRIPTS:
        assert any("update" in name for name in names), sorted(names)[:50]
    else:
        assert any(name.endswith(": policy_step") for name in names) and "aten::linear" in names


@pytest.mark.slow
@pytest.mark.background("interrupted")
@pytest.mark.parametrize("script,signame,profile", [
    ("ppo_torch.py", "SIGTERM", True), ("ppo_linen.py", "SIGTERM", True),
])
def test_a_signal_in_the_profiled_iterations_closes_the_profiler_exits_143_and_leaves_a_readable_trace(
    script, signame, profile, shared_runs
):
    run = shared_runs.interrupted(script, signame, profile)
    result, run_dir = run.result, run.run_dir
    assert result.stdout.startswith("iteration 9/"), result.stderr[-3000:]  # the signal came in iteration 9
    assert result.returncode == 128 + signal.SIGTERM, result.stderr[-3000:]
    assert "Traceback" not in result.stderr and "was not called" not in result.stderr, result.stderr[-3000:]
    assert f"interrupted by SIGTERM: partial run (no time/total) in {run_dir}" in result.stderr.splitlines()
    assert trace_names(run_dir, script)


@pytest.mark.parametrize("script", ["ppo_torch.py", "dqn_linen.py"])
def test_a_signal_while_the_trace_is_written_waits_for_the_whole_trace_then_stops_the_run(script, tmp_path):
    """The signal of the test above can come late, when the last profiled iteration writes its trace: a stop inside
    the writer (gzip's) left a file whose checksum failed. The harness is the same in every script (test_harness)."""
    module = importlib.import_module(script[: -len(".py")])
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        run = module.Run(module.Args(profile=True, log_dir=str(tmp_path), run_name="run"))
        written = []
        run.profiling.callback(lambda: (os.kill(os.getpid(), signal.SIGTERM), written.append("the rest of the trace")))
        with pytest.raises(SystemExit) as stopped:
            run.close_profiler()
        assert stopped.value.code == 128 + signal.SIGTERM and written == ["the rest of the trace"]
        run.writer.writer.close()
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
