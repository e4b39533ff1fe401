"""The latency model's cheaper kernel computes what the plain one did: memoized step costs, the grid CDF, the
TTFT quantile's one-time CDF."""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable

import numpy as np
import pytest

from planner import load_brief
from planner.lengths import length_cv2
from planner.numerics import (
    _log_prefactor_array,
    _series_count,
    _series_exponents,
    gamma_density_array,
    gamma_p,
    gamma_p_array,
    gamma_p_inverse,
    gamma_sums,
)
from planner.operating_point import steady_state
from planner.replica import shape_of
from planner.slo import (
    _BY_BATCH_KEPT,
    _covered_prompts,
    _decode_gaps_cdf,
    _decode_gaps_s,
    _Engine,
    _gaps_end,
    _grid_cdf,
    _grid_slope,
    _halley_invert,
    _invert,
    _service,
    _stage_s,
    _token_gap_quantiles_s,
    _tpot,
    _ttft_quantile_cached,
    _ttft_quantile_s,
    engine,
)

_REMEMBERED = ("step_at", "service_moments", "pace_terms")


@pytest.mark.parametrize("name", ["capstone", "chat-speculative", "moe-deepseek", "lora-platform"])
def test_an_engines_remembered_step_costs_are_the_computed_ones(name: str) -> None:
    brief = load_brief(name)
    eng, other = _Engine(brief, shape_of(brief)), _Engine(brief, shape_of(brief).model_copy(update={"replicas": 1}))
    for batch in (0.3, 1.0, 7.5, 64.0, 200.0):
        for table in _REMEMBERED:
            remembered = getattr(eng, table)
            computed = getattr(eng, "_" + table)(batch)  # the method that fills the table
            assert remembered[batch] == remembered[batch] == computed == getattr(other, table)[batch], table
    assert eng.engine_steps_s(np.array([0.3, 7.5, 200.0])).tolist() == [eng.engine_step_s(b) for b in (0.3, 7.5, 200.0)]


@pytest.mark.parametrize("name", ["capstone", "chat-speculative", "moe-deepseek", "lora-platform", "rag"])
def test_a_decode_step_alone_is_the_step_parts_one(name: str) -> None:
    """decode_step_s at a batch whose step parts are not worked out (a p95 batch) is the whole step alone: the same
    figure as the parts' (speculation on below its threshold, off above), and it keeps nothing."""
    brief = load_brief(name)
    eng = _Engine(brief, shape_of(brief))
    for batch in (0.3, 1.0, 7.5, 33.3, 64.0, 200.0, 1500.0):
        alone = eng.decode_step_s(batch)
        assert batch not in eng.step_at
        assert alone == eng._step_at(batch).decode_step_s == eng.step_at[batch].decode_step_s == eng.decode_step_s(batch)


@pytest.mark.parametrize(
    ("name", "rising"),
    [
        ("rag", True),
        ("qps200-chat", True),
        ("capstone", True),
        ("chat-speculative", False),
        ("moe-deepseek", False),
        ("lora-platform", False),
    ],
)
def test_the_decode_gaps_ends_and_cdf_are_the_whole_grids(name: str, rising: bool) -> None:
    """_decode_gaps_cdf's ends (where the step rises with the batch, its steps at the grid's lowest and highest batch)
    are the sorted grid's, and its CDF and slope (the grid worked out only when asked between them) are _grid_cdf's and
    _grid_slope's: below, at and between the grid's points and past it, at batches from none to the engine's limit."""
    brief = load_brief(name)
    eng = _Engine(brief, shape_of(brief))
    assert (eng.rising_step is not None) == rising
    for batch in (0.0, 0.4, 1.0, 3.4, 37.5, eng.seqs - 2.5, float(eng.seqs)):
        gaps = _decode_gaps_s(eng, batch)
        first, last, cdf, slope = _decode_gaps_cdf(eng, batch)
        assert (first, last) == (gaps[0], gaps[-1])
        middles = [(a + b) / 2 for a, b in itertools.pairwise(gaps)]
        ts = [first * 0.5, math.nextafter(first, 0.0), *gaps, *middles, math.nextafter(last, math.inf), last * 2]
        assert [(cdf(t), slope(t)) for t in ts] == [(_grid_cdf(gaps)(t), _grid_slope(gaps)(t)) for t in ts]


@pytest.mark.parametrize("name", ["rag", "multimodal", "variation-f", "offline-batch", "qps10-tp4"])
def test_the_token_gap_quantiles_are_the_whole_grids(name: str) -> None:
    """The token gaps' quantiles with the decode grid worked out only where asked are those with it worked out first
    (an engine without rising_step), at loads from a trickle to a full batch."""
    brief = load_brief(name)
    shape = shape_of(brief)
    eng, whole = _Engine(brief, shape), _Engine(brief, shape)
    whole.rising_step = None
    for rate in (0.05, 0.5, 2.0, 8.0, 32.0, 256.0):
        n, _ = steady_state(brief, shape, rate)
        n = n if math.isfinite(n) else float(eng.seqs)
        assert _token_gap_quantiles_s(eng, rate, n, (0.5, 0.95)) == _token_gap_quantiles_s(whole, rate, n, (0.5, 0.95)), rate


@pytest.mark.parametrize("name", ["rag", "capstone", "chat-speculative", "moe-deepseek", "lora-platform"])
def test_one_chunks_step_is_the_mixed_steps(name: str) -> None:
    brief = load_brief(name)
    eng = _Engine(brief, shape_of(brief))
    for batch in (0.3, 1.0, 7.5, 200.0):
        for tokens in (0.0, 1.0, 37.5, eng.room(batch), eng.longest_uncached):
            assert eng.chunk_step_s(tokens, batch) == float(eng.mixed_step_s(tokens, 1, batch))


def test_the_remembered_step_costs_are_bounded_and_kept_apart_by_engine() -> None:
    brief = load_brief("capstone")
    low_hits = _Engine(brief.with_changes({"workload.prefix_hit_rate": 0.1}), shape_of(brief))
    eng = _Engine(brief, shape_of(brief))
    assert low_hits.prompt_token_s(8.0) != eng.prompt_token_s(8.0)  # same batch, another engine: its own value
    for i in range(_BY_BATCH_KEPT + 10):
        eng.floor_s(1.0 + i / 7)
    assert 0 < len(eng.step_at) <= _BY_BATCH_KEPT


@pytest.mark.parametrize("name", ["rag", "multimodal", "lora-platform", "variation-f", "chat-speculative", "moe-deepseek"])
def test_the_gaps_end_where_the_p95_tpot_is_finite(name: str) -> None:
    """judged_p95s_ms reads only whether the p95 TPOT is finite where the ITL target judges the gaps: _gaps_end says
    so without its spread, at loads from a trickle to far past the steady state's end (there at a full batch), and on an
    engine whose token budget leaves a prompt no room."""
    brief = load_brief(name)
    shape = shape_of(brief)
    eng = engine(brief, shape)
    ends = []
    for rate in (0.05, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 256.0):
        n, _ = steady_state(brief, shape, rate)
        n = n if math.isfinite(n) else float(eng.seqs)
        sv = _service(eng, n)
        ends.append(_gaps_end(eng, rate, n, sv))
        assert ends[-1] == math.isfinite(_tpot(eng, rate, n, sv)[3]), rate
    tight = _Engine(brief, shape, max_num_batched_tokens=1)  # no room for a prompt beside the batch: no gap ends
    sv = _service(tight, float(tight.seqs))
    assert not _gaps_end(tight, 1.0, float(tight.seqs), sv) and not math.isfinite(_tpot(tight, 1.0, float(tight.seqs), sv)[3])
    assert all(ends)


@pytest.mark.parametrize(
    "values", [[1.0, 2.0, 3.0, 7.0], [0.5, 0.5, 0.5, 1.0, 2.0, 2.0, 4.0], [3.0] * 5, list(np.linspace(1e-3, 2e-2, 41))]
)
def test_the_grid_cdf_is_numpys_interpolation(values: list[float]) -> None:
    probs = (np.arange(len(values)) + 0.5) / len(values)
    cdf = _grid_cdf(values)
    ts = [*values, *(v * (1 + s) for v in values for s in (-1e-9, 1e-9, 0.3, -0.3)), 0.0, 1e9]
    for t in ts:
        assert cdf(t) == float(np.interp(t, values, probs, left=0.0, right=1.0)), t


def _plain_ttft_cdf(stages: np.ndarray, busy: float, scale: float, tail: float, t: float) -> float:
    from planner.numerics import gamma_p

    return float(np.mean([(1 - busy) + busy * gamma_p(tail, (t - s) / scale) if t >= s else 0.0 for s in stages]))


@pytest.mark.parametrize(("busy", "wait_s", "tail", "q"), [(0.3, 0.02, 0.9, 0.95), (0.8, 0.5, 1.7, 0.95), (0.05, 0.001, 0.6, 0.5)])
def test_the_ttft_quantile_is_where_the_cdf_reaches_it(busy: float, wait_s: float, tail: float, q: float) -> None:
    """The quantile the cached, row-by-row inversion returns: the CDF (summed plainly, prompt by prompt) reaches q there
    and not a hair before (the inversion's tolerance is 1e-7 of its bracket)."""
    stages = np.sort(np.random.default_rng(1).gamma(2.0, 0.05, 48))
    _ttft_quantile_cached.cache_clear()
    found = _ttft_quantile_s(stages, busy, wait_s, tail, q)
    assert _ttft_quantile_s(stages.copy(), busy, wait_s, tail, q) == found  # a hit by value
    scale = wait_s / busy / tail
    assert _plain_ttft_cdf(stages, busy, scale, tail, found) >= q - 1e-12
    assert _plain_ttft_cdf(stages, busy, scale, tail, found * (1 - 1e-5)) < q


@pytest.mark.parametrize("a", [0.3, 0.95, 1.0, 2.5, 40.0, 1e3])
def test_the_gamma_density_is_scipys(a: float) -> None:
    from scipy.stats import gamma

    xs = np.array([1e-6, 0.01, 0.5, 1.0, a, 2 * a + 3, 60.0])
    np.testing.assert_allclose(gamma_density_array(a, xs), gamma.pdf(xs, a), rtol=1e-10, atol=1e-300)


def test_halleys_inversion_lands_on_the_root_inside_its_bracket() -> None:
    """A smooth CDF inverted by Halley's steps within a bracket: the root to 1e-7 of the bracket, even from a start
    where a plain step would leave it (a steep, nearly flat-ended curve)."""
    for a, q in ((0.9, 0.95), (5.0, 0.5), (0.3, 0.2)):

        def row(t: float, a: float = a) -> tuple[float, float, float]:
            density = float(gamma_density_array(a, np.array([t]))[0])
            return gamma_p(a, t), density, density * ((a - 1) / t - 1)

        root = gamma_p_inverse(a, q)
        low, high = root * 0.01, root * 30
        for low_at, high_at in (((low, math.nan), (high, math.nan)), ((low, gamma_p(a, low)), (high, gamma_p(a, high)))):
            assert abs(_halley_invert(row, q, low_at, high_at) - root) <= (high - low) * 1e-7


def test_the_inversion_finds_the_smallest_t_reaching_q_with_or_without_the_jumps() -> None:
    """A CDF with atoms (right-continuous jumps) and a smooth rise between them: the smallest t with cdf(t) >= q to 1e-7
    of the range, whether the jumps are listed or not, listed a hair above (as rounding may leave them) or listed where
    there is none."""
    steps = ((0.3, 0.2), (0.55, 0.25), (0.8, 0.35))  # (where, height) of each jump; the rest rises linearly over [0, 1]

    def cdf(t: float) -> float:
        smooth = min(max(t, 0.0), 1.0) * (1 - sum(h for _, h in steps))
        return smooth + sum(h for where, h in steps if t >= where)

    low, high = -0.1, 1.5
    for q in (0.05, 0.2, 0.3, 0.45, 0.5, 0.8, 0.9, 0.999):
        below, exact = low, high
        for _ in range(80):  # plain bisection, to the last bit
            middle = (below + exact) / 2
            below, exact = (below, middle) if cdf(middle) >= q else (middle, exact)
        for jumps in ((), tuple(w for w, _ in steps), tuple(w * (1 + 1e-12) for w, _ in steps), (0.1, 0.4, 0.7, 1.2)):
            assert abs(_invert(cdf, q, low, high, jumps) - exact) <= (high - low) * 1e-7, (q, jumps)


@pytest.mark.parametrize("a", [0.4, 0.95, 3.0, 30.0])
def test_the_one_pass_sums_are_the_separate_functions_sums(a: float) -> None:
    """Under a bound the caller gives (more series terms than the array's own largest x needs), and beyond the
    series' reach, where it hands over to the separate functions; the density's slope is its finite difference."""
    xs = np.array([1e-4, 0.2, 1.0, a, a + 5])
    h = 1e-6 * xs
    slope = (gamma_density_array(a, xs + h) - gamma_density_array(a, xs - h)) / (2 * h)
    for largest in (float(xs.max()), float(xs.max()) * 3, a + 100):
        p, density, bend = gamma_sums(a, xs, largest)
        assert p == pytest.approx(float(gamma_p_array(a, xs).sum()), rel=1e-13)
        assert density == pytest.approx(float(gamma_density_array(a, xs).sum()), rel=1e-13)
        assert bend == pytest.approx(float(slope.sum()), rel=1e-6)


@pytest.mark.parametrize(
    ("a", "x", "largest"), [(0.4, 0.3, 0.3), (1.7, 7.3, 12.0), (3.5, 0.01, 40.0), (30.0, 29.0, 35.0), (2.0, 20.0, 30.0)]
)
def test_the_sums_of_one_point_are_the_array_arithmetic(a: float, x: float, largest: float) -> None:
    """gamma_sums' one-point path (a fixed prompt length's TTFT, on floats) gives what the whole-array arithmetic gives,
    to 1e-13 (the scalar series stops at its own convergence, not at the bound's term count)."""
    xs = np.array([x])
    counts, negative_log_denominators = _series_exponents(a, _series_count(a, largest))
    log_x = np.log(xs)
    block = log_x[:, np.newaxis] * counts
    block += negative_log_denominators
    total = np.exp(block).sum(axis=1)
    prefactor = np.exp(_log_prefactor_array(a, xs, log_x))
    density = prefactor * (1 / xs)
    expected = (float(prefactor @ (1 + total)) / a, float(density.sum()), float(density @ ((a - 1) * (1 / xs) - 1)))
    assert gamma_sums(a, xs, largest) == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize(("busy", "wait_s", "tail", "q"), [(1.0, 0.001, 1000.0, 0.5), (1.0, 1.0, 1000.0, 0.95), (0.999, 1e-6, 0.05, 0.95)])
def test_the_ttft_quantile_of_one_prompt_is_its_stage_plus_the_waits_quantile(busy: float, wait_s: float, tail: float, q: float) -> None:
    """One covered prompt: stage + the wait's quantile, even where the wait's gamma is so narrow that its CDF is flat
    (0 or 1 to the last digit) over most of the bracket: a flat stretch must not stall the inversion."""
    from scipy.special import gammaincinv

    stage = 0.6486
    scale = wait_s / busy / tail
    expected = stage + scale * float(gammaincinv(tail, (q - (1 - busy)) / busy))
    _ttft_quantile_cached.cache_clear()
    assert _ttft_quantile_s(np.array([stage]), busy, wait_s, tail, q) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_the_ttft_quantile_is_the_root_of_the_exact_cdf(seed: int) -> None:
    """48 prompts' stages, in the wait's tail (bracketed by the one-stage quantiles), between two stages and in a
    jump: the quantile is where SciPy's CDF of the mixture reaches q, to 1e-7 of the stages' spread plus the wait."""
    from scipy.special import gammainc

    rng = np.random.default_rng(seed)
    stages = np.sort(rng.uniform(0.02, 0.05, 48))
    busy, wait_s, tail = float(rng.uniform(0.02, 0.9)), float(rng.uniform(1e-4, 0.5)), float(rng.uniform(0.05, 8.0))
    scale = wait_s / busy / tail

    def cdf(t: float) -> float:
        gap = np.maximum(t - stages, 0.0)
        return float(np.mean(np.where(t >= stages, (1 - busy) + busy * gammainc(tail, gap / scale), 0.0)))

    for q in (0.5, 0.9, 0.95, 0.99):
        _ttft_quantile_cached.cache_clear()
        got = _ttft_quantile_s(stages, busy, wait_s, tail, q)
        tol = (stages[-1] - stages[0] + wait_s / busy * 4) * 1e-7
        assert cdf(got + tol) >= q - 1e-12 and (got - tol <= stages[0] or cdf(got - tol) <= q + 1e-12), (q, got)


def _preset_lengths() -> list[tuple[float, float]]:
    """(mean, p95) of every preset's prompt and reply lengths, each also with its p95 nudged up and down (the
    perturbations a slider makes)."""
    from planner import preset_names

    lengths = []
    for name in preset_names():
        w = load_brief(name).workload
        for mean, p95 in ((w.input_tokens_mean, w.input_tokens_p95), (w.output_tokens_mean, w.output_tokens_p95)):
            lengths += [(float(mean), float(p95) * s) for s in (1.0, 0.97, 1.13)]
    return lengths


def test_the_pair_cdf_is_the_linspace_tables_interpolation() -> None:
    """_pair_cdf's table points (its step times the index, the last point `top` itself) are np.linspace's, so its CDF
    and slope are the interpolation of the table it was built from, to the bit, over the presets' prompt-length shapes."""
    from planner.numerics import gamma_p_array
    from planner.slo import _PAIR_POINTS, _pair_cdf

    shapes = {1 / cv2 for mean, p95 in _preset_lengths() if (cv2 := length_cv2(mean, p95)) > 0 and 2 / cv2 >= 3}
    assert len(shapes) >= 8
    for k in shapes:
        top = gamma_p_inverse(2 * k, 1 - 1e-9)
        step = top / (_PAIR_POINTS - 1)
        table = gamma_p_array(2 * k, np.linspace(0.0, top, _PAIR_POINTS)).tolist()
        pair = _pair_cdf.__wrapped__(k)
        for z in np.linspace(0.0, top * (1 - 1e-9), 997).tolist():
            i = int(z / step)
            rise = table[i + 1] - table[i]
            expected = table[i] + rise * (z / step - i)
            assert pair.value(z) == expected == pair.row(z)[0], (k, z)
            assert pair.row(z)[1] == rise / step


def test_the_reply_gaps_sum_is_the_plain_forms() -> None:
    """_inverse_gaps_mean's edges (shared, over the scale), its shares of each gap count (cdf[1:] - cdf[:-1]) and their
    sum (np.add.reduce over the shared gap counts) are the per-call np.arange's, np.diff's and np.sum's, to the bit,
    over the presets' prompt and reply lengths."""
    from planner.numerics import gamma_p_array
    from planner.slo import _GAP_EDGES, _GAPS, _GAPS_SUMMED

    for mean, p95 in _preset_lengths():
        cv2 = length_cv2(mean, p95)
        if cv2 <= 0:
            continue
        scale = mean * cv2
        edges = _GAP_EDGES / scale
        assert np.array_equal(edges, (np.arange(1, _GAPS_SUMMED + 1, dtype=np.float64) + 0.5) / scale)
        cdf = gamma_p_array(1 / cv2, edges)
        shares = cdf[1:] - cdf[:-1]
        assert np.array_equal(shares, np.diff(cdf))
        assert np.add.reduce(shares / _GAPS) == np.sum(shares / np.arange(1, _GAPS_SUMMED, dtype=np.float64)), (mean, p95)


def _chunked_stages_s(eng: _Engine, prompts: np.ndarray, batch: float) -> np.ndarray:
    """_stage_s as it was written for every load: each prompt's chunks counted, and every step part times them."""
    room = eng.room(batch)
    uncached = prompts * (1 - eng.hit)
    chunks = np.maximum(np.ceil(uncached / room), 1.0) if math.isfinite(room) else np.ones_like(uncached)
    at = eng.step_at[batch]
    compute = np.asarray(eng.work_s(prompts, at.prompt_token_s)) + chunks * at.decode_compute_s
    return np.asarray(chunks * at.base_s + np.maximum(compute, chunks * at.floor_s))


def _covered_of(eng: _Engine, name: str) -> np.ndarray:
    brief = load_brief(name)
    return _covered_prompts(brief.workload.input_tokens_mean, min(float(brief.slo.ttft_input_cap_tokens), eng.longest_prompt), eng.cv2)


@pytest.mark.parametrize("name", ["capstone", "rag", "multimodal", "chat-speculative", "qps10-tp4", "agent-platform", "moe-deepseek"])
def test_the_stages_of_prompts_in_one_step_are_the_chunked_forms(name: str) -> None:
    """Where every covered prompt fits one step, _stage_s adds the step's parts as they are: each prompt's stage to
    the bit as the chunked form's (chunks of 1); a smaller step budget (many chunks) and an unchunked engine too."""
    brief = load_brief(name)
    engines = [
        _Engine(brief, shape_of(brief)),
        _Engine(brief, shape_of(brief), max_num_batched_tokens=700),
        _Engine(brief.with_changes({"deployment.chunked_prefill": False}), shape_of(brief)),
    ]
    paths = set()
    for eng in engines:
        covered = _covered_of(eng, name)
        for batch in (1.0, 7.5, 64.0, 200.0):
            if eng.room(batch) <= 0:
                continue
            paths.add(float(covered.max()) * (1 - eng.hit) <= eng.room(batch))
            assert _stage_s(eng, covered, batch).tobytes() == _chunked_stages_s(eng, covered, batch).tobytes()
    assert paths == {True, False}  # both forms held to the chunked one


def test_prompts_in_one_step_count_no_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The saving: a load whose covered prompts all fit one step works out no chunk counts (np.ceil over the prompts,
    and the step parts times them); one that chunks them still does."""
    brief = load_brief("capstone")
    eng = _Engine(brief, shape_of(brief))
    covered = _covered_of(eng, "capstone")
    ceil = np.ceil
    counted: list[int] = []

    def counting(x: np.ndarray) -> np.ndarray:
        counted.append(x.size)
        return ceil(x)

    monkeypatch.setattr(np, "ceil", counting)
    assert float(covered.max()) * (1 - eng.hit) <= eng.room(64.0)
    _stage_s(eng, covered, 64.0)
    assert counted == []
    chunked = _Engine(brief, shape_of(brief), max_num_batched_tokens=700)
    _stage_s(chunked, covered, 64.0)
    assert counted == [covered.size]


@pytest.mark.parametrize("seed", range(6))
def test_the_ttft_tails_rows_find_every_prompt_done_and_waiting(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A quantile in the wait's tail (past the longest prompt's own steps) inverts on rows that count no prompts (no
    bisection of the stages): each row's t is past every stage (its waits all positive, every stage summed), where
    rows_under's counts are all the prompts, so its rows are rows_under's to the bit."""
    import planner.slo as slo

    rng = np.random.default_rng(seed)
    stages = np.sort(rng.uniform(0.02, 0.05, 48))
    busy, wait_s, tail = float(rng.uniform(0.3, 0.95)), float(rng.uniform(0.05, 0.5)), float(rng.uniform(0.3, 2.0))
    scale = wait_s / busy / tail
    bisected: list[float] = []
    waits: list[np.ndarray] = []
    gamma_sums_of = slo.gamma_sums

    def counted(search: Callable[[list[float], float], int]) -> Callable[[list[float], float], int]:
        def bisection(ascending: list[float], t: float) -> int:
            bisected.append(t)
            return search(ascending, t)

        return bisection

    def recorded(a: float, x: np.ndarray, largest: float) -> tuple[float, float, float]:
        waits.append(x)
        return gamma_sums_of(a, x, largest)

    monkeypatch.setattr(slo, "bisect_left", counted(bisect.bisect_left))
    monkeypatch.setattr(slo, "bisect_right", counted(bisect.bisect_right))
    monkeypatch.setattr(slo, "gamma_sums", recorded)
    _ttft_quantile_cached.cache_clear()
    got = _ttft_quantile_s(stages, busy, wait_s, tail, 0.99)
    assert got > stages[-1] + scale * 1e-3  # in the tail
    assert waits and bisected == []
    for x in waits:
        assert x.size == stages.size and float(x.min()) > 0
