"""ppo_linen_scan.py: ppo_linen.py's training compiled whole (lax.scan over iterations), --num-seeds agents vmapped in
one process, each with its own seed and (--hparams) float hyperparameters. Its agents compute what ppo_linen.py computes
with their seeds and values, each in its own run folder; a diverged agent stops alone; the host receives every
iteration as it ends; nothing compiles after iteration 0; the memory check refuses what cannot fit.

The fast tests read the shared smoke runs of both scripts (TINY, 3 iterations) or trace in this process; the runs of
several agents, of other chunkings and of a diverging pair of agents are slow. The learning run of 4 agents and the
smoke, bad input, NaN and signal tests of every script run it through the registry (tests/helpers.py)."""
import functools
import json
import os
import re

import gymnax
import jax
import numpy as np
import pytest

import ppo_linen_scan
from helpers import ROOT, TINY, agent_runs, assert_clean_error, read_run, run_script, table
from tolerance import assert_curves_close

SCAN, LINEN = "ppo_linen_scan.py", "ppo_linen.py"
CURVE_TAGS = ["losses/value_loss", "losses/policy_loss", "losses/entropy", "losses/approx_kl", "losses/old_approx_kl",
              "losses/clipfrac", "losses/explained_variance", "charts/episodic_return", "charts/episodic_length"]


def assert_same_curves(scalars, expected):
    """Losses and returns of each iteration equal to float32 rounding (tests/tolerance.py): a vmapped, scanned call
    reduces in another order than three separate calls."""
    assert_curves_close(scalars, expected, CURVE_TAGS)


def test_one_agent_computes_the_losses_and_returns_of_ppo_linen_with_its_seed(shared_runs):
    assert_same_curves(shared_runs.smoke(SCAN).scalars, shared_runs.smoke(LINEN).scalars)


def test_the_host_receives_each_iteration_once_from_the_callback_and_nothing_compiles_after_iteration_0(shared_runs):
    """The probed smoke run (3 iterations, one chunk): the only host reads are the callback's, one per iteration; the
    chunk, compiled ahead in iteration 0, is JAX's last compilation. time/compile is a part of iteration 0."""
    run = shared_runs.smoke(SCAN)
    outermost = [(f["method"], f["file"], f["line"]) for f in run.record["fetches"] if not f["nested"]]
    assert len(outermost) == 3 and set(outermost) == {("jax.device_get", os.path.join(ROOT, SCAN), outermost[0][2])}
    compilations = run.record["jax_compilations"]
    assert compilations[-1] == "jit(train_chunk)" and compilations.count("jit(train_chunk)") == 1
    (compile_step, compile_seconds), = run.scalars["time/compile"]
    assert compile_step == 0 and 0 < compile_seconds < run.scalars["time/iteration"][0][1]
    assert table(run.texts["system"])["compile_mode"] == "scan"
    assert table(run.texts["hyperparameters"])["num_seeds"] == "1"


def tiny_chunk(**changes) -> tuple:
    """A TINY chunk function of the agents `changes` make (2 by default) and their state, built as main() builds it."""
    args = ppo_linen_scan.Args(num_envs=4, num_steps=16, num_minibatches=2, update_epochs=2, num_seeds=2, **changes)
    env, env_params = gymnax.make(args.env_id)
    agent, _, state = ppo_linen_scan.init_agents(args, env, env_params)
    iteration_fn = functools.partial(
        ppo_linen_scan.train_iteration, agent=agent, env=env, env_params=env_params, args=args
    )
    return functools.partial(ppo_linen_scan.train_chunk, iteration_fn=iteration_fn, report=print), state


def chunk_jaxpr():
    """The jaxpr of a TINY chunk of 2 iterations of 2 agents."""
    chunk, state = tiny_chunk()
    return jax.make_jaxpr(chunk, static_argnums=1)(state, 2)


def callbacks(jaxpr) -> list:
    """The io_callback equations of `jaxpr`, sub-jaxprs included, each with the primitive it is nested in."""
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "io_callback":
            found.append(eqn)
        for param in eqn.params.values():
            inner = getattr(param, "jaxpr", param)
            found += callbacks(inner) if hasattr(inner, "eqns") else []
    return found


def test_the_compiled_chunk_hands_each_iteration_to_the_host_from_inside_its_scan():
    """One ordered io_callback per iteration, in the scan's body, with every agent's metrics (a leading axis of 2); the
    chunk returns only the state."""
    jaxpr = chunk_jaxpr().jaxpr
    (scan,) = [eqn for eqn in jaxpr.eqns if eqn.primitive.name == "scan"]
    assert not [eqn for eqn in jaxpr.eqns if eqn.primitive.name == "io_callback"]
    (callback,) = callbacks(scan.params["jaxpr"].jaxpr)
    assert callback.params["ordered"] and {var.aval.shape[:1] for var in callback.invars} == {(2,)}
    assert len(jaxpr.outvars) == len(jaxpr.invars)  # the state's leaves in, the state's leaves out


def test_the_memory_check_refuses_agents_whose_batches_would_not_fit(monkeypatch):
    """The sweep's model: 640 MiB plus, per sample of every agent's batch, 256 bytes and 8 per observation element
    (CartPole: 4); BENCHMARK_MEM_AVAILABLE_KB stands in for MemAvailable."""
    monkeypatch.setenv("BENCHMARK_MEM_AVAILABLE_KB", str(2 * 1024**2))  # 2 GiB
    per_agent = 32 * 256 * (256 + 8 * 4)  # bytes: the default batch of 32 envs x 256 steps
    fits = max(n for n in range(1, 2000) if 640 + n * per_agent // 2**20 <= 2048)  # the most agents the model lets by
    assert ppo_linen_scan.check_args(ppo_linen_scan.Args(num_seeds=fits)) is None
    reason = ppo_linen_scan.check_args(ppo_linen_scan.Args(num_seeds=fits + 1))
    assert re.fullmatch(rf"--num-seeds {fits + 1}: estimated peak memory (\d+) MiB, 2048 MiB available", reason)
    monkeypatch.setenv("BENCHMARK_MEM_AVAILABLE_KB", "lots")
    reason = ppo_linen_scan.check_args(ppo_linen_scan.Args())
    assert reason == "BENCHMARK_MEM_AVAILABLE_KB needs a positive number of KiB, not 'lots'"


def scan_runs(shared_runs, background=False):
    """Four agents in one scan process, the three Linen runs of seeds 2-4 beside them, and the scan run in chunks: the
    scan script's runs (a list, with None for each when started in the background)."""
    return [shared_runs.tiny(SCAN, "--num-seeds", "4", background=background),
            shared_runs.tiny(SCAN, "--chunk-iterations", "2", background=background),
            *(shared_runs.tiny(LINEN, "--seed", str(seed), background=background) for seed in (2, 3, 4))]


@pytest.mark.slow
@pytest.mark.background.with_args(scan_runs)
def test_four_agents_write_a_run_folder_each_and_compute_what_ppo_linen_computes_with_their_seeds(shared_runs):
    run = scan_runs(shared_runs)[0]
    assert sorted(os.listdir(os.path.dirname(run.run_dir))) == ["run__seed1", "run__seed2", "run__seed3", "run__seed4"]
    for seed, (scalars, texts) in enumerate(agent_runs(run.run_dir), start=1):
        hyperparameters = table(texts["hyperparameters"])
        assert (hyperparameters["seed"], hyperparameters["run_name"]) == (str(seed), f"run__seed{seed}")
        linen = shared_runs.smoke(LINEN) if seed == 1 else shared_runs.tiny(LINEN, "--seed", str(seed))
        assert_same_curves(scalars, linen.scalars)


@pytest.mark.slow
@pytest.mark.background.with_args(scan_runs)
def test_chunks_of_2_and_1_iterations_compute_what_one_call_of_3_computes(shared_runs):
    """3 iterations as chunks of 2 and 1, both compiled ahead in iteration 0, each iteration logged as it ends."""
    run = scan_runs(shared_runs)[1]
    assert_same_curves(run.scalars, shared_runs.smoke(SCAN).scalars)
    assert [step for step, _ in run.scalars["time/iteration"]] == [0, 1, 2] and "time/total" in run.scalars


@pytest.mark.slow
def test_a_diverged_agent_stops_its_own_run_with_its_error_line_and_its_neighbour_trains_on_then_exit_3(tmp_path):
    """Agent 1's absurd learning rate (--hparams) makes its loss NaN or inf; agent 2 trains to the end."""
    diverging = ["--num-envs", "4", "--num-steps", "16", "--num-minibatches", "1", "--update-epochs", "1",
                 "--num-iterations", "20", "--num-seeds", "2", "--hparams",
                 write_hparams(tmp_path, [{"learning_rate": 1e30}, {}])]
    log_dir = tmp_path / "runs"
    result = run_script(SCAN, *diverging, "--log-dir", str(log_dir), "--run-name", "nan")
    assert result.returncode == 3, result.stderr[-3000:]
    match = re.fullmatch(r"error: loss is (NaN|inf) at iteration (\d+); partial run in (.*)\n", result.stderr)
    assert match and match[3] == str(log_dir / "nan__seed1"), result.stderr[-3000:]
    diverged = int(match[2])
    for seed, logged in ((1, diverged), (2, 20)):
        scalars, texts = read_run(str(log_dir / f"nan__seed{seed}"))
        assert [step for step, _ in scalars["time/iteration"]] == list(range(logged))
        assert ("time/total" in scalars) == (seed == 2)


@pytest.mark.slow
def test_agents_that_would_not_fit_in_memory_are_refused_with_one_line_before_anything_is_created(tmp_path):
    log_dir = str(tmp_path / "runs")
    little = {"BENCHMARK_MEM_AVAILABLE_KB": "1024"}  # 1 MiB
    result = run_script(SCAN, *TINY, "--num-seeds", "2", "--log-dir", log_dir, env=little)
    assert result.returncode == 2
    assert_clean_error(result, log_dir, "--num-seeds 2: estimated peak memory 640 MiB, 1 MiB available")


def write_hparams(tmp_path, agents) -> str:
    path = tmp_path / "hparams.json"
    path.write_text(json.dumps(agents) if not isinstance(agents, str) else agents)
    return str(path)


@pytest.mark.parametrize(("agents", "reason"), [
    ("[{}]", "want a JSON list of --num-seeds (2) objects"),
    ("[{}, 3]", "want a JSON list of --num-seeds (2) objects"),
    ("{not json", "Expecting property name"),
    ([{"num_envs": 8}, {}], "agent 0: num_envs cannot differ between agents here"),
    ([{}, {"gamma": "high"}], 'agent 1: want numbers (an integer seed), got {"gamma": "high"}'),
    ([{"seed": 1.5}, {}], "agent 0: want numbers (an integer seed)"),
    ([{"seed": 2}, {}], "two agents have the same seed (and would share a run folder)"),
    ([{}, {"seed": 2**70}], f"agent 1: the seed must be in [0, 2**32), got {2**70}"),
    ([{}, {"learning_rate": 0}], "agent 1: --learning-rate must be positive, got 0"),
    ([{"gamma": 1.5}, {}], "agent 0: --gamma must be in (0, 1], got 1.5"),
    ([{}, {"clip_coef": float("nan")}], "agent 1: --clip-coef must be positive, got nan"),
])
def test_a_bad_hparams_file_is_refused_with_what_is_wrong_and_where(tmp_path, agents, reason):
    path = write_hparams(tmp_path, agents)
    refused = ppo_linen_scan.check_args(ppo_linen_scan.Args(num_seeds=2, hparams=path))
    assert refused.startswith(f"--hparams {path}: ") and reason in refused, refused
    missing = ppo_linen_scan.check_args(ppo_linen_scan.Args(num_seeds=2, hparams=str(tmp_path / "none.json")))
    assert missing == f"--hparams {tmp_path / 'none.json'}: No such file or directory"


def test_an_agent_with_learning_rate_0_keeps_its_initial_parameters_while_its_neighbour_learns(tmp_path):
    """A unit test of the training functions (the command line refuses a learning rate of 0, as every script does)."""
    chunk, state = tiny_chunk(hparams=write_hparams(tmp_path, [{"learning_rate": 0.0}, {"learning_rate": 0.01}]))
    initial = jax.tree.map(np.asarray, state.train_state.params)
    trained = jax.tree.map(np.asarray, jax.jit(chunk, static_argnums=1)(state, 2).train_state.params)
    frozen_before, learning_before = (jax.tree.map(lambda x, i=i: x[i], initial) for i in (0, 1))
    frozen_after, learning_after = (jax.tree.map(lambda x, i=i: x[i], trained) for i in (0, 1))
    jax.tree.map(np.testing.assert_array_equal, frozen_after, frozen_before)
    changed = jax.tree.leaves(jax.tree.map(lambda a, b: not np.array_equal(a, b), learning_after, learning_before))
    assert all(changed)


@pytest.mark.slow
def test_each_agent_of_an_hparams_file_computes_what_ppo_linen_computes_with_its_seed_and_values(shared_runs, tmp_path):
    """Agent 0 sets its seed and all seven values; agent 1 sets none (seed --seed + 1 and the flags' values). The
    values are float32 arrays here, Python floats there (gamma * gae_lambda rounds once or twice): rounding apart."""
    values = {"learning_rate": 0.001, "gamma": 0.95, "gae_lambda": 0.9, "clip_coef": 0.3, "ent_coef": 0.0,
              "vf_coef": 1.0, "max_grad_norm": 1.0}
    run = shared_runs.tiny(SCAN, "--num-seeds", "2", "--hparams", write_hparams(tmp_path, [{"seed": 5, **values}, {}]))
    assert sorted(os.listdir(os.path.dirname(run.run_dir))) == ["run__seed2", "run__seed5"]
    flags = [word for name, value in values.items() for word in (f"--{name.replace('_', '-')}", str(value))]
    expected_runs = {5: shared_runs.tiny(LINEN, "--seed", "5", *flags), 2: shared_runs.tiny(LINEN, "--seed", "2")}
    for seed, expected in expected_runs.items():
        scalars, texts = read_run(f"{run.run_dir}__seed{seed}")
        assert_same_curves(scalars, expected.scalars)
        np.testing.assert_allclose([v for _, v in scalars["charts/learning_rate"]],
                                   [v for _, v in expected.scalars["charts/learning_rate"]], rtol=1e-6)
        hyperparameters = table(texts["hyperparameters"])
        assert hyperparameters["seed"] == str(seed) and hyperparameters["hparams"] == ""
        assert hyperparameters["gamma"] == str(values["gamma"] if seed == 5 else 0.99)


def test_tune_reads_the_per_agent_fields_of_the_script_and_of_its_population_stand_in_alike():
    """tune.py --population writes each agent's values of these fields (read with ast from the HPARAMS tuple that the
    script makes its HParams of); the stand-in that its fast tests run keeps the same contract."""
    from search.space import agent_fields

    fields = set(ppo_linen_scan.HParams._fields)
    assert agent_fields(os.path.join(ROOT, SCAN)) == agent_fields(os.path.join(ROOT, "tests", "ppo_population_standin.py"))
    assert agent_fields(os.path.join(ROOT, SCAN)) == fields == set(ppo_linen_scan.HPARAMS)
