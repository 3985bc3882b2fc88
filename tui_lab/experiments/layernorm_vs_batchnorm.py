"""layernorm-vs-batchnorm: normalising across the features of one token vs across the batch.

Seed 002: LayerNorm takes its mean and variance over the E features of one token, so a token is normalised
on its own; BatchNorm takes them over every token of the batch, feature by feature (the (N, L) plane), so a
token's output depends on the other sequences in the batch, and padding would count as data unless it is
left out (tui_lab/model/batchnorm.py leaves it out with the padding mask).
Part one draws which elements of a small (N, L, E) block each norm's statistics read for one output
element, found by autograd: an input element is marked where d out / d input is not zero. Part two trains
the same small character model on padded batches (each sequence cut to a random length, the rest padding,
the loss on real tokens only) with layernorm, batchnorm, and batchnorm that is not given the mask (padding
counted in its statistics; right padding under a causal mask is never attended to, so only the norm's
statistics differ).
"""

from __future__ import annotations

from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, at_least, check, heads_divide, span
from tui_lab.experiments.result import Grid, Result, Table
from tui_lab.experiments.training import LM_HELP, LM_OPTIONS, char_data, lm_config

# (label, norm, whether the padding mask is handed to the model)
RUNS = (("layernorm", "layernorm", True), ("batchnorm", "batchnorm", True),
        ("batchnorm, padding counted", "batchnorm", False))
PAD = 0  # the id padded positions hold; the loss and (when masked) the norms never read them


def reach(norm: str, lengths: tuple[int, ...], d_model: int, target: tuple[int, int, int]):
    """(N*L, E) 0/1 tensor: 1 where output element `target` (n, l, e) depends on that input element.

    The norm runs in training mode on a random (N, L, E) block padded to `lengths`, the padding mask
    handed to batchnorm; layernorm never needs it (it reads one token's features only)."""
    import torch

    from tui_lab.model.batchnorm import MaskedBatchNorm
    from tui_lab.model.masks import padding_mask

    keep = padding_mask(list(lengths))  # (N, L)
    x = torch.randn(*keep.shape, d_model, generator=torch.Generator().manual_seed(0), requires_grad=True)
    out = MaskedBatchNorm(d_model)(x, keep) if norm == "batchnorm" else torch.nn.LayerNorm(d_model)(x)
    (grad,) = torch.autograd.grad(out[target], x)
    return (grad.abs() > 1e-12).float().reshape(-1, d_model)  # (N*L, E)


def padded_batch(data, split: str, batch_size: int, seq_len: int, gen):
    """(x, y, keep), each (N, L): windows cut to random lengths seq_len/4..seq_len, right-padded."""
    import torch

    from tui_lab.model.masks import padding_mask

    x, y = data.batch(split, batch_size, seq_len, gen)
    keep = padding_mask(torch.randint(max(seq_len // 4, 1), seq_len + 1, (batch_size,), generator=gen), seq_len)
    return x.masked_fill(~keep, PAD), y, keep


def masked_loss(model, x, y, keep, give_mask: bool):
    import torch.nn.functional as F

    logits = model(x, tgt_mask=keep if give_mask else None)  # (N, L, V)
    return F.cross_entropy(logits[keep], y[keep])  # real tokens only


def train_padded(config, options: dict[str, Any], data, give_mask: bool, progress: Progress, cancel: Cancel,
                 label: str) -> dict[str, list[float]]:
    """AdamW on padded batches; the train loss every step and the held-out loss (eval mode) every quarter."""
    import torch

    from tui_lab.model import build_model

    torch.manual_seed(options["seed"])
    model = build_model(config)
    opt = torch.optim.AdamW(model.parameters(), lr=options["lr"], weight_decay=0.1)
    gen, steps = torch.Generator().manual_seed(options["seed"]), options["steps"]
    curve = {"steps": [], "losses": [], "val_steps": [], "val_losses": []}
    for step in range(1, steps + 1):
        check(cancel, label)
        model.train()
        loss = masked_loss(model, *padded_batch(data, "train", options["batch_size"], options["seq_len"], gen),
                           give_mask)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        curve["steps"].append(step), curve["losses"].append(loss.item())
        if step % max(steps // 4, 1) == 0 or step == steps:
            curve["val_steps"].append(step), curve["val_losses"].append(held_out(model, options, data, give_mask))
        progress(step / steps, f"{label} step {step}/{steps} loss {loss.item():.3f}")
    return curve


def held_out(model, options: dict[str, Any], data, give_mask: bool, batches: int = 4) -> float:
    """Mean eval-mode loss over fixed padded validation batches (batchnorm uses its running statistics)."""
    import torch

    model.eval()
    gen, total = torch.Generator().manual_seed(1234), 0.0
    with torch.no_grad():
        for _ in range(batches):
            total += masked_loss(model, *padded_batch(data, "val", options["batch_size"], options["seq_len"], gen),
                                 give_mask).item()
    return total / batches


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    result = Result("layernorm-vs-batchnorm", options)
    _draw_reach(result, options)
    progress(0.02, "which elements each norm averages over", result)
    data, finals = char_data(), {}
    train = result.plot("loss", f"training loss on padded batches (batch {options['batch_size']})", "step",
                        "train loss (real tokens)")
    val = result.plot("val", "held-out loss, eval mode", "step", "val loss (real tokens)")
    for i, (label, norm, give_mask) in enumerate(RUNS):
        config = lm_config(options, norm=norm, vocab=data.tokenizer.vocab_size,
                           max_len=max(options["seq_len"], 16))
        curve = train_padded(config, options, data, give_mask, span(progress, 0.02 + 0.98 * i / len(RUNS),
                             0.02 + 0.98 * (i + 1) / len(RUNS)), cancel, label)
        train.add(label, curve["steps"], curve["losses"])
        val.add(label, curve["val_steps"], curve["val_losses"])
        finals[label] = curve["val_losses"][-1]
        progress(0.02 + 0.98 * (i + 1) / len(RUNS), f"{label} done", result)
    _summarise(result, finals, options)
    return result


def _draw_reach(result: Result, options: dict[str, Any]) -> None:
    lengths, e = options["picture_lengths"], options["picture_features"]
    L, target = max(lengths), (0, 1, 2 % e)
    rows = [f"n{n} l{pos}" + ("" if pos < lengths[n] else " pad") for n in range(len(lengths)) for pos in range(L)]
    cols = [f"e{i}" for i in range(e)]
    for norm in ("layernorm", "batchnorm"):
        grid = reach(norm, lengths, e, target)
        result.grids[f"{norm}_reach"] = Grid(
            f"{norm}: the inputs output (n0, l1, e{target[2]}) depends on (1) in a padded (N, L, E) block",
            grid.tolist(), rows, cols, ("token (n, l)", "feature e"))
        result.scalars[f"{norm}_reads"] = int(grid.sum().item())


def _summarise(result: Result, finals: dict[str, float], options: dict[str, Any]) -> None:
    table = result.tables.setdefault("runs", Table("final held-out loss on padded batches", ["run", "val loss"]))
    for label, val in finals.items():
        table.rows.append([label, round(val, 4)])
    result.scalars |= {"val_layernorm": round(finals["layernorm"], 4), "val_batchnorm": round(finals["batchnorm"], 4),
                       "val_batchnorm_padding_counted": round(finals["batchnorm, padding counted"], 4)}
    lengths, e = options["picture_lengths"], options["picture_features"]
    # Short notes: the view gives them at most five lines above the figure at 80x24.
    result.notes[:0] = [
        f"layernorm reads {result.scalars['layernorm_reads']} inputs (one token's {e} features); batchnorm "
        f"{result.scalars['batchnorm_reads']} (one feature of the {sum(lengths)} real tokens)",
        f"padded batches, lengths {max(options['seq_len'] // 4, 1)}..{options['seq_len']}; loss on real tokens; "
        "batchnorm evaluated on running stats"]


def _check(options: dict[str, Any]) -> None:
    at_least(options, "batch_size", 2)  # a batch of one leaves batchnorm only one sequence to average over
    at_least(options, "picture_lengths", 1)
    at_least(options, "picture_features", 3)
    if max(options["picture_lengths"]) < 2:
        raise ValueError("picture_lengths must include a length of at least 2 (the picture's output is at l1)")
    heads_divide(options)


EXPERIMENT = Experiment(
    name="layernorm-vs-batchnorm",
    title="LayerNorm vs BatchNorm",
    lesson="Seed 002: normalising across the features of one token (LayerNorm) vs across the batch (BatchNorm).",
    options={**LM_OPTIONS, "steps": 300, "picture_lengths": (4, 2, 3), "picture_features": 6},
    quick={"steps": 100},
    runner=run,
    help={**LM_HELP, "lr": "learning rate (AdamW, constant)",
          "picture_lengths": "real lengths of the picture's sequences (the rest is padding)",
          "picture_features": "features E of the picture's block"},
    check_options=_check,
)
