"""Prompt and reply lengths of the datasets the published rows ran, as the simulator draws them (mean and p95).

MLPerf Inference's datasets: the per-sample token counts of the official preprocessed files (MLCommons), as
extracted to openshift-psap/performance-dashboard mlperf-data/summaries/*.csv (input_length, output_length per
sample), summarised here (mean, 95th percentile, maximum). The reply counts there are the datasets' reference
answers; where MLPerf's reference README states the generated tokens per sample (mlcommons/inference
language/*/README.md, "Accuracy Target": llama3.1-405b 684.68, mixtral-8x7b 144.84, llama2-70b 294.45) it is cited
beside them. A row that reports both samples/s and tokens/s overrides the reply mean with what its own run
generated (planner.calibration.measurements), keeping the dataset's p95 / mean ratio.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DATASETS", "DatasetLengths", "dataset_for"]


class DatasetLengths(BaseModel):
    """One dataset's length distribution (tokens)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    name: str
    samples: int = Field(description="Samples in the dataset (the count the benchmark draws from).")
    input_mean_tokens: float
    input_p95_tokens: float
    input_max_tokens: int
    output_mean_tokens: float
    output_p95_tokens: float
    output_max_tokens: int = Field(description="Longest reply the benchmark lets a request generate (its max_tokens cap).")
    total_max_tokens: int | None = Field(default=None, description="Longest prompt + reply the benchmark keeps (None: the two caps add).")
    source: str


_SUMMARIES = "openshift-psap/performance-dashboard mlperf-data/summaries/{}.csv (per-sample lengths of the MLCommons preprocessed dataset)"

DATASETS: dict[str, DatasetLengths] = {
    d.key: d
    for d in (
        DatasetLengths(
            key="mlperf-llama2-70b",
            name="OpenOrca (MLPerf llama2-70b, 24,576 samples)",
            samples=24_576,
            input_mean_tokens=222.3,
            input_p95_tokens=614,
            input_max_tokens=1024,  # processorca.py --seqlen_limit=1024
            output_mean_tokens=218.9,  # reference (GPT-4) answers; the FP16 reference run generated 294.45 a sample
            output_p95_tokens=563,
            output_max_tokens=1024,
            source=_SUMMARIES.format("llama2-70b-99") + "; mlcommons/inference language/llama2-70b/README.md (tokens per sample 294.45)",
        ),
        DatasetLengths(
            key="mlperf-llama3.1-405b",
            name="MLPerf llama3.1-405b long-context set (8,313 samples)",
            samples=8313,
            input_mean_tokens=9428.6,
            input_p95_tokens=15_831,
            input_max_tokens=20_000,
            output_mean_tokens=684.7,  # = the README's tokens_per_sample 684.68
            output_p95_tokens=1048,
            output_max_tokens=2048,
            source=_SUMMARIES.format("llama3-1-405b") + "; mlcommons/inference language/llama3.1-405b/README.md (tokens_per_sample 684.68)",
        ),
        DatasetLengths(
            key="mlperf-llama3.1-8b",
            name="CNN/DailyMail (MLPerf llama3.1-8b, 13,368 samples)",
            samples=13_368,
            input_mean_tokens=870.7,
            input_p95_tokens=1750,
            input_max_tokens=2540,
            output_mean_tokens=128,  # the generation cap: the rows' runs average 128-129 tokens a sample, so nearly every reply hits it
            output_p95_tokens=128,
            output_max_tokens=128,
            source=_SUMMARIES.format("llama3-1-8b-datacenter") + " (inputs; its outputs are characters / 4 estimates of the reference"
            " summaries, mean 82); replies from the rows' own tokens/s over samples/s (128-129 a sample: the 128-token cap)",
        ),
        DatasetLengths(
            key="mlperf-mixtral-8x7b",
            name="OpenOrca + GSM8K + MBXP (MLPerf mixtral-8x7b, 15,000 samples)",
            samples=15_000,
            input_mean_tokens=427.4,
            input_p95_tokens=1006,
            input_max_tokens=2048,
            output_mean_tokens=144.8,  # = the README's tokens_per_sample 144.84
            output_p95_tokens=363,
            output_max_tokens=1024,
            source=_SUMMARIES.format("mixtral-8x7b") + "; mlcommons/inference language/mixtral-8x7b/README.md (tokens_per_sample 144.84)",
        ),
        DatasetLengths(
            key="mlperf-deepseek-r1",
            name="MLPerf deepseek-r1 reasoning set (4,388 samples)",
            samples=4388,
            input_mean_tokens=803.8,
            input_p95_tokens=1312,
            input_max_tokens=3140,
            output_mean_tokens=4043.4,  # reference outputs (tok_ref_output_len)
            output_p95_tokens=13_854,
            output_max_tokens=20_000,  # the rows' notes: max_seq 3140 + 20000
            source=_SUMMARIES.format("deepseek-r1") + " (tok_input_len, tok_ref_output_len)",
        ),
        DatasetLengths(
            key="sharegpt",
            name="ShareGPT_V3_unfiltered_cleaned_split as vLLM's benchmarks sample it",
            samples=1000,
            input_mean_tokens=229.7,
            input_p95_tokens=689,  # not published for the sample: an exponential spread (p95 = 3 x mean) assumed
            input_max_tokens=1024,  # vLLM's sampler drops prompts over 1,024 tokens and prompt + reply over 2,048
            output_mean_tokens=203.1,
            output_p95_tokens=609,  # likewise 3 x mean
            output_max_tokens=2048,
            total_max_tokens=2048,
            source="vllm-project/vllm PR #18566 (vllm bench serve, ShareGPT, Llama-3.1-8B tokenizer, 1,000 prompts: 229,711 input and"
            " 203,068 output tokens); p95s assumed (exponential spread), not published",
        ),
    )
}

# Words in a row's notes (or its length column) that name the dataset it ran.
_NAMED_BY = (
    ("llama3.1-405b set", "mlperf-llama3.1-405b"),
    ("llama3.1-8b set", "mlperf-llama3.1-8b"),
    ("cnn/dailymail", "mlperf-llama3.1-8b"),
    ("mixtral-8x7b set", "mlperf-mixtral-8x7b"),
    ("deepseek-r1 set", "mlperf-deepseek-r1"),
    ("llama2-70b set", "mlperf-llama2-70b"),
    ("openorca", "mlperf-llama2-70b"),
    ("sharegpt", "sharegpt"),
)


def dataset_for(text: str) -> DatasetLengths | None:
    """The dataset a row's text names (the first match in _NAMED_BY order), or None."""
    lowered = text.lower()
    return next((DATASETS[key] for words, key in _NAMED_BY if words in lowered), None)
