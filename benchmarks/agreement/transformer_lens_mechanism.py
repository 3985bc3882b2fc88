"""Mechanism part 3 against TransformerLens 4.3 on the same weights (a local check, kept out of CI: transformer-lens
pulls in datasets, pandas, wandb and accelerate; run it from a venv of its own, issue 40, what to add 5).

One random-weight GPT-2 folder (transformers), loaded as ours and as TransformerLens's `TransformerBridge`:
- zero and mean ablation of each head's `hook_z` (loss, and one token's logit averaged over the rows);
- activation patching with TransformerLens's own `patching.get_act_patch_*` (resid_pre, resid_mid, attn_out,
  mlp_out by position; each head's output (z) and pattern at every position), normalised recovery of the logit
  difference;
- direct logit attribution per head in both conventions: the lab's against the bridge as loaded, TransformerLens's
  ("tl") against it after `enable_compatibility_mode()` (fold_ln, center_writing_weights, center_unembed,
  fold_value_biases), for a logit difference and a single token;
- head detectors against TransformerLens's detection patterns and its "mul" similarity score on its own cached
  patterns (its score is ours times the stripe's entries / 2T: it divides by the pattern's sum, 2T queries).
Prints the largest |ours - TransformerLens| of each; the last line is JSON.

    <a venv with transformer-lens>/bin/python benchmarks/agreement/transformer_lens_mechanism.py   # PYTHONPATH=. first
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


def ld(logits: torch.Tensor) -> torch.Tensor:
    return logits[:, -1, ANSWER] - logits[:, -1, WRONG]


def ablation(ours, bridge, ids) -> dict[str, float]:
    from tui_lab.mechanism.ablation import Metric, head_ablation

    report = {}
    _, cache = bridge.run_with_cache(ids)
    for mode in ("zero", "mean"):
        for metric, name in ((Metric(), "loss"), (Metric(token=ANSWER), "logit")):
            table = head_ablation(ours, ids, mode, metric)
            their = []
            for layer in range(ours.config.decoder_layers):
                point = f"blocks.{layer}.attn.hook_z"
                mean = cache[point].mean(dim=(0, 1))
                row = []
                for head in range(ours.config.heads):

                    def hook(z, hook, head=head, mean=mean, mode=mode):
                        z = z.clone()
                        z[:, :, head] = 0.0 if mode == "zero" else mean[head]
                        return z

                    with torch.no_grad():
                        logits = bridge.run_with_hooks(ids, fwd_hooks=[(point, hook)])
                        clean = bridge(ids)
                    row.append(_metric(name, logits, ids) - _metric(name, clean, ids))
                their.append(row)
            report[f"ablation {mode} {name}"] = float((torch.tensor(table.values) - torch.tensor(their)).abs().max())
    return report


def _metric(name: str, logits, ids) -> float:
    if name == "loss":
        return float(torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten()))
    return float(logits[:, -1, ANSWER].mean())


def patching(ours, bridge, clean, corrupt) -> dict[str, float]:
    from transformer_lens import patching as tl

    from tui_lab.mechanism.patching import PatchMetric, activation_patching

    with torch.no_grad():
        _, clean_cache = bridge.run_with_cache(clean[None])
        ld_clean, ld_corrupt = float(ld(bridge(clean[None]))), float(ld(bridge(corrupt[None])))

    def recovery(logits):  # a scalar: one corrupted row
        return ((ld(logits) - ld_corrupt) / (ld_clean - ld_corrupt))[0]

    theirs = {
        "resid_pre": tl.get_act_patch_resid_pre,
        "resid_mid": tl.get_act_patch_resid_mid,
        "attn_out": tl.get_act_patch_attn_out,
        "mlp_out": tl.get_act_patch_mlp_out,
        "z": tl.get_act_patch_attn_head_out_all_pos,
        "pattern": tl.get_act_patch_attn_head_pattern_all_pos,
    }
    report = {}
    for kind, fn in theirs.items():
        try:
            with torch.no_grad():
                their = fn(bridge, corrupt[None], clean_cache, recovery)
            mine = activation_patching(ours, clean, corrupt, PatchMetric("logit_diff", ANSWER, WRONG), kind)
            report[f"patching {kind}"] = float((torch.tensor(mine.values) - their.float()).abs().max())
        except Exception as error:  # noqa: BLE001 - a check that reports what it could not compare
            print(f"patching {kind}: not compared ({type(error).__name__}: {str(error)[:120]})")
            report[f"patching {kind}"] = float("nan")
    return report


def tl_dla(bridge, ids, direction: torch.Tensor) -> torch.Tensor:
    """(layers, heads): each head's z @ W_O through the final norm's frozen scale (TransformerLens's
    `apply_ln_to_stack`), onto `direction` (E,)."""
    with torch.no_grad():
        _, cache = bridge.run_with_cache(ids[None])
        rows = []
        for layer in range(bridge.cfg.n_layers):
            z = cache[f"blocks.{layer}.attn.hook_z"][0, -1]  # (H, D)
            writes = torch.einsum("hd,hde->he", z, bridge.W_O[layer])[:, None, None]  # (H, 1, 1, E)
            scaled = cache.apply_ln_to_stack(writes.expand(-1, 1, ids.shape[0], -1), layer=-1)[:, 0, -1]
            rows.append(scaled @ direction)
        return torch.stack(rows)


def dla(ours, bridge, ids, gamma: torch.Tensor) -> dict[str, float]:
    """`gamma`: the final norm's weight, which `apply_ln_to_stack` leaves to W_U (folded into it only in
    compatibility mode)."""
    from tui_lab.mechanism.attribution import head_logit_attribution

    report = {}
    for convention in ("lab", "tl"):
        if convention == "tl":
            bridge.enable_compatibility_mode()
        w_u = bridge.W_U.detach() * (gamma[:, None] if convention == "lab" else 1.0)  # (E, V)
        for wrong, what in ((WRONG, "logit difference"), (None, "single token")):
            direction = w_u[:, ANSWER] - (w_u[:, wrong] if wrong is not None else 0)
            try:
                their = tl_dla(bridge, ids, direction)
                mine = head_logit_attribution(ours, ids, ANSWER, wrong, convention=convention)
                report[f"dla {convention} {what}"] = float((mine - their).abs().max())
            except Exception as error:  # noqa: BLE001
                print(f"dla {convention} {what}: not compared ({type(error).__name__}: {str(error)[:120]})")
                report[f"dla {convention} {what}"] = float("nan")
    return report


def detectors(ours, bridge) -> dict[str, float]:
    from transformer_lens import head_detector as hd

    from tui_lab.mechanism.head_detectors import head_scores, repeated_tokens

    t, batch = 10, 3
    mine = head_scores(ours, t, batch, seed=1).scores
    ids = repeated_tokens(ours.config.vocab, t, batch, seed=1)
    detections = {
        "previous": (hd.get_previous_token_head_detection_pattern, (2 * t - 1) / (2 * t)),
        "duplicate": (hd.get_duplicate_token_head_detection_pattern, 0.5),
        "induction": (hd.get_induction_head_detection_pattern, 0.5),
    }
    with torch.no_grad():
        _, cache = bridge.run_with_cache(ids)
    report = {}
    for name, (pattern_of, share) in detections.items():
        their = torch.zeros(ours.config.decoder_layers, ours.config.heads)
        for row in range(batch):
            target = pattern_of(ids[row : row + 1].cpu())
            for layer in range(ours.config.decoder_layers):
                pattern = cache[f"blocks.{layer}.attn.hook_pattern"][row]
                for head in range(ours.config.heads):
                    their[layer, head] += (
                        hd.compute_head_attention_similarity_score(
                            pattern[head], target, exclude_bos=False, exclude_current_token=False, error_measure="mul"
                        )
                        / batch
                    )
        report[f"heads {name}"] = float((torch.tensor(mine[name]) * share - their).abs().max())
    return report


def main() -> int:
    from hf_fixtures import save_hf_gpt2
    from transformer_lens.model_bridge import TransformerBridge
    from transformers import AutoTokenizer

    from tui_lab.hf import load_hf

    torch.manual_seed(0)
    folder = Path(tempfile.mkdtemp()) / "gpt2"
    hf_model = save_hf_gpt2(folder, n_embd=64, n_head=4, n_layer=3, n_positions=64)
    with torch.no_grad():  # larger biases: the constant value terms (what the conventions move) then count
        for block in hf_model.transformer.h:
            block.ln_1.bias.normal_(0, 0.3)
            block.attn.c_attn.bias.normal_(0, 0.3)
    hf_model.save_pretrained(folder)
    ours, _ = load_hf(folder)
    ours.eval()
    bridge = TransformerBridge.boot_transformers(
        str(folder), hf_model=hf_model.eval(), device="cpu", tokenizer=AutoTokenizer.from_pretrained(folder)
    )
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, ours.config.vocab, (3, 12), generator=gen)
    clean = ids[0]
    corrupt = clean.clone()
    corrupt[4] = (clean[4] + 7) % ours.config.vocab
    report = {**ablation(ours, bridge, ids), **patching(ours, bridge, clean, corrupt), **detectors(ours, bridge)}
    report.update(
        dla(ours, bridge, clean, hf_model.transformer.ln_f.weight.detach())
    )  # last: it switches the bridge to compatibility mode
    for name, diff in report.items():
        print(f"{name:<32} max |ours - TransformerLens| {diff:.3g}")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
