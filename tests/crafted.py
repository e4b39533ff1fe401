"""Crafted input that an attacker or a careless user would try, shared by the app and CLI fuzz suites.

`CRAFTED_LINKS` are query parameters of a shared link (?preset=...&path=value); each must end in a page
that shows a message (or the design), never an exception. `HF_CONFIGS` are Hugging Face config.json
bodies that must be a custom model or one error naming the field.
"""

from __future__ import annotations

import json

__all__ = ["CRAFTED_LINKS", "DEEP", "DEEP_OBJECT", "EVIL_URL", "HF_CONFIGS", "LINK_TEXT_PAYLOADS", "crafted_ids"]

DEEP = "[" * 5000 + "]" * 5000
DEEP_OBJECT = '{"a":' * 3000 + "1" + "}" * 3000
EVIL_URL = "https://evil.example/login"
LINK_TEXT_PAYLOADS = (
    f"Session expired: sign in again at {EVIL_URL}",
    "visit www.evil.example/x now",
    "mail admin@evil.example",
    "[pwn](https://evil.example/x) ![i](https://evil.example/p.png) <img src=https://evil.example/i.png>",
    "<https://evil.example/auto>",
    "\x1b[31mred\x1b[0m \u202eevil",
)

_FIELDS = (
    "title",
    "description",
    "assumptions",
    "workload.duty_cycle",
    "workload.users",
    "hardware.nodes",
    "hardware.gpu",
    "model.name",
    "model.custom",
    "model.hf_config",
    "deployment.weights",
    "efficiency.compute_fraction",
    "lora.adapters",
    "bogus.field",
)

_NUMERIC_EXTREMES = {
    "efficiency.compute_fraction": ("1e-200", "5e-324", "1e-30"),
    "efficiency.bandwidth_fraction": ("1e-300", "5e-324"),
    "efficiency.attention_bandwidth_fraction": ("1e-300",),
    "workload.duty_cycle": ("0.005", "1e-300", "0.0001", "0.999", "0.123456789"),
    "workload.prefix_hit_rate": ("0.005", "0.999", "0.3333333"),
    "workload.request_rate": ("1e-300",),
    "workload.generation_s_per_turn": ("1e-300",),
    "workload.output_tokens_mean": ("1", "1e6"),
    "workload.input_tokens_mean": ("1e7",),
    "workload.users": ("1000000000", "1", "1e9", "1.5"),
    "cost.usd_per_gpu_hour": ("1e-300",),
    "cost.average_duty": ("1e-300",),
    "slo.ttft_p95_ms": ("1e-300",),
    "slo.itl_p95_ms": ("1e-300",),
    "slo.headroom": ("10",),
    "hardware.nodes": ("3000", "4096", "2049", "1", "1e3", "9" * 400),
    "hardware.gpus_per_node": ("72", "1"),
    "deployment.tp": ("72", "3"),
    "deployment.max_num_seqs": ("16384", "1"),
    "deployment.max_num_batched_tokens": ("16", "1048576"),
    "deployment.max_model_len": ("10000000",),
    "deployment.reserve_gb_per_gpu": ("200", "0"),
    "deployment.gpu_memory_utilization": ("0.31",),
    "latency.network_ms": ("10000",),
}


def _nested() -> list[dict[str, str]]:
    links = [{"preset": "capstone", field: DEEP} for field in _FIELDS]
    links += [{"preset": "capstone", "title": DEEP_OBJECT}, {"preset": DEEP}, {DEEP[:200]: "1"}]
    return links


def _extremes() -> list[dict[str, str]]:
    return [{"preset": "capstone", path: value} for path, values in _NUMERIC_EXTREMES.items() for value in values]


def _names() -> list[dict[str, str]]:
    long_name = "x" * 300
    return [
        {"preset": "capstone", "model.name": "gpt-5"},
        {"preset": "capstone", "model.name": "../../etc/passwd"},
        {"preset": "capstone", "hardware.gpu": "tpu-v5"},
        {"preset": "capstone", "hardware.gpu": "h100"},
        {"preset": long_name},
        {"preset": "../capstone"},
        {"preset": "/etc/passwd"},
        {"preset": ""},
        {"preset": "capstone", "model.hf_config": "/etc/passwd"},
        {"preset": "capstone", "model.hf_config": "/etc/hostname"},
        {"preset": "capstone", "model.hf_config": "/nonexistent/config.json"},
        {"preset": "capstone", "model.hf_config": "/" + "a" * 300},
        {"preset": "capstone", "model.hf_config": "presets/../README.md"},
        {"preset": "capstone", "model.hf_config": "/dev/zero"},
        {"preset": "capstone", "model.hf_config": "/proc/self/environ"},
        {"preset": "capstone", "model.name": "custom"},
        {"preset": "capstone", "variation": "z"},
        {"preset": "capstone", "variation": "c"},
        {"preset": "capstone", "lora.adapters": "100000", "lora.rank": "1024"},
        {"preset": "capstone", "lora.adapters": "100000", "lora.rank": "1024", "variation": "c"},
        {"preset": "variation-c", "lora.adapters": "100000", "lora.rank": "1024"},
        {"preset": "capstone", "lora.adapters": "5"},
        {"preset": "capstone", "lora.rank": "1025"},
    ]


def _texts() -> list[dict[str, str]]:
    links = []
    for payload in LINK_TEXT_PAYLOADS:
        links += [
            {"preset": "capstone", "title": payload},
            {"preset": "capstone", "description": payload},
            {"preset": "capstone", "assumptions": json.dumps([payload])},
            {"preset": payload},
            {"preset": "capstone", "hardware.gpu": payload[:40]},
            {"preset": "capstone", payload[:60]: "1"},
        ]
    links += [
        {"preset": "capstone", "title": "x" * 201},
        {"preset": "capstone", "title": "\x00\x01\x02"},
        {"preset": "capstone", "model.name": "custom", "model.display_name": f"Llama {EVIL_URL}"},
    ]
    return links


# a 70B custom model as a link spells it, one parameter per field
CUSTOM_70B_LINK = {
    "model.custom.layers": "80",
    "model.custom.hidden_size": "8192",
    "model.custom.attention_heads": "64",
    "model.custom.kv_heads": "8",
    "model.custom.head_dim": "128",
    "model.custom.params": "70600000000",
}


def _custom_model(order_name_first: bool) -> dict[str, str]:
    name = {"model.name": "custom"}
    return {"preset": "capstone", **(name | CUSTOM_70B_LINK if order_name_first else CUSTOM_70B_LINK | name)}


def _orders() -> list[dict[str, str]]:
    return [
        _custom_model(True),
        _custom_model(False),
        {"preset": "capstone", "model.name": "custom", "model.custom": json.dumps({"layers": 80})},
        {"preset": "capstone", "workload.input_tokens_p95": "100000", "workload.input_tokens_mean": "50000"},
        {"preset": "capstone", "workload.input_tokens_mean": "50000", "workload.input_tokens_p95": "100000"},
        {"preset": "capstone", "workload.users": "null", "workload.request_rate": "40"},
        {"preset": "capstone", "workload.request_rate": "40", "workload.users": "null"},
        {"preset": "qps10-tp4", "workload.request_rate": "0.0001"},
        {"preset": "qps10-tp4", "workload.request_rate": "null"},
        {"preset": "capstone", "deployment.tp": "16"},
        {"preset": "capstone", "deployment.tp": "3"},
        {"preset": "capstone", "hardware.nodes": "1", "deployment.long_context_nodes": "4"},
        {"preset": "capstone", "deployment.weights": "bf16", "hardware.gpu": "a100-80gb", "deployment.tp": "1"},
        {"preset": "capstone", "title": "a", "title ": "b"},
        {"preset": "capstone", "hardware.nodes": "NaN"},
        {"preset": "capstone", "hardware.nodes": "Infinity"},
        {"preset": "capstone", "workload.duty_cycle": "-Infinity"},
        {"preset": "capstone", "workload.duty_cycle": "1e400"},
        {"preset": "capstone", "hardware.nodes": "true"},
        {"preset": "capstone", "__class__": "1"},
        {"preset": "capstone", "model.__dict__": "1"},
        {"preset": "capstone", "hardware": "{}"},
        {"preset": "capstone", "hardware": "null"},
        {"preset": "capstone", "slo": "null"},
        {"preset": "capstone", "": "1"},
        {"preset": "capstone", ".": "1"},
        {"preset": "capstone", "title": "y" * 100_000},
    ]


CRAFTED_LINKS: list[dict[str, str]] = _nested() + _extremes() + _names() + _texts() + _orders()


def crafted_ids() -> list[str]:
    def short(params: dict[str, str]) -> str:
        text = "&".join(f"{k}={v}" for k, v in params.items())
        return repr(text[:48])

    return [f"{i}:{short(p)}" for i, p in enumerate(CRAFTED_LINKS)]


_BASE_HF = {
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
}


def _hf(**changes: object) -> bytes:
    return json.dumps({**_BASE_HF, **changes}).encode()


HF_CONFIGS: dict[str, bytes] = {
    "good": _hf(),
    "text-layers": _hf(num_hidden_layers="many"),
    "float-layers": _hf(num_hidden_layers=32.5),
    "zero-heads": _hf(num_attention_heads=0),
    "zero-kv-heads": _hf(num_key_value_heads=0),
    "negative-hidden": _hf(hidden_size=-4096),
    "bool-layers": _hf(num_hidden_layers=True),
    "list-hidden": _hf(hidden_size=[4096]),
    "null-heads": _hf(num_attention_heads=None),
    "huge-vocab": _hf(vocab_size=10**400),
    "inf-hidden": b'{"num_hidden_layers": 32, "hidden_size": Infinity, "num_attention_heads": 32}',
    "nan-hidden": b'{"num_hidden_layers": 32, "hidden_size": NaN, "num_attention_heads": 32}',
    "inf-intermediate": _hf().replace(b'"intermediate_size": 14336', b'"intermediate_size": Infinity'),
    "nan-experts": _hf().replace(b'"vocab_size": 128256', b'"num_local_experts": NaN'),
    "text-intermediate": _hf(intermediate_size="big"),
    "huge-context": _hf(max_position_embeddings=10**30),
    "missing-layers": json.dumps({k: v for k, v in _BASE_HF.items() if k != "num_hidden_layers"}).encode(),
    "not-an-object": b"[1, 2, 3]",
    "broken": b'{"num_hidden_layers": ',
    "binary": bytes(range(256)),
    "deep": DEEP.encode(),
    "empty": b"",
    "experts-more-than-heads": _hf(num_local_experts=8, num_experts_per_tok=16),
}
