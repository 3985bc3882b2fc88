"""The Python API's cache (tui_lab/mechanism/lab_cache.py) against TransformerLens's `ActivationCache` on the same
weights: a local check, kept out of CI (transformer-lens pulls in datasets, pandas, wandb and accelerate; run it
from a venv of its own, issue 40, what to add 4).

One random-weight GPT-2 folder (transformers, biases and LayerNorm weights drawn away from 0 and 1), loaded as ours
and as TransformerLens's `TransformerBridge` (as loaded: no weight folding):
- the new hook points both have: each `ln1` / `ln2` / `ln_final` `hook_scale`, and `hook_normalized` (TransformerLens
  hooks it before the norm's weight and bias: compared as ours = theirs * gamma + beta);
- `accumulated_resid` (the whole stream with apply_ln: the logit lens; cut before block 1 with incl_mid: ln1's frozen
  scale), `decompose_resid` (apply_ln), `stack_head_results` (apply_ln, incl_remainder), and their labels;
- `logit_attrs` of the decomposition for a logit difference, against TransformerLens after
  `enable_compatibility_mode()` (fold_ln puts gamma into W_U, as ours reads it; centring leaves a difference as is).
Prints the largest |ours - TransformerLens| of each; the last line is JSON.

    PYTHONPATH=. <a venv with transformer-lens>/bin/python benchmarks/agreement/transformer_lens_cache.py
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
ANSWER, WRONG = 5, 9


def diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b.reshape(a.shape)).abs().max()) if a.numel() == b.numel() else float("nan")


def compare(ours, bridge, ids) -> dict[str, float]:
    from tui_lab.mechanism.cache import run_with_cache
    from tui_lab.mechanism.lab_cache import LabCache

    report: dict[str, float] = {}
    with torch.no_grad():
        _, raw = run_with_cache(ours, ids)
        mine = LabCache(raw, ours)
        _, theirs = bridge.run_with_cache(ids)
        for i, block in enumerate(ours.decoder):
            for ln, norm in (("ln1", block.attn_norm), ("ln2", block.ffn_norm)):
                name = f"blocks.{i}.{ln}"
                report[f"{name}.hook_scale"] = diff(mine[f"{name}.hook_scale"], theirs[f"{name}.hook_scale"])
                normalized = theirs[f"{name}.hook_normalized"] * norm.weight + norm.bias
                ours_normalized = mine[f"{name}.hook_normalized"]
                report[f"{name}.hook_normalized (TL * gamma + beta)"] = diff(ours_normalized, normalized)
        report["ln_final.hook_scale"] = diff(mine["ln_final.hook_scale"], theirs["ln_final.hook_scale"])
        for label, kwargs in (("accumulated_resid(apply_ln) (the lens)", dict(apply_ln=True)),
                              ("accumulated_resid(1, incl_mid, apply_ln)", dict(layer=1, incl_mid=True, apply_ln=True)),
                              ("decompose_resid(apply_ln)", dict(apply_ln=True)),
                              ("stack_head_results(apply_ln, incl_remainder)", dict(apply_ln=True,
                                                                                     incl_remainder=True))):
            method = label.split("(")[0]
            a, a_labels = getattr(mine, method)(return_labels=True, **kwargs)
            b, b_labels = getattr(theirs, method)(return_labels=True, **kwargs)
            report[label] = diff(a, b) if a_labels == b_labels else float("nan")
            if a_labels != b_labels:
                print(f"{label}: labels differ: {a_labels} vs {b_labels}")
        decomposition = mine.decompose_resid()
        ours_attrs = mine.logit_attrs(decomposition, ANSWER, WRONG)
    bridge.enable_compatibility_mode()
    with torch.no_grad():
        _, folded = bridge.run_with_cache(ids)
        theirs_attrs = folded.logit_attrs(folded.decompose_resid(), ANSWER, WRONG)
    # folding moves constants between components (value biases into b_O, means out of every write): compare the sum,
    # and each part where the parts are the same (the embeddings, each attn_out and mlp_out)
    report["logit_attrs(decompose_resid), sum"] = diff(ours_attrs.sum(0), theirs_attrs.sum(0))
    report["logit_attrs(decompose_resid), each part"] = diff(ours_attrs, theirs_attrs)
    return report


def main() -> int:
    from hf_fixtures import save_hf_gpt2
    from transformer_lens.model_bridge import TransformerBridge
    from transformers import AutoTokenizer

    from tui_lab.hf import load_hf

    torch.manual_seed(0)
    folder = Path(tempfile.mkdtemp()) / "gpt2"
    hf_model = save_hf_gpt2(folder, n_embd=64, n_head=4, n_layer=3, n_positions=64)
    with torch.no_grad():  # gamma and beta away from 1 and 0: a formula that drops one shows
        for norm in [*(m for b in hf_model.transformer.h for m in (b.ln_1, b.ln_2)), hf_model.transformer.ln_f]:
            norm.weight.normal_(1, 0.3)
            norm.bias.normal_(0, 0.3)
    hf_model.save_pretrained(folder)
    ours, _ = load_hf(folder)
    ours.eval()
    bridge = TransformerBridge.boot_transformers(
        str(folder), hf_model=hf_model.eval(), device="cpu", tokenizer=AutoTokenizer.from_pretrained(folder)
    )
    ids = torch.randint(0, ours.config.vocab, (2, 12), generator=torch.Generator().manual_seed(0))
    report = compare(ours, bridge, ids)
    for name, value in report.items():
        print(f"{name:<52} max |ours - TransformerLens| {value:.3g}")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
