"""A local cross-check against TransformerLens (kept out of CI: it pulls in heavy dependencies).

One random-weight GPT-2 (transformers) folder, loaded as ours and as a TransformerLens `TransformerBridge`:
the hook points' activations (`run_with_cache`, same names), the logit lens (TransformerLens's
`accumulated_resid(apply_ln=True)` through the unembedding) and the Q/K/V-composition scores (after
`enable_compatibility_mode()`, i.e. fold_ln and center_writing_weights, against ours on the raw weights).
Prints the largest difference of each; the last line is JSON.

    PYTHONPATH=.:<transformer-lens install> python benchmarks/agreement/transformer_lens_check.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "support"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def compare(ours, hf_model, folder: Path, tokenizer) -> tuple[dict[str, float], list[str]]:
    """Largest |ours - TransformerLens| per hook point, for the lens and for each composition kind."""
    from transformer_lens.model_bridge import TransformerBridge

    from tui_lab.mechanism.attribution import composition_scores
    from tui_lab.mechanism.cache import run_with_cache
    from tui_lab.mechanism.lens import lens_logits

    bridge = TransformerBridge.boot_transformers(str(folder), hf_model=hf_model.eval(), device="cpu",
                                                tokenizer=tokenizer)
    ids = torch.randint(0, ours.config.vocab, (2, 12), generator=torch.Generator().manual_seed(0))
    report: dict[str, float] = {}
    with torch.no_grad():
        _, mine = run_with_cache(ours, ids)
        _, tl_cache = bridge.run_with_cache(ids)
        for name, value in mine.items():
            if name in tl_cache:
                other = tl_cache[name]
                report[name] = float((value - other.reshape(value.shape)).abs().max()) \
                    if other.numel() == value.numel() else float("nan")
                if name.endswith("hook_attn_scores"):  # blocked keys: ours -inf; compare the allowed ones
                    seen = torch.isfinite(value)
                    report[name] = float((value[seen] - other.reshape(value.shape)[seen]).abs().max())
                    report[f"{name} (TransformerLens at blocked keys)"] = float(other.reshape(value.shape)[~seen].max())
                if ours.config.positions == "rope" and name.endswith(("hook_q", "hook_k", "hook_rot_q", "hook_rot_k")):
                    # our RoPE rotates adjacent pairs (2j, 2j+1): the loader interleaves HF's half-split dims
                    d = value.shape[-1]
                    order = torch.stack([torch.arange(d // 2), torch.arange(d // 2) + d // 2], dim=1).flatten()
                    report[f"{name} (HF's dim order)"] = float((value - other[..., order]).abs().max())
        _, lens = lens_logits(ours, ids)
        accumulated = tl_cache.accumulated_resid(apply_ln=True)  # (P, N, L, E)
        tl_lens = bridge.unembed(accumulated)
        report["logit_lens"] = float((lens - tl_lens).abs().max()) if tl_lens.shape == lens.shape else float("nan")
    bridge.enable_compatibility_mode()
    for kind in ("Q", "K", "V"):
        tl_scores = bridge.all_composition_scores(kind)
        tl_scores = getattr(tl_scores, "scores", tl_scores)
        diff = (composition_scores(ours, kind) - tl_scores.detach().double()).abs().max()
        report[f"composition_{kind}"] = float(diff)
    return report, [name for name in mine if name not in tl_cache]


def main() -> int:
    from hf_family_fixtures import save_causal
    from hf_fixtures import save_hf_gpt2
    from transformers import AutoTokenizer

    from tui_lab.hf import load_hf

    results, tokenizer = {}, None
    for family in ("gpt2", "llama-gqa"):
        folder = Path(tempfile.mkdtemp()) / family
        if family == "gpt2":
            hf_model = save_hf_gpt2(folder, n_embd=64, n_head=4, n_layer=3, n_positions=64)
            tokenizer = AutoTokenizer.from_pretrained(folder)  # the Llama folder has none: TL gets this one
        else:
            hf_model = save_causal(family, folder)
        ours, _ = load_hf(folder)
        report, missing = compare(ours, hf_model, folder, tokenizer)
        for name, diff in report.items():
            print(f"{family} {name}: max |ours - TransformerLens| {diff:.3g}")
        print(f"{family}: our points TransformerLens does not name: {missing or 'none'}")
        results[family] = {"max_diff": report, "not_in_transformer_lens": missing}
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
