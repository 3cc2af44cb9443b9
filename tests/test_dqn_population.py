"""dqn_linen_vmap.py: dqn_linen.py with --num-seeds agents vmapped in each iteration's compiled call, each with its own
seed and (--hparams) float hyperparameters: learning rate, gamma, tau and the epsilon schedule. Each agent computes
what dqn_linen.py computes with its seed and values; an agent with learning rate 0 keeps its parameters; a bad file
is one error line. Its smoke, host-read, compilation, exploration, bad-input and signal tests are every DQN script's
(tests/test_dqn.py, tests/test_robustness.py)."""
import functools
import json
import os

import gymnax
import jax
import numpy as np
import optax
import pytest

import dqn_linen_vmap
from helpers import DQN_TINY, read_run, table
from tolerance import assert_curves_close

VMAP, LINEN = "dqn_linen_vmap.py", "dqn_linen.py"
VALUES = {"learning_rate": 0.001, "gamma": 0.95, "tau": 0.5, "start_e": 0.8, "end_e": 0.1, "exploration_fraction": 0.3}


def write_hparams(tmp_path, agents) -> str:
    path = tmp_path / "hparams.json"
    path.write_text(agents if isinstance(agents, str) else json.dumps(agents))
    return str(path)


@pytest.mark.parametrize(("agents", "reason"), [
    ("[{}]", "want a JSON list of --num-seeds (2) objects"),
    ([{"buffer_size": 500}, {}], "agent 0: buffer_size cannot differ between agents here"),
    ([{"seed": -1}, {}], "agent 0: the seed must be in [0, 2**32), got -1"),
    ([{}, {"tau": 0}], "agent 1: --tau must be in (0, 1], got 0"),
    ([{"end_e": 1.5}, {}], "agent 0: --end-e must be in [0, 1], got 1.5"),
])
def test_a_bad_hparams_file_is_refused_with_what_is_wrong_and_where(tmp_path, agents, reason):
    path = write_hparams(tmp_path, agents)
    assert dqn_linen_vmap.check_args(dqn_linen_vmap.Args(num_seeds=2, hparams=path)) == f"--hparams {path}: {reason}"


@pytest.mark.slow
def test_an_agent_with_learning_rate_0_keeps_its_initial_parameters_while_its_neighbour_learns(tmp_path):
    """A unit test of the training functions (the command line refuses a learning rate of 0, as every script does):
    one iteration of 500 transitions, gradient steps from transition 101."""
    path = write_hparams(tmp_path, [{"learning_rate": 0.0}, {"learning_rate": 0.01}])
    args = dqn_linen_vmap.Args(num_seeds=2, hparams=path, total_timesteps=500, iteration_steps=500, learning_starts=100,
                               buffer_size=500, batch_size=32)
    env, env_params = gymnax.make(args.env_id)
    optimizer = optax.inject_hyperparams(optax.adam)
    tx = optimizer(learning_rate=args.learning_rate)
    q_network = dqn_linen_vmap.QNetwork(env.action_space(env_params).n)
    carries = [dqn_linen_vmap.seed_agent(values, q_network, env, env_params, optimizer, tx, args)
               for values in dqn_linen_vmap.agent_settings(args)]
    carry = jax.tree.map(lambda *leaves: np.stack(leaves), *carries)
    iteration = jax.jit(jax.vmap(functools.partial(dqn_linen_vmap.train_iteration, q_network=q_network, env=env,
                                                   env_params=env_params, args=args)))
    trained = iteration(carry)
    steps = list(np.asarray(trained.sums.gradient_steps))
    assert steps[0] == steps[1] > 0
    before, after = (jax.tree.map(np.asarray, state.train_state.params) for state in (carry, trained))
    jax.tree.map(lambda b, a: np.testing.assert_array_equal(a[0], b[0]), before, after)
    assert all(jax.tree.leaves(jax.tree.map(lambda b, a: not np.array_equal(a[1], b[1]), before, after)))


@pytest.mark.slow
def test_each_agent_of_an_hparams_file_computes_what_dqn_linen_computes_with_its_seed_and_values(shared_runs, tmp_path):
    """Agent 0 sets its seed and all six values, agent 1 none (seed --seed + 1, the flags' values): the same episodes,
    TD losses and epsilon as dqn_linen.py's runs with those flags, to float32 rounding."""
    population = shared_runs.get(VMAP, *DQN_TINY, "--num-seeds", "2", "--hparams",
                                 write_hparams(tmp_path, [{"seed": 5, **VALUES}, {}]))
    assert sorted(os.listdir(os.path.dirname(population.run_dir))) == ["run__seed2", "run__seed5"]
    flags = [word for name, value in VALUES.items() for word in (f"--{name.replace('_', '-')}", str(value))]
    singles = {5: shared_runs.get(LINEN, *DQN_TINY, "--seed", "5", *flags), 2: shared_runs.get(LINEN, *DQN_TINY,
                                                                                                "--seed", "2")}
    for seed, single in singles.items():
        scalars, texts = read_run(f"{population.run_dir}__seed{seed}")
        for tag in ("charts/episodic_return", "charts/episodic_length", "charts/epsilon", "losses/td_loss",
                    "losses/q_values"):
            assert_curves_close(scalars, single.scalars, [tag])
        hyperparameters = table(texts["hyperparameters"])
        assert hyperparameters["seed"] == str(seed) and hyperparameters["gamma"] == str(VALUES["gamma"] if seed == 5
                                                                                        else 0.99)
