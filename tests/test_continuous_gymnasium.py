"""The continuous-action PPO scripts on Gymnasium envs (ppo_continuous_torch_gymnasium.py,
ppo_continuous_linen_gymnasium.py) against the reference, ppo_continuous_linen.py: their NumPy normalisers give the
reference's JAX ones on the shared stream (tests/continuous_case.py), directly and through the vector env's step; the
torch loss and gradients are the reference's, the Linen script's model, loss and update are its code line for line;
both rollouts store what they sampled, the scaled rewards for GAE and the raw ones for the episode statistics;
Gymnasium's Pendulum-v1 is gymnax's MDP, its MountainCarContinuous-v0 is but at the left wall. (Smoke, MuJoCo and
learning runs: tests/test_continuous.py; bad input: the CLI probe.)"""
import functools
import inspect

import gymnasium as gym
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import continuous_case
import ppo_continuous_linen as linen
import ppo_continuous_linen_gymnasium
import ppo_continuous_torch_gymnasium
import reference
from test_continuous_torch import kernels, torch_agent_of, torch_linears

jax.config.update("jax_default_matmul_precision", "highest")
torch.set_float32_matmul_precision("highest")

MODULES = [ppo_continuous_torch_gymnasium, ppo_continuous_linen_gymnasium]
IDS = ["torch", "linen"]
CPU = torch.device("cpu")
HEADS = ("actor_mean", "critic")
# the env code both scripts share line for line: the env list, the vector env, the NumPy normalisers, reset and step
ENV_CODE = ("GYMNASIUM_ENVS", "MUJOCO_ENVS", "make_envs", "flatten_obs", "RunningStats", "Normalizer", "new_stats",
            "update_stats", "normalize_obs", "normalize_step", "env_reset", "env_step", "unpack_step")
# what the Linen script takes from the reference line for line: the model, the loss, the optimiser, GAE and the update
LINEN_CODE = ("MLP", "Agent", "make_agent", "gaussian_log_prob", "gaussian_entropy", "scale_by_adam", "make_optimizer",
              "Storage", "EpisodeStats", "new_iteration_stats", "track_episodes", "compute_gae", "LossInfo", "Batch",
              "ppo_loss", "update_minibatch", "update")


def test_the_scripts_share_their_env_code_line_for_line():
    for name in ENV_CODE:
        torch_code, linen_code = (getattr(module, name) for module in MODULES)
        if isinstance(torch_code, tuple):
            assert torch_code == linen_code, name
        else:
            assert inspect.getsource(torch_code) == inspect.getsource(linen_code), name


def test_the_linen_scripts_model_loss_and_update_are_the_references_line_for_line():
    """So the reference's loss and gradient parity stands for the Linen script: no parity test of its own."""
    for name in LINEN_CODE:
        ours, reference_code = getattr(ppo_continuous_linen_gymnasium, name), getattr(linen, name)
        assert inspect.getsource(ours) == inspect.getsource(reference_code), name


# NORMALISERS
NORMALIZED = ("obs", "scaled reward", "final obs")  # what normalize_step returns after the normaliser


def assert_close(value, expected, err_msg=""):
    np.testing.assert_allclose(np.asarray(value), np.asarray(expected), **continuous_case.TOLERANCE, err_msg=err_msg)


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_normalizers_match_the_shared_stream(module):
    stream = continuous_case.normalizer_stream()
    first = stream[0][0]
    obs_stats = module.update_stats(module.new_stats(first.shape[1:]), first)
    norm = module.Normalizer(obs_stats, module.new_stats(()), np.zeros(first.shape[0], np.float32))
    for (obs, reward, done, final_obs), expected in zip(stream[1:], continuous_case.reference_normalized(stream)):
        norm, *normalized = module.normalize_step(norm, obs, reward, done, final_obs, 0.99)
        for name, value, expected_value in zip(NORMALIZED, normalized, expected, strict=True):
            assert value.dtype == np.float32, name  # as the reference's
            assert_close(value, expected_value, name)


class ReplayEnvs:
    """A vector env replaying a stream [(obs, reward, done, final obs)]: its first obs at reset, then an entry a step,
    `done` as termination, the ended envs' final obs in the info as Gymnasium's same-step autoreset gives them."""

    single_action_space = gym.spaces.Box(-2.0, 2.0, (1,), np.float32)

    def __init__(self, stream: list):
        self.stream, self.actions = stream, []

    def reset(self, seed: int):
        self.t = 0
        return self.stream[0][0], {}

    def step(self, action: np.ndarray):
        self.actions.append(action)
        self.t += 1
        obs, reward, done, final_obs = self.stream[self.t]
        info = {}
        if done.any():
            info["final_obs"] = np.empty(len(done), object)
            for i in np.flatnonzero(done):
                info["final_obs"][i] = final_obs[i].astype(np.float64)  # MuJoCo's observations are float64
            info["_final_obs"] = done
        return obs, reward.astype(np.float64), done, np.zeros_like(done), info


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_env_reset_and_step_normalise_a_vector_envs_steps_as_the_reference(module):
    """Through the scripts' env_reset and env_step: the reset obs start the statistics, each step's packed array holds
    the reference's normalised obs and scaled reward, the raw reward and the flags, the reference's normalised final
    obs for an ended env (any other's is its next obs); the actions reach the env clipped to its bounds."""
    stream = continuous_case.normalizer_stream()
    envs = ReplayEnvs(stream)
    step, norm = module.env_reset(envs, seed=1)
    obs, reward, scaled_reward, terminated, truncated, final_obs = module.unpack_step(step)
    np.testing.assert_array_equal(final_obs, obs)
    assert not (reward.any() or scaled_reward.any() or terminated.any() or truncated.any())
    actions = np.array([[3.0], [-0.5], [-7.0], [1.0]], np.float32)
    for (_, raw_reward, done, _), expected in zip(stream[1:], continuous_case.reference_normalized(stream)):
        step, norm = module.env_step(norm, actions, envs, 0.99)
        assert step.dtype == np.float32
        obs, reward, scaled_reward, terminated, truncated, final_obs = module.unpack_step(step)
        assert_close(obs, expected[0], "obs")
        assert_close(scaled_reward, expected[1], "scaled reward")
        np.testing.assert_array_equal(reward, raw_reward)
        np.testing.assert_array_equal(terminated, done)
        assert not truncated.any()
        assert_close(final_obs[done], expected[2][done], "final obs")
        np.testing.assert_array_equal(final_obs[~done], obs[~done])
    assert any(done.any() for _, _, done, _ in stream[1:]) and not all(done.all() for _, _, done, _ in stream[1:])
    np.testing.assert_array_equal(envs.actions[0], [[2.0], [-0.5], [-2.0], [1.0]])


def test_a_truncated_pendulum_episode_is_reset_in_the_step_that_ends_it_its_final_obs_normalised():
    """Against a single env seeded as env 0 and stepped alike: the reset obs, the final obs of the episode truncated at
    step 200 (normalised with the statistics that step updated) and the new episode's start, all in the same step."""
    m = ppo_continuous_torch_gymnasium
    envs, single = m.make_envs("Pendulum-v1", 2, "sync"), gym.make("Pendulum-v1")
    step, norm = m.env_reset(envs, seed=3)
    np.testing.assert_allclose(m.unpack_step(step)[0][0], m.normalize_obs(norm.obs, single.reset(seed=3)[0]), rtol=1e-6)
    for t in range(200):
        previous = norm
        step, norm = m.env_step(norm, np.zeros((2, 1), np.float32), envs, 0.99)
        raw = single.step(np.zeros(1, np.float32))[0]
        obs, _, _, terminated, truncated, final_obs = m.unpack_step(step)
        assert not terminated.any()
        assert truncated.all() if t == 199 else not truncated.any()
    np.testing.assert_allclose(final_obs[0], m.normalize_obs(norm.obs, raw), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(obs[0], m.normalize_obs(norm.obs, single.reset()[0]), rtol=1e-5, atol=1e-6)
    assert (norm.returns == 0).all() and (previous.returns != 0).all()  # the discounted returns restart


def test_only_continuous_envs_are_accepted():
    for m in MODULES:
        assert "needs continuous actions" in m.check_args(m.Args(env_id="CartPole-v1"))
        reason = m.check_args(m.Args(env_id="NoSuchEnv-v0"))
        assert reason.startswith("unknown env 'NoSuchEnv-v0'") and "Pendulum-v1" in reason and "Hopper-v5" in reason
        for env_id in m.GYMNASIUM_ENVS + m.MUJOCO_ENVS:
            assert m.check_args(m.Args(env_id=env_id)) is None


# TORCH: LOSS AND GRADIENTS
@pytest.mark.parametrize("clip_vloss,norm_adv", [(True, True), (False, False)])
def test_torch_loss_terms_and_every_gradient_match_the_reference(clip_vloss, norm_adv):
    m = ppo_continuous_torch_gymnasium
    _, params = continuous_case.linen_agent()
    mb, coefs, expected = continuous_case.loss_case(clip_vloss, norm_adv)
    agent = torch_agent_of(params, ppo_continuous_torch_gymnasium)
    loss, info = m.ppo_loss(agent, m.Batch(**{name: torch.from_numpy(value) for name, value in mb.items()}), *coefs)
    loss.backward()
    gradients = {head: kernels(agent, head, of=lambda tensor: tensor.grad) for head in HEADS}
    gradients["actor_logstd"] = agent.actor_logstd.grad.numpy()
    terms = {name: value.detach() for name, value in info._asdict().items()}
    continuous_case.assert_loss_parity(loss.detach(), terms, gradients, expected)


def test_torch_init_is_seeded_orthogonal_with_ppo_gains_zero_biases_and_a_zero_log_std():
    def build(seed):
        torch.manual_seed(seed)
        return ppo_continuous_torch_gymnasium.make_agent(3, 2, "small", CPU)

    agent = build(1)
    heads = {"actor": kernels(agent, "actor_mean"), "critic": kernels(agent, "critic")}
    reference.assert_ppo_init(heads, len(ppo_continuous_torch_gymnasium.MODEL_SIZES["small"]))
    assert agent.actor_logstd.shape == (1, 2) and not agent.actor_logstd.detach().any()
    first = lambda a: torch_linears(a, "actor_mean")[0].weight.detach()
    assert torch.equal(first(agent), first(build(1))) and not torch.equal(first(agent), first(build(2)))


# ROLLOUTS
def short_pendulum(num_envs: int, max_steps: int):
    """The scripts' Pendulum-v1 envs, their episodes truncated after `max_steps` steps."""
    return gym.make_vec("Pendulum-v1", num_envs=num_envs, vectorization_mode="sync", max_episode_steps=max_steps,
                        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP})


def recorded(env_step_fn, steps: list):
    """`env_step_fn`, keeping each packed step it returns."""
    def step(norm, action):
        packed, norm = env_step_fn(norm, action)
        steps.append(packed)
        return packed, norm

    return step


def assert_rollout_bookkeeping(steps: list, rewards, truncated, stats, num_envs: int):
    """GAE gets the scaled rewards; the raw ones, summed over the finished episodes, are the episode statistics."""
    _, raw_rewards, scaled_rewards, _, step_truncated, _ = ppo_continuous_torch_gymnasium.unpack_step(np.stack(steps))
    np.testing.assert_array_equal(np.asarray(rewards), scaled_rewards)
    assert not np.allclose(raw_rewards, scaled_rewards)
    np.testing.assert_array_equal(np.asarray(truncated), step_truncated != 0)
    assert step_truncated.sum() == 2 * num_envs and float(stats.finished_count) == 2 * num_envs  # steps 5 and 10
    np.testing.assert_allclose(float(stats.finished_return_sum), raw_rewards.sum(), rtol=1e-5)
    assert float(stats.finished_length_sum) == 10 * num_envs


def test_torch_rollout_stores_unclipped_actions_their_log_probs_scaled_rewards_and_tracks_raw_returns():
    m = ppo_continuous_torch_gymnasium
    envs, steps = short_pendulum(num_envs=3, max_steps=5), []
    step, norm = m.env_reset(envs, 1)
    obs = m.unpack_step(torch.from_numpy(step))[0]
    torch.manual_seed(1)
    agent = m.make_agent(obs.shape[1], 1, "small", CPU)
    with torch.no_grad():
        agent.actor_logstd.fill_(0.7)  # std 2: a fair share of actions beyond Pendulum's bounds of +-2
    stats = m.EpisodeStats(np.zeros(3, np.float32), np.zeros(3, np.int64), 0.0, 0.0, 0.0)
    policy_fn = functools.partial(m.policy_step, actor_mean=agent.actor_mean, actor_logstd=agent.actor_logstd)
    env_step_fn = recorded(functools.partial(m.env_step, envs=envs, gamma=0.99), steps)
    carry, storage, last_value = m.rollout(m.RolloutCarry(norm, obs, stats), agent, policy_fn, env_step_fn,
                                           num_steps=10, action_dim=1, bootstrap_truncated=True)
    assert storage.actions.abs().max() > 2  # stored unclipped
    assert torch.equal(storage.obs[0], obs) and carry.norm.obs.count > norm.obs.count
    with torch.no_grad():
        mean, logstd, values = agent(storage.obs.reshape(-1, obs.shape[1]))
        logprobs = m.gaussian_log_prob(mean, logstd, storage.actions.reshape(-1, 1))
        torch.testing.assert_close(last_value, agent.value(carry.obs))
    torch.testing.assert_close(storage.logprobs.reshape(-1), logprobs)
    torch.testing.assert_close(storage.values.reshape(-1), values)
    assert_rollout_bookkeeping(steps, storage.rewards, storage.truncated, carry.stats, num_envs=3)


def test_linen_rollout_stores_unclipped_actions_their_log_probs_scaled_rewards_and_tracks_raw_returns():
    m = ppo_continuous_linen_gymnasium
    envs, steps = short_pendulum(num_envs=3, max_steps=5), []
    step, norm = m.env_reset(envs, 1)
    obs = m.unpack_step(jnp.asarray(step))[0]
    agent, params = m.make_agent(jax.random.PRNGKey(1), obs.shape[1], 1, "small")
    params = {"params": {**params["params"], "actor_logstd": jnp.full((1, 1), 0.7)}}  # std 2, as in the torch test
    zeros = jnp.zeros(3)
    stats = m.EpisodeStats(zeros, zeros.astype(jnp.int32), jnp.zeros(()), jnp.zeros(()), jnp.zeros(()))
    env_step_fn = recorded(functools.partial(m.env_step, envs=envs, gamma=0.99), steps)
    carry, storage, last_value, _ = m.rollout(
        params, m.RolloutCarry(norm, obs, jax.random.PRNGKey(2), stats),
        start_fn=jax.jit(functools.partial(m.start_rollout, agent=agent)), env_step_fn=env_step_fn,
        act_fn=jax.jit(functools.partial(m.act_step, agent=agent, bootstrap_truncated=True)),
        stack_fn=jax.jit(m.stack_transitions), num_steps=10,
    )
    assert float(jnp.abs(storage.actions).max()) > 2  # stored unclipped
    assert np.array_equal(storage.obs[0], obs) and carry.norm.obs.count > norm.obs.count
    mean, logstd, values = agent.apply(params, storage.obs.reshape(-1, obs.shape[1]))
    logprobs = m.gaussian_log_prob(mean, logstd, storage.actions.reshape(-1, 1))
    np.testing.assert_allclose(storage.logprobs.reshape(-1), logprobs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(storage.values.reshape(-1), values, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(last_value, agent.apply(params, carry.obs, method=m.Agent.value), rtol=1e-5, atol=1e-6)
    assert_rollout_bookkeeping(steps, storage.rewards, storage.truncated, carry.stats, num_envs=3)


# THE ENVS: GYMNASIUM'S ARE GYMNAX'S
def test_gymnasium_and_gymnax_pendulum_are_the_same_mdp():
    """From the same states (angles beyond a turn, speeds up to the limit), the same actions (some beyond the bounds,
    which both clip) give the same next observations and rewards, and neither terminates; both truncate at 200."""
    env, params = gymnax.make("Pendulum-v1")
    gym_env = gym.make("Pendulum-v1")
    assert gym_env.spec.max_episode_steps == params.max_steps_in_episode == 200
    _, template = env.reset(jax.random.PRNGKey(0), params)
    step_env = jax.jit(env.step_env)
    gym_env.reset(seed=0)
    samples = np.random.default_rng(0).uniform([-7.0, -8.0, -3.0], [7.0, 8.0, 3.0], size=(200, 3)).astype(np.float32)
    for theta, theta_dot, torque in samples:
        state = template.replace(theta=jnp.float32(theta), theta_dot=jnp.float32(theta_dot))
        obs, _, reward, terminated, _ = step_env(jax.random.PRNGKey(1), state, jnp.array([torque]), params)
        gym_env.unwrapped.state = np.array([theta, theta_dot], np.float64)
        gym_obs, gym_reward, gym_terminated, gym_truncated, _ = gym_env.unwrapped.step(np.array([torque]))
        np.testing.assert_allclose(gym_obs, np.asarray(obs), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(gym_reward, float(reward), rtol=1e-5, atol=1e-5)
        assert not (gym_terminated or gym_truncated or bool(terminated))
    assert (np.abs(samples[:, 2]) > 2).sum() > 50  # many actions clipped


def test_gymnasium_and_gymnax_mountain_car_continuous_differ_only_at_the_left_wall():
    """From the states an episode reaches (left of the goal), the same actions give the same next observations, rewards
    and terminations, but where the car hits the left wall: Gymnasium stops it there, gymnax keeps its speed (the
    scripts' docstrings say so). Both truncate at 999 steps."""
    env, params = gymnax.make("MountainCarContinuous-v0")
    gym_env = gym.make("MountainCarContinuous-v0")
    assert gym_env.spec.max_episode_steps == params.max_steps_in_episode == 999
    _, template = env.reset(jax.random.PRNGKey(0), params)
    step_env = jax.jit(env.step_env)
    gym_env.reset(seed=0)
    samples = np.random.default_rng(0).uniform([-1.2, -0.07, -1.0], [0.45, 0.07, 1.0], size=(300, 3)).astype(np.float32)
    walls = 0
    for position, velocity, force in samples:
        state = template.replace(position=jnp.float32(position), velocity=jnp.float32(velocity))
        obs, _, reward, terminated, _ = step_env(jax.random.PRNGKey(1), state, jnp.array([force]), params)
        gym_env.unwrapped.state = np.array([position, velocity], np.float32)
        gym_obs, gym_reward, gym_terminated, _, _ = gym_env.unwrapped.step(np.array([force]))
        if gym_obs[0] == -1.2 and gym_obs[1] == 0:  # at the wall: the same position, gymnax's speed kept
            walls += 1
            assert obs[0] == -1.2 and obs[1] < 0
            continue
        np.testing.assert_allclose(gym_obs, np.asarray(obs), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(gym_reward, float(reward), rtol=1e-5, atol=1e-6)
        assert gym_terminated == bool(terminated)
    assert walls > 0
