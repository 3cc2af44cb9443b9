"""ppo_linen.py pieces against plain numpy: GAE, the PPO loss, the init, the rollout's bootstrap values."""
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ppo_linen
import reference


def linen_layers(params, head):
    """The (kernel, bias) list of the actor or critic MLP, in layer order."""
    tree = params["params"][head]
    return [(np.asarray(tree[f"Dense_{i}"]["kernel"]), np.asarray(tree[f"Dense_{i}"]["bias"])) for i in range(len(tree))]


@pytest.mark.parametrize("bootstrap_truncated", [True, False])
def test_gae_matches_numpy_reference_with_mid_rollout_termination_and_truncation(bootstrap_truncated):
    r = reference.rollout_like()
    storage = ppo_linen.Storage(
        obs=None, actions=None, logprobs=None, values=jnp.asarray(r["values"]), rewards=jnp.asarray(r["rewards"]),
        terminated=jnp.asarray(r["terminated"]), truncated=jnp.asarray(r["truncated"]),
        final_values=jnp.asarray(r["final_values"]),
    )
    advantages, returns = ppo_linen.compute_gae(storage, jnp.asarray(r["last_value"]), 0.99, 0.95, bootstrap_truncated)
    expected_adv, expected_ret = reference.gae(**r, gamma=0.99, gae_lambda=0.95, bootstrap_truncated=bootstrap_truncated)
    np.testing.assert_allclose(advantages, expected_adv, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(returns, expected_ret, rtol=1e-5, atol=1e-6)
    # the truncated step of env 1 cuts the trace; it adds gamma * V(final obs) only when bootstrapping
    bootstrap = 0.99 * r["final_values"][3, 1] if bootstrap_truncated else 0.0
    assert advantages[3, 1] == pytest.approx(r["rewards"][3, 1] + bootstrap - r["values"][3, 1], abs=1e-5)
    # terminated and truncated at once: terminated wins, no bootstrap
    assert advantages[4, 2] == pytest.approx(r["rewards"][4, 2] - r["values"][4, 2], abs=1e-5)


def test_ppo_loss_matches_numpy_reference_on_tiny_batch():
    agent, params = ppo_linen.make_agent(jax.random.PRNGKey(3), obs_dim=4, action_dim=3, model_size="small")
    mb = reference.minibatch_like()
    loss, info = ppo_linen.ppo_loss(
        params, agent, ppo_linen.Batch(**{k: jnp.asarray(v) for k, v in mb.items()}),
        clip_coef=0.2, clip_vloss=True, norm_adv=True, ent_coef=0.01, vf_coef=0.5,
    )
    logits = reference.mlp(mb["obs"], linen_layers(params, "actor"))
    newvalue = reference.mlp(mb["obs"], linen_layers(params, "critic"))[:, 0]
    expected = reference.ppo_loss(
        logits, newvalue, mb["actions"], mb["logprobs"], mb["values"], mb["advantages"], mb["returns"],
        clip_coef=0.2, ent_coef=0.01, vf_coef=0.5,
    )
    assert 0 < expected["clipfrac"] < 1
    assert float(loss) == pytest.approx(expected["loss"], rel=1e-5)
    for name, value in info._asdict().items():
        assert float(value) == pytest.approx(expected[name], rel=1e-4, abs=1e-6), name


@pytest.mark.parametrize("model_size", ["small", pytest.param("medium", marks=pytest.mark.slow)])
def test_init_is_seeded_orthogonal_with_ppo_gains_and_zero_biases(model_size):
    _, params = ppo_linen.make_agent(jax.random.PRNGKey(0), obs_dim=400, action_dim=5, model_size=model_size)
    heads = {head: linen_layers(params, head) for head in ("actor", "critic")}
    reference.assert_ppo_init(heads, len(ppo_linen.MODEL_SIZES[model_size]))
    _, same = ppo_linen.make_agent(jax.random.PRNGKey(0), obs_dim=400, action_dim=5, model_size=model_size)
    _, other = ppo_linen.make_agent(jax.random.PRNGKey(1), obs_dim=400, action_dim=5, model_size=model_size)
    kernels = lambda p: np.asarray(p["params"]["actor"]["Dense_0"]["kernel"])
    assert np.array_equal(kernels(params), kernels(same)) and not np.array_equal(kernels(params), kernels(other))


def test_rollout_stores_value_of_final_observation_before_auto_reset():
    env, env_params = gymnax.make("CartPole-v1")
    env_params = env_params.replace(max_steps_in_episode=5)
    obs, env_state = ppo_linen.env_reset(jax.random.PRNGKey(0), env, env_params, 3)
    agent, params = ppo_linen.make_agent(jax.random.PRNGKey(1), obs.shape[1], 2, "small")
    zeros = jnp.zeros(3)
    stats = ppo_linen.EpisodeStats(zeros, zeros.astype(jnp.int32), jnp.zeros(()), jnp.zeros(()), jnp.zeros(()))
    carry = ppo_linen.RolloutCarry(env_state, obs, jax.random.PRNGKey(2), stats)
    carry, storage, last_value, _ = ppo_linen.rollout(params, carry, agent, env, env_params, 12, True)
    done = np.asarray(storage.terminated | storage.truncated)
    assert np.asarray(storage.truncated).any()
    next_values = np.concatenate([np.asarray(storage.values[1:]), np.asarray(last_value)[None]])
    # without a reset the final observation is the next observation; after one it is not
    np.testing.assert_allclose(np.asarray(storage.final_values)[~done], next_values[~done], rtol=1e-5, atol=1e-6)
    assert not np.allclose(np.asarray(storage.final_values)[done], next_values[done])
    assert float(carry.stats.finished_count) == done.sum()
