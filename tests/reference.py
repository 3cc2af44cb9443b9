"""Plain numpy references for GAE and the PPO loss, written from the formulas, loop by loop."""
import numpy as np

from tolerance import assert_array_close, assert_close


def gae(rewards, values, terminated, truncated, final_values, last_value, gamma, gae_lambda, bootstrap_truncated):
    """Per env, backwards in time; a truncated (not terminated) step bootstraps from V(final obs)."""
    num_steps, num_envs = rewards.shape
    advantages = np.zeros((num_steps, num_envs))
    for env in range(num_envs):
        lastgaelam = 0.0
        for t in reversed(range(num_steps)):
            reward = rewards[t, env]
            if bootstrap_truncated and truncated[t, env] and not terminated[t, env]:
                reward += gamma * final_values[t, env]
            done = terminated[t, env] or truncated[t, env]
            next_value = last_value[env] if t == num_steps - 1 else values[t + 1, env]
            delta = reward + (0.0 if done else gamma * next_value) - values[t, env]
            lastgaelam = delta + (0.0 if done else gamma * gae_lambda * lastgaelam)
            advantages[t, env] = lastgaelam
    return advantages, advantages + values


def ppo_loss(logits, newvalue, actions, old_logprobs, old_values, advantages, returns,
             clip_coef, ent_coef, vf_coef):
    """Clipped surrogate + clipped value loss + entropy bonus, with normalised advantages (ddof=0)."""
    logits = logits - logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    newlogprob = log_probs[np.arange(len(actions)), actions]
    entropy = float(np.mean(-(np.exp(log_probs) * log_probs).sum(axis=1)))
    logratio = newlogprob - old_logprobs
    ratio = np.exp(logratio)
    adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    pg_loss = float(np.mean(np.maximum(-adv * ratio, -adv * np.clip(ratio, 1 - clip_coef, 1 + clip_coef))))
    v_clipped = old_values + np.clip(newvalue - old_values, -clip_coef, clip_coef)
    v_loss = 0.5 * float(np.mean(np.maximum((newvalue - returns) ** 2, (v_clipped - returns) ** 2)))
    return {
        "loss": pg_loss - ent_coef * entropy + vf_coef * v_loss,
        "policy_loss": pg_loss,
        "value_loss": v_loss,
        "entropy": entropy,
        "approx_kl": float(np.mean((ratio - 1) - logratio)),
        "old_approx_kl": float(np.mean(-logratio)),
        "clipfrac": float(np.mean(np.abs(ratio - 1) > clip_coef)),
    }


def mlp(x, layers):
    """tanh MLP from [(W (in, out), b), ...]; no activation after the last layer."""
    for W, b in layers[:-1]:
        x = np.tanh(x @ W + b)
    W, b = layers[-1]
    return x @ W + b


def rollout_like(seed=0, num_steps=7, num_envs=3):
    """Random rollout arrays with terminated and truncated steps in the middle (one step both)."""
    rng = np.random.default_rng(seed)
    terminated = np.zeros((num_steps, num_envs), bool)
    truncated = np.zeros((num_steps, num_envs), bool)
    terminated[2, 0] = True
    truncated[3, 1] = True
    terminated[4, 2] = truncated[4, 2] = True
    truncated[5, 0] = True
    return {
        "rewards": rng.normal(size=(num_steps, num_envs)).astype(np.float32),
        "values": rng.normal(size=(num_steps, num_envs)).astype(np.float32),
        "terminated": terminated,
        "truncated": truncated,
        "final_values": rng.normal(size=(num_steps, num_envs)).astype(np.float32),
        "last_value": rng.normal(size=num_envs).astype(np.float32),
    }


def minibatch_like(seed=0, batch=16, obs_dim=4, num_actions=3):
    """A random minibatch whose ratios and value changes hit both clip limits."""
    rng = np.random.default_rng(seed)
    return {
        "obs": rng.normal(size=(batch, obs_dim)).astype(np.float32),
        "actions": rng.integers(0, num_actions, size=batch).astype(np.int32),
        "logprobs": (np.log(1 / num_actions) + rng.normal(scale=0.5, size=batch)).astype(np.float32),
        "values": rng.normal(size=batch).astype(np.float32),
        "advantages": rng.normal(size=batch).astype(np.float32),
        "returns": rng.normal(size=batch).astype(np.float32),
    }


def assert_orthogonal(W, gain):
    """W (in, out) is gain times a matrix with orthonormal rows or columns."""
    W = np.asarray(W, np.float64)
    gram = W.T @ W if W.shape[0] >= W.shape[1] else W @ W.T
    np.testing.assert_allclose(gram, gain**2 * np.eye(len(gram)), atol=1e-5 * max(gain**2, 1e-2) * 10)


def assert_ppo_init(heads: dict, num_hidden: int):
    """{"actor"|"critic": [(kernel (in, out), bias), ...]}: orthogonal, gain sqrt(2) hidden, 0.01 actor head,
    1.0 critic head, zero biases."""
    for head, head_gain in (("actor", 0.01), ("critic", 1.0)):
        layers = heads[head]
        assert len(layers) == num_hidden + 1
        for i, (kernel, bias) in enumerate(layers):
            assert_orthogonal(kernel, head_gain if i == num_hidden else np.sqrt(2))
            assert not np.asarray(bias).any()


def assert_matches_reference(reference: dict, outputs, loss, info, grad_layers: dict):
    """A framework's logits and values, loss, every loss term (the LossInfo's fields) and every layer's gradients
    (kernel, bias) equal the reference's, as the CNN parity tests take them: reference["logits"], ["value"],
    ["loss"], ["info"] and ["grads"] ({layer: (kernel, bias)} in the reference's layout)."""
    for got, want in zip(outputs, (reference["logits"], reference["value"]), strict=True):
        assert_array_close(got, want, "outputs")
    assert_close(float(loss), float(reference["loss"]), "loss")
    for name in type(reference["info"])._fields:
        assert_close(float(getattr(info, name)), float(getattr(reference["info"], name)), name)
    assert grad_layers.keys() == reference["grads"].keys()
    for name, expected in reference["grads"].items():
        for got, want in zip(grad_layers[name], expected, strict=True):
            assert_array_close(got, want, name)
