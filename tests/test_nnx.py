"""NNX-specific checks: the mode each script pins, and which NNX entry points each compile mode really uses."""
import pytest

from helpers import PINNED_MODE, table


@pytest.mark.background("cli")
@pytest.mark.parametrize("script", PINNED_MODE)
def test_script_pins_its_nnx_mode_whatever_the_flax_default(script, shared_runs):
    """The CLI probe loads the script with Flax's defaults flipped to the other mode first."""
    assert shared_runs.cli()[script].report["pinned_mode"] == [PINNED_MODE[script]] * 4


@pytest.mark.parametrize(
    "script,flags,mode,jitted,bound,graph_work",
    [
        pytest.param("ppo_nnx.py", ["--no-jit"], "none", [], [], None, marks=pytest.mark.slow),  # the eager run
        ("ppo_nnx.py", [], "jit", [["rollout", True], ["compute_gae", "jax.jit"], ["update", True]], [], True),
        (
            "ppo_nnx_cached.py", [], "cached", [["rollout", True], ["compute_gae", "jax.jit"], ["update", True]],
            ["Agent+RolloutState", "Agent+Optimizer"], True,
        ),
        (
            "ppo_nnx_tree.py", [], "tree", [["rollout", False], ["compute_gae", "jax.jit"], ["update", False]],
            ["Agent+RolloutState", "Agent+Optimizer"], False,
        ),
    ],
)
def test_compile_mode_uses_the_nnx_entry_points_it_claims_and_compiles_only_in_iteration_0(
    script, flags, mode, jitted, bound, graph_work, shared_runs
):
    """The compile mode logged is the one tested. --no-jit never reaches nnx.jit; nnx.jit and the cached script run
    in graph mode, the tree script in tree mode; GAE, a function of arrays only, is under jax.jit. The cached and tree
    scripts bind the agent, rollout state and optimizer once (nnx.cached_partial / nnx.jit_partial) and call the bound
    functions every iteration (Flax raises if a cached call's nnx.jit did not use the cache). After iteration 0 nothing
    compiles, and of the compiled modes only tree mode's calls skip NNX's graph machinery entirely (tests/probe.py
    records all of it in the script's probed run)."""
    run = shared_runs.eager(script) if flags else shared_runs.smoke(script)
    record, iterations = run.record, len(run.scalars["time/iteration"])
    assert sorted(record["jitted"]) == sorted(jitted)
    assert record["bound"] == bound
    assert record["bound_calls"] == {key: iterations for key in bound}
    assert len(record["jax_boundaries"]) == iterations
    assert flags or record["jax_boundaries"] == [len(record["jax_compilations"])] * iterations
    assert table(run.texts["system"])["compile_mode"] == mode
    assert graph_work is None or (record["graph_calls_after_iteration_0"] > 0) == graph_work
