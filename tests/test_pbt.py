"""ppo_linen_pbt.py: ppo_linen_scan.py's agents with population-based training inside the compiled scan. Exploit and
explore on a stand-in population whose returns are known (who must copy whom); the copy bit-equal, the optimiser
state's too, and the copier's values in its optimiser state at the next iteration; explore's ranges; the replay of an
agent's lineage as a run of one agent reproduces its curve; one seed, one run; a diverged agent replaced and said;
bad flags one line each; SIGTERM ends every agent's run partial.

The populations train in this process (main() on tiny shapes, 6 iterations, exploits after iterations 2 and 4); one
bad command line and one signalled population run in fresh processes."""
import ast
import functools
import json
import os
import signal
import subprocess
import sys

import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import ppo_linen_pbt as pbt
from helpers import ALWAYS_TAGS, ROOT, assert_clean_error, read_run, run_script
from search.space import DEFAULT_SPACES
from tolerance import assert_close

TINY = dict(num_envs=4, num_steps=16, num_minibatches=2, update_epochs=2, num_iterations=6, pbt_interval=2,
            pbt_burn_in=2, device="cpu")
# a stand-in population's recent returns: agent 3 finished no episode; ranked 1, 6, 4, 2, 7, 5, 0, 3
RETURNS = np.array([5.0, 80.0, 30.0, np.nan, 60.0, 10.0, 70.0, 20.0], np.float32)
BOTTOM, TOP = {0, 3}, {1, 6}  # a quarter of 8 each
CURVE_TAGS = ["charts/episodic_return", "charts/episodic_length", "charts/learning_rate", "losses/value_loss",
              "losses/policy_loss", "losses/entropy", "losses/approx_kl", "losses/clipfrac", "pbt/gamma"]


@functools.cache
def population(agents: int, **changes) -> tuple:
    """The args and the initial states of a TINY population (made once per shape: JAX arrays are immutable)."""
    args = pbt.Args(num_seeds=agents, **{**TINY, **changes})
    env, env_params = gymnax.make(args.env_id)
    return args, pbt.init_agents(args, env, env_params)[2]


def distinct(agents: pbt.AgentState) -> pbt.AgentState:
    """The states with every leaf of the train state and the rollout carry made different from agent to agent (random
    floats, integers plus the agent's index): a copy then shows in every leaf."""
    leaves, treedef = jax.tree.flatten((agents.train_state, agents.carry))
    keys = jax.random.split(jax.random.PRNGKey(0), len(leaves))
    index = lambda leaf: np.arange(leaf.shape[0]).reshape((-1,) + (1,) * (leaf.ndim - 1)).astype(leaf.dtype)
    made = [jax.random.normal(key, leaf.shape, leaf.dtype) if jnp.issubdtype(leaf.dtype, jnp.floating)
            else leaf + index(leaf) for key, leaf in zip(keys, leaves)]
    train_state, carry = jax.tree.unflatten(treedef, made)
    return agents._replace(train_state=train_state, carry=carry)


@functools.cache
def exploit_fn(agents: int, **changes):
    """exploit_and_explore of population(agents, **changes) under jax.jit, compiled once per population: the new states
    and each agent's source, a NumPy array."""
    exploit = jax.jit(functools.partial(pbt.exploit_and_explore, args=population(agents, **changes)[0]))

    def run(*arguments):
        new, sources = exploit(*arguments)
        return new, np.asarray(sources)

    return run


def test_the_bottom_quarter_by_recent_return_copies_the_top_quarter_after_an_exploits_iterations_only():
    """Exploits after iterations 2 and 4 (indices 1 and 3) of 6; none after the last, none before the burn-in."""
    _, agents = population(8)
    exploit, healthy = exploit_fn(8), np.zeros(8, bool)
    sources_seen = set()
    for iteration, copiers in ((0, set()), (1, BOTTOM), (2, set()), (3, BOTTOM), (5, set())):
        for seed in range(6):
            _, sources = exploit(agents, RETURNS, healthy, jnp.int32(iteration), jax.random.PRNGKey(seed))
            assert set(np.flatnonzero(sources >= 0)) == copiers, (iteration, sources)
            sources_seen |= set(sources[list(copiers)].tolist())
    assert sources_seen == TOP  # drawn from the top quarter, not always the best
    late = exploit_fn(8, pbt_burn_in=3)  # the first exploit after iteration 4
    assert (late(agents, RETURNS, healthy, jnp.int32(1), jax.random.PRNGKey(0))[1] < 0).all()
    assert set(np.flatnonzero(late(agents, RETURNS, healthy, jnp.int32(3), jax.random.PRNGKey(0))[1] >= 0)) == BOTTOM


def test_a_diverged_agent_is_replaced_at_once_and_ranks_last_and_an_agent_alone_copies_nothing():
    _, agents = population(8)
    exploit, diverged = exploit_fn(8), np.arange(8) == 1  # the best return, but diverged
    _, sources = exploit(agents, RETURNS, diverged, jnp.int32(0), jax.random.PRNGKey(0))  # no exploit's iteration
    assert np.flatnonzero(sources >= 0).tolist() == [1] and sources[1] in {6, 4}  # the top quarter of the others
    _, sources = exploit(agents, RETURNS, diverged, jnp.int32(1), jax.random.PRNGKey(0))
    assert set(np.flatnonzero(sources >= 0)) == {1, 3}  # the two that rank last: diverged, no episode
    _, alone = population(1)
    _, sources = exploit_fn(1)(alone, RETURNS[:1], np.ones(1, bool), jnp.int32(1), jax.random.PRNGKey(0))
    assert sources.tolist() == [-1]


def test_a_copier_takes_its_sources_whole_state_bit_for_bit_and_its_explored_values_reach_its_optimiser():
    """Parameters, optimiser state (Adam's moments and count, the LR and clip norm in it), envs, observations, running
    episodes and rollout key: each copier's equal to its source's, the others' unchanged. Its values up to the copy
    stay its own; from the next iteration on they are its source's explored, which the next iteration writes into its
    optimiser state; its rollout key, folded with its own place then, is no longer its source's."""
    args, agents = population(8)
    agents = distinct(agents)
    new, sources = exploit_fn(8)(agents, RETURNS, np.zeros(8, bool), jnp.int32(1), jax.random.PRNGKey(3))
    adam = [state for state in new.train_state.opt_state.inner_state if isinstance(state, optax.ScaleByAdamState)]
    assert len(adam) == 1 and len(jax.tree.leaves(adam)) == 2 * len(jax.tree.leaves(new.train_state.params)) + 1
    before, after = (jax.tree.leaves((state.train_state, state.carry)) for state in (agents, new))
    for j, source in enumerate(sources):
        for old, copied in zip(before, after):
            np.testing.assert_array_equal(copied[j], old[source if source >= 0 else j])
    for j, source in enumerate(sources):
        for name in pbt.HParams._fields:
            old, values = np.asarray(getattr(agents.schedule, name)), np.asarray(getattr(new.schedule, name))
            np.testing.assert_array_equal(values[j, :2], old[j, :2])
            if source < 0:
                np.testing.assert_array_equal(values[j], old[j])
            else:
                assert len(set(values[j, 2:].tolist())) == 1 and values[j, 2] != old[source, 1], name
    env, env_params = gymnax.make(args.env_id)
    iteration = functools.partial(pbt.train_iteration, agent=pbt.Agent((64, 64), 2), env=env, env_params=env_params,
                                  args=args)
    trained, _ = jax.jit(jax.vmap(iteration, in_axes=(0, None)))(new, jnp.int32(2))
    hyperparams = trained.train_state.opt_state.hyperparams
    for name in ("learning_rate", "max_grad_norm"):
        np.testing.assert_array_equal(hyperparams[name], getattr(new.schedule, name)[:, 2])
    keys = np.asarray(trained.carry.key)  # each folded with its own place: a copier's rollouts are not its source's
    assert len({tuple(key) for key in keys}) == 8


def test_the_ranges_of_explore_are_tune_pys_default_ppo_space():
    space = DEFAULT_SPACES["ppo"]
    assert pbt.PBT_RANGES == {name: (space[name]["low"], space[name]["high"], space[name].get("log", False))
                              for name in pbt.HParams._fields}


@pytest.mark.parametrize("resample", [0.0, 1.0])
def test_explore_perturbs_by_0_8_or_1_2_or_resamples_and_keeps_every_value_in_its_range(resample):
    """2,000 values across each range and beyond its ends: perturbed (p = 0), each is one of its two perturbations
    clipped to the range, both factors drawn; resampled (p = 1), none is, and they spread over the range."""
    n = 2000
    spread = {name: np.linspace(low * 0.5, high * 1.5, n, dtype=np.float32) for name, (low, high, _) in
              pbt.PBT_RANGES.items()}
    explored = jax.jit(pbt.explore, static_argnums=2)(pbt.HParams(**spread), jax.random.PRNGKey(1), resample)
    for name, (low, high, log) in pbt.PBT_RANGES.items():
        value, low, high = np.asarray(getattr(explored, name)), np.float32(low), np.float32(high)
        assert value.dtype == np.float32 and (low <= value).all() and (value <= high).all(), name
        down, up = (np.clip(spread[name] * np.float32(factor), low, high) for factor in (0.8, 1.2))
        perturbed = (value == down) | (value == up)
        if resample == 0.0:
            assert perturbed.all() and 0.4 < np.mean((value == up) & (down != up)) / np.mean(down != up) < 0.6, name
        else:
            scale = np.log if log else (lambda x: x)
            position = (scale(value) - scale(low)) / (scale(high) - scale(low))
            assert not perturbed.any() and position.min() < 0.05 and position.max() > 0.95, name


def train(log_dir: str, name: str, **changes) -> list:
    """main() on a TINY population in this process, as the command line runs it: each agent's run folder. The signal
    handlers and the JAX settings main() changes are put back afterwards."""
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    settings = {key: getattr(jax.config, key) for key in ("jax_default_device", "jax_default_matmul_precision")}
    runs = pbt.AgentRuns(pbt.Args(log_dir=log_dir, run_name=name, **{**TINY, **changes}))
    try:
        pbt.main(runs.args, runs)
    finally:
        runs.close()
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        for key, value in settings.items():
            jax.config.update(key, value)
    return [run.run_dir for run in runs.runs]


def curve(scalars: dict, iterations: range) -> dict:
    """{tag: the value at each iteration of `iterations` (None where none was logged)}."""
    return {tag: [dict(scalars.get(tag, [])).get(64 * (t + 1)) for t in iterations] for tag in CURVE_TAGS}


@pytest.mark.slow  # two compiled runs: the full suite runs it
def test_the_replay_of_the_best_agents_lineage_as_one_agent_reproduces_its_curve(tmp_path, capsys):
    """Four agents, seed 3; the best by its last two iterations' returns, agent 3, copied agent 0 after iteration 4. Its
    pbt_replay.json, run as one agent (the lineage's first seed, each iteration's values and place), logs at each
    iteration what the agent its lineage was in then logged: the same episodes, losses, LR and values to float32
    rounding (one agent vmapped against four)."""
    folders = train(str(tmp_path), "population", num_seeds=4, seed=3)
    runs = [read_run(folder)[0] for folder in folders]
    assert ALWAYS_TAGS | {f"pbt/{name}" for name in pbt.HParams._fields} <= set(runs[0])
    schedules = [json.loads(open(os.path.join(folder, "pbt_schedule.json")).read()) for folder in folders]
    copies = [(i, t, source) for i, schedule in enumerate(schedules) for t, source in enumerate(schedule["copied_from"])
              if source >= 0]
    assert copies and {t for _, t, _ in copies} <= {1, 3}
    assert f"pbt: after iteration {copies[0][1] + 1} agent {copies[0][0]} ({folders[copies[0][0]]}) copies agent " \
           f"{copies[0][2]}: its recent return ranks low" in capsys.readouterr().out
    recent = [np.mean([value for _, value in scalars["charts/episodic_return"] if value and _ > 64 * 4])
              for scalars in runs]
    agent = int(np.argmax(recent))
    lineage = schedules[agent]["lineage"]
    assert (agent, lineage) == (3, [0, 0, 0, 0, 3, 3])  # the replay crosses a copy
    replay = os.path.join(folders[agent], "pbt_replay.json")
    (replayed,) = train(str(tmp_path), "replay", num_seeds=1, hparams=replay, seed=99)
    assert json.loads(open(replay).read())[0]["seed"] == schedules[lineage[0]]["seed"]
    expected = {tag: [curve(runs[place], range(6))[tag][t] for t, place in enumerate(lineage)] for tag in CURVE_TAGS}
    got = curve(read_run(replayed)[0], range(6))
    for tag in CURVE_TAGS:
        assert [value is None for value in got[tag]] == [value is None for value in expected[tag]], tag
        present = [(a, b) for a, b in zip(got[tag], expected[tag]) if a is not None]
        assert_close(*zip(*present), tag)


@pytest.mark.slow  # two compiled runs: the full suite runs it
def test_a_diverged_agent_is_replaced_and_said_and_the_same_seed_gives_the_same_run(tmp_path, capsys):
    """Agent 0's absurd learning rate (--hparams) makes it diverge; it is replaced by a copy, says so, explores into the
    range and trains on; every agent finishes and nothing exits 3. Twice: the same scalars and schedules bit for bit."""
    hparams = tmp_path / "hparams.json"
    hparams.write_text(json.dumps([{"learning_rate": 1e30}, {}, {}, {}]))
    first, second = (train(str(tmp_path), name, num_seeds=4, hparams=str(hparams)) for name in ("a", "b"))
    out = capsys.readouterr().out
    schedule = json.loads(open(os.path.join(first[0], "pbt_schedule.json")).read())
    copied = [t for t, source in enumerate(schedule["copied_from"]) if source >= 0]
    assert copied and f"pbt: after iteration {copied[0] + 1} agent 0 ({first[0]}) copies agent " \
                      f"{schedule['copied_from'][copied[0]]}: it diverged (a NaN or inf loss or parameter)" in out
    assert 1e-4 <= schedule["learning_rate"][-1] <= 3e-3
    for a, b in zip(first, second):
        (scalars, _), (again, _) = read_run(a), read_run(b)
        assert "time/total" in scalars
        deterministic = {tag: values for tag, values in scalars.items() if not tag.startswith(("time/", "charts/SPS",
                                                                                                "memory/"))}
        assert deterministic == {tag: again[tag] for tag in deterministic}
        for name in ("pbt_schedule.json", "pbt_replay.json"):
            assert open(os.path.join(a, name)).read() == open(os.path.join(b, name)).read()
    assert dict(read_run(first[0])[0]["pbt/copied_from"]) == {64 * (t + 1): schedule["copied_from"][t] for t in copied}


@pytest.mark.parametrize(("changes", "reason"), [
    ({"pbt_interval": 0}, "--pbt-interval must be positive, got 0"),
    ({"pbt_burn_in": -1}, "--pbt-burn-in must be >= 0, got -1"),
    ({"pbt_bottom": 0.0}, "--pbt-bottom must be in (0, 0.5], got 0.0"),
    ({"pbt_top": 0.6}, "--pbt-top must be in (0, 0.5], got 0.6"),
    ({"pbt_resample": 1.5}, "--pbt-resample must be in [0, 1], got 1.5"),
    ({"pbt_resample": -0.1}, "--pbt-resample must be in [0, 1], got -0.1"),
    ({"hparams": [{"gamma": [0.9] * 5}, {}]},
     "agent 0: gamma: want a number or a list of --num-iterations (6) of them, got [0.9, 0.9, 0.9, 0.9, 0.9]"),
    ({"hparams": [{}, {"gamma": [0.9] * 5 + [1.5]}]}, "agent 1: --gamma must be in (0, 1], got 1.5"),
    ({"hparams": [{}, {"place": -1}]}, "agent 1: place: want an integer in [0, 2**32) or a list of --num-iterations"),
    ({"hparams": [{"seed": [1] * 6}, {}]}, "agent 0: seed: want an integer in [0, 2**32), got [1, 1, 1, 1, 1, 1]"),
])
def test_a_bad_flag_or_hparams_file_is_one_error_line_and_exit_2_before_any_run_folder(tmp_path, capsys, changes,
                                                                                         reason):
    if "hparams" in changes:
        (tmp_path / "hparams.json").write_text(json.dumps(changes["hparams"]))
        changes = {"hparams": str(tmp_path / "hparams.json")}
    log_dir = tmp_path / "runs"
    with pytest.raises(SystemExit) as stop:
        pbt.AgentRuns(pbt.Args(log_dir=str(log_dir), **{**TINY, "num_seeds": 2, **changes}))
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and err.startswith("error: ")
    assert reason in err and not log_dir.exists()


@pytest.mark.slow  # a tool's error line in a fresh process of its own: the values are checked in this process above
def test_a_bad_flag_in_a_fresh_process_is_its_one_error_line(tmp_path):
    log_dir = str(tmp_path / "runs")
    result = run_script("ppo_linen_pbt.py", "--pbt-top", "0.75", "--log-dir", log_dir)
    assert result.returncode == 2
    assert_clean_error(result, log_dir, "--pbt-top must be in (0, 0.5], got 0.75")


TINY_FLAGS = ["--num-envs", "4", "--num-steps", "16", "--num-minibatches", "2", "--update-epochs", "2",
              "--num-iterations", "4", "--pbt-interval", "2", "--pbt-burn-in", "2"]


@pytest.mark.parametrize(("argv", "reason"), [
    (["--pbt", "4", "ppo_linen_scan.py"], "--pbt needs a script that trains its population with PBT"),
    (["--pbt", "1", "ppo_linen_pbt.py"], "--pbt N wants N >= 2 agents a population"),
    (["--pbt", "4", "--seeds-per-trial", "2", "ppo_linen_pbt.py"], "no --seeds-per-trial"),
    (["--pbt", "4", "--space", "{space}", "ppo_linen_pbt.py"], "--pbt: the agents of a population share "
                                                                "num_minibatches; search only their own values"),
])
def test_tune_refuses_a_pbt_study_it_cannot_run_before_anything_is_written(tmp_path, argv, reason):
    import tune
    from search import Refused

    space = tmp_path / "space.json"
    space.write_text(json.dumps({"num_minibatches": {"type": "categorical", "choices": [2, 4]}}))
    out = tmp_path / "study"
    with pytest.raises(Refused, match=reason.replace("(", r"\(").replace(")", r"\)")):
        tune.main(["--out", str(out)] + [str(space) if word == "{space}" else word for word in argv])
    assert not out.exists()


@pytest.mark.slow  # a study of fresh processes: the full suite runs it
def test_a_tune_pbt_study_trains_its_trials_as_one_pbt_population_and_reruns_the_best_ones_lineage(tmp_path):
    """tune.py --pbt 4 on a tiny workload: the 4 trials are the agents of one ppo_linen_pbt.py process (each starting
    from its trial's values, the default space's floats), each run folder keeps its schedule, the report names the
    best's, and the re-evaluation reruns the best's lineage (its pbt_replay.json without its seed) as one agent."""
    out = tmp_path / "study"
    result = run_script("tune.py", "--pbt", "4", "--trials", "4", "--sampler", "random", "--eval-seeds", "1",
                        "--out", str(out), "ppo_linen_pbt.py", *TINY_FLAGS)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("population of trials 0-3: 4 agent(s) in one process") == 1
    settings = json.loads((out / "study.json").read_text())
    assert settings["pbt"] and settings["population"] == 4
    assert set(settings["space"]) == set(pbt.HParams._fields)
    evaluation = json.loads((out / "evaluation.json").read_text())
    best = evaluation["trial"]
    for number in range(4):
        folder = out / "runs" / f"trial_{number:04d}"
        assert {"pbt_schedule.json", "pbt_replay.json"} <= set(os.listdir(folder))
    replay = json.loads((out / "runs" / f"trial_{best:04d}" / "pbt_replay.json").read_text())
    rerun = json.loads((out / "populations" / f"replay_trial_{best:04d}.json").read_text())
    assert rerun == [{key: value for key, value in replay[0].items() if key != "seed"}]
    assert evaluation["runs"][0]["value"] is not None
    scalars, _ = read_run(str(out / "runs" / f"eval_{evaluation['runs'][0]['seed']}"))
    np.testing.assert_allclose([value for _, value in scalars["pbt/learning_rate"]], replay[0]["learning_rate"],
                               rtol=1e-7)
    assert f"[runs/trial_{best:04d}/pbt_schedule.json]" in (out / "REPORT.md").read_text()


def test_the_signal_and_fault_handling_of_its_runs_is_the_scan_scripts_line_for_line():
    """SIGINT/SIGTERM, the close and the finish of the agents' runs: ppo_linen_scan.py's code, whose behaviour
    tests/test_robustness.py checks in a fresh process; only the logging of PBT's values and copies is the PBT script's
    own (and the stop on a NaN loss, which it leaves to an agent that nothing replaced)."""
    def methods(script: str) -> dict:
        source = open(os.path.join(ROOT, script)).read()
        runs = next(node for node in ast.parse(source).body if getattr(node, "name", None) == "AgentRuns")
        return {node.name: ast.get_source_segment(source, node) for node in runs.body
                if isinstance(node, ast.FunctionDef)}

    scan, own = methods("ppo_linen_scan.py"), methods("ppo_linen_pbt.py")
    shared = {"start_iteration", "compile", "finish", "stop_on_signal", "close"}
    assert {name: own[name] for name in shared} == {name: scan[name] for name in shared}
    assert set(own) - set(scan) == {"log_population", "write_schedules"}


@pytest.mark.slow
def test_sigterm_in_a_fresh_pbt_process_ends_every_agents_run_partial_with_one_line_and_exit_128_plus_signal(tmp_path):
    """The same handling in a running population (2 agents, chunks of 2 iterations, exploits from iteration 2 on),
    signalled once both agents logged their first iteration: each agent's event file whole, without time/total."""
    log_dir = str(tmp_path)
    process = subprocess.Popen(
        [sys.executable, os.path.join(ROOT, "ppo_linen_pbt.py"), *TINY_FLAGS[:8], "--num-iterations", "2000",
         "--num-seeds", "2", "--chunk-iterations", "2", "--pbt-interval", "2", "--pbt-burn-in", "2",
         "--log-dir", log_dir, "--run-name", "run"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = (line for line in process.stdout if line.startswith("iteration "))
    started = [next(lines, ""), next(lines, "")]  # iteration 1's line of each agent
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=300)
    folders = [os.path.join(log_dir, f"run__seed{seed}") for seed in (1, 2)]
    assert all(started) and process.returncode == 128 + signal.SIGTERM, err[-3000:]
    assert err.strip().splitlines()[-1] == (
        f"interrupted by SIGTERM: partial runs (no time/total) in {', '.join(folders)}")
    assert "Traceback" not in err
    for folder in folders:
        scalars, texts = read_run(folder)
        assert scalars["time/iteration"] and "time/total" not in scalars and "hyperparameters" in texts
