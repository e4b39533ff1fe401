"""planner.numerics against SciPy (a test dependency only: the planner does not import it)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammainc, gammaincinv

from planner.numerics import gamma_p, gamma_p_array, gamma_p_inverse, root_in_bracket

pytestmark = pytest.mark.unit

SHAPES = (0.05, 0.2236, 0.5, 1.0, 1.7, 4.47, 10.0, 100.0, 1000.0, 10_000.0)


@pytest.mark.parametrize("a", SHAPES)
def test_incomplete_gamma_matches_scipy(a):
    xs = np.concatenate([np.geomspace(1e-6, 1e5, 400) * max(a, 1.0) ** 0.5, np.linspace(0.5, 2, 50) * a])
    ours = gamma_p_array(a, xs)
    assert np.allclose(ours, gammainc(a, xs), rtol=1e-10, atol=1e-13)
    assert all(
        math.isclose(gamma_p(a, float(x)), float(v), rel_tol=1e-10, abs_tol=1e-13) for x, v in zip(xs[::17], ours[::17], strict=False)
    )
    assert gamma_p(a, 0.0) == 0.0 and gamma_p(a, math.inf) == 1.0


@pytest.mark.parametrize("a", SHAPES)
def test_inverse_matches_scipy(a):
    for p in (1e-9, 1e-4, 0.01, 0.05, 0.5, 0.9, 0.95, 0.999):  # the planner asks for p95 and equal-probability points
        assert gamma_p_inverse(a, p) == pytest.approx(float(gammaincinv(a, p)), rel=1e-9)


def test_root_in_bracket_finds_roots_and_jumps():
    assert root_in_bracket(lambda x: x * x - 2, 0, 2, 1e-12) == pytest.approx(math.sqrt(2), abs=1e-11)
    assert root_in_bracket(lambda x: math.log(x) - 1, 0.1, 100, 1e-12) == pytest.approx(math.e, abs=1e-11)
    jump = root_in_bracket(lambda x: -1.0 if x < 0.3 else 1.0, 0, 1, 1e-9)  # a step: the jump is the answer
    assert jump == pytest.approx(0.3, abs=1e-8)
    with pytest.raises(ValueError):
        root_in_bracket(lambda x: x + 1, 0, 1, 1e-9)
