"""The simulator's requests: when they arrive, how long their prompts and replies are, what the cache covers.

Arrivals are Poisson at a rate, all at time 0 (`rate = inf`, a max-throughput run), or closed-loop
clients that send their next request the moment the previous reply ends. Lengths are fixed, or drawn
from a gamma distribution fitted to the brief's mean and p95, then clipped so prompt + reply fit max-model-len.
Everything comes from one seeded generator, so a seed gives the same requests every time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from planner.lengths import length_cv2

__all__ = ["Requests", "cached_tokens", "make_requests", "sample_lengths"]


@dataclass(frozen=True)
class Requests:
    """Per-request arrays, indexed by request in arrival order.

    arrival_s: arrival time (s); closed-loop runs fill it as clients send, so it starts as 0 for the
    first `clients` requests. prompt_tokens, output_tokens: lengths (tokens). cached_tokens: prompt
    tokens whose KV the prefix cache already holds (no prefill compute, at least one token left to compute).
    clients: closed-loop client count, 0 for open-loop arrivals. clipped: requests whose sampled prompt
    or reply was cut so that prompt + reply fit max-model-len.
    """

    arrival_s: npt.NDArray[np.float64]
    prompt_tokens: npt.NDArray[np.int64]
    output_tokens: npt.NDArray[np.int64]
    cached_tokens: npt.NDArray[np.int64]
    clients: int
    clipped: int = 0

    @property
    def count(self) -> int:
        return int(self.arrival_s.shape[0])


def sample_lengths(rng: np.random.Generator, count: int, mean: float, p95: float) -> npt.NDArray[np.int64]:
    """Lengths with the given mean and p95: a gamma distribution, the one the analytic SLO model assumes
    (planner.slo.length_cv2), so both sides see the same prompts; fixed at the mean when p95 equals it."""
    cv2 = length_cv2(mean, p95)
    if cv2 == 0.0:
        return np.full(count, max(round(mean), 1), dtype=np.int64)
    draws = rng.gamma(1 / cv2, mean * cv2, count)  # shape k = 1 / CV^2, scale = mean x CV^2
    return np.maximum(np.rint(draws), 1).astype(np.int64)


def cached_tokens(prompt: npt.NDArray[np.int64], hit_rate: float) -> npt.NDArray[np.int64]:
    """Prompt tokens the prefix cache covers at this hit rate; at least one token is left to compute."""
    cached: npt.NDArray[np.int64] = np.minimum(np.floor(prompt * hit_rate), prompt - 1).astype(np.int64)
    return cached


def _arrivals(rng: np.random.Generator, count: int, rate_per_s: float, clients: int) -> npt.NDArray[np.float64]:
    if clients > 0 or math.isinf(rate_per_s):
        return np.zeros(count, dtype=np.float64)
    gaps = rng.exponential(1.0, count)  # unit-rate gaps scaled by the rate: the same seed, any rate
    return np.cumsum(gaps) / rate_per_s


def make_requests(
    *,
    count: int,
    rate_per_s: float,
    clients: int,
    prompt_mean: float,
    prompt_p95: float,
    output_mean: float,
    output_p95: float,
    max_model_len: int,
    prefix_hit_rate: float,
    seed: int,
) -> Requests:
    """`count` requests from one seeded generator: arrivals first, then prompt and reply lengths."""
    rng = np.random.default_rng(seed)
    arrival = _arrivals(rng, count, rate_per_s, clients)
    drawn_prompt = sample_lengths(rng, count, prompt_mean, prompt_p95)
    prompt = np.minimum(drawn_prompt, max_model_len - 1)
    drawn_output = sample_lengths(rng, count, output_mean, output_p95)
    output = np.minimum(drawn_output, max_model_len - prompt)
    clipped = int(np.count_nonzero((prompt < drawn_prompt) | (output < drawn_output)))
    cached = cached_tokens(prompt, prefix_hit_rate)
    return Requests(arrival_s=arrival, prompt_tokens=prompt, output_tokens=output, cached_tokens=cached, clients=clients, clipped=clipped)
