"""post-ln-warmup: a deep post-LN stack needs a learning-rate warmup; a pre-LN stack trains without one.

Seed 000, step 6: the 2017 Transformer (post-LN, LayerNorm(x + Sublayer(x))) is trained with a linear
warmup of 4,000 steps. Xiong et al. 2020 ("On Layer Normalization in the Transformer Architecture") show
why: at initialisation a post-LN stack's gradients are largest at the layers nearest the output and the
full learning rate at step 1 throws those layers off, while pre-LN (x + Sublayer(LayerNorm(x))) keeps
every layer's gradient about the same size, so it can start at the full rate.
Part one measures each layer's gradient norm at initialisation on one batch (no step taken), for a deep
toy (12 layers) post-LN and pre-LN. Part two trains all four: post/pre, each with and without warmup, the
same seed, data and peak rate, gradient clipping off by default (clipping is a second cure that would
hide the first).
"""

from __future__ import annotations

from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, at_least, check, heads_divide, span
from tui_lab.experiments.result import Result, Table
from tui_lab.experiments.training import LM_HELP, LM_OPTIONS, char_data, lm_config, lm_train_config, train_curve

POSITIONS = ("post", "pre")


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


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    result = Result("post-ln-warmup", options)
    data = char_data()
    grads = result.plot("init_grads", f"gradient norm per layer at initialisation ({options['layers']} layers)",
                        "layer", "grad norm")
    norms = {}
    for position in POSITIONS:
        norms[position] = init_grad_norms(lm_config(options, norm_position=position), data, options["batch_size"],
                                          options["seq_len"], options["seed"])
        grads.add(f"{position}-LN", range(len(norms[position])), norms[position])
    progress(0.05, "gradient norms at initialisation measured", result)
    finals = _train(result, options, data, span(progress, 0.05, 1.0), cancel)
    _summarise(result, norms, finals, options)
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
        curve = train_curve(lm_config(options, norm_position=position),
                            lm_train_config(options, warmup=warmup, grad_clip=options["grad_clip"]),
                            span(progress, i / len(runs), (i + 1) / len(runs)), cancel, label, data=data)
        plot.add(label, curve.steps, curve.losses)
        finals[label] = (key, curve.final_val, curve.error)
        progress((i + 1) / len(runs), f"{label} done", result)
    return finals


def _summarise(result: Result, norms: dict[str, list[float]], finals: dict[str, Any],
               options: dict[str, Any]) -> None:
    table = result.tables.setdefault("runs", Table("final held-out loss", ["run", "val loss", "stopped by"]))
    for label, (key, val, error) in finals.items():
        val = None if val is None else round(val, 4)  # None: a non-finite loss stopped the run
        table.rows.append([label, val, error or ""])
        result.scalars[f"val_{key}"] = val
    for position, ys in norms.items():  # the last block over the first: > 1 means the output end gets more
        result.scalars[f"{position}_grad_last_over_first"] = round(ys[-1] / ys[0], 3)
    # Short notes: the view gives them at most five lines above the figure at 80x24.
    result.notes[:0] = [
        f"grad norm at init, last block / first: post-LN {result.scalars['post_grad_last_over_first']}x, pre-LN "
        f"{result.scalars['pre_grad_last_over_first']}x",
        f"{options['steps']} steps, peak lr {options['lr']}, warmup {options['warmup']} or 0, clipping "
        f"{options['grad_clip'] or 'off'} (the paper: 4,000 of 100k steps)"]


def _check(options: dict[str, Any]) -> None:
    at_least(options, "layers", 1)
    at_least(options, "warmup", 1)
    at_least(options, "grad_clip", 0)
    if options["warmup"] >= options["steps"]:
        raise ValueError(f"warmup ({options['warmup']}) must be below steps ({options['steps']})")
    heads_divide(options)


EXPERIMENT = Experiment(
    name="post-ln-warmup",
    title="Post-LN needs a warmup",
    lesson="Seed 000, step 6: deep post-LN models need a long learning-rate warmup (4,000 steps in the paper); "
           "pre-LN does not.",
    options={**LM_OPTIONS, "layers": 12, "steps": 300, "lr": 3e-3, "warmup": 75, "grad_clip": 0.0},
    quick={"steps": 100, "warmup": 25, "batch_size": 8},
    runner=run,
    help={**LM_HELP, "layers": "blocks in the deep toy", "lr": "peak learning rate (the same for all four runs)",
          "warmup": "warmup steps of the runs with a warmup (the others start at the peak)",
          "grad_clip": "gradient clipping (0: off, so only the warmup differs)"},
    check_options=_check,
)
