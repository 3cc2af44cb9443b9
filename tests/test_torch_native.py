"""ppo_torch_native.py: its envs written in torch are gymnax's MDPs (stepped side by side from the same states with the
same actions, through terminations and truncations), and its --compile makes the rollout step and the minibatch update
one graph each, never recompiled; the CUDA-graph replay of its steps (and of ppo_torch_compile.py's), on a fake GPU."""
import os

import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import ppo_torch_compile
import ppo_torch_native as native
from helpers import ROOT, table

SCRIPT = "ppo_torch_native.py"

# each env's gymnax state fields, in the order of the torch env's state columns
STATE_FIELDS = {
    "CartPole-v1": ("x", "x_dot", "theta", "theta_dot"),
    "Acrobot-v1": ("joint_angle1", "joint_angle2", "velocity_1", "velocity_2"),
    "MountainCar-v0": ("position", "velocity"),
}
# CartPole in the fast subset, every env in the full suite
FIRST_ENV_FAST = ["CartPole-v1", *(pytest.param(env_id, marks=pytest.mark.slow) for env_id in list(STATE_FIELDS)[1:])]
NUM_ENVS, NUM_STEPS = 48, 700  # 33,600 steps per env: every env's step limit (500, 200) passed, many episodes ended
# float32 tolerance: the envs are synchronised before every step, so this bounds one step's difference (sin and cos,
# and Acrobot's four RK4 stages, differ in the last bits between XLA and torch; the largest difference seen, on an AMD
# EPYC: 4e-6, Acrobot's velocities of up to 28); flags must agree exactly
RTOL, ATOL = 1e-5, 1e-5


def controlled(env_id, states, num_actions):
    """The action that carries an episode to its far end: CartPole balanced (so that it reaches its step limit),
    MountainCar and Acrobot pushed with their velocity (to the flag; the tip above the bar)."""
    if env_id == "CartPole-v1":
        return np.asarray(states.theta + 0.5 * states.theta_dot >= 0).astype(np.int32)
    return np.where(np.asarray(getattr(states, STATE_FIELDS[env_id][-1])) >= 0, num_actions - 1, 0)


def actions_for(env_id, states, rng, num_actions):
    """Random actions, but of every 12 envs the first plays the first action, the second the last, and the third
    `controlled`'s: the boundaries of the action space, terminations and truncations all occur."""
    which = np.arange(NUM_ENVS) % 12
    choices = [np.zeros(NUM_ENVS), np.full(NUM_ENVS, num_actions - 1), controlled(env_id, states, num_actions)]
    actions = np.select([which == 0, which == 1, which == 2], choices, rng.integers(0, num_actions, NUM_ENVS))
    return actions.astype(np.int32)


@pytest.mark.parametrize("env_id", FIRST_ENV_FAST)
def test_the_torch_env_steps_as_gymnax_does_through_terminations_and_truncations(env_id):
    env, params = gymnax.make(env_id)
    torch_env = native.ENVS[env_id]()
    assert (torch_env.num_actions, torch_env.state_dim) == (env.action_space(params).n, len(STATE_FIELDS[env_id]))
    reset = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))
    step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
    key, rng = jax.random.key(0), np.random.default_rng(0)
    obs, states = reset(jax.random.split(key, NUM_ENVS), params)
    counts = {"terminated": 0, "truncated": 0, "episodes": 0, "lengths": 0}
    stats = native.EpisodeStats(*(torch.zeros(NUM_ENVS) for _ in range(2)), *(torch.zeros(()) for _ in range(3)))
    for t in range(NUM_STEPS):
        action = actions_for(env_id, states, rng, torch_env.num_actions)
        # the torch env takes gymnax's state, steps with the same action and resets from its own noise
        state = torch.tensor(np.stack([np.asarray(getattr(states, name)) for name in STATE_FIELDS[env_id]], 1))
        carry = native.EnvCarry(state, torch.tensor(np.asarray(states.time), dtype=torch.int32), stats)
        carry, packed = native.env_step(carry, torch.tensor(action), torch.rand(NUM_ENVS, torch_env.state_dim),
                                        torch_env)
        next_obs, reward, terminated, truncated, final_obs = (x.numpy() for x in native.unpack_step(packed))
        lengths = np.asarray(states.time) + 1  # each episode's length if it ends in this step
        key, step_key = jax.random.split(key)
        obs, states, want_reward, want_terminated, want_truncated, info = step(
            jax.random.split(step_key, NUM_ENVS), states, jnp.asarray(action), params)
        np.testing.assert_array_equal(terminated, np.asarray(want_terminated), err_msg=f"step {t}")
        np.testing.assert_array_equal(truncated, np.asarray(want_truncated), err_msg=f"step {t}")
        np.testing.assert_allclose(reward, np.asarray(want_reward), rtol=RTOL, atol=ATOL, err_msg=f"step {t}")
        np.testing.assert_allclose(final_obs, np.asarray(info["final_observation"]), rtol=RTOL, atol=ATOL,
                                   err_msg=f"step {t}")
        done = np.array(want_terminated | want_truncated)
        np.testing.assert_allclose(next_obs[~done], np.asarray(obs)[~done], rtol=RTOL, atol=ATOL, err_msg=f"step {t}")
        # a finished env restarts in the same step: step count 0, a state drawn from the reset range
        assert (carry.time.numpy()[done] == 0).all() and (carry.time.numpy()[~done] == np.asarray(states.time)[~done]).all()
        low, high = torch_env.reset_range
        assert ((carry.state[torch.from_numpy(done), 0] >= low) & (carry.state[torch.from_numpy(done), 0] <= high)).all()
        counts["terminated"] += int(want_terminated.sum())
        counts["truncated"] += int(want_truncated.sum())
        counts["episodes"] += int(done.sum())
        counts["lengths"] += int(lengths[done].sum())
        stats = carry.stats
    assert counts["terminated"] > NUM_ENVS // 4 and counts["truncated"] > 0, counts  # both ends were exercised
    # the episodes the torch env tracked: as many, as long, as gymnax's
    assert (stats.finished_count, stats.finished_length_sum) == (counts["episodes"], counts["lengths"])


def native_compile_run(shared_runs, background=False):
    return shared_runs.tiny(SCRIPT, "--compile", probe=True, background=background)


@pytest.mark.slow
@pytest.mark.background.with_args(native_compile_run)
def test_compile_makes_the_rollout_step_and_the_minibatch_update_one_graph_each_and_never_recompiles(shared_runs):
    """A probed TINY run with --compile (tests/probe.py): a cold compile, so in the full suite only."""
    run = native_compile_run(shared_runs)
    record, iterations = run.record, len(run.scalars["time/iteration"])
    compilations = [c for c in record["compilations"] if c["co_name"]]
    assert not [c for c in compilations if c["fail_type"]]
    # both graphs are compiled in iteration 0: the count at each iteration's fetch never grows, no frame compiles twice
    assert record["boundaries"] == [len(record["compilations"])] * iterations
    # the whole rollout step (policy, env step, auto-reset, bookkeeping) and the minibatch update, one graph each
    assert [(c["co_name"], c["co_filename"], c["compile_id"]) for c in compilations] == [
        ("rollout_step", os.path.join(ROOT, SCRIPT), "0/0"), ("update_minibatch_one_graph", os.path.join(ROOT, SCRIPT), "1/0")]
    assert all(c["graph_op_count"] > 0 for c in compilations) and record["graph_breaks"] == {}
    # one host read per iteration, the logged values (the env needs none: it is on the device), once the compiler's
    # own reads of iteration 0 are done
    fetches = [(f["method"], f["file"]) for f in record["fetches"] if not f["nested"]]
    first = fetches.index(("torch.Tensor.tolist", os.path.join(ROOT, SCRIPT)))
    assert fetches[first:] == [("torch.Tensor.tolist", os.path.join(ROOT, SCRIPT))] * iterations
    assert table(run.texts["system"])["compile_mode"] == "compile"


def test_the_eager_loop_reads_the_host_once_per_iteration_and_compiles_nothing(shared_runs):
    run = shared_runs.smoke(SCRIPT)
    record, iterations = run.record, len(run.scalars["time/iteration"])
    fetches = [(f["method"], f["file"]) for f in record["fetches"] if not f["nested"]]
    assert fetches == [("torch.Tensor.tolist", os.path.join(ROOT, SCRIPT))] * iterations
    assert record["compilations"] == []


# CUDA GRAPHS, without CUDA: torch.cuda's streams and graphs replaced by stand-ins. A stand-in graph records, at
# capture, which function ran on which static inputs into which outputs; a replay runs it again on the static inputs
# and writes the outputs in place, as a CUDA graph replays its kernels into the memory it captured
class FakeStream:
    def __init__(self):
        self.waited = 0

    def wait_stream(self, other):
        self.waited += 1


class FakeGraph:
    capturing = None  # the graph in capture, which Recorded functions register with

    def __init__(self):
        self.recorded, self.replays = [], 0

    def replay(self):
        self.replays += 1
        for fn, args, outs in self.recorded:
            for out, value in zip(outs, fn.compute(*args)):
                if out is not None:  # a None output has no memory to write
                    out.copy_(value)


class Recorded:
    """A step for the graph: out = (2 x + y, x.sum()); counts its real calls (warm-up and capture)."""

    def __init__(self):
        self.calls = 0

    @staticmethod
    def compute(x, y):
        return 2 * x + y, x.sum()

    def __call__(self, x, y):
        self.calls += 1
        outs = self.compute(x, y)
        if FakeGraph.capturing is not None:
            FakeGraph.capturing.recorded.append((self, (x, y), outs))
        return outs


@pytest.fixture
def fake_cuda(monkeypatch):
    streams = []

    class GraphCapture:
        def __init__(self, graph):
            self.graph = graph

        def __enter__(self):
            FakeGraph.capturing = self.graph

        def __exit__(self, *exc):
            FakeGraph.capturing = None

    def new_stream():
        streams.append(FakeStream())
        return streams[-1]

    monkeypatch.setattr(torch.cuda, "Stream", new_stream)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda: FakeStream())
    monkeypatch.setattr(torch.cuda, "stream", lambda stream: GraphCapture(None))
    monkeypatch.setattr(torch.cuda, "CUDAGraph", FakeGraph)
    monkeypatch.setattr(torch.cuda, "graph", GraphCapture)
    return streams


def test_cuda_graph_runs_its_warmup_calls_for_real_then_captures_once_and_replays_new_inputs(fake_cuda):
    fn = Recorded()
    graph = native.CudaGraph(fn, warmup=2)
    x, y = torch.arange(3.0), torch.ones(3)
    for _ in range(2):  # warm-up: the function itself, on a side stream that waits for the current one
        out = graph(x, y)
        assert graph.graph is None and torch.equal(out[0], 2 * x + y)
    assert fn.calls == 2 and fake_cuda[0].waited == 2
    for step in range(3):  # the capture (one more real call), then replays only
        x, y = torch.arange(3.0) + step, torch.full((3,), float(step))
        out = graph(x, y)
        assert torch.equal(out[0], 2 * x + y) and torch.equal(out[1], x.sum())
    assert fn.calls == 3 and graph.graph.replays == 3
    assert out[0].data_ptr() != graph.static_out[0].data_ptr()  # a clone: the next replay cannot overwrite it


class RecordedWithNone(Recorded):
    """Recorded's step with a None output, as ppo_torch_compile.py's policy step returns V(obs) for the MLPs."""

    @staticmethod
    def compute(x, y):
        return 2 * x + y, None


def test_ppo_torch_compiles_cuda_graph_passes_a_none_output_through(fake_cuda):
    graph = ppo_torch_compile.CudaGraph(RecordedWithNone(), warmup=1)
    for step in range(3):  # the warm-up call, the capture, a replay
        x, y = torch.arange(3.0) + step, torch.ones(3)
        out = graph(x, y)
        assert torch.equal(out[0], 2 * x + y) and out[1] is None
    assert graph.graph.replays == 2


def test_cuda_graph_copies_an_argument_of_once_per_object_only_when_it_is_a_new_object(fake_cuda):
    graph = native.CudaGraph(Recorded(), once_per_object=(1,), warmup=0)
    batch = torch.ones(3)
    assert torch.equal(graph(torch.zeros(3), batch)[0], batch)
    batch.fill_(5.0)  # the same object again: not copied, the graph still holds its first values
    assert torch.equal(graph(torch.zeros(3), batch)[0], torch.ones(3))
    assert torch.equal(graph(torch.zeros(3), batch.clone())[0], torch.full((3,), 5.0))  # a new object: copied
