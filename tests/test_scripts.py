"""Behaviour every ppo_*.py script shares: smoke runs, logged tags, bad input, learning, seeding.

The runs are shared (tests/conftest.py): per script one fast TINY run, a TINY run with --sync-timing, one with
seed 2 and a learning run; per eager script one probed eager run; the bsuite and MinAtar envs on one script per
framework family, in both modes."""
import os
import re

import pytest

from helpers import (
    ALWAYS_TAGS, CNN_LEARNED_RETURN, CNN_LEARNS_AS, CNN_SCRIPTS, COMPILE_MODE, EAGER_FLAG, EAGER_ITERATIONS,
    EAGER_SCRIPTS, ENV_REFUSALS, FAMILIES, FUSED_SCRIPTS, JAX_EAGER_SCRIPTS, JAX_SCRIPTS, LEARNED_RETURN,
    LEARNING_AGENTS, NATIVE_SCRIPTS, ROOT, SCRIPTS, SYNC_PROFILED, SYNC_TAGS, agent_runs, assert_clean_error,
    auto_device, final_return, learning_iterations, learning_params, table, top_level_sources,
)

# per gymnax framework family, the script that runs its envs: the first that has an eager mode, so both modes run
FAMILY_SCRIPTS = [next((s for s in scripts if EAGER_FLAG[s]), scripts[0]) for scripts in FAMILIES.values()
                  if scripts[0] not in ENV_REFUSALS]
ENV_HELPERS = ("make_env", "make_envs", "SameStepCartPole", "flatten_obs", "env_reset", "env_step", "unpack_step",
               "GYMNASIUM_ENVS", "gymnasium_id")
# (env, eager, sync, network) on each family's script: each env in both modes, sync timing in both modes; MinAtar's
# frames through the MLP compiled and through the CNN (--network cnn) eagerly
ENV_FAMILY_CASES = [
    ("MemoryChain-bsuite", False, True, "mlp"),
    ("MemoryChain-bsuite", True, True, "mlp"),
    ("Breakout-MinAtar", False, True, "mlp"),
    ("Breakout-MinAtar", True, False, "cnn"),
]


def assert_every_spec_tag(run, script, env_id, eager, sync, iterations, batch=64, compile_mode=None):
    scalars, texts = run.scalars, run.texts
    expected = ALWAYS_TAGS | (SYNC_TAGS if sync else set())
    assert expected <= set(scalars), expected - set(scalars)
    assert sync or not (SYNC_TAGS & set(scalars))
    assert [step for step, _ in scalars["time/iteration"]] == list(range(iterations))
    total = sum(v for _, v in scalars["time/iteration"])
    assert scalars["time/total"] == [(iterations, pytest.approx(total, rel=1e-4))]
    assert [step for step, _ in scalars["charts/SPS"]] == [batch * (i + 1) for i in range(iterations)]
    hyperparameters, system = table(texts["hyperparameters"]), table(texts["system"])
    assert hyperparameters["env_id"] == env_id and hyperparameters["sync_timing"] == str(sync)
    assert system["script"] == script and system["device"].startswith(f"{auto_device()}: ")
    assert system["compile_mode"] == (compile_mode or ("none" if eager else COMPILE_MODE[script]))


@pytest.mark.background("smoke")
@pytest.mark.parametrize("script", SCRIPTS)
def test_smoke_run_logs_every_spec_tag(script, shared_runs):
    assert_every_spec_tag(shared_runs.smoke(script), script, "CartPole-v1", eager=False, sync=False, iterations=3)


@pytest.mark.slow
@pytest.mark.background("profiled")
@pytest.mark.parametrize("script", [script for script in SCRIPTS if script not in FUSED_SCRIPTS])
def test_sync_timing_run_logs_the_rollout_and_update_times_too(script, shared_runs):
    run = shared_runs.tiny(script, *SYNC_PROFILED)
    assert_every_spec_tag(run, script, "CartPole-v1", eager=False, sync=True, iterations=3)


@pytest.mark.slow
@pytest.mark.background("eager")
@pytest.mark.parametrize("script", EAGER_SCRIPTS)
def test_eager_run_logs_every_spec_tag(script, shared_runs):
    run = shared_runs.eager(script)
    assert_every_spec_tag(run, script, "CartPole-v1", eager=True, sync=False, iterations=EAGER_ITERATIONS)


def family_env_run(shared_runs, script, env_id, eager, sync, network, background=False):
    """The TINY run of a family's script on a bsuite or MinAtar env, eager or not, timed synchronously or not."""
    flags = ["--env-id", env_id] + ([EAGER_FLAG[script]] if eager else []) + (["--sync-timing"] if sync else [])
    return shared_runs.tiny(script, *flags, *(["--network", "cnn"] if network == "cnn" else []), background=background)


@pytest.mark.slow
@pytest.mark.background.with_args(family_env_run)
@pytest.mark.parametrize(
    "script,env_id,eager,sync,network",
    [(script, *case) for script in FAMILY_SCRIPTS for case in ENV_FAMILY_CASES if EAGER_FLAG[script] or not case[1]],
)
def test_bsuite_and_minatar_runs_log_every_spec_tag_once_per_framework_family(script, env_id, eager, sync, network,
                                                                             shared_runs):
    run = family_env_run(shared_runs, script, env_id, eager, sync, network)
    assert_every_spec_tag(run, script, env_id, eager, sync, iterations=3)
    assert table(run.texts["hyperparameters"])["network"] == network


# Doors (doors.py), an env a module of the project ships, --env-id doors:Doors-v0: once per gymnax framework family,
# and on the Gymnasium family through the module's NumPy vector env and through AsyncVectorEnv
DOORS_CASES = [(script, (), None) for script in FAMILY_SCRIPTS] + [
    ("ppo_torch_gymnasium.py", ("--vectorization", "vector"), "eager-vector"),
    ("ppo_linen_gymnasium.py", ("--vectorization", "async"), "jit-async"),
]
# a user's own module, outside the repository: Doors under the user's id, for both backends (docs/running.md)
USER_ENV_MODULE = '''"""A user's env: Doors under another id, registered for Gymnasium and built for gymnax."""
import gymnasium

import doors

gymnasium.register(id="MyDoors-v1", entry_point=doors.DoorsEnv, vector_entry_point=doors.DoorsVectorEnv)


def make_gymnax(env_id):
    if env_id != "MyDoors-v1":
        raise ValueError(f"no JAX env '{env_id}' here")
    return doors.make_gymnax("Doors-v0")
'''


def doors_run(shared_runs, script, flags, background=False):
    return shared_runs.tiny(script, "--env-id", "doors:Doors-v0", *flags, background=background)


@pytest.mark.slow
@pytest.mark.background.with_args(doors_run)
@pytest.mark.parametrize("script,flags,compile_mode", DOORS_CASES)
def test_doors_from_its_module_runs_and_logs_every_spec_tag_once_per_family(script, flags, compile_mode, shared_runs):
    run = doors_run(shared_runs, script, flags)
    assert_every_spec_tag(run, script, "doors:Doors-v0", eager=False, sync=False, iterations=3,
                          compile_mode=compile_mode)


@pytest.mark.slow
@pytest.mark.parametrize("script", ["ppo_linen.py", "ppo_torch_gymnasium.py"])
def test_a_users_own_env_module_outside_the_repository_is_built_from_module_colon_id(script, shared_runs, tmp_path):
    (tmp_path / "user_envs.py").write_text(USER_ENV_MODULE)
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), ROOT])}
    run = shared_runs.tiny(script, "--env-id", "user_envs:MyDoors-v1", env=env)
    assert_every_spec_tag(run, script, "user_envs:MyDoors-v1", eager=False, sync=False, iterations=3)


def env_helpers(script):
    """The source of each env helper the script defines, by name."""
    return {name: source for name, source in top_level_sources(script).items() if name in ENV_HELPERS}


@pytest.mark.parametrize("family", [family for family, scripts in FAMILIES.items() if len(scripts) > 1])
def test_the_scripts_of_a_family_share_their_env_code_line_for_line(family):
    """What lets the bsuite and MinAtar runs (and the fast robustness runs) cover a family with one script."""
    first, *others = (env_helpers(script) for script in FAMILIES[family])
    assert {"flatten_obs", "env_reset", "env_step"} <= set(first)
    assert all(helpers == first for helpers in others)


@pytest.mark.parametrize("script", JAX_SCRIPTS + NATIVE_SCRIPTS)
def test_a_jax_script_imports_no_torch_and_a_torch_native_script_no_jax(script, shared_runs):
    imported = re.findall(r"^import '([\w.]+)'", shared_runs.smoke(script).result.stderr, flags=re.M)
    used, unused = ("torch", "jax") if script in NATIVE_SCRIPTS else ("jax", "torch")
    assert used in imported and unused not in imported


@pytest.mark.background("smoke")
@pytest.mark.parametrize("script", [s for s in SCRIPTS if s not in ["ppo_torch_gymnasium.py", *FUSED_SCRIPTS, *NATIVE_SCRIPTS]])
def test_default_mode_compiles_nothing_in_jax_after_iteration_0(script, shared_runs):
    """JAX's compile log at each iteration's end (the probed smoke run, 3 iterations): iteration 0 compiles, the rest
    reuse it (an argument that changes its sharding, committed or not, or its weak type would compile again)."""
    boundaries = shared_runs.smoke(script).record["jax_boundaries"]
    assert len(boundaries) == 3 and boundaries[0] > 0 and boundaries == [boundaries[0]] * 3, boundaries


@pytest.mark.slow
@pytest.mark.background("eager")
@pytest.mark.parametrize("script", JAX_EAGER_SCRIPTS)
def test_eager_mode_compilations_do_not_grow_with_iterations(script, shared_runs):
    """JAX's compile log, counted at each iteration's end: iterations 3 to 5 compile nothing more than 1 and 2."""
    boundaries = shared_runs.eager(script).record["jax_boundaries"]
    assert len(boundaries) == EAGER_ITERATIONS
    assert boundaries[1] > 0 and boundaries[1:] == [boundaries[1]] * (EAGER_ITERATIONS - 1), boundaries


@pytest.mark.slow
@pytest.mark.background("unknown_env")
@pytest.mark.parametrize("script", SCRIPTS)
def test_bad_input_in_a_fresh_process_writes_its_one_error_line_and_nothing_else(script, shared_runs):
    """The CLI probe (tests/test_robustness.py) runs every bad command line of every script in its one process, where
    each script's imports happened once before; here the script's own process, imports included, says only why."""
    run = shared_runs.unknown_env(script)
    expected = ENV_REFUSALS.get(script, "unknown env")
    assert_clean_error(run.result, os.path.dirname(run.run_dir), expected)


@pytest.mark.slow
@pytest.mark.background("learning")
@pytest.mark.parametrize("script", learning_params(SCRIPTS))
def test_default_config_learns_cartpole_with_the_lr_annealed_to_zero(script, shared_runs):
    """Every agent of the run: a fused script's learning run trains LEARNING_AGENTS, seeds 1 onwards, each must learn."""
    runs, iterations = agent_runs(shared_runs.learning(script).run_dir), learning_iterations(script)
    assert len(runs) == (LEARNING_AGENTS if script in FUSED_SCRIPTS else 1)
    for seed, (scalars, texts) in enumerate(runs, start=1):
        assert table(texts["hyperparameters"])["seed"] == str(seed)
        assert final_return(scalars) >= LEARNED_RETURN, seed
        learning_rates = [value for _, value in scalars["charts/learning_rate"]]
        assert len(learning_rates) == iterations and learning_rates == sorted(learning_rates, reverse=True)
        assert learning_rates[-1] <= learning_rates[0] / iterations * 1.0001
        assert ALWAYS_TAGS <= set(scalars)


@pytest.mark.slow
@pytest.mark.background("cnn_learning")
@pytest.mark.parametrize("script", learning_params(CNN_SCRIPTS, CNN_LEARNS_AS))
def test_the_cnn_learns_breakout_minatar(script, shared_runs):
    run = shared_runs.cnn_learning(script)
    assert table(run.texts["hyperparameters"])["network"] == "cnn"
    assert final_return(run.scalars) >= CNN_LEARNED_RETURN


def curve(run):
    return [run.scalars[tag] for tag in ("losses/value_loss", "losses/policy_loss", "charts/episodic_return")]


@pytest.mark.slow
@pytest.mark.background("other_seed")
@pytest.mark.parametrize("script", SCRIPTS)
def test_same_seed_same_curve_with_or_without_sync_timing_and_profiling_other_seed_differs(script, shared_runs):
    first = curve(shared_runs.smoke(script))
    assert table(shared_runs.smoke(script).texts["hyperparameters"])["seed"] == "1"
    assert curve(shared_runs.profiled(script)) == first  # neither changes what is computed
    assert curve(shared_runs.other_seed(script)) != first
