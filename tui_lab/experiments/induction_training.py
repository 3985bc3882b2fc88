"""induction-heads' training: one attention-only model at a time, scored on held-out sequences between steps.

A short loop of its own (AdamW, linear warmup, then a constant rate) rather than `training.train_curve`: the
Trainer reads a token stream, and the scores are taken between steps. The live plot is redrawn at each scoring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tui_lab.experiments.base import Cancel, Progress, check
from tui_lab.experiments.induction_data import Batch, batch, block_losses, head_scores
from tui_lab.experiments.result import Result

PHASE = 0.5  # the repeated block's loss under this fraction of the first block's: the phase change


def model_config(options: dict[str, Any], layers: int):
    from tui_lab.config import ModelConfig

    return ModelConfig(name=f"attn-only-{layers}l", family="decoder-only", decoder_layers=layers,
                       d_model=options["d_model"], heads=options["heads"], d_ff=4 * options["d_model"],
                       vocab=options["vocab"], max_len=options["window"], ffn="none", dropout=0.0,
                       positions=options["positions"], norm_position="pre", tie_embeddings=False)


def init_range(model, scale: float) -> None:
    """Every matrix drawn again from N(0, (scale / sqrt(d_model))^2): TransformerLens' init for its toy models
    (initializer_range 0.8 / sqrt(d_model), 0.1 at d_model 64). The lab's GPT-2 0.02 left attention uniform
    for longer: at 800 steps the repeated block's loss had fallen to 0.74 x the first's with it and to 0.95
    with 0.02 (two layers, seed 0, learned positions)."""
    import torch

    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, scale / model.config.d_model ** 0.5)


@dataclass
class Run:
    layers: int
    steps: list[int]
    first: list[float]
    repeat: list[float]
    induction: list[float]  # the best head's induction score at each evaluation
    previous: list[float]
    model: Any = None
    final_induction: Any = None  # (layers, H)
    final_previous: Any = None
    phase_step: int | None = None
    train_loss: float = 0.0


def evaluate(model, b: Batch):
    """(first loss, repeat loss, induction (layers, H), previous (layers, H)) on batch b."""
    import torch

    from tui_lab.mechanism.cache import layer_points, run_with_cache

    points = layer_points(model.config, "attn.hook_pattern")
    with torch.no_grad():
        logits, cache = run_with_cache(model, b.ids, names=points)
    first, repeat = block_losses(logits, b)
    induction, previous = head_scores(cache.stack(points), b)
    return first, repeat, induction, previous


def train(options: dict[str, Any], layers: int, progress: Progress, cancel: Cancel,
          result: Result | None = None) -> Run:
    """One attention-only model: AdamW at a constant rate after a short warmup, scored every eval_every steps."""
    import torch
    import torch.nn.functional as F

    from tui_lab.model import build_model

    torch.manual_seed(options["seed"])
    model = build_model(model_config(options, layers))
    init_range(model, options["init"])
    opt = torch.optim.AdamW(model.parameters(), lr=options["lr"], weight_decay=options["weight_decay"])
    warmup = options["warmup"]  # a fixed count (not a share of steps): a quick run is the full run cut short
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / warmup))
    data = torch.Generator().manual_seed(options["seed"])  # the same batches for both models
    held = batch(options["eval_batch"], options, torch.Generator().manual_seed(options["seed"] + 10_000))
    run = Run(layers, [], [], [], [], [])
    for step in range(options["steps"] + 1):
        if step % options["eval_every"] == 0 or step == options["steps"]:
            check(cancel, "induction-heads")
            model.eval()
            first, repeat, induction, previous = evaluate(model, held)
            model.train()
            run.steps.append(step)
            run.first.append(first)
            run.repeat.append(repeat)
            run.induction.append(float(induction.max()))
            run.previous.append(float(previous.max()))
            if run.phase_step is None and repeat < PHASE * first:
                run.phase_step = step
            run.final_induction, run.final_previous = induction, previous
            if result is not None:  # the live plot: this run's curves so far, the phase change once it is seen
                _plot(result, run)
            progress(step / options["steps"], f"{label(layers)} step {step}/{options['steps']}: repeated "
                                              f"{repeat:.2f} vs first {first:.2f}, induction {induction.max():.2f}",
                     result)
        if step == options["steps"]:
            break
        b = batch(options["batch_size"], options, data)
        logits = model(b.ids)
        loss = F.cross_entropy(logits[:, :-1].transpose(1, 2), b.ids[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        run.train_loss = loss.item()
    run.model = model.eval()
    return run


def label(layers: int) -> str:
    return f"{layers} layer{'s' if layers > 1 else ''}"


def _plot(result: Result, r: Run) -> None:
    """This run's curves (replacing what an earlier evaluation drew) and its phase change as a vertical line."""
    loss = result.plot("loss", "held-out loss: repeated block vs first block", "step", "loss (nats)")
    for plot in result.plots.values():
        plot.curves = [c for c in plot.curves if not c.label.startswith(label(r.layers))]
    loss.add(f"{label(r.layers)}, first block", r.steps, r.first)
    loss.add(f"{label(r.layers)}, repeated block", r.steps, r.repeat)
    score = result.plot("induction", "best head's induction score", "step", "induction score")
    score.add(label(r.layers), r.steps, r.induction)
    if r.phase_step is not None:  # the phase change, marked as a vertical line on both plots
        top = max(max(r.first), 1.0)
        loss.add(f"{label(r.layers)}: phase change (step {r.phase_step})", [r.phase_step] * 2, [0.0, top])
        score.add(f"{label(r.layers)}: phase change (step {r.phase_step})", [r.phase_step] * 2, [0.0, 1.0])
