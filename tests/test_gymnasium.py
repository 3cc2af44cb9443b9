"""The Gymnasium scripts of the env-backend experiment: their envs are the gymnax envs' MDPs, an ended episode's final
observation reaches the agent in the step that ends it, and each rollout step moves one array each way between host and
device. (Smoke, bad input, learning and robustness runs: the shared tests of every script.)"""
import functools
import os
from collections import Counter

import gymnasium as gym
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from jax._src.array import ArrayImpl

import ppo_linen_gymnasium
import ppo_torch_gymnasium
from helpers import GYMNASIUM_SCRIPTS, ROOT

# gymnax's EnvState fields, in the order of the Gymnasium env's `state` array
STATE_FIELDS = {
    "CartPole-v1": ("x", "x_dot", "theta", "theta_dot"),
    "Acrobot-v1": ("joint_angle1", "joint_angle2", "velocity_1", "velocity_2"),
    "MountainCar-v0": ("position", "velocity"),
}
# CartPole in the fast subset, every env in the full suite
FIRST_ENV_FAST = ["CartPole-v1", *(pytest.param(env_id, marks=pytest.mark.slow) for env_id in list(STATE_FIELDS)[1:])]
# a box of states around each env's terminal region, so that both outcomes occur
STATE_BOX = {
    "CartPole-v1": ([-2.6, -3.0, -0.25, -3.0], [2.6, 3.0, 0.25, 3.0]),
    "Acrobot-v1": ([-np.pi, -np.pi, -12.0, -28.0], [np.pi, np.pi, 12.0, 28.0]),
    "MountainCar-v0": ([-1.2, -0.07], [0.6, 0.07]),
}


def test_the_scripts_map_the_same_envs_and_share_their_env_code():
    assert ppo_torch_gymnasium.GYMNASIUM_ENVS == ppo_linen_gymnasium.GYMNASIUM_ENVS
    assert set(ppo_torch_gymnasium.GYMNASIUM_ENVS) == set(STATE_FIELDS)


@pytest.mark.parametrize("env_id", FIRST_ENV_FAST)
def test_gymnasium_and_gymnax_envs_are_the_same_mdp(env_id):
    """From the same states (up to 200, the non-terminal ones), every action gives the same next observation, reward
    and termination in both libraries, and both cut episodes at the same time limit."""
    env, params = gymnax.make(env_id)
    gym_env = gym.make(ppo_torch_gymnasium.GYMNASIUM_ENVS[env_id])
    assert gym_env.spec.max_episode_steps == params.max_steps_in_episode
    _, template = env.reset(jax.random.PRNGKey(0), params)
    step_env = jax.jit(env.step_env)
    low, high = STATE_BOX[env_id]
    outcomes = Counter()
    for values in np.random.default_rng(0).uniform(low, high, size=(200, len(low))).astype(np.float32):
        state = template.replace(**{name: jnp.float32(value) for name, value in zip(STATE_FIELDS[env_id], values)})
        if env.is_terminated(state, params):  # an episode never starts a step from a terminal state
            continue
        for action in range(gym_env.action_space.n):
            obs, _, reward, terminated, _ = step_env(jax.random.PRNGKey(1), state, action, params)
            gym_env.reset(seed=0)  # clears CartPole's stepping-after-termination bookkeeping
            gym_env.unwrapped.state = values.astype(np.float64)
            gym_obs, gym_reward, gym_terminated, gym_truncated, _ = gym_env.unwrapped.step(action)
            np.testing.assert_allclose(gym_obs, np.asarray(obs), rtol=1e-4, atol=1e-5)
            assert (gym_reward, gym_terminated, gym_truncated) == (float(reward), bool(terminated), False)
            outcomes[bool(terminated)] += 1
    assert outcomes[True] > 0 and outcomes[False] > 0, outcomes


def test_a_truncated_episode_is_reset_in_the_step_that_ends_it_with_its_final_observation_kept():
    m = ppo_torch_gymnasium
    envs = m.make_envs("MountainCar-v0", 2, "sync")
    first = m.env_reset(envs, seed=3)
    # env i is seeded with seed + i, as a single env reset with that seed
    for i in range(2):
        np.testing.assert_array_equal(first[i, :2], gym.make("MountainCar-v0").reset(seed=3 + i)[0])
    np.testing.assert_array_equal(first[:, 2:5], 0)
    for t in range(200):  # pushing left never reaches the goal: both episodes are truncated at step 200
        obs, reward, terminated, truncated, final_obs = m.unpack_step(m.env_step(np.zeros(2, np.int64), envs))
        assert not terminated.any() and (reward == -1).all()
        if t < 199:
            assert not truncated.any()
            np.testing.assert_array_equal(final_obs, obs)
    assert truncated.all()
    assert ((obs[:, 0] >= -0.6) & (obs[:, 0] <= -0.4) & (obs[:, 1] == 0)).all()  # the new episodes' start states
    assert (final_obs[:, 1] != 0).all() and not np.array_equal(final_obs, obs)


def test_a_terminated_episode_keeps_its_final_observation_and_the_other_env_runs_on():
    m = ppo_torch_gymnasium
    envs = m.make_envs("CartPole-v1", 2, "sync")
    obs = m.env_reset(envs, seed=1)[:, :4]
    for t in range(100):  # env 0 always pushes right and falls; env 1 alternates and stays up longer
        before = obs
        obs, _, terminated, truncated, final_obs = m.unpack_step(m.env_step(np.array([1, t % 2]), envs))
        if terminated[0]:
            break
    assert terminated[0] and not truncated[0]
    assert abs(final_obs[0, 2]) > 0.2095 or abs(final_obs[0, 0]) > 2.4  # the pole fell or the cart left
    assert (np.abs(obs[0]) <= 0.05).all()  # env 0 starts again
    if not terminated[1]:
        np.testing.assert_array_equal(final_obs[1], obs[1])
        assert not np.array_equal(obs[1], before[1])


def test_the_numpy_vectorised_cartpole_gives_the_sync_envs_transitions_for_the_same_seed_and_actions():
    """--vectorization vector: Gymnasium's NumPy CartPole resets an ended episode one step late; the scripts reset it
    in the step that ends it, drawing its state as the sync env does, so both envs give the same transitions (next
    obs, reward, terminated, truncated and final obs), to the bit, through terminations and truncations."""
    m = ppo_torch_gymnasium
    sync, vector = m.make_envs("CartPole-v1", 6, "sync"), m.make_envs("CartPole-v1", 6, "vector")
    steps = [m.env_reset(sync, 3)], [m.env_reset(vector, 3)]
    rng = np.random.default_rng(0)
    for t in range(1500):  # envs 0-2 balance the pole (truncated at 500 steps), envs 3-5 act at random
        theta, theta_dot = steps[0][-1][:, 2], steps[0][-1][:, 3]
        action = np.where(np.arange(6) < 3, theta + 0.5 * theta_dot > 0, rng.integers(0, 2, 6)).astype(np.int32)
        steps[0].append(m.env_step(action, sync))
        steps[1].append(m.env_step(action, vector))
    np.testing.assert_array_equal(*steps)
    _, _, terminated, truncated, _ = m.unpack_step(np.stack(steps[0][1:]))
    assert truncated[:, :3].sum() >= 6 and terminated[:, 3:].sum() >= 100  # both kinds of ending, many times


def test_the_numpy_vectorised_env_is_refused_for_an_env_without_one():
    for m in (ppo_torch_gymnasium, ppo_linen_gymnasium):
        reason = m.check_args(m.Args(env_id="Acrobot-v1", vectorization="vector"))
        assert "no NumPy-vectorised env with same-step autoreset for Acrobot-v1" in reason
        assert m.check_args(m.Args(vectorization="vector")) is None
        assert m.check_args(m.Args(env_id="doors:Doors-v0", vectorization="vector")) is None  # its own, same-step


@pytest.mark.parametrize("env_id", ["CartPole-v1", "doors:Doors-v0"])
def test_the_async_envs_give_the_sync_envs_transitions_for_the_same_seed_and_actions(env_id):
    """--vectorization async: the same env copies, each in a process of its own, seeded as the sync ones are."""
    m = ppo_torch_gymnasium
    sync, asynchronous = m.make_envs(env_id, 3, "sync"), m.make_envs(env_id, 3, "async")
    assert isinstance(asynchronous, gym.vector.AsyncVectorEnv)
    steps = [m.env_reset(sync, 7)], [m.env_reset(asynchronous, 7)]
    rng = np.random.default_rng(0)
    for _ in range(150):
        action = rng.integers(0, sync.single_action_space.n, 3).astype(np.int32)
        steps[0].append(m.env_step(action, sync))
        steps[1].append(m.env_step(action, asynchronous))
    asynchronous.close()
    np.testing.assert_array_equal(*steps)
    _, _, terminated, truncated, _ = m.unpack_step(np.stack(steps[0][1:]))
    assert (terminated + truncated).sum() >= 3  # episodes ended (and were reset) on the way


def counted(counts, name, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        counts[name] += 1
        return function(*args, **kwargs)

    return wrapper


def test_torch_rollout_moves_one_array_each_way_per_step(monkeypatch):
    m = ppo_torch_gymnasium
    device = torch.device("cpu")
    envs = m.make_envs("CartPole-v1", 4, "sync")
    obs = m.unpack_step(torch.from_numpy(m.env_reset(envs, 1)))[0]
    torch.manual_seed(1)
    agent = m.make_agent(4, 2, "small", device)
    stats = m.EpisodeStats(np.zeros(4, np.float32), np.zeros(4, np.int64), 0.0, 0.0, 0.0)
    counts = Counter()
    rollout = functools.partial(
        m.rollout,
        agent=agent,
        policy_fn=functools.partial(m.policy_step, actor=agent.actor),
        env_step_fn=counted(counts, "env steps", functools.partial(m.env_step, envs=envs)),
        num_steps=8,
        num_actions=2,
        bootstrap_truncated=True,
    )
    carry, _, _ = rollout(m.RolloutCarry(obs, stats))
    counts.clear()
    monkeypatch.setattr(torch, "from_numpy", counted(counts, "to device", torch.from_numpy))
    for name in ("numpy", "item", "tolist"):
        label = "to host" if name == "numpy" else name
        monkeypatch.setattr(torch.Tensor, name, counted(counts, label, getattr(torch.Tensor, name)))
    start = carry
    carry, storage, last_value = rollout(carry)
    assert counts == {"env steps": 8, "to device": 8, "to host": 8}
    assert storage.obs.shape == (8, 4, 4) and storage.actions.shape == (8, 4)
    # each step's value is V(the obs that step saw), the first of them the carry's; V(last obs) is the critic's
    assert torch.equal(storage.obs[0], start.obs)
    np.testing.assert_allclose(storage.values, agent.value(storage.obs).detach(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(last_value, agent.value(carry.obs).detach(), rtol=1e-5, atol=1e-6)


def test_linen_rollout_moves_one_array_each_way_per_step(monkeypatch):
    m = ppo_linen_gymnasium
    envs = m.make_envs("CartPole-v1", 4, "sync")
    obs = m.unpack_step(jax.device_put(m.env_reset(envs, 1)))[0]
    agent, params = m.make_agent(jax.random.PRNGKey(1), 4, 2, "small")
    zeros = jnp.zeros(4)
    stats = m.EpisodeStats(zeros, zeros.astype(jnp.int32), jnp.zeros(()), jnp.zeros(()), jnp.zeros(()))
    counts = Counter()
    rollout = functools.partial(
        m.rollout,
        start_fn=counted(counts, "start calls", jax.jit(functools.partial(m.start_rollout, agent=agent))),
        env_step_fn=counted(counts, "env steps", functools.partial(m.env_step, envs=envs)),
        act_fn=counted(
            counts, "act calls", jax.jit(functools.partial(m.act_step, agent=agent, bootstrap_truncated=True))
        ),
        stack_fn=jax.jit(m.stack_transitions),
        num_steps=8,
    )
    carry, _, _, _ = rollout(params, m.RolloutCarry(obs, jax.random.PRNGKey(2), stats))  # compiles
    counts.clear()
    monkeypatch.setattr(jax, "device_put", counted(counts, "to device", jax.device_put))
    monkeypatch.setattr(jax, "device_get", counted(counts, "to host", jax.device_get))
    for name in ("item", "tolist"):  # (jax.device_get reads through __array__)
        monkeypatch.setattr(ArrayImpl, name, counted(counts, name, getattr(ArrayImpl, name)))
    start = carry
    carry, storage, last_value, _ = rollout(params, carry)
    # one compiled call per step (record the step, sample the next actions) and one to start the rollout
    assert counts == {"env steps": 8, "to device": 8, "to host": 8, "act calls": 8, "start calls": 1}
    assert storage.obs.shape == (8, 4, 4) and storage.terminated.dtype == jnp.bool_
    # each step's value is V(the obs that step saw), the first of them the carry's; V(last obs) is the critic's
    critic = functools.partial(agent.apply, params, method=m.Agent.value)
    np.testing.assert_array_equal(storage.obs[0], start.obs)
    np.testing.assert_allclose(storage.values, jax.vmap(critic)(storage.obs), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(last_value, critic(carry.obs), rtol=1e-5, atol=1e-6)


@pytest.mark.background("smoke")
@pytest.mark.parametrize("script", GYMNASIUM_SCRIPTS)
def test_the_loop_fetches_the_actions_once_per_step_and_the_logs_once_per_iteration(script, shared_runs):
    """The probed smoke run (TINY: 3 iterations of 16 steps): the script fetches at two lines only."""
    fetches = [f for f in shared_runs.smoke(script).record["fetches"] if f["file"] == os.path.join(ROOT, script)]
    by_line = {line: Counter(f["method"] for f in fetches if f["line"] == line) for line in {f["line"] for f in fetches}}
    assert sorted(by_line.values(), key=lambda methods: sum(methods.values())) in (
        [Counter({"torch.Tensor.tolist": 3}), Counter({"torch.Tensor.cpu": 48, "torch.Tensor.numpy": 48})],
        [Counter({"jax.device_get": 3}), Counter({"jax.device_get": 48})],
    ), by_line
