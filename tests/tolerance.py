"""The suite's one rule for a number computed two ways (two frameworks, a batched and an unbatched program, a replay).

Both are float32 and may add in other orders: they agree to RTOL of the value. A value that is a mean or a sum of terms
of both signs can sit far nearer 0 than its terms (a policy loss of 7e-6 from terms of about 1), and its rounding is a
fraction of the terms, not of the value: a CPU generation that rounds otherwise moves it by more than RTOL of itself.
So such a value is also allowed TERMS_RTOL of its terms' magnitude (atol = TERMS_RTOL x scale):
- the loss terms by name (TERM_SCALE): the policy loss (normalised advantages, RMS 1, times ratios near 1), the two KL
  estimates (differences of log-probabilities and of ratios near 1) and the explained variance (1 minus a ratio);
- an array (a gradient, a layer's output): each entry a sum over the batch, the scale its largest entry's magnitude;
- a curve of terms of both signs whose scale no name gives (DQN's mean Q): the curve's largest magnitude.
TERMS_RTOL is about 80 float32 epsilons: two frameworks' gradients on one Zen 4 differ by up to 7e-7 of their scale
beyond RTOL, the Zen 5's policy loss from the Zen 4's by 1.2e-7. Flipping one term's sign of a minibatch of N moves
such a mean by about 2/N of the scale, far more: the rule still tells a changed computation from rounding
(tests/test_tolerance.py). A KL estimate of 1e-6 sits inside TERMS_RTOL of its terms: there the loss's other terms,
compared beside it, tell a changed computation."""
import numpy as np

RTOL = 1e-4
TERMS_RTOL = 1e-5
TERM_SCALE = {"policy_loss": 1.0, "approx_kl": 1.0, "old_approx_kl": 1.0, "explained_variance": 1.0}
CURVE_SCALED = {"losses/q_values"}  # curves whose terms take both signs, on the scale of the curve's largest value


def term_scale(name: str) -> float:
    """The magnitude of the terms of the value called `name` (a loss term, or a tag such as losses/policy_loss)."""
    return TERM_SCALE.get(name.rsplit("/", 1)[-1], 0.0)


def assert_close(actual, desired, name: str = "", scale: float | None = None):
    """`actual` equals `desired` to RTOL of itself, or to TERMS_RTOL of its terms' magnitude (`scale`, else by
    `name`)."""
    scale = term_scale(name) if scale is None else scale
    np.testing.assert_allclose(np.asarray(actual, np.float64), np.asarray(desired, np.float64), rtol=RTOL,
                               atol=TERMS_RTOL * scale, err_msg=name)


def assert_array_close(actual, desired, name: str = ""):
    """An array of sums of terms of both signs (a gradient, a layer's output), on the scale of its largest entry."""
    desired = np.asarray(desired)
    assert_close(np.asarray(actual).reshape(desired.shape), desired, name, scale=float(np.abs(desired).max(initial=0)))


def assert_curves_close(scalars: dict, expected: dict, tags):
    """Each tag's curve ({tag: [(step, value)]}) at the same steps, each value as assert_close says (a curve of
    CURVE_SCALED on the scale of its largest expected value)."""
    for tag in tags:
        steps, values = zip(*scalars[tag])
        expected_steps, expected_values = zip(*expected[tag])
        assert steps == expected_steps, tag
        scale = float(np.abs(expected_values).max()) if tag in CURVE_SCALED else None
        assert_close(values, expected_values, tag, scale)
