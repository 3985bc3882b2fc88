"""length-extrapolation: which position schemes still work on sequences longer than the training ones.

Seed 001: RoPE and ALiBi carry over to sequences longer than in training; seed 003: learned positions get
worse past max_len, and RoPE's score depends only on the distance, score(3,1) == score(10,8).
The same small character model is trained at length L with learned, sinusoidal, RoPE and ALiBi positions,
and the two relative kinds (Shaw et al. 2018's clipped key/value tables, T5's bucket bias; issue 27), then
its held-out loss is measured at every position of windows `factor` x L long.

Learned positions past L: the table was built with max_len = L rows, so it has no row for position L or
later. Here those positions reuse the last row (position L - 1): every later token is told "I am at L - 1",
which is what clamping an index does and the gentlest thing a table can do. Its loss past L measures that
choice, not a trained row (there is none).

Sinusoidal positions come with the 2017 paper's sqrt(d_model) embedding scale (section 3.4, the config's
`embedding_scale` axis): the table is fixed at values up to 1 while the lab's token vectors start at std
0.02, so unscaled they are swamped and the run stays at the unigram loss. All six models have untied
input and output embeddings: tied, the scaled sinusoidal run sat on that plateau for about 70 steps
(measured at this size), a quick run's whole budget; untying changes nothing else between the six.

What it shows at this size: ALiBi stays within a few hundredths of a nat of its loss within L (quick and
full runs). Learned and sinusoidal rise clearly once trained (full run, seed 0: +1.1 and +1.5 nats), less
in the under-trained quick run. RoPE holds somewhat just past L (full run: +0.55 on L..2L against learned's
+1.16) and then rises to learned's level, as rotary did past its training length in Press et al. 2022
(figure 1); in the quick run it is no better than learned. The note gives each run's own numbers.
"""

from __future__ import annotations

from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, at_least, check, span
from tui_lab.experiments.result import Grid, Result, Table
from tui_lab.experiments.training import LM_HELP, LM_OPTIONS, char_data, lm_config, lm_train_config, train_curve

SCHEMES = ("learned", "sinusoidal", "rope", "alibi", "relative", "t5")
NAMES = {"learned": "learned", "sinusoidal": "sinusoidal", "rope": "RoPE", "alibi": "ALiBi",
         "relative": "relative (Shaw)", "t5": "T5 buckets"}
# Each scheme's model: the same toy, untied (see above), plus what its paper pairs with the scheme.
CHANGES: dict[str, dict[str, Any]] = {"sinusoidal": {"embedding_scale": "sqrt_d_model"}}


def rope_scores(d_head: int, length: int, seed: int):
    """(length, length) float64 tensor: score[m, n] = rope(q, m) . rope(k, n) for one random q and k."""
    import torch

    from tui_lab.model.positions import apply_rope, rope_angles

    gen = torch.Generator().manual_seed(seed)
    q, k = torch.randn(d_head, generator=gen, dtype=torch.float64), torch.randn(d_head, generator=gen,
                                                                                dtype=torch.float64)
    cos, sin = rope_angles(d_head, torch.arange(length))
    cos, sin = cos.double(), sin.double()  # the model's float32 angles; the products in float64
    qs = apply_rope(q.expand(length, d_head), cos, sin)  # (L, D): q at positions 0..L-1
    ks = apply_rope(k.expand(length, d_head), cos, sin)
    return qs @ ks.T  # (L, L)


class ClampedRows:
    """Learned positions' forward with every position past the table reusing its last row (see above)."""

    def __init__(self, table) -> None:
        self.table = table

    def __call__(self, start: int, length: int):
        import torch

        rows = torch.arange(start, start + length).clamp(max=self.table.max_len - 1)
        return self.table.weight[rows]  # (length, E)


def position_losses(model, data, length: int, batches: int, batch_size: int, seed: int) -> list[float]:
    """Mean held-out cross-entropy at each position 0..length-1 over `batches` x `batch_size` windows."""
    import torch
    import torch.nn.functional as F

    gen, total = torch.Generator().manual_seed(seed), torch.zeros(length)
    model.eval()
    with torch.no_grad():
        for _ in range(batches):
            x, y = data.batch("val", batch_size, length, gen)  # (N, L') each
            logits = model(x)  # (N, L', V)
            loss = F.cross_entropy(logits.transpose(1, 2), y, reduction="none")  # (N, L')
            total += loss.mean(0)
    return (total / batches).tolist()


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    result = Result("length-extrapolation", options)
    L, long = options["seq_len"], options["seq_len"] * options["factor"]
    data, losses = char_data(), {}
    train_plot = result.plot("train", f"training loss at length {L}", "step", "train loss")
    n = len(SCHEMES)
    for i, scheme in enumerate(SCHEMES):
        check(cancel, "length-extrapolation")
        config = lm_config(options, positions=scheme, max_len=L, tie_embeddings=False, **CHANGES.get(scheme, {}))
        curve = train_curve(config, lm_train_config(options), span(progress, i / n, (i + 0.9) / n), cancel,
                            scheme, data=data)
        train_plot.add(scheme, curve.steps, curve.losses)
        model = curve.model
        if scheme == "learned":
            model.pos_embed.forward = ClampedRows(model.pos_embed)  # instance attribute: this model only
        progress((i + 0.9) / n, f"{scheme}: loss per position out to {long}")
        losses[scheme] = position_losses(model, data, long, options["eval_batches"], options["batch_size"],
                                         options["seed"])
        _draw(result, losses, L, options["bin"])
        progress((i + 1) / n, f"{scheme} measured", result)
    _rope_grid(result, options)
    _summarise(result, losses, L, options["factor"])
    return result


def _draw(result: Result, losses: dict[str, list[float]], L: int, width: int) -> None:
    """Loss per position, averaged over bins of `width` positions (x: the bin's first position)."""
    plot = result.plot("position_loss", f"held-out loss per position (trained at length {L})", "position",
                       "loss")
    plot.curves.clear()
    for scheme, ys in losses.items():
        starts = list(range(0, len(ys), width))
        plot.add(scheme, starts, [sum(ys[s:s + width]) / len(ys[s:s + width]) for s in starts])


def _rope_grid(result: Result, options: dict[str, Any]) -> None:
    n = options["grid"]
    scores = rope_scores(options["d_model"] // options["heads"], n, options["seed"])
    labels = [str(i) for i in range(n)]
    result.grids["rope_scores"] = Grid("RoPE score q_m . k_n: constant along each diagonal (m - n)",
                                       [[round(v, 4) for v in row] for row in scores.tolist()], labels, labels,
                                       ("query position m", "key position n"))
    if n > 10:  # the seed's own example pair
        result.scalars["rope_score_3_1"] = round(scores[3, 1].item(), 6)
        result.scalars["rope_score_10_8"] = round(scores[10, 8].item(), 6)


def _summarise(result: Result, losses: dict[str, list[float]], L: int, factor: int) -> None:
    table = result.tables.setdefault("summary", Table(f"mean held-out loss, trained at length {L}", [
        "positions", f"0..{L - 1} (seen)", f"{L}..{factor * L - 1} (longer)", "longer - seen"]))
    gaps = {}
    for scheme, ys in losses.items():
        seen, longer = sum(ys[:L]) / L, sum(ys[L:]) / len(ys[L:])
        gaps[scheme] = longer - seen
        table.rows.append([scheme, round(seen, 4), round(longer, 4), round(gaps[scheme], 4)])
        result.scalars[f"{scheme}_seen"], result.scalars[f"{scheme}_longer"] = round(seen, 4), round(longer, 4)
        result.scalars[f"{scheme}_past_minus_seen"] = round(gaps[scheme], 4)
    # Short notes: the view gives them at most five lines above the figure at 80x24; the lesson first.
    result.notes[:0] = [
        gap_line(gaps, L),
        f"out to {factor * L}: learned positions past {L - 1} reuse row {L - 1} (the table has no more rows); "
        "sinusoidal has the 2017 sqrt(d_model) scale",
        "RoPE grid: constant diagonals = q_m . k_n depends on m - n only"]


def gap_line(gaps: dict[str, float], L: int) -> str:
    """The lesson in the run's own numbers: each scheme's loss past L minus its loss within L, and the order."""
    each = ", ".join(f"{NAMES[s]} {g:+.2f}" for s, g in gaps.items())
    order = ", ".join(NAMES[s] for s in sorted(gaps, key=gaps.get))
    return f"past length {L} (loss there minus within it, nats): {each}; best to worst: {order}"


def _check(options: dict[str, Any]) -> None:
    at_least(options, "factor", 2)
    at_least(options, "seq_len", 2)
    at_least(options, "bin", 1)
    at_least(options, "eval_batches", 1)
    at_least(options, "grid", 2)
    d_head, rem = divmod(options["d_model"], options["heads"])
    if rem:
        raise ValueError(f"d_model ({options['d_model']}) must be divisible by heads ({options['heads']})")
    if d_head % 2:
        raise ValueError(f"d_model / heads ({d_head}) must be even: RoPE rotates pairs of components")


EXPERIMENT = Experiment(
    name="length-extrapolation",
    title="Longer than in training",
    lesson="Seed 001: RoPE and ALiBi carry over to sequences longer than in training; seed 003: learned positions "
           "get worse past max_len, and RoPE's score depends only on the distance, score(3,1) == score(10,8).",
    options={**LM_OPTIONS, "seq_len": 32, "steps": 400, "factor": 4, "eval_batches": 8, "bin": 4, "grid": 16},
    quick={"steps": 120, "eval_batches": 4},
    runner=run,
    help={**LM_HELP, "seq_len": "training length L (learned positions get exactly L rows)",
          "factor": "measure out to factor x L", "eval_batches": "held-out batches averaged per position",
          "bin": "positions averaged into one point of the plot", "grid": "positions on each side of the RoPE grid"},
    check_options=_check,
)
