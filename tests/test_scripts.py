"""Behaviour every ppo_*.py script shares: smoke runs, logged tags, bad input, learning, seeding."""
import os
import re

import pytest

from helpers import (
    ALWAYS_TAGS, EAGER_FLAG, JAX_EAGER_SCRIPTS, JAX_SCRIPTS, SCRIPTS, SYNC_TAGS, TINY, assert_clean_error, final_return,
    read_run, run_script, table,
)

# (env, eager, sync): every flag combination on a classic env; both modes on bsuite and MinAtar
SMOKE_CASES = [
    ("CartPole-v1", False, False),
    ("CartPole-v1", False, True),
    ("CartPole-v1", True, False),
    ("CartPole-v1", True, True),
    ("MemoryChain-bsuite", False, True),
    ("MemoryChain-bsuite", True, False),
    ("Breakout-MinAtar", False, True),
    ("Breakout-MinAtar", True, False),
]


def run_tiny(script, tmp_path, *extra, iterations=2, name="run", env=None):
    log_dir = str(tmp_path / "runs")
    result = run_script(
        script, *TINY, "--num-iterations", str(iterations), "--log-dir", log_dir, "--run-name", name, *extra, env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result, os.path.join(log_dir, name)


@pytest.mark.parametrize(
    "script,env_id,eager,sync",
    [(script, *case) for script in SCRIPTS for case in SMOKE_CASES if EAGER_FLAG[script] or not case[1]],
)
def test_smoke_run_logs_every_spec_tag(script, env_id, eager, sync, tmp_path):
    flags = ["--env-id", env_id] + ([EAGER_FLAG[script]] if eager else []) + (["--sync-timing"] if sync else [])
    _, run_dir = run_tiny(script, tmp_path, *flags, iterations=3)
    scalars, texts = read_run(run_dir)
    expected = ALWAYS_TAGS | (SYNC_TAGS if sync else set())
    assert expected <= set(scalars), expected - set(scalars)
    assert not sync and not (SYNC_TAGS & set(scalars)) or sync
    assert [step for step, _ in scalars["time/iteration"]] == [0, 1, 2]
    assert scalars["time/total"] == [(3, pytest.approx(sum(v for _, v in scalars["time/iteration"]), rel=1e-4))]
    assert [step for step, _ in scalars["charts/SPS"]] == [64, 128, 192]
    hyperparameters, system = table(texts["hyperparameters"]), table(texts["system"])
    assert hyperparameters["env_id"] == env_id and hyperparameters["sync_timing"] == str(sync)
    assert system["script"] == script and system["device"].startswith("cpu")
    assert system["compile_mode"] == ("none" if eager else system["compile_mode"])


@pytest.mark.parametrize("script", JAX_SCRIPTS)
def test_jax_script_does_not_import_torch(script, tmp_path):
    result, _ = run_tiny(script, tmp_path, "--num-iterations", "1", env={"PYTHONVERBOSE": "1"})
    imported = re.findall(r"^import '([\w.]+)'", result.stderr, flags=re.M)
    assert "jax" in imported and "torch" not in imported


@pytest.mark.parametrize("script", JAX_EAGER_SCRIPTS)
def test_eager_mode_compilations_do_not_grow_with_iterations(script, tmp_path):
    def compilations(iterations):
        result, _ = run_tiny(
            script, tmp_path, EAGER_FLAG[script], iterations=iterations, name=f"n{iterations}",
            env={"JAX_LOG_COMPILES": "1"},
        )
        return len(re.findall(r"^.*Compiling ", result.stderr, flags=re.M))

    two, five = compilations(2), compilations(5)
    assert two > 0 and five == two


BAD_INPUTS = [
    (["--env-id", "NoSuchEnv-v0"], "unknown env"),
    (["--env-id", "Pendulum-v1"], "continuous action space"),
    (["--num-minibatches", "7"], "not divisible"),
    (["--num-envs", "0"], "--num-envs must be positive"),
]


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("bad_args,expected", BAD_INPUTS)
def test_bad_input_exits_with_one_clear_line(script, bad_args, expected, tmp_path):
    log_dir = str(tmp_path / "runs")
    result = run_script(script, *bad_args, "--log-dir", log_dir)
    assert_clean_error(result, log_dir, expected)


@pytest.mark.parametrize("script", SCRIPTS)
def test_default_config_learns_cartpole(script, tmp_path):
    log_dir = str(tmp_path / "runs")
    result = run_script(script, "--seed", "1", "--log-dir", log_dir, "--run-name", "learn")
    assert result.returncode == 0, result.stderr[-3000:]
    scalars, _ = read_run(os.path.join(log_dir, "learn"))
    assert final_return(scalars) >= 400


@pytest.mark.parametrize("script", SCRIPTS)
def test_same_seed_same_curve_other_seed_differs(script, tmp_path):
    def curve(seed, name):
        _, run_dir = run_tiny(script, tmp_path, "--seed", str(seed), iterations=3, name=name)
        scalars, _ = read_run(run_dir)
        return [scalars[tag] for tag in ("losses/value_loss", "losses/policy_loss", "charts/episodic_return")]

    first = curve(1, "a")
    assert curve(1, "b") == first
    assert curve(2, "c") != first
