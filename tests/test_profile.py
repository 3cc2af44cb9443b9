"""--profile writes a readable profiler trace of the steady-state iterations next to the event file (jax.profiler for
the JAX scripts, torch.profiler for the torch ones): what the trace holds, in detail for one script per framework, and
that every script writes one (from its shared sync-timing run, which also profiles)."""
import glob
import gzip
import json
import os
from pathlib import Path

import pytest

from helpers import JAX_SCRIPTS, SCRIPTS, auto_device


def profiled_run(script, shared_runs):
    """The script's shared profiled run (TINY, 3 iterations: iteration 2 is traced, iteration 0 and its compilation
    are not)."""
    return Path(shared_runs.profiled(script).run_dir)


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


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_profile_in_every_script_writes_a_readable_trace_of_the_policy_and_update(script, shared_runs):
    run_dir = str(profiled_run(script, shared_runs))
    if script in JAX_SCRIPTS:
        (session,) = glob.glob(os.path.join(run_dir, "plugins", "profile", "*"))
        assert [os.path.getsize(path) > 0 for path in glob.glob(os.path.join(session, "*.xplane.pb"))] == [True]
        with gzip.open(os.path.join(session, "perfetto_trace.json.gz")) as f:
            names = {event.get("name", "") for event in json.load(f)["traceEvents"]}
        assert any("update" in name for name in names), sorted(names)[:50]
    else:
        (path,) = glob.glob(os.path.join(run_dir, "*.pt.trace.json.gz"))
        with gzip.open(path) as f:
            names = {event.get("name", "") for event in json.load(f)["traceEvents"]}
        assert any(name.endswith(": policy_step") for name in names) and "aten::linear" in names
