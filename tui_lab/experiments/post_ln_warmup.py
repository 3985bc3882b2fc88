"""post-ln-warmup: a deep post-LN stack needs a learning-rate warmup; a pre-LN stack trains without one.

Seed 000, step 6: the 2017 Transformer (post-LN, LayerNorm(x + Sublayer(x))) is trained with a linear
warmup of 4,000 steps. Xiong et al. 2020 ("On Layer Normalization in the Transformer Architecture") and Liu
et al. 2020 ("Understanding the Difficulty of Training Transformers") show why: at the full rate from step 1,
Adam's first updates move every weight by about the rate, and a post-LN stack, whose output leans on each
residual branch through the norms, is thrown into a state it does not leave; pre-LN (x +
Sublayer(LayerNorm(x))) keeps an identity path from input to output and can start at the full rate.
Part one measures each layer's gradient norm at initialisation on one batch (no step taken), post-LN and
pre-LN. Part two trains all four: post/pre, each with and without warmup, the same seed, data and peak rate,
gradient clipping off by default (clipping is a second cure that would hide the first). The summary states
the two gaps (no warmup minus warmup, held-out loss) beside the unigram loss, the loss of a model that reads
no context, which is where a stuck post-LN run sits.

The defaults were measured on the built-in corpus (12 layers, d_model 32, peak lr 1e-2). Quick run (400 steps,
a 150-step warmup, batch 8 x 32 characters), seeds 0, 1, 2: post-LN without warmup stayed at the unigram loss
(3.06..3.12) while with warmup it reached 1.91..1.95 (gaps 1.14..1.17); pre-LN without warmup ended
0.11..0.26 above its warmup run. Full run (800 steps, warmup 300, batch 16 x 64), seed 0: post-LN 0.48 with
warmup and 3.12 without; pre-LN 0.55 and 0.90. Post-LN's failure is a threshold in the rate: at 5e-3..6e-3
it held on some seeds and not others, so the default sits well above it; a warmup needs enough steps to
help (at 1e-2 a 60-step warmup left post-LN stalled too, 150 steps did not). The embeddings are scaled by
sqrt(d_model), the 2017 paper's choice (section 3.4): with GPT-2's unscaled std-0.02 embeddings pre-LN also
sat at the unigram loss for a while without warmup (gaps 0.13..0.47 over seeds and rates), which blurred
the contrast.
"""

from __future__ import annotations

from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, at_least, check, heads_divide, span
from tui_lab.experiments.result import Result, Table
from tui_lab.experiments.training import LM_HELP, LM_OPTIONS, char_data, lm_config, lm_train_config, train_curve

POSITIONS = ("post", "pre")
STUCK = 0.1  # nats: a final loss this close to the unigram loss means the run learned to use no context


def init_grad_norms(config, data, batch_size: int, seq_len: int, seed: int) -> list[float]:
    """The gradient norm of each block's parameters at initialisation, for one training batch (block 0 first)."""
    import torch
    import torch.nn.functional as F

    from tui_lab.model import build_model
    from tui_lab.train.layer_groups import layer_groups

    torch.manual_seed(seed)
    model = build_model(config)
    x, y = data.batch("train", batch_size, seq_len, torch.Generator().manual_seed(seed))  # (N, L) each
    F.cross_entropy(model(x).transpose(1, 2), y).backward()  # logits (N, L, V) -> (N, V, L)
    groups = layer_groups(model)
    blocks = [name for name in groups if name.startswith("decoder.")]
    return [torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in groups[name]])).item()
            for name in blocks]


def unigram_loss(data) -> float:
    """Held-out loss (nats/token) of the train split's token frequencies (add-one smoothed): no context."""
    import torch

    counts = torch.bincount(data.train, minlength=data.tokenizer.vocab_size).double() + 1.0  # (V,)
    return -torch.log(counts / counts.sum())[data.val].mean().item()


def _model(options: dict[str, Any], position: str):
    return lm_config(options, norm_position=position, embedding_scale=options["embedding_scale"])


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    result = Result("post-ln-warmup", options)
    data = char_data()
    grads = result.plot("init_grads", f"gradient norm per layer at initialisation ({options['layers']} layers)",
                        "layer", "grad norm")
    norms = {}
    for position in POSITIONS:
        norms[position] = init_grad_norms(_model(options, position), data, options["batch_size"],
                                          options["seq_len"], options["seed"])
        grads.add(f"{position}-LN", range(len(norms[position])), norms[position])
    progress(0.05, "gradient norms at initialisation measured", result)
    finals = _train(result, options, data, span(progress, 0.05, 1.0), cancel)
    _summarise(result, norms, finals, options, unigram_loss(data))
    return result


def _runs(options: dict[str, Any]) -> list[tuple[str, str, str, int]]:
    """(label, scalar key, norm_position, warmup) of the four runs."""
    return [(f"{p}-LN, {'warmup ' + str(w) if w else 'no warmup'}", f"{p}_{'warmup' if w else 'no_warmup'}", p, w)
            for p in POSITIONS for w in (options["warmup"], 0)]


def _train(result: Result, options: dict[str, Any], data, progress: Progress, cancel: Cancel) -> dict[str, Any]:
    plot = result.plot("loss", f"training loss, peak lr {options['lr']}", "step", "train loss")
    runs, finals = _runs(options), {}
    for i, (label, key, position, warmup) in enumerate(runs):
        check(cancel, "post-ln-warmup")
        curve = train_curve(_model(options, position),
                            lm_train_config(options, warmup=warmup, grad_clip=options["grad_clip"]),
                            span(progress, i / len(runs), (i + 1) / len(runs)), cancel, label, data=data)
        plot.add(label, curve.steps, curve.losses)
        finals[label] = (key, curve.final_val, curve.error)
        progress((i + 1) / len(runs), f"{label} done", result)
    return finals


def _summarise(result: Result, norms: dict[str, list[float]], finals: dict[str, Any],
               options: dict[str, Any], unigram: float) -> None:
    table = result.tables.setdefault("runs", Table("final held-out loss", ["run", "val loss", "stopped by"]))
    errors = {}
    for label, (key, val, error) in finals.items():
        val = None if val is None else round(val, 4)  # None: a non-finite loss stopped the run
        table.rows.append([label, val, error or ""])
        result.scalars[f"val_{key}"], errors[key] = val, error
    s = result.scalars
    s["unigram_val_loss"] = round(unigram, 4)
    for position in POSITIONS:  # no warmup minus warmup: > 0 means the warmup helped
        with_, without = s[f"val_{position}_warmup"], s[f"val_{position}_no_warmup"]
        s[f"{position}_gap"] = None if None in (with_, without) else round(without - with_, 4)
    for position, ys in norms.items():  # the last block over the first: > 1 means the output end gets more
        s[f"{position}_grad_last_over_first"] = round(ys[-1] / ys[0], 3)
    # Short notes: the view gives them at most five lines above the figure at 80x24.
    result.notes[:0] = [
        _verdict(s, errors, "post", unigram) + "; " + _verdict(s, errors, "pre", unigram, short=True),
        f"grad norm at init, last block / first: post-LN {s['post_grad_last_over_first']}x, pre-LN "
        f"{s['pre_grad_last_over_first']}x",
        f"{options['steps']} steps, peak lr {options['lr']}, warmup {options['warmup']} or 0, clipping "
        f"{options['grad_clip'] or 'off'} (the paper: 4,000 of 100k steps)"]


def _verdict(s: dict[str, Any], errors: dict[str, str | None], position: str, unigram: float,
             short: bool = False) -> str:
    """What the no-warmup run of `position` did next to its warmup run, in words, from the numbers."""
    name, without, gap = f"{position}-LN without warmup", s[f"val_{position}_no_warmup"], s[f"{position}_gap"]
    if without is None:
        return f"{name} diverged ({errors[f'{position}_no_warmup']})"
    if gap is None:
        return f"{name} ended at {without:.2f}; its warmup run diverged"
    side = "worse" if gap >= 0 else "better"
    text = f"{name} {'' if short else 'ended '}{abs(gap):.2f} nats {side}{'' if short else ' than with warmup'}"
    if abs(without - unigram) < STUCK:
        text += f" (stuck at {without:.2f}, the unigram loss {unigram:.2f})"
    return text


def _check(options: dict[str, Any]) -> None:
    from tui_lab.config import AXES

    at_least(options, "layers", 1)
    at_least(options, "warmup", 1)
    at_least(options, "grad_clip", 0)
    if options["warmup"] >= options["steps"]:
        raise ValueError(f"warmup ({options['warmup']}) must be below steps ({options['steps']})")
    scales = AXES["embedding_scale"].values
    if options["embedding_scale"] not in scales:
        raise ValueError(f"embedding_scale ({options['embedding_scale']!r}) must be one of: {', '.join(scales)}")
    heads_divide(options)


EXPERIMENT = Experiment(
    name="post-ln-warmup",
    title="Post-LN needs a warmup",
    lesson="Seed 000, step 6: deep post-LN models need a long learning-rate warmup (4,000 steps in the paper); "
           "pre-LN does not.",
    options={**LM_OPTIONS, "layers": 12, "d_model": 32, "heads": 2, "steps": 800, "batch_size": 16, "seq_len": 64,
             "lr": 1e-2, "warmup": 300, "grad_clip": 0.0, "embedding_scale": "sqrt_d_model"},
    quick={"steps": 400, "warmup": 150, "batch_size": 8, "seq_len": 32},
    runner=run,
    help={**LM_HELP, "layers": "blocks in the deep toy", "lr": "peak learning rate (the same for all four runs)",
          "warmup": "warmup steps of the runs with a warmup (the others start at the peak)",
          "grad_clip": "gradient clipping (0: off, so only the warmup differs)",
          "embedding_scale": "token embeddings times sqrt(d_model) (the 2017 paper) or none (GPT-2)"},
    check_options=_check,
)
