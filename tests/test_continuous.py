"""The continuous-action PPO scripts (exp12) in fresh processes: each one's smoke run, learning on Pendulum-v1, Brax
and MuJoCo envs, and the env code the JAX family shares line for line. Their bad input is the CLI probe's
(tests/test_robustness.py); their loss, gradients and normalisers are each framework's test_continuous_*.py."""
import numpy as np
import pytest

from helpers import (
    ALWAYS_TAGS, BRAX_TINY, CONTINUOUS_GYMNASIUM_SCRIPTS, CONTINUOUS_LEARNED_RETURN, CONTINUOUS_SCRIPTS,
    default_row, final_return, learning_params, table, top_level_sources,
)
from sweep import variants

JAX_ENV_SCRIPTS = [script for script in CONTINUOUS_SCRIPTS if script not in CONTINUOUS_GYMNASIUM_SCRIPTS]
# the env code of the scripts on JAX envs: the Brax adapter, the normalisers (CleanRL's env wrappers), reset and step
JAX_ENV_CODE = ("BRAX_ENVS", "BraxState", "BraxEnv", "make_env", "flatten_obs", "RunningStats", "Normalizer",
                "new_stats", "update_stats", "normalize_obs", "normalize_step", "env_reset", "env_step")


@pytest.mark.background("continuous_smoke")
@pytest.mark.parametrize("script", CONTINUOUS_SCRIPTS)
def test_smoke_run_on_pendulum_logs_every_tag_and_its_compile_mode(script, shared_runs):
    run = shared_runs.continuous_smoke(script)
    assert ALWAYS_TAGS <= set(run.scalars)
    assert [step for step, _ in run.scalars["time/iteration"]] == [0, 1, 2]
    assert table(run.texts["system"])["compile_mode"] == default_row(script).mode
    assert table(run.texts["hyperparameters"])["env_id"] == "Pendulum-v1"
    assert all(np.isfinite(value) for _, value in run.scalars["losses/policy_loss"])


def compiled_torch_run(shared_runs, background=False):
    row = variants.CONTINUOUS_TORCH_COMPILE
    return shared_runs.tiny(row.file, *row.flags, background=background)


@pytest.mark.slow
@pytest.mark.background.with_args(compiled_torch_run)
def test_compiled_torch_mode_runs_and_names_its_mode(shared_runs):
    row = variants.CONTINUOUS_TORCH_COMPILE
    run = compiled_torch_run(shared_runs)
    assert table(run.texts["system"])["compile_mode"] == row.mode
    assert ALWAYS_TAGS <= set(run.scalars)


@pytest.mark.slow
@pytest.mark.background("continuous_learning")
@pytest.mark.parametrize("script", learning_params(CONTINUOUS_SCRIPTS))
def test_default_config_learns_pendulum(script, shared_runs):
    run = shared_runs.continuous_learning(script)
    returns = [value for _, value in run.scalars["charts/episodic_return"]]
    assert returns[0] < -1100, returns[:5]  # a random policy's: -1,178 to -1,376 at iteration 1 (seed 1)
    assert final_return(run.scalars) >= CONTINUOUS_LEARNED_RETURN, returns[-5:]


def brax_hopper_run(shared_runs, script, background=False):
    return shared_runs.tiny(script, *BRAX_TINY, iterations=2, background=background)


@pytest.mark.slow
@pytest.mark.background.with_args(brax_hopper_run)
@pytest.mark.parametrize("script", [variants.CONTINUOUS_LINEN.file, variants.CONTINUOUS_TORCH.file])
def test_brax_hopper_runs_with_episodes_truncated_at_the_episode_length(script, shared_runs):
    run = brax_hopper_run(shared_runs, script)
    lengths = [value for _, value in run.scalars["charts/episodic_length"]]
    assert lengths and all(1 <= value <= 8 for value in lengths), lengths
    assert table(run.texts["system"])["brax"]


def mujoco_hopper_run(shared_runs, script, background=False):
    return shared_runs.tiny(script, "--env-id", "Hopper-v5", iterations=2, background=background)


@pytest.mark.slow
@pytest.mark.background.with_args(mujoco_hopper_run)
@pytest.mark.parametrize("script", CONTINUOUS_GYMNASIUM_SCRIPTS)
def test_mujoco_hopper_runs_through_gymnasium(script, shared_runs):
    run = mujoco_hopper_run(shared_runs, script)
    assert ALWAYS_TAGS <= set(run.scalars)
    assert table(run.texts["hyperparameters"])["env_id"] == "Hopper-v5"


@pytest.mark.parametrize("script", JAX_ENV_SCRIPTS[1:])
def test_the_jax_env_code_is_the_references_line_for_line(script):
    reference, sources = top_level_sources(JAX_ENV_SCRIPTS[0]), top_level_sources(script)
    for name in JAX_ENV_CODE:
        assert sources[name] == reference[name], f"{script}: {name} differs from {JAX_ENV_SCRIPTS[0]}'s"
