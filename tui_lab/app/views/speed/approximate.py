"""What the Speed view says and measures for approximate self-attention (issue 27): Performer decodes with its
running sums, whose size does not grow with the context; Linformer has no decoding to measure."""

from __future__ import annotations

from typing import Any

from tui_lab.analysis.cost import kv_cache_bytes
from tui_lab.analysis.format import fmt_bytes
from tui_lab.config import ModelConfig  # torch-free

LINFORMER_LINE = ("self_attention 'linformer' has no decoding to measure: E and F mix every position, future ones "
                  "included, into each projected key, so it has no causal form and no cache (encoders only)")


def demo_for(demo: ModelConfig, live: ModelConfig) -> ModelConfig:
    """The demo model with the live model's Performer features, so the demo measures a Performer's decoding."""
    if live.self_attention != "performer":
        return demo
    return demo.replace(self_attention="performer", performer_features=live.n_features)


def performer_line(config: Any, tokens: int) -> str | None:
    """The cache a Performer decodes with, beside the KV cache exact attention would keep at that length."""
    if config.self_attention != "performer":
        return None
    exact = config.replace(self_attention="softmax", performer_features=0)
    return (f"Performer (m={config.n_features}): the cache is the running sums S, z, "
            f"{fmt_bytes(kv_cache_bytes(config, tokens))} at any length (exact attention's KV cache at {tokens} "
            f"tokens: {fmt_bytes(kv_cache_bytes(exact, tokens))}), so a cached step does not grow with L")
