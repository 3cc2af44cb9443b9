"""The JAX scripts' training loop does only the study's work: nothing runs between its compiled calls, the host waits
once per iteration, each iteration donates the state it replaces, and with --no-bootstrap-truncated no V(final
observation) is computed."""
import functools
import glob
import gzip
import json
import os

import gymnax
import jax
import jax.numpy as jnp
import pytest
from flax import nnx

import ppo_equinox
import ppo_linen
import ppo_linen_gymnasium
import ppo_linen_scan
import ppo_nnx
import ppo_nnx_cached
from helpers import FUSED_SCRIPTS, GYMNASIUM_SCRIPTS, JAX_SCRIPTS, ROOT, SYNC_PROFILED, TINY, default_row
from test_parity_nnx import new_stats
from test_parity_nnx_tree import ppo_nnx_tree

NUM_ENVS, HIDDEN = 4, 64  # the small model: the critic's head multiplies by a HIDDEN x 1 weight


def gymnax_start(module):
    env, env_params = gymnax.make("CartPole-v1")
    obs, env_state = module.env_reset(jax.random.PRNGKey(0), env, env_params, NUM_ENVS)
    return env, env_params, obs, env_state


def linen_rollout_jaxpr(module, bootstrap):
    env, env_params, obs, env_state = gymnax_start(module)
    agent = module.Agent(module.MODEL_SIZES["small"], 2)  # as every Linen script builds it (the scan's: no make_agent)
    params = agent.init(jax.random.PRNGKey(1), obs[:1])
    carry = module.RolloutCarry(env_state, obs, jax.random.PRNGKey(2), new_stats(module, NUM_ENVS))
    rollout = functools.partial(
        module.rollout, agent=agent, env=env, env_params=env_params, num_steps=3, bootstrap_truncated=bootstrap
    )
    return jax.make_jaxpr(rollout)(params, carry)


def equinox_rollout_jaxpr(module, bootstrap):
    env, env_params, obs, env_state = gymnax_start(module)
    agent = module.make_agent(jax.random.PRNGKey(1), obs.shape[1], 2, "small")
    carry = module.RolloutCarry(env_state, obs, jax.random.PRNGKey(2), new_stats(module, NUM_ENVS))
    rollout = functools.partial(
        module.rollout, env=env, env_params=env_params, num_steps=3, bootstrap_truncated=bootstrap
    )
    return jax.make_jaxpr(rollout)(agent, carry)


def nnx_rollout_jaxpr(module, bootstrap):
    """The rollout on the agent and rollout state, split into a graph definition and arrays: a pure function."""
    env, env_params, obs, env_state = gymnax_start(module)
    agent = module.make_agent(jax.random.PRNGKey(1), obs.shape[1], 2, "small")
    state = module.RolloutState(env_state, obs, jax.random.PRNGKey(2), new_stats(module, NUM_ENVS))
    graphdef, arrays = nnx.split((agent, state))
    rollout = functools.partial(
        module.rollout, env=env, env_params=env_params, num_steps=3, bootstrap_truncated=bootstrap
    )
    return jax.make_jaxpr(lambda arrays: rollout(*nnx.merge(graphdef, arrays)))(arrays)


def gymnasium_step_jaxpr(module, bootstrap):
    """The Gymnasium script's one compiled call per env step, which records the step just taken."""
    agent, params = module.make_agent(jax.random.PRNGKey(1), 4, 2, "small")
    step = jnp.zeros((NUM_ENVS, 2 * 4 + 3))
    act = functools.partial(module.act_step, agent=agent, bootstrap_truncated=bootstrap)
    return jax.make_jaxpr(act)(params, new_stats(module, NUM_ENVS), jax.random.PRNGKey(2), step)


# script: (its rollout's jaxpr, the critic passes it holds with V(final obs): V(obs) and V(final obs) per step, V(last
# obs) after the last; the Gymnasium script's step call: V(final obs) of the step taken, V(next obs))
ROLLOUTS = {
    "ppo_linen.py": (functools.partial(linen_rollout_jaxpr, ppo_linen), 3),
    "ppo_linen_scan.py": (functools.partial(linen_rollout_jaxpr, ppo_linen_scan), 3),
    "ppo_nnx.py": (functools.partial(nnx_rollout_jaxpr, ppo_nnx), 3),
    "ppo_nnx_cached.py": (functools.partial(nnx_rollout_jaxpr, ppo_nnx_cached), 3),
    "ppo_nnx_tree.py": (functools.partial(nnx_rollout_jaxpr, ppo_nnx_tree), 3),
    "ppo_equinox.py": (functools.partial(equinox_rollout_jaxpr, ppo_equinox), 3),
    "ppo_linen_gymnasium.py": (functools.partial(gymnasium_step_jaxpr, ppo_linen_gymnasium), 2),
}


def critic_passes(jaxpr) -> int:
    """The matrix products by the critic's head weight (HIDDEN x 1, or 1 x HIDDEN in Equinox), sub-jaxprs included:
    one per forward pass of the critic, however the script calls it."""
    count = 0
    for eqn in jaxpr.eqns:
        head = any(getattr(var.aval, "shape", None) in ((HIDDEN, 1), (1, HIDDEN)) for var in eqn.invars)
        count += eqn.primitive.name == "dot_general" and head
        for param in eqn.params.values():
            for sub in param if isinstance(param, (tuple, list)) else [param]:
                inner = getattr(sub, "jaxpr", sub)
                count += critic_passes(inner) if hasattr(inner, "eqns") else 0
    return count


@pytest.mark.parametrize("script", list(ROLLOUTS))
def test_no_bootstrap_truncated_traces_no_critic_pass_on_the_final_observation(script):
    """The flag is static: off, V(final obs) is not computed at all (GAE would ignore it), so the rollout does only
    the work of the study's configuration."""
    trace, passes = ROLLOUTS[script]
    assert critic_passes(trace(True).jaxpr) == passes
    assert critic_passes(trace(False).jaxpr) == passes - 1


def compiled_calls_per_iteration(script):
    """Rollout, GAE and update; the Gymnasium script: one call to start the rollout, one per env step, one to stack the
    steps, GAE and update."""
    return int(TINY[TINY.index("--num-steps") + 1]) + 4 if script in GYMNASIUM_SCRIPTS else 3


# the per-iteration loop's checks; a fused script has none (one compiled call per chunk, no fetch in main(): test_scan)
LOOP_SCRIPTS = [script for script in JAX_SCRIPTS if script not in FUSED_SCRIPTS]


@pytest.mark.slow
@pytest.mark.background("profiled")
@pytest.mark.parametrize("script", LOOP_SCRIPTS)
def test_a_steady_state_iteration_executes_its_compiled_calls_and_nothing_else(script, shared_runs):
    """The profiler trace of the shared sync-timing run (its last iteration): every XLA execution is one of the loop's
    compiled calls. An op dispatched between them (a key split, a reshape, zeros) would be an execution of its own."""
    run = shared_runs.tiny(script, *SYNC_PROFILED)
    (path,) = glob.glob(os.path.join(run.run_dir, "plugins", "profile", "*", "perfetto_trace.json.gz"))
    with gzip.open(path) as f:
        names = [event.get("name") for event in json.load(f)["traceEvents"] if event.get("ph") == "X"]
    executions = names.count("CommonPjRtLoadedExecutable::ExecuteHelperOnSingleDevice")
    assert executions == compiled_calls_per_iteration(script)


@pytest.mark.background("smoke")
@pytest.mark.parametrize("script", [script for script in LOOP_SCRIPTS if script not in GYMNASIUM_SCRIPTS])
def test_the_host_waits_once_per_iteration_for_the_logged_metrics(script, shared_runs):
    """The probed smoke run (TINY, 3 iterations): the only host reads are the script's one jax.device_get per iteration
    (and the leaf reads inside it); no compiled call waits for its result (eqx.filter_jit would, at every call)."""
    fetches = shared_runs.smoke(script).record["fetches"]
    outermost = [(f["method"], f["file"], f["line"]) for f in fetches if not f["nested"]]
    assert len(outermost) == 3 and set(outermost) == {("jax.device_get", os.path.join(ROOT, script), outermost[0][2])}


# per framework (the scripts of one keep the same names), what each iteration replaces and donates (global name: how
# many of its arrays are not donated); the rollout carry's per-iteration sums of finished episodes are none of the
# rollout's inputs: it starts them at zero
DONATED = {
    "linen": {"train_state": 0, "carry": 3},
    "equinox": {"train_state": 0, "carry": 3},
    "nnx": {"agent": 0, "optimizer": 0, "rollout_state": 3},
}


@pytest.mark.background("smoke")
@pytest.mark.parametrize("script", LOOP_SCRIPTS)
def test_each_iteration_donates_the_train_state_and_the_rollout_state_it_replaces(script, shared_runs):
    """The probed smoke run: the arrays that the train state (or agent and optimizer) and the rollout state held at the
    end of an iteration are deleted by the end of the next, donated to the calls that replace them (XLA reuses their
    buffers; a dropped donation leaves them alive)."""
    donations = shared_runs.smoke(script).record["donations"]
    assert len(donations) == 2
    for deleted_of_held in donations:
        for name, kept in DONATED[default_row(script).framework].items():
            deleted, held = deleted_of_held[name]
            assert held > kept and deleted == held - kept, (name, deleted, held)
