"""attention-scale: without dividing by sqrt(d_head), dot products grow with d_head and softmax saturates.

Seeds 001 and 003 (2017, section 3.2.1): if q and k have independent components of mean 0 and variance 1,
q . k has variance d_head, so unscaled scores spread wider as heads get wider and softmax puts nearly all
its weight on one key (vanishing gradients for the rest); dividing by sqrt(d_head) keeps their variance 1.
Part one measures exactly that on random unit-variance q and k: the softmax's mean entropy and largest
weight for d_head 16..256, with and without the scale. Part two trains the same small model with
`attention_scale = sqrt_d_head` and `none` and keeps both loss curves.
"""

from __future__ import annotations

import math
from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, at_least, check, heads_divide, span
from tui_lab.experiments.result import Result, Table
from tui_lab.experiments.training import LM_HELP, LM_OPTIONS, char_data, lm_config, lm_train_config, train_curve

SCALES = {"sqrt_d_head": "scaled 1/sqrt(d_head)", "none": "unscaled"}


def softmax_stats(d_head: int, keys: int, scaled: bool, seed: int, rows: int = 512) -> dict[str, float]:
    """Mean entropy (nats) and mean largest weight of softmax(q k^T * scale) over `rows` random queries."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    q, k = torch.randn(rows, d_head, generator=gen), torch.randn(keys, d_head, generator=gen)
    scores = q @ k.T * (1 / math.sqrt(d_head) if scaled else 1.0)  # (rows, keys)
    weights = torch.softmax(scores, dim=-1)
    entropy = -(weights * torch.log(weights.clamp_min(1e-30))).sum(-1)
    return {"entropy": entropy.mean().item(), "max_weight": weights.max(-1).values.mean().item(),
            "score_std": scores.std().item()}


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    result = Result("attention-scale", options)
    d_heads, keys = options["d_heads"], options["keys"]
    entropy = result.plot("entropy", f"softmax entropy over {keys} keys (uniform: ln {keys})", "d_head", "nats")
    peak = result.plot("max_weight", "largest softmax weight (mean over queries)", "d_head", "weight")
    table = result.tables.setdefault("softmax", Table("random unit-variance q, k", [
        "d_head", "score std scaled", "score std unscaled", "entropy scaled", "entropy unscaled", "max w scaled",
        "max w unscaled"]))
    stats = {s: [softmax_stats(d, keys, s == "sqrt_d_head", options["seed"]) for d in d_heads] for s in SCALES}
    for scale, label in SCALES.items():
        entropy.add(label, d_heads, [r["entropy"] for r in stats[scale]])
        peak.add(label, d_heads, [r["max_weight"] for r in stats[scale]])
    entropy.add("uniform", d_heads, [math.log(keys)] * len(d_heads))
    for i, d in enumerate(d_heads):
        a, b = stats["sqrt_d_head"][i], stats["none"][i]
        table.rows.append([d, *(round(x, 4) for x in (a["score_std"], b["score_std"], a["entropy"], b["entropy"],
                                                       a["max_weight"], b["max_weight"]))])
    progress(0.05, "softmax statistics done", result)
    finals = _train(result, options, span(progress, 0.05, 1.0), cancel)
    _summarise(result, stats, finals, options)
    return result


def _train(result: Result, options: dict[str, Any], progress: Progress, cancel: Cancel) -> dict[str, float | None]:
    plot = result.plot("loss", f"training loss, d_head {options['d_model'] // options['heads']}", "step", "train loss")
    finals, data = {}, char_data()
    for i, (scale, label) in enumerate(SCALES.items()):
        check(cancel, "attention-scale")
        curve = train_curve(lm_config(options, attention_scale=scale), lm_train_config(options),
                            span(progress, i / 2, (i + 1) / 2), cancel, label, data=data)
        plot.add(label, curve.steps, curve.losses)
        finals[scale] = curve.final_val
        if curve.error:
            result.notes.append(f"{label}: {curve.error}")
    return finals


def _summarise(result: Result, stats, finals: dict[str, float | None], options: dict[str, Any]) -> None:
    widest, a, b = options["d_heads"][-1], stats["sqrt_d_head"][-1], stats["none"][-1]
    result.scalars = {"d_head_widest": widest, "entropy_scaled": round(a["entropy"], 4),
                      "entropy_unscaled": round(b["entropy"], 4),
                      "uniform_entropy": round(math.log(options["keys"]), 4),
                      "max_weight_scaled": round(a["max_weight"], 4), "max_weight_unscaled": round(b["max_weight"], 4),
                      "val_loss_scaled": _round(finals.get("sqrt_d_head")),
                      "val_loss_unscaled": _round(finals.get("none"))}
    s = result.scalars
    result.notes[:0] = [
        f"at d_head {widest}: unscaled scores have std {b['score_std']:.1f} (scaled {a['score_std']:.2f}); softmax "
        f"entropy {s['entropy_unscaled']} vs {s['entropy_scaled']} nats (uniform {s['uniform_entropy']}), largest "
        f"weight {s['max_weight_unscaled']} vs {s['max_weight_scaled']}",
        f"training (d_head {options['d_model'] // options['heads']}, {options['steps']} steps): val loss "
        f"{s['val_loss_scaled']} scaled vs {s['val_loss_unscaled']} unscaled"]
    if None not in (s["val_loss_scaled"], s["val_loss_unscaled"]) and s["val_loss_unscaled"] <= s["val_loss_scaled"]:
        result.notes.insert(2, "here the unscaled run did no worse: with GPT-2's init (weights std 0.02) q . k starts "
                               "near 0, far from saturation, and a short toy run never gets there; the statistics "
                               "above are what unit-variance q and k do")


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _check(options: dict[str, Any]) -> None:
    at_least(options, "d_heads", 1)
    at_least(options, "keys", 2)
    heads_divide(options)


EXPERIMENT = Experiment(
    name="attention-scale",
    title="Why divide by sqrt(d_head)",
    lesson="Seeds 001 and 003: without dividing by sqrt(d_k) the dot products grow with the dimension and softmax "
           "becomes too peaked.",
    options={"d_heads": (16, 32, 64, 128, 256), "keys": 64, **LM_OPTIONS, "d_model": 128, "heads": 2},
    quick={"steps": 60},
    runner=run,
    help={"d_heads": "head widths for the softmax statistics", "keys": "keys each random query attends over",
          **LM_HELP, "heads": "heads of the trained model (its d_head is d_model / heads)"},
    check_options=_check,
)
