"""The seven DQN scripts: one algorithm (CleanRL's CartPole-v1 DQN), the same TD loss and gradients, the same
schedules, the same stored transitions within each env backend, the same training from the same weights within each
agent framework family, every tag logged, one host fetch per iteration on gymnax, compiled once, and learning. Bad input,
divergence and signals: tests/test_robustness.py; the shared harness: tests/test_harness.py."""
import collections
import functools
import glob
import os
import signal

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import dqn_equinox
import dqn_linen
import dqn_linen_gymnasium
import dqn_torch
import dqn_torch_compile
import dqn_torch_gymnasium
from flax import nnx
from helpers import (
    DQN_COMPILE_MODE, DQN_EAGER_FLAG, DQN_GYMNAX_SCRIPTS, DQN_LEARNED_RETURN, DQN_LEARNING_TIMESTEPS, DQN_SCRIPTS,
    DQN_TAGS, DQN_TINY, DQN_TORCH_GYMNAX_SCRIPTS, ROOT, auto_device, final_return, import_keeping_flax_config,
    learning_params, read_run, table, top_level_sources,
)
from tolerance import assert_array_close, assert_close, assert_curves_close

dqn_nnx, NNX_PINS = import_keeping_flax_config("dqn_nnx")  # tree mode, pinned at import: set per test (tree_mode)

TORCH_MODULES = [dqn_torch_gymnasium, dqn_torch, dqn_torch_compile]
JAX_MODULES = [dqn_linen_gymnasium, dqn_linen, dqn_nnx, dqn_equinox]
GYMNASIUM_PAIR = ["dqn_torch_gymnasium.py", "dqn_linen_gymnasium.py"]
DQN_JAX_GYMNAX = [dqn_linen, dqn_nnx, dqn_equinox]
# DQN_TINY: 4 iterations of 500 transitions, gradient steps from transition 601, epsilon over the first 1,000
TINY_STEPS, TINY_ITERATIONS, TINY_LEARNING_STARTS, TINY_DURATION = 500, 4, 600, 1000


# SCHEDULES: CleanRL's loop, transition by transition, is the reference
def cleanrl_due(total: int, learning_starts: int, every: int) -> list[int]:
    """The transitions after which CleanRL's dqn.py acts (trains, or updates its target): g > learning_starts and
    g % every == 0."""
    return [g for g in range(total) if g > learning_starts and g % every == 0]


@pytest.mark.parametrize("num_envs", [1, *(pytest.param(n, marks=pytest.mark.slow) for n in (3, 16, 40))])
def test_gradient_steps_and_target_syncs_fall_due_as_in_cleanrls_loop_for_any_number_of_envs(num_envs):
    total, learning_starts = 2400, 250
    firsts = list(range(0, total, num_envs))
    for every in (1, 4, 10, 25, 500):
        expected = cleanrl_due(total, learning_starts, every)
        # each step of num_envs transitions counts those of its own transitions that fall due
        per_step = np.bincount(np.asarray(expected, int) // num_envs, minlength=len(firsts)).tolist()
        for module in TORCH_MODULES + JAX_MODULES:
            if module in DQN_JAX_GYMNAX:  # jnp, elementwise: every step's count in one call, as under jit
                lasts = jnp.asarray(firsts) + num_envs - 1
                counts = np.asarray(module.due(jnp.asarray(firsts), lasts, learning_starts, every)).tolist()
            else:
                counts = [int(module.due(first, first + num_envs - 1, learning_starts, every)) for first in firsts]
            assert sum(counts) == len(expected), (module.__name__, every)
            assert counts == per_step, (module.__name__, every)


def test_epsilon_falls_linearly_to_its_end_over_the_exploration_fraction_then_stays_in_every_script():
    duration = 0.5 * 500000
    for t, expected in [(0, 1.0), (125000, 0.525), (249999, 0.05 + 0.95 / duration), (250000, 0.05), (499999, 0.05)]:
        for module in TORCH_MODULES + JAX_MODULES:
            assert float(module.linear_schedule(1.0, 0.05, duration, t)) == pytest.approx(expected, rel=1e-6)


# LOSS: identical weights, target weights and batch in the four scripts
def torch_and_linen_networks(seed: int, obs_dim: int = 4, action_dim: int = 2):
    """A torch Q-network (torch's init, seeded) and the same weights as Linen parameters."""
    torch.manual_seed(seed)
    network = dqn_torch.make_q_network(obs_dim, action_dim, torch.device("cpu"))
    linears = [layer for layer in network.network if isinstance(layer, torch.nn.Linear)]
    params = {"params": {f"Dense_{i}": {"kernel": jnp.asarray(layer.weight.detach().numpy().T),
                                        "bias": jnp.asarray(layer.bias.detach().numpy())}
                         for i, layer in enumerate(linears)}}
    return network, params


def linen_layers(params: dict) -> list:
    """Linen's (kernel [in, out], bias) per layer."""
    return [(params["params"][f"Dense_{i}"]["kernel"], params["params"][f"Dense_{i}"]["bias"]) for i in range(3)]


def nnx_network(params: dict, obs_dim: int = 4, action_dim: int = 2):
    """Linen's parameters in an NNX Q-network, in buffers of its own."""
    network = dqn_nnx.QNetwork(obs_dim, action_dim, nnx.Rngs(params=0))
    for layer, (kernel, bias) in zip(network.network.layers[::2], linen_layers(params)):
        layer.kernel[...], layer.bias[...] = jnp.array(kernel), jnp.array(bias)
    return network


def equinox_network(params: dict, obs_dim: int = 4, action_dim: int = 2):
    """Linen's parameters in an Equinox Q-network (weights [out, in]), in buffers of its own."""
    network = dqn_equinox.QNetwork(obs_dim, action_dim, jax.random.PRNGKey(0))
    weights = [array for kernel, bias in linen_layers(params) for array in (jnp.array(kernel.T), jnp.array(bias))]
    return eqx.tree_at(lambda net: [leaf for layer in net.layers for leaf in (layer.weight, layer.bias)], network,
                       weights)


@pytest.fixture
def tree_mode():
    """The mode dqn_nnx pins (tree mode), for the duration of one test only."""
    assert NNX_PINS == {"nnx_graph_mode": False, "nnx_graph_updates": False}
    with nnx.set_graph_mode(False), nnx.set_graph_updates(False):
        yield


def numpy_q(params: dict, obs: np.ndarray) -> np.ndarray:
    layers = [params["params"][f"Dense_{i}"] for i in range(3)]
    x = obs.astype(np.float64)
    for i, layer in enumerate(layers):
        x = x @ np.asarray(layer["kernel"], np.float64) + np.asarray(layer["bias"], np.float64)
        x = np.maximum(x, 0) if i < 2 else x
    return x


def test_td_loss_and_every_gradient_agree_across_the_seven_scripts_and_with_the_textbook_target(tree_mode):
    rng = np.random.default_rng(0)
    batch_size, gamma = 128, 0.99
    obs, next_obs = rng.normal(size=(2, batch_size, 4)).astype(np.float32)
    actions = rng.integers(2, size=batch_size).astype(np.int32)
    rewards = rng.normal(size=batch_size).astype(np.float32)
    terminated = (rng.random(batch_size) < 0.3).astype(np.float32)
    arrays = (obs, next_obs, actions, rewards, terminated)
    q_network, params = torch_and_linen_networks(1)
    target_network, target_params = torch_and_linen_networks(2)

    # the textbook: r + gamma (1 - terminated) max_a Q_target(s', a), no bootstrap past a termination
    td_target = rewards + gamma * (1 - terminated) * numpy_q(target_params, next_obs).max(axis=1)
    q = numpy_q(params, obs)[np.arange(batch_size), actions]
    expected_loss, expected_q = np.mean((td_target - q) ** 2), np.mean(q)

    results = {}
    for module in TORCH_MODULES:
        q_network.zero_grad()
        batch = module.Transitions(*(torch.from_numpy(array) for array in arrays))
        loss, q_mean = module.td_loss(q_network, target_network, batch, gamma)
        loss.backward()
        grads = [p.grad.numpy() for p in q_network.parameters()]  # weight [out, in], bias, per layer
        results[module.__name__] = (loss.item(), q_mean.item(), [g.T if g.ndim == 2 else g for g in grads])
    for module in [dqn_linen_gymnasium, dqn_linen]:
        batch = module.Transitions(*(jnp.asarray(array) for array in arrays))
        loss_fn = jax.value_and_grad(module.td_loss, has_aux=True)
        (loss, q_mean), grads = loss_fn(params, target_params, module.QNetwork(2), batch, gamma)
        layers = [grads["params"][f"Dense_{i}"] for i in range(3)]
        results[module.__name__] = (float(loss), float(q_mean),
                                    [np.asarray(layer[name]) for layer in layers for name in ("kernel", "bias")])
    batch = dqn_nnx.Transitions(*(jnp.asarray(array) for array in arrays))
    loss_fn = nnx.value_and_grad(dqn_nnx.td_loss, has_aux=True)
    (loss, q_mean), grads = loss_fn(nnx_network(params), nnx_network(target_params), batch, gamma)
    results["dqn_nnx"] = (float(loss), float(q_mean), [np.asarray(array) for layer in grads.network.layers[::2]
                                                       for array in (layer.kernel[...], layer.bias[...])])
    batch = dqn_equinox.Transitions(*(jnp.asarray(array) for array in arrays))
    loss_fn = eqx.filter_value_and_grad(dqn_equinox.td_loss, has_aux=True)
    (loss, q_mean), grads = loss_fn(equinox_network(params), equinox_network(target_params), batch, gamma)
    results["dqn_equinox"] = (float(loss), float(q_mean), [np.asarray(array) for layer in grads.layers
                                                           for array in (layer.weight.T, layer.bias)])
    assert len(results) == 7
    reference = results["dqn_torch"][2]
    for name, (loss, q_mean, grads) in results.items():
        assert_close(loss, expected_loss, f"{name}: td_loss")
        assert_close(q_mean, expected_q, f"{name}: q_values")
        for grad, expected in zip(grads, reference):
            assert_array_close(grad, expected, name)


def test_the_compiled_scripts_functional_gradient_step_is_torchs_adam_step():
    """What dqn_torch_compile.py compiles (torch.func gradients, Adam written out) against dqn_torch.py's backward() and
    torch's fused Adam, from the same weights on the same batches: the same losses and weights after three steps."""
    rng = np.random.default_rng(1)
    torch.manual_seed(3)
    eager_network, eager_target = (dqn_torch.make_q_network(4, 2, torch.device("cpu")) for _ in range(2))
    functional_network, functional_target = (dqn_torch_compile.make_q_network(4, 2, torch.device("cpu"))
                                             for _ in range(2))
    functional_network.load_state_dict(eager_network.state_dict())
    functional_target.load_state_dict(eager_target.state_dict())
    initial = [param.detach().clone() for param in eager_network.parameters()]
    adam = torch.optim.Adam(eager_network.parameters(), lr=1e-3, fused=True)
    adam_state = dqn_torch_compile.make_optimizer(functional_network, 1e-3)
    for _ in range(3):
        arrays = (rng.normal(size=(64, 4)), rng.normal(size=(64, 4)), rng.integers(2, size=64), rng.normal(size=64),
                  rng.random(64) < 0.2)
        batch = dqn_torch.Transitions(*(torch.from_numpy(np.asarray(array, np.float32)) for array in arrays[:2]),
                                      torch.from_numpy(arrays[2].astype(np.int32)),
                                      *(torch.from_numpy(np.asarray(array, np.float32)) for array in arrays[3:]))
        buffer = dqn_torch.ReplayBuffer(64, 4, torch.device("cpu"))
        buffer.add(batch)
        torch.manual_seed(5)  # the same sampled indices
        eager = dqn_torch.gradient_step(buffer, eager_network, adam, functools.partial(
            dqn_torch.td_loss, target_network=eager_target, gamma=0.99), 32)
        torch.manual_seed(5)
        functional = dqn_torch_compile.gradient_step(buffer.sample(32), functional_network, adam_state, functools.partial(
            dqn_torch_compile.td_loss, target_network=functional_target, gamma=0.99))
        assert_close(torch.stack(functional), torch.stack(eager), "td_loss and q_values")
    for eager_param, param, before in zip(eager_network.parameters(), functional_network.parameters(), initial):
        np.testing.assert_allclose(param.detach(), eager_param.detach(), rtol=1e-5, atol=1e-7)
        assert (param - before).abs().max() > 1e-4  # three steps of 1e-3 moved every tensor


def run_main_in_process(module, log_dir: str, name: str) -> dict:
    """The script's main() on DQN_TINY in this process (CPU, seed 1): its logged scalars. The signal handlers and the
    JAX settings main() changes are put back afterwards."""
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    settings = {key: getattr(jax.config, key) for key in ("jax_default_device", "jax_default_matmul_precision")}
    args = module.Args(total_timesteps=2000, iteration_steps=500, learning_starts=600, buffer_size=1000, batch_size=32,
                       target_network_frequency=100, device="cpu", log_dir=log_dir, run_name=name)
    run = module.Run(args)
    try:
        module.main(args, run)
    finally:
        run.close()
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        for key, value in settings.items():
            jax.config.update(key, value)
    return read_run(os.path.join(log_dir, name))[0]


@pytest.mark.slow  # iteration parity: the fast subset proves each framework's parity on one minibatch
def test_linen_nnx_and_equinox_train_alike_from_the_same_weights(tmp_path, tree_mode, monkeypatch):
    """Each one's main() on DQN_TINY with its Q-network built from the same Linen weights (their inits differ): the same
    episodes and, iteration by iteration, the same TD loss and Q-values (to float32 rounding): one algorithm in three
    APIs, down to its keys, its replay sampling and its target syncs."""
    _, params = dqn_linen.make_q_network(jax.random.PRNGKey(7), 4, 2)
    builders = {
        dqn_linen: lambda key, obs_dim, action_dim: (dqn_linen.QNetwork(action_dim), jax.tree.map(jnp.copy, params)),
        dqn_nnx: lambda key, obs_dim, action_dim: nnx_network(params, obs_dim, action_dim),
        dqn_equinox: lambda key, obs_dim, action_dim: equinox_network(params, obs_dim, action_dim),
    }
    scalars = {}
    for module, build in builders.items():
        monkeypatch.setattr(module, "make_q_network", build)
        scalars[module] = run_main_in_process(module, str(tmp_path), module.__name__)
    reference = scalars[dqn_linen]
    assert len(reference["losses/td_loss"]) == TINY_ITERATIONS - 1
    for module in (dqn_nnx, dqn_equinox):
        for tag in ("charts/episodic_return", "charts/episodic_length"):
            assert scalars[module][tag] == reference[tag], (module.__name__, tag)
        assert_curves_close(scalars[module], reference, ("losses/td_loss", "losses/q_values"))


def test_linen_initialises_the_q_network_as_torch_does_uniform_in_one_over_root_fan_in():
    q_network, params = dqn_linen.make_q_network(jax.random.PRNGKey(0), 4, 2)
    for i, fan_in in enumerate((4, 120, 84)):
        layer, bound = params["params"][f"Dense_{i}"], 1 / np.sqrt(fan_in)
        kernel, bias = np.asarray(layer["kernel"]), np.asarray(layer["bias"])
        assert np.abs(kernel).max() <= bound and np.abs(bias).max() <= bound
        assert kernel.std() == pytest.approx(bound / np.sqrt(3), rel=0.2)  # uniform's, not a normal's of that bound


def test_the_gymnax_pair_draws_the_same_exploration_from_the_same_key():
    key = jax.random.PRNGKey(3)
    ours, theirs = dqn_linen.draw_exploration(key, 50, 4, 3), dqn_torch.draw_exploration(key, 50, 4, 3)
    for mine, other in zip(ours, theirs):
        np.testing.assert_array_equal(mine, other)
    assert set(np.unique(ours.random_actions)) == {0, 1, 2} and 0 <= ours.coins.min() and ours.coins.max() < 1


# THE GYMNASIUM PAIR'S SHARED CODE
def test_the_gymnasium_pair_shares_its_env_replay_exploration_and_bookkeeping_code_line_for_line():
    """What makes their per-step costs outside the framework the same, so that the pair times the framework."""
    shared = ["GYMNASIUM_ENVS", "make_envs", "flatten_obs", "env_step", "EpisodeStats", "new_iteration_stats",
              "track_episodes", "Transitions", "ReplayBuffer", "linear_schedule", "due", "Exploration",
              "draw_exploration", "act"]
    torch_sources, linen_sources = (top_level_sources(script) for script in GYMNASIUM_PAIR)
    assert [name for name in shared if torch_sources.get(name) != linen_sources.get(name)] == []


@pytest.mark.parametrize("family,shared", [
    (["dqn_linen.py", "dqn_nnx.py", "dqn_equinox.py", "dqn_linen_vmap.py"],
     ["flatten_obs", "env_reset", "env_step", "select_device", "Transitions", "ReplayBuffer", "make_buffer", "buffer_add",
      "buffer_sample", "linear_schedule", "due", "Exploration", "draw_exploration", "EpisodeStats", "track_episodes",
      "LossSums"]),
    (["dqn_torch.py", "dqn_torch_compile.py"],
     ["flatten_obs", "env_reset", "EpisodeStats", "EnvCarry", "new_iteration_stats", "track_episodes", "env_step",
      "unpack_step", "select_device", "QNetwork", "make_q_network", "Transitions", "ReplayBuffer", "linear_schedule",
      "due", "Exploration", "draw_exploration", "start_iteration", "act", "td_loss", "update_target"]),
], ids=["jax", "torch"])
def test_the_gymnax_scripts_of_one_language_share_all_but_their_framework_code_line_for_line(family, shared):
    """JAX's three (Linen, NNX, Equinox) and torch's two (eager, compiled) differ only where the framework does: so
    that the per-step work outside it is the same, and the sweep times the framework (and Linen's population sibling
    only where its agents do)."""
    reference, *others = (top_level_sources(script) for script in family)
    assert set(shared) <= set(reference)
    for script, sources in zip(family[1:], others):
        assert [name for name in shared if sources.get(name) != reference.get(name)] == [], script


def test_a_gymnasium_step_returns_observations_of_their_own_which_the_next_step_leaves_alone():
    """flatten_obs casts without a copy: the observation held for the replay write must not be the vector env's
    buffer, which its next step would overwrite."""
    envs = dqn_torch_gymnasium.make_envs("CartPole-v1", 2)
    obs = dqn_torch_gymnasium.flatten_obs(envs.reset(seed=1)[0])
    for _ in range(30):  # action 0 throughout: the poles fall, the envs reset within the step
        previous, snapshot = obs, obs.copy()
        obs, *_ = dqn_torch_gymnasium.env_step(np.zeros(2, np.int64), envs)
        assert np.array_equal(previous, snapshot) and not np.shares_memory(obs, previous)


def test_episode_tracking_sums_the_episodes_that_end_and_restarts_them_in_place():
    stats = dqn_torch_gymnasium.EpisodeStats(np.zeros(3), np.zeros(3, np.int64), 0.0, 0.0, 0.0)
    for reward, done in [([1, 2, 3], [0, 0, 0]), ([1, 2, 3], [1, 0, 1]), ([1, 1, 1], [0, 1, 0])]:
        stats = dqn_torch_gymnasium.track_episodes(stats, np.array(reward, np.float32), np.array(done, bool))
    assert stats.returns.tolist() == [1, 0, 1] and stats.lengths.tolist() == [1, 0, 1]
    assert (stats.finished_return_sum, stats.finished_length_sum, stats.finished_count) == (2 + 6 + 5, 2 + 2 + 3, 3)


# RUNS
@pytest.mark.background("dqn_smoke")
@pytest.mark.parametrize("script", DQN_SCRIPTS)
def test_smoke_run_logs_every_tag_losses_from_the_first_gradient_step_and_epsilon_per_iteration(script, shared_runs):
    """The probed DQN_TINY run: 4 iterations of 500 transitions; the first gradient step after transition 600."""
    run = shared_runs.dqn_smoke(script)
    scalars, texts = run.scalars, run.texts
    assert set(scalars) == DQN_TAGS
    assert [step for step, _ in scalars["time/iteration"]] == list(range(TINY_ITERATIONS))
    steps = [TINY_STEPS * (i + 1) for i in range(TINY_ITERATIONS)]
    assert [step for step, _ in scalars["charts/SPS"]] == steps
    assert [step for step, _ in scalars["losses/td_loss"]] == steps[1:]  # none in iteration 0: no gradient step yet
    # epsilon at the iteration's last transition
    expected = [max(1.0 - 0.95 * (step - 1) / TINY_DURATION, 0.05) for step in steps]
    assert [value for _, value in scalars["charts/epsilon"]] == pytest.approx(expected, rel=1e-6)
    assert all(np.isfinite(value) and value >= 0 for _, value in scalars["losses/td_loss"])
    system, hyperparameters = table(texts["system"]), table(texts["hyperparameters"])
    assert system["compile_mode"] == DQN_COMPILE_MODE[script] and system["script"] == script
    assert hyperparameters["total_timesteps"] == "2000" and hyperparameters["train_frequency"] == "10"


def script_fetches(record: dict, script: str) -> collections.Counter:
    """(method, line) of every host read the script itself makes, but a NumPy view of a CPU tensor (no copy, no wait)."""
    return collections.Counter(
        (f["method"], f["line"]) for f in record["fetches"]
        if f["file"] == os.path.join(ROOT, script) and not f["nested"]
        and not (f["method"] == "torch.Tensor.numpy" and f.get("device") == "cpu")
    )


@pytest.mark.background("dqn_smoke")
@pytest.mark.parametrize("script", DQN_GYMNAX_SCRIPTS)
def test_a_gymnax_script_reads_to_the_host_once_per_iteration(script, shared_runs):
    record = shared_runs.dqn_smoke(script).record
    # but torch.compile's own reads while it compiles the gradient step (once, in iteration 1)
    compiler = tuple(os.path.join(os.path.dirname(torch.__file__), part) for part in ("_inductor", "_dynamo"))
    outermost = [(f["method"], f["file"]) for f in record["fetches"] if not f["nested"] and not f["file"].startswith(compiler)]
    # the JAX scripts: their jax.device_get; the torch ones: their .tolist() (the actions cross to JAX as NumPy views)
    views = [f for f in record["fetches"] if f["method"] == "torch.Tensor.numpy" and f.get("device") == "cpu"]
    outermost = [fetch for fetch in outermost if fetch[0] != "torch.Tensor.numpy" or auto_device() != "cpu"]
    torch_agent = script in DQN_TORCH_GYMNAX_SCRIPTS
    method = "torch.Tensor.tolist" if torch_agent else "jax.device_get"
    assert outermost == [(method, os.path.join(ROOT, script))] * TINY_ITERATIONS
    assert len(views) == (TINY_STEPS * TINY_ITERATIONS if torch_agent and auto_device() == "cpu" else 0)


@pytest.mark.background("dqn_smoke")
@pytest.mark.parametrize("script", DQN_GYMNAX_SCRIPTS)
def test_a_gymnax_script_compiles_in_its_first_iterations_and_never_again(script, shared_runs):
    """JAX's compile log and dynamo's compilations at each iteration's fetch (the probed DQN_TINY run): JAX compiles in
    iteration 0 (the iteration, or the env step: once); torch.compile its one graph, the gradient step (loss to Adam step, no
    graph break), at the first gradient step (iteration 1); nothing compiles after that."""
    record = shared_runs.dqn_smoke(script).record
    jax_boundaries = record["jax_boundaries"]  # iteration 1's may add the logged epsilon's jnp.maximum, run once
    assert jax_boundaries[0] > 0 and jax_boundaries[1:] == [jax_boundaries[1]] * (TINY_ITERATIONS - 1), jax_boundaries
    compiled = "jit(env_step)" if script in DQN_TORCH_GYMNAX_SCRIPTS else "jit(train_iteration)"
    compiled = "jit(wrapped_fun)" if script == "dqn_nnx.py" else compiled  # nnx.jit_partial's name for the iteration
    assert record["jax_compilations"].count(compiled) == 1
    compilations = [c for c in record.get("compilations", []) if c["co_name"]]
    if script != "dqn_torch_compile.py":
        assert compilations == []
        return
    assert record["boundaries"] == [0] + [1] * (TINY_ITERATIONS - 1)
    assert [(c["co_name"], c["co_filename"], c["compile_id"], c["fail_type"]) for c in compilations] == [
        ("gradient_step", os.path.join(ROOT, script), "0/0", None)]
    assert compilations[0]["graph_op_count"] > 0 and record["graph_breaks"] == {}


def test_torch_compile_trains_as_eager_torch_from_the_same_seed(shared_runs):
    """Both seed torch's generator alike (the same weights, the same replay samples) and take the JAX env's keys: the
    same episodes and, iteration by iteration, the same TD loss (to float32 rounding: the compiled step computes Adam
    in its own order) in the probed DQN_TINY runs."""
    eager, compiled = (shared_runs.dqn_smoke(script).scalars for script in DQN_TORCH_GYMNAX_SCRIPTS)
    for tag in ("charts/episodic_return", "charts/episodic_length"):
        assert compiled[tag] == eager[tag]
    assert_curves_close(compiled, eager, ("losses/td_loss", "losses/q_values"))


@pytest.mark.background("dqn_smoke")
@pytest.mark.parametrize("script", GYMNASIUM_PAIR)
def test_a_gymnasium_script_reads_the_greedy_actions_once_per_step_at_most_and_the_losses_once_per_iteration(
    script, shared_runs
):
    fetches = script_fetches(shared_runs.dqn_smoke(script).record, script)
    per_iteration = {key: count for key, count in fetches.items() if count == TINY_ITERATIONS}
    per_step = {key: count for key, count in fetches.items() if key not in per_iteration}
    assert len(per_iteration) == 1 and len(per_step) <= 1, fetches
    # the greedy read: on the steps where some env does not explore (epsilon from 1 down to 0.05 over 1,000 steps)
    assert all(TINY_STEPS < count <= TINY_STEPS * TINY_ITERATIONS for count in per_step.values()), fetches


@pytest.mark.slow
@pytest.mark.background("dqn_explore")
@pytest.mark.parametrize("script", DQN_SCRIPTS)
def test_every_script_stores_its_env_backends_transitions_for_the_same_seed_and_profiles(script, shared_runs):
    """Epsilon 1 throughout: every action is the exploration's, which the scripts on one env backend draw alike
    (NumPy's generator; the env's JAX keys), so the same episodes end at the same lengths with the same returns as in
    the backend's torch script, iteration by iteration; the Q-networks (each framework's init) never choose. --profile
    writes the script's trace."""
    reference = shared_runs.dqn_explore(GYMNASIUM_PAIR[0] if script in GYMNASIUM_PAIR else DQN_GYMNAX_SCRIPTS[0])
    run = shared_runs.dqn_explore(script)
    for tag in ("charts/episodic_return", "charts/episodic_length"):
        assert run.scalars[tag] == reference.scalars[tag]
    assert len(run.scalars["charts/episodic_length"]) == TINY_ITERATIONS
    traces = glob.glob(os.path.join(run.run_dir, "*.pt.trace.json.gz"))
    traces += glob.glob(os.path.join(run.run_dir, "plugins", "profile", "*", "*.xplane.pb"))
    assert len(traces) == 1 and os.path.getsize(traces[0]) > 0


def dqn_eager_run(shared_runs, script, flag, background=False):
    """DQN_TINY's first 2 iterations in the eager mode, epsilon 1 throughout."""
    return shared_runs.get(script, *DQN_TINY, "--start-e", "1", "--end-e", "1", flag, "--total-timesteps", "1000",
                           background=background)


@pytest.mark.slow
@pytest.mark.background.with_args(dqn_eager_run)
@pytest.mark.parametrize("script,flag", list(DQN_EAGER_FLAG.items()))
def test_the_eager_mode_takes_the_same_transitions_op_by_op(script, flag, shared_runs):
    """Epsilon 1 as in the pair test: the eager mode ("none") stores what the compiled mode stores, over the first 2
    of its 4 iterations (op by op, each gradient step costs ~0.1 s)."""
    compiled = shared_runs.dqn_explore(script)
    eager = dqn_eager_run(shared_runs, script, flag)
    assert table(eager.texts["system"])["compile_mode"] == "none"
    for tag in ("charts/episodic_return", "charts/episodic_length"):
        assert eager.scalars[tag] == compiled.scalars[tag][:2]
    assert len(eager.scalars["losses/td_loss"]) == 1


@pytest.mark.slow
@pytest.mark.background("dqn_learning")
@pytest.mark.parametrize("script", learning_params(DQN_SCRIPTS))
def test_dqn_learns_cartpole(script, shared_runs):
    run = shared_runs.dqn_learning(script)
    assert final_return(run.scalars) >= DQN_LEARNED_RETURN, run.scalars["charts/episodic_return"][-5:]
    assert len(run.scalars["time/iteration"]) == DQN_LEARNING_TIMESTEPS // 10000


# Doors (doors.py), --env-id doors:Doors-v0: once per family (gymnax, Gymnasium), and learning on each
@pytest.mark.slow
@pytest.mark.parametrize("script", ["dqn_linen.py", "dqn_torch_gymnasium.py"])
def test_doors_from_its_module_runs_and_logs_every_tag_once_per_family(script, shared_runs):
    run = shared_runs.get(script, *DQN_TINY, "--env-id", "doors:Doors-v0")
    assert set(run.scalars) == DQN_TAGS and table(run.texts["hyperparameters"])["env_id"] == "doors:Doors-v0"
    assert [step for step, _ in run.scalars["charts/SPS"]] == [TINY_STEPS * (i + 1) for i in range(TINY_ITERATIONS)]
