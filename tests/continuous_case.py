"""The continuous-action PPO family's shared test cases: the reference (ppo_continuous_linen.py) computes the loss, its
terms and every gradient on one minibatch, and the normalisers' updates on one stream of steps; each framework's
parity test puts its own agent's weights equal to the reference's and compares (tests/test_continuous_*.py)."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

import ppo_continuous_linen as linen
from tolerance import assert_array_close, assert_close

TOLERANCE = dict(rtol=1e-4, atol=1e-6)
OBS_DIM, ACTION_DIM, BATCH = 5, 3, 16
# the Linen agent's weights, a log-std away from 0 so that its gradient and the entropy's are not trivial
LOGSTD = np.array([[-0.5, 0.0, 0.3]], np.float32)


@functools.cache
def linen_agent():
    """The reference agent and its seeded parameters, with LOGSTD as its log-std (made once: read, never changed)."""
    agent, params = linen.make_agent(jax.random.PRNGKey(3), OBS_DIM, ACTION_DIM, "small")
    params = {"params": {**params["params"], "actor_logstd": jnp.asarray(LOGSTD)}}
    return agent, params


def linen_layers(params, head: str) -> list:
    """The (kernel (in, out), bias) list of `head` ("actor_mean" or "critic"), in layer order."""
    tree = params["params"][head]
    return [(np.asarray(tree[f"Dense_{i}"]["kernel"]), np.asarray(tree[f"Dense_{i}"]["bias"])) for i in range(len(tree))]


def minibatch(seed: int = 0) -> dict:
    """A random minibatch (numpy arrays) whose ratios and value changes hit both clip limits."""
    rng = np.random.default_rng(seed)
    agent, params = linen_agent()
    obs = rng.normal(size=(BATCH, OBS_DIM)).astype(np.float32)
    mean, logstd, _ = agent.apply(params, jnp.asarray(obs))
    actions = np.asarray(mean) + np.exp(np.asarray(logstd)) * rng.normal(size=(BATCH, ACTION_DIM))
    logprobs = np.asarray(linen.gaussian_log_prob(mean, logstd, jnp.asarray(actions, jnp.float32)))
    return {
        "obs": obs, "actions": actions.astype(np.float32),
        "logprobs": (logprobs + rng.normal(scale=0.5, size=BATCH)).astype(np.float32),
        "values": rng.normal(size=BATCH).astype(np.float32),
        "advantages": rng.normal(size=BATCH).astype(np.float32),
        "returns": rng.normal(size=BATCH).astype(np.float32),
    }


@functools.cache
def loss_case(clip_vloss: bool, norm_adv: bool):
    """The minibatch, the loss coefficients (clip_coef, clip_vloss, norm_adv, ent_coef, vf_coef), and the reference's
    loss, loss terms ({name: value}) and gradients ({"actor_mean"|"critic": layers, "actor_logstd": array}); computed
    once per case in the session, for every framework's parity test to read."""
    agent, params = linen_agent()
    mb = minibatch()
    coefs = (0.2, clip_vloss, norm_adv, 0.01, 0.5)
    batch = linen.Batch(**{name: jnp.asarray(value) for name, value in mb.items()})
    (loss, info), grads = jax.value_and_grad(linen.ppo_loss, has_aux=True)(params, agent, batch, *coefs)
    gradients = {head: linen_layers(grads, head) for head in ("actor_mean", "critic")}
    gradients["actor_logstd"] = np.asarray(grads["params"]["actor_logstd"])
    return mb, coefs, (float(loss), {name: float(value) for name, value in info._asdict().items()}, gradients)


def assert_loss_parity(loss, info: dict, gradients: dict, reference):
    """A framework's loss, terms ({name: value}) and gradients (as loss_case gives them) equal the reference's."""
    reference_loss, reference_info, reference_gradients = reference
    assert reference_info["clipfrac"] > 0
    assert_close(float(loss), reference_loss, "loss")
    assert set(info) == set(reference_info)
    for name, value in info.items():
        assert_close(float(value), reference_info[name], name)
    assert_array_close(gradients["actor_logstd"], reference_gradients["actor_logstd"], "actor_logstd")
    for head in ("actor_mean", "critic"):
        pairs = zip(gradients[head], reference_gradients[head], strict=True)
        for (kernel, bias), (expected_kernel, expected_bias) in pairs:
            assert_array_close(kernel, expected_kernel, head)
            assert_array_close(bias, expected_bias, head)


def normalizer_stream(num_envs: int = 4, steps: int = 6, seed: int = 1) -> list:
    """A stream of steps [(raw obs, raw reward, done, raw final obs)] (numpy), episodes ending mid-stream."""
    rng = np.random.default_rng(seed)
    stream = []
    for step in range(steps):
        obs = (rng.normal(size=(num_envs, OBS_DIM)) * 3 + 1).astype(np.float32)
        done = rng.random(num_envs) < 0.3
        final_obs = (rng.normal(size=(num_envs, OBS_DIM)) * 3 + 1).astype(np.float32)
        stream.append((obs, rng.normal(size=num_envs).astype(np.float32) * 5, done, final_obs))
    return stream


def reference_normalized(stream: list, gamma: float = 0.99) -> list:
    """The reference's normalised (obs, scaled reward, final obs) for each step of `stream`, starting from the stream's
    first observations as the reset ones."""
    first = jnp.asarray(stream[0][0])
    obs_stats = linen.update_stats(linen.new_stats(first.shape[1:]), first)
    norm = linen.Normalizer(obs_stats, linen.new_stats(()), jnp.zeros(first.shape[0]))
    out = []
    for obs, reward, done, final_obs in stream[1:]:
        norm, *normalized = linen.normalize_step(norm, jnp.asarray(obs), jnp.asarray(reward), jnp.asarray(done),
                                                 jnp.asarray(final_obs), gamma)
        out.append(tuple(np.asarray(x) for x in normalized))
    return out
