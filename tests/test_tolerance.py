"""tests/tolerance.py's rule: a mean of terms of both signs, near 0, passes the rounding another CPU gives it and fails a
changed computation (one term's sign flipped, another seed), as plain RTOL of the value could not tell them apart."""
import numpy as np
import pytest

from tolerance import RTOL, TERMS_RTOL, assert_array_close, assert_close, assert_curves_close


def policy_terms(seed: int, size: int = 256) -> np.ndarray:
    """A minibatch's policy-loss terms: normalised advantages (mean 0, std 1) times ratios near 1, float32."""
    rng = np.random.default_rng(seed)
    advantages = rng.normal(size=size)
    advantages = (advantages - advantages.mean()) / advantages.std()
    return (-advantages * rng.uniform(0.9, 1.1, size)).astype(np.float32)


def test_a_policy_loss_near_0_compares_on_its_terms_scale_where_rtol_of_itself_fails():
    """The Zen 5's policy loss against the Zen 4's (tests/test_scan.py, one iteration, the same program)."""
    actual, desired = 7.258030e-06, 7.142546e-06
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(actual, desired, rtol=RTOL, atol=1e-7)
    assert_close(actual, desired, "losses/policy_loss")
    with pytest.raises(AssertionError):  # a value whose terms have no scale of their own keeps RTOL of itself
        assert_close(actual, desired, "losses/value_loss")


def test_the_rule_passes_another_summation_order_and_fails_a_flipped_term_or_another_seed():
    terms = policy_terms(0)
    pairwise, sequential = np.mean(terms), np.float32(0)
    for term in terms[::-1]:
        sequential += term
    assert abs(pairwise) < 0.05  # near 0 against terms of about 1
    assert_close(sequential / np.float32(len(terms)), pairwise, "policy_loss")
    flipped = terms.copy()
    flipped[np.argsort(np.abs(terms))[len(terms) // 2]] *= -1  # a term of the median magnitude: 2 |term| / N
    with pytest.raises(AssertionError):
        assert_close(np.mean(flipped), pairwise, "policy_loss")
    with pytest.raises(AssertionError):
        assert_close(np.mean(policy_terms(1)), pairwise, "policy_loss")


def test_an_arrays_entries_compare_on_its_largest_entrys_scale():
    rng = np.random.default_rng(2)
    gradient = rng.normal(size=(8, 4)).astype(np.float32)
    nudged = gradient.copy()
    entry = np.argmin(np.abs(gradient))
    nudged.flat[entry] += TERMS_RTOL * np.abs(gradient).max() / 2  # rounding-sized, however small the entry itself
    assert_array_close(nudged, gradient)
    nudged.flat[entry] += 4 * TERMS_RTOL * np.abs(gradient).max()
    with pytest.raises(AssertionError):
        assert_array_close(nudged, gradient)


def test_curves_compare_step_by_step_and_the_mean_q_on_its_largest_value():
    expected = {"losses/q_values": [(0, 0.5), (10, 1e-7)], "losses/td_loss": [(0, 2.0), (10, 1.0)]}
    assert_curves_close({"losses/q_values": [(0, 0.5), (10, 2e-6)], "losses/td_loss": [(0, 2.0), (10, 1.0)]},
                        expected, expected)
    with pytest.raises(AssertionError):  # the mean Q a term's worth apart
        assert_curves_close({"losses/q_values": [(0, 0.5), (10, 0.01)]}, expected, ["losses/q_values"])
    with pytest.raises(AssertionError):  # another step
        assert_curves_close({"losses/td_loss": [(0, 2.0), (20, 1.0)]}, expected, ["losses/td_loss"])
