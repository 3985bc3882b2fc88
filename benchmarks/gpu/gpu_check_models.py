"""gpu_check's families section: every preset counted or built on the device, one line each.

Big presets are built on the meta device (no memory) and their parameters counted against the analysis;
toys (and the shipped trained toys) are built on the device from the same seed as on the CPU, run forward
once (finite, the expected shape, the CPU's logits within ATOL) and, where decoding applies (decoder-only
and encoder-decoder), decoded greedily with and without the KV cache: the same ids.
"""

from __future__ import annotations

from typing import Any

import torch

from tui_lab import build_model, load_preset
from tui_lab.analysis import count_params
from tui_lab.config import ModelConfig
from tui_lab.generation import generate
from tui_lab.loading import load_model
from tui_lab.presets import list_presets
from tui_lab.shipped import shipped_names

ATOL = 1e-3  # device logits vs the CPU's for the same weights and inputs (fp32, TF32 off)
TIE = 1e-4  # two greedy runs may part at a near-tie: top-2 logits closer than float noise on a device
BATCH, LENGTH = 2, 12


def run(recorder, device: str, sizes) -> None:
    for name in list_presets():
        if name in shipped_names():
            recorder.run(f"family {name}", lambda n=name: shipped(n, device, sizes))
        elif "toy" in name:
            recorder.run(f"family {name}", lambda n=name: toy(load_preset(n, **fitted(n, sizes)), device, sizes))
        else:
            recorder.run(f"family {name}", lambda n=name: counted(load_preset(n)))


def fitted(name: str, sizes) -> dict[str, int]:
    """The smoke's small sizes for toy `name` (its head count kept a divisor of kv_heads)."""
    shrink = dict(sizes.shrink)
    if shrink and load_preset(name).kv_heads:
        shrink["kv_heads"] = 1
    return shrink


def counted(config: ModelConfig) -> dict[str, Any]:
    """The built model's parameters (meta device: nothing allocated) == the analysis' arithmetic."""
    model = build_model(config, device="meta")
    built, analysed = sum(p.numel() for p in model.parameters()), count_params(config).total
    return {"ok": built == analysed, "params": built, "analysis": analysed, "built_on": "meta"}


def toy(config: ModelConfig, device: str, sizes) -> dict[str, Any]:
    torch.manual_seed(0)
    reference = build_model(config).eval()  # the CPU's copy: the same weights move to the device
    model = build_model(config, device=device).eval()
    model.load_state_dict(reference.state_dict())
    return checked(model, reference, sizes) | {"params": count_params(config).total}


def shipped(name: str, device: str, sizes) -> dict[str, Any]:
    """A shipped trained toy loaded on the device, checked like a random one (its own sizes)."""
    model = load_model("preset", name, device=device).model
    reference = load_model("preset", name, device="cpu").model
    return checked(model, reference, sizes) | {"weights": "trained"}


def checked(model, reference, sizes) -> dict[str, Any]:
    inputs = example_inputs(model.config)
    with torch.inference_mode():
        out = model(*[x.to(next(model.parameters()).device) for x in inputs]).float().cpu()
        expected = reference(*inputs).float()
    diff = (out - expected).abs().max().item()
    line = {"ok": bool(torch.isfinite(out).all()) and out.shape == expected.shape and diff <= ATOL,
            "output_shape": list(out.shape), "max_abs_diff_vs_cpu": diff, "family": model.config.family}
    if model.config.family != "encoder-only":
        same, new, gap = cached_equals_uncached(model, sizes.gen_tokens)
        line |= {"cached_equals_uncached": same, "new_tokens": new}
        if gap is not None:
            line["top2_gap_where_they_part"] = gap
        line["ok"] = line["ok"] and (same or (gap is not None and gap <= TIE))
    return line


def example_inputs(config: ModelConfig) -> tuple[torch.Tensor, ...]:
    """What one forward pass takes: ids, (source, target) ids, or images (N, C, H, W)."""
    g = torch.Generator().manual_seed(1)
    if config.input == "patches":
        return (torch.rand(BATCH, config.channels, config.image_size, config.image_size, generator=g),)
    vocab, length = config.vocab, min(LENGTH, config.max_len)
    ids = torch.randint(vocab, (BATCH, length), generator=g)
    if config.family == "encoder-decoder":
        return ids, torch.randint(vocab, (BATCH, length // 2), generator=g)
    return (ids,)


def cached_equals_uncached(model, new_tokens: int) -> tuple[bool, int, float | None]:
    """Greedy ids with and without the KV cache from the same prompt (a source for an encoder-decoder), and
    for a decoder-only model whose runs part, the top-2 logit gap where they do (a near-tie or a bug)."""
    config = model.config
    prompt_len = 8
    new_tokens = min(new_tokens, config.max_len - prompt_len) if config.positions == "learned" else new_tokens
    device = next(model.parameters()).device
    prompt = torch.randint(config.vocab, (1, prompt_len), generator=torch.Generator().manual_seed(2)).to(device)
    runs = [generate(model, prompt, new_tokens, temperature=0.0, use_cache=cache, bos_id=1) for cache in (True, False)]
    same = bool(torch.equal(*runs))
    gap = None if same or config.family != "decoder-only" else top2_gap_where_they_part(model, *runs)
    return same, new_tokens, gap


def top2_gap_where_they_part(model, ids: torch.Tensor, other: torch.Tensor) -> float:
    """The gap between the two likeliest next tokens, uncached, at the first position where two greedy runs of
    a decoder-only model (N = 1) differ: float noise can only part them where it is tiny."""
    first = int((ids != other).nonzero()[0, -1])
    with torch.inference_mode():
        logits = model(ids[:, :first])[0, -1].float()
    top = logits.topk(2).values
    return float(top[0] - top[1])
