"""ppo_continuous_torch.py against the reference, ppo_continuous_linen.py: the same weights and minibatch give the same
loss, terms and gradients (tests/continuous_case.py); the minibatch updates (eager, and --compile's functional one)
step as optax does; GAE and the packed env step are the reference's (its env code: tests/test_continuous.py); the
rollout stores what it sampled; the init is seeded orthogonal with the PPO gains and a zero log-std."""
import functools

import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from flax.training.train_state import TrainState

import continuous_case
import ppo_continuous_linen as linen
import ppo_continuous_torch
import reference
from tolerance import assert_close

jax.config.update("jax_default_matmul_precision", "highest")
torch.set_float32_matmul_precision("highest")

CPU = torch.device("cpu")
HEADS = ("actor_mean", "critic")


@pytest.fixture
def jax_on_the_cpu():
    """JAX's arrays on the CPU, beside these tests' CPU agent (where there is a GPU, JAX's default device is the GPU)."""
    with jax.default_device(jax.devices("cpu")[0]):
        yield


def torch_linears(agent, head):
    return [layer for layer in getattr(agent, head) if isinstance(layer, torch.nn.Linear)]


def torch_agent_of(params, script=ppo_continuous_torch):
    """A torch agent of `script` holding the Linen `params` (torch weight (out, in) = Linen kernel (in, out)
    transposed)."""
    torch.manual_seed(0)  # any weights: they are overwritten with the Linen ones
    agent = script.make_agent(continuous_case.OBS_DIM, continuous_case.ACTION_DIM, "small", CPU)
    with torch.no_grad():
        for head in HEADS:
            layers = continuous_case.linen_layers(params, head)
            for linear, (kernel, bias) in zip(torch_linears(agent, head), layers, strict=True):
                linear.weight.copy_(torch.from_numpy(kernel.T.copy()))
                linear.bias.copy_(torch.from_numpy(bias.copy()))
        agent.actor_logstd.copy_(torch.from_numpy(np.array(params["params"]["actor_logstd"])))
    return agent


def torch_batch(mb: dict) -> ppo_continuous_torch.Batch:
    return ppo_continuous_torch.Batch(**{name: torch.from_numpy(value) for name, value in mb.items()})


def kernels(agent, head, of=lambda tensor: tensor):
    """[(kernel (in, out), bias)] of `head` as numpy, of the parameters or (of=grad) their gradients."""
    linears = torch_linears(agent, head)
    return [(of(linear.weight).detach().numpy().T, of(linear.bias).detach().numpy()) for linear in linears]


@pytest.mark.parametrize("clip_vloss,norm_adv", [(True, True), (False, False)])
def test_loss_terms_and_every_gradient_match_the_reference(clip_vloss, norm_adv):
    _, params = continuous_case.linen_agent()
    mb, coefs, expected = continuous_case.loss_case(clip_vloss, norm_adv)
    agent = torch_agent_of(params)
    loss, info = ppo_continuous_torch.ppo_loss(agent, torch_batch(mb), *coefs)
    loss.backward()
    gradients = {head: kernels(agent, head, of=lambda tensor: tensor.grad) for head in HEADS}
    gradients["actor_logstd"] = agent.actor_logstd.grad.numpy()
    info = {name: value.detach() for name, value in info._asdict().items()}
    continuous_case.assert_loss_parity(loss.detach(), info, gradients, expected)


def test_gaussian_log_prob_and_entropy_are_the_normal_distributions():
    torch.manual_seed(0)
    mean, logstd, action = torch.randn(5, 3), torch.randn(1, 3).expand(5, 3), torch.randn(5, 3) * 2
    normal = torch.distributions.Normal(mean, torch.exp(logstd))
    torch.testing.assert_close(ppo_continuous_torch.gaussian_log_prob(mean, logstd, action),
                               normal.log_prob(action).sum(-1))
    torch.testing.assert_close(ppo_continuous_torch.gaussian_entropy(logstd), normal.entropy().sum(-1))


# (update function, its optimiser's maker): the eager one (fused torch.optim.Adam), --compile's functional one run
# eagerly, and compiled (cold in this process: slow)
UPDATES = [
    ("update_minibatch", "make_optimizer", False), ("update_minibatch_one_graph", "make_adam_state", False),
    pytest.param("update_minibatch_one_graph", "make_adam_state", True, marks=pytest.mark.slow),
]


@pytest.mark.parametrize("update_name,optimizer_name,compiled", UPDATES, ids=["eager", "one-graph", "compiled"])
def test_two_minibatch_updates_clip_and_adam_as_the_reference(update_name, optimizer_name, compiled):
    """From identical weights: loss, gradients, an active global-norm clip and two Adam steps (its bias correction at
    steps 1 and 2) give the reference's parameters, log-std included."""
    agent, params = continuous_case.linen_agent()
    mb, coefs, _ = continuous_case.loss_case(True, True)
    torch_agent = torch_agent_of(params)
    args = linen.Args(num_iterations=10, max_grad_norm=0.05)
    linen_mb = linen.Batch(**{name: jnp.asarray(value) for name, value in mb.items()})
    coefs = dict(zip(("clip_coef", "clip_vloss", "norm_adv", "ent_coef", "vf_coef"), coefs))
    loss_fn = functools.partial(linen.ppo_loss, agent=agent, **coefs)
    torch_loss_fn = functools.partial(ppo_continuous_torch.ppo_loss, **coefs)
    state = TrainState.create(apply_fn=agent.apply, params=params, tx=linen.make_optimizer(args))
    torch_args = ppo_continuous_torch.Args(num_iterations=10, max_grad_norm=0.05)
    optimizer = getattr(ppo_continuous_torch, optimizer_name)(torch_agent, torch_args)
    torch._dynamo.reset()
    update_fn = getattr(ppo_continuous_torch, update_name)
    update_fn = torch.compile(update_fn, fullgraph=True) if compiled else update_fn
    mb_inds = np.arange(continuous_case.BATCH)
    (_, _), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, mb=linen_mb)
    assert float(jnp.sqrt(sum(jnp.sum(leaf**2) for leaf in jax.tree.leaves(grads)))) > 2 * args.max_grad_norm  # clips
    for _ in range(2):
        info = update_fn(torch.from_numpy(mb_inds), torch_batch(mb), agent=torch_agent, optimizer=optimizer,
                         loss_fn=torch_loss_fn, max_grad_norm=torch_args.max_grad_norm)
        state, linen_info = linen.update_minibatch(state, jnp.asarray(mb_inds), linen_mb, loss_fn)
        for name, value in info._asdict().items():
            assert_close(float(value), float(getattr(linen_info, name)), name)
    # the steps themselves (new - old), ~3e-4 each on weights ~0.5, not only the parameters, agree
    for head in HEADS:
        layers = zip(kernels(torch_agent, head), continuous_case.linen_layers(state.params, head),
                     continuous_case.linen_layers(params, head), strict=True)
        for got, expected, old in layers:
            for got_array, expected_array, old_array in zip(got, expected, old):
                np.testing.assert_allclose(got_array - old_array, expected_array - old_array, rtol=1e-4, atol=5e-7)
    logstd = torch_agent.actor_logstd.detach().numpy()
    assert not np.allclose(logstd, continuous_case.LOGSTD)
    np.testing.assert_allclose(logstd - continuous_case.LOGSTD,
                               np.asarray(state.params["params"]["actor_logstd"]) - continuous_case.LOGSTD,
                               rtol=1e-4, atol=5e-7)

@pytest.mark.parametrize("bootstrap_truncated", [True, False])
def test_gae_matches_the_reference_on_the_same_rollout(bootstrap_truncated):
    r = reference.rollout_like()
    storage = linen.Storage(None, None, None, jnp.asarray(r["values"]), jnp.asarray(r["rewards"]),
                            jnp.asarray(r["terminated"]), jnp.asarray(r["truncated"]), jnp.asarray(r["final_values"]))
    expected = linen.compute_gae(storage, jnp.asarray(r["last_value"]), 0.99, 0.95, bootstrap_truncated)
    storage = ppo_continuous_torch.Storage(
        None, None, None, torch.from_numpy(r["values"]), torch.from_numpy(r["rewards"]),
        torch.from_numpy(r["terminated"]), torch.from_numpy(r["truncated"]), torch.from_numpy(r["final_values"]),
    )
    got = ppo_continuous_torch.compute_gae(storage, torch.from_numpy(r["last_value"]), 0.99, 0.95, bootstrap_truncated)
    for value, expected_value in zip(got, expected, strict=True):
        np.testing.assert_allclose(value.numpy(), np.asarray(expected_value), **continuous_case.TOLERANCE)


@pytest.mark.parametrize("model_size", ["small", "medium"])
def test_init_is_seeded_orthogonal_with_ppo_gains_zero_biases_and_zero_logstd(model_size):
    def build(seed):
        torch.manual_seed(seed)
        return ppo_continuous_torch.make_agent(40, 6, model_size, CPU)

    agent = build(0)
    heads = {"actor": kernels(agent, "actor_mean"), "critic": kernels(agent, "critic")}
    reference.assert_ppo_init(heads, len(ppo_continuous_torch.MODEL_SIZES[model_size]))
    assert agent.actor_logstd.shape == (1, 6) and not agent.actor_logstd.detach().any()
    first = lambda a: torch_linears(a, "actor_mean")[0].weight.detach()
    assert torch.equal(first(agent), first(build(0))) and not torch.equal(first(agent), first(build(1)))


def test_normalizers_match_the_shared_stream():
    stream = continuous_case.normalizer_stream()
    first = jnp.asarray(stream[0][0])
    obs_stats = ppo_continuous_torch.update_stats(ppo_continuous_torch.new_stats(first.shape[1:]), first)
    norm = ppo_continuous_torch.Normalizer(obs_stats, ppo_continuous_torch.new_stats(()), jnp.zeros(first.shape[0]))
    for (obs, reward, done, final_obs), expected in zip(stream[1:], continuous_case.reference_normalized(stream)):
        norm, *normalized = ppo_continuous_torch.normalize_step(norm, *map(jnp.asarray, (obs, reward, done, final_obs)),
                                                                0.99)
        for value, expected_value in zip(normalized, expected, strict=True):
            np.testing.assert_allclose(np.asarray(value), expected_value, **continuous_case.TOLERANCE)


def pendulum_start(num_envs: int, max_steps: int):
    env, env_params = gymnax.make("Pendulum-v1")
    env_params = env_params.replace(max_steps_in_episode=max_steps)
    obs, env_state, norm = ppo_continuous_torch.env_reset(jax.random.PRNGKey(0), env, env_params, num_envs)
    zeros = jnp.zeros(num_envs)
    stats = ppo_continuous_torch.EpisodeStats(zeros, zeros.astype(jnp.int32), zeros[0], zeros[0], zeros[0])
    return env, env_params, obs, ppo_continuous_torch.EnvCarry(jax.random.PRNGKey(2), env_state, norm, stats)


def test_packed_env_step_packs_the_references_step_and_tracks_raw_rewards(jax_on_the_cpu):
    env, env_params, _, carry = pendulum_start(num_envs=3, max_steps=2)
    action = jnp.array([[3.0], [-0.5], [-7.0]])  # two outside the bounds: the env clips them
    steps = []
    for _ in range(2):
        _, step_key = jax.random.split(carry.key)
        expected = linen.env_step(step_key, carry.env_state, carry.norm, action, env, env_params, 0.99)
        carry, step = ppo_continuous_torch.packed_env_step(carry, action, env, env_params, 0.99)
        obs, scaled_reward, terminated, truncated, final_obs = ppo_continuous_torch.unpack_step(torch.from_dlpack(step))
        next_obs, _, norm, reward, expected_scaled, expected_terminated, expected_truncated, expected_final = expected
        for got, want in ((obs, next_obs), (scaled_reward, expected_scaled), (terminated, expected_terminated),
                          (truncated, expected_truncated), (final_obs, expected_final)):
            np.testing.assert_array_equal(got.numpy(), np.asarray(want, np.float32))
        for got, want in zip(jax.tree.leaves(carry.norm), jax.tree.leaves(norm), strict=True):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        steps.append(reward)
    assert truncated.all()  # the second step ends the 2-step episodes: their raw returns are the finished sums
    np.testing.assert_allclose(float(carry.stats.finished_return_sum), float(sum(steps).sum()), rtol=1e-6)
    assert float(carry.stats.finished_count) == 3 and float(carry.stats.finished_length_sum) == 6


def test_rollout_stores_unclipped_actions_their_log_probs_and_values(jax_on_the_cpu):
    env, env_params, obs, env_carry = pendulum_start(num_envs=4, max_steps=5)
    obs = torch.from_dlpack(obs)
    torch.manual_seed(1)
    agent = ppo_continuous_torch.make_agent(obs.shape[1], 1, "small", CPU)
    with torch.no_grad():
        agent.actor_logstd.fill_(0.7)  # std 2: a fair share of actions beyond Pendulum's bounds of +-2
    carry = ppo_continuous_torch.RolloutCarry(env_carry, obs)
    policy_fn = functools.partial(ppo_continuous_torch.policy_step, actor_mean=agent.actor_mean,
                                  actor_logstd=agent.actor_logstd)
    env_step_fn = functools.partial(ppo_continuous_torch.packed_env_step, env=env, env_params=env_params, gamma=0.99)
    carry, storage, last_value = ppo_continuous_torch.rollout(
        carry, agent, policy_fn, env_step_fn, torch.Tensor.numpy, num_steps=12, action_dim=1, bootstrap_truncated=True
    )
    assert storage.actions.abs().max() > 2  # stored unclipped
    assert storage.truncated.any() and storage.terminated.dtype == storage.truncated.dtype == torch.bool
    assert torch.equal(storage.obs[0], obs)
    with torch.no_grad():
        mean, logstd, values = agent(storage.obs.reshape(-1, obs.shape[1]))
        logprobs = ppo_continuous_torch.gaussian_log_prob(mean, logstd, storage.actions.reshape(-1, 1))
        last = agent.value(carry.obs)
    # the log-probs and values stored are those of the policy and critic that saw each observation
    torch.testing.assert_close(storage.logprobs.reshape(-1), logprobs)
    torch.testing.assert_close(storage.values.reshape(-1), values)
    torch.testing.assert_close(last_value, last)
    # without a reset the final observation is the next one; after one it is not
    done = (storage.terminated | storage.truncated).numpy()
    next_values = np.concatenate([storage.values[1:].numpy(), last_value.numpy()[None]])
    np.testing.assert_allclose(storage.final_values.numpy()[~done], next_values[~done], rtol=1e-5, atol=1e-6)
    assert not np.allclose(storage.final_values.numpy()[done], next_values[done])
    assert float(carry.env.stats.finished_count) == done.sum()
