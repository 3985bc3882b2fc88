"""Which grid the Attention view's pickers point at: values, labels on both axes, the mask, the scale.

Pure (no Textual, no torch). Rows of decoder grids in an encoder-decoder are labelled by the token being
predicted (teacher forcing: the query at decoder input i predicts target token i), with the decoder input
in the read-out, so cross-attention's alignment does not look shifted by one. Causal grids carry their
mask, so the masked cells are drawn masked rather than as weight 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rich.cells import cell_len

from tui_lab.analysis.attention_pattern import attended_pairs, pattern_name
from tui_lab.app import grids
from tui_lab.app.grids import GridSpec
from tui_lab.app.widgets.cut import cut
from tui_lab.mask_rule import may_attend

KIND_TITLES = {
    "encoder-self": "encoder self-attention (source x source)",
    "decoder-self": "decoder masked self-attention (target x target)",
    "cross": "cross-attention (target x source)",
    "copy": "copy: (1-p_gen) x last cross-attention (target x source)",
    "mask-causal": "mask: causal (1 = may attend)",
    "mask-padding": "mask: padding, seed 002's batch of 4, 3, 1 tokens",
    "mask-both": "mask: causal AND padding",
    "mask-local": "mask: sliding window / global tokens",
    "pos-sinusoidal": "positions: sinusoidal table (from the formula)",
    "pos-learned": "positions: learned table (live model)",
    "pos-t5": "positions: T5 bias added to the scores (live model, first layer's table, used by every layer)",
    "pos-relative": "positions: Shaw's relative key row |a^K(j-i)| (live model; constant past the clip)",
}
RELATIVE_KINDS = ("pos-t5", "pos-relative")
ATTENTION_KINDS = ("encoder-self", "decoder-self", "cross", "copy")
# A title line's name for a kind when the whole one does not fit: the kind picker just above names it in full.
SHORT_KINDS = {"encoder-self": "encoder self", "decoder-self": "decoder self", "cross": "cross-attention",
               "copy": "copy"}
ELLIPSIS = "…"
MASKS = ("mask-causal", "mask-padding", "mask-both", "mask-local", "pos-sinusoidal")
EXAMPLE_WINDOW, EXAMPLE_GLOBAL = 3, 1  # what mask-local draws for a model with full attention
POS_ROWS = 64
SINE_COLS = 64  # frequencies drawn at most: 2017 base's 256 as every 4th


@dataclass
class Capture:
    """What one capture brought back, plus the family it was taken from."""

    grids: dict[tuple[str, int], list] = field(default_factory=dict)
    entropy: dict[tuple[str, int], list[float]] = field(default_factory=dict)
    src: list[str] = field(default_factory=list)
    tgt: list[str] = field(default_factory=list)  # decoder inputs (bos first)
    predicted: list[str] = field(default_factory=list)  # the target token each decoder query predicts
    learned: list | None = None
    encoder_decoder: bool = False
    image: tuple[list[list[float]], str] | None = None  # a ViT's image (grey pixels) and its caption




@dataclass(frozen=True)
class Pattern:
    """The live model's self-attention pattern (config.attention_window, config.global_tokens)."""

    window: int = 0
    global_tokens: int = 0


def hatched_cells(n_rows: int, n_cols: int, pattern: Pattern = Pattern(), causal: bool = True) -> list[list[bool]]:
    """The cells a heatmap hatches (its `mask`, True = hidden): where the mask rule says query q may not
    attend key k."""
    return [[not may_attend(q, k, causal, pattern.window, pattern.global_tokens) for k in range(n_cols)]
            for q in range(n_rows)]


def local_spec(tokens: list[str], pattern: Pattern, causal: bool) -> GridSpec:
    """The model's window pattern over the typed tokens (an example one for full attention), with its pairs."""
    example = pattern.window == 0
    p = Pattern(EXAMPLE_WINDOW, EXAMPLE_GLOBAL) if example else pattern
    n = len(tokens)
    blocked = hatched_cells(n, n, p, causal)
    values = [[0.0 if cell else 1.0 for cell in row] for row in blocked]
    pairs, full = attended_pairs(n, causal, p.window, p.global_tokens), attended_pairs(n, causal)
    share = f"{pairs / full:.0%}" if full else "-"
    lead = "example (this model attends fully)" if example else "this model"
    # the counts first: at 80 columns the title's end is cut
    title = (f"mask: {pairs} of {full} pairs ({share}) vs full {'causal' if causal else 'bidirectional'} · "
             f"{lead}: {pattern_name(p.window, p.global_tokens)}")
    return GridSpec(title, values, tokens, tokens, blocked, 0.0, 1.0)


def fit_title(title: str, kind: str, width: int) -> str:
    """`title` within `width` cells: first the kind's short name, then cut with an ellipsis (never silently).

    A width of 0 (not laid out yet) keeps the whole title."""
    if width <= 0 or cell_len(title) <= width:
        return title
    if kind in SHORT_KINDS:
        title = title.replace(KIND_TITLES[kind], SHORT_KINDS[kind], 1)
    if cell_len(title) <= width:
        return title
    return cut(title, width)  # at a space: never "entropy 1.7…"


def grid_entropy(grid: list[list[float]]) -> float:
    """The mean over rows of each row's entropy, in nats: of the grid shown, so the mean of heads' title reads its
    own rows (issue 36 item 12: averaging the heads' entropies gave 0.09 for rows near 1.1). Mixing heads
    spreads the weight, so this is at least the heads' mean entropy."""
    rows = [-sum(p * math.log(p) for p in row if p > 0 and math.isfinite(p)) for row in grid]
    return sum(rows) / len(rows) if rows else 0.0


def mean_of_heads(heads: list) -> list[list[float]]:
    n = len(heads)
    return [[sum(h[q][k] for h in heads) / n for k in range(len(heads[0][0]))] for q in range(len(heads[0]))]


# The cross_attention axis (tui_lab/model/guided_cross.py): how its grid reads, after the kind's title.
CROSS_KINDS = {"location-aware": "location-aware (reads the last row)",
               "monotonic": "monotonic: hard, forward only, every head"}


def monotonic_notes(grid: list[list[float]], heads: int, head: int, cols: list[str]) -> list[str]:
    """Per row of a monotonic grid (eval: hard attention): where a head stopped, or that its context is zero."""
    if head >= 0:
        return [f"stops at {cols[row.index(1.0)]!r}" if 1.0 in row else "no stop: zero context" for row in grid]
    return [f"{round(sum(row) * heads)} of {heads} heads stop" for row in grid]


def attention_spec(cap: Capture, kind: str, layer: int, head: int, pattern: Pattern = Pattern(),
                   cross_kind: str = "softmax") -> GridSpec:
    heads = cap.grids.get((kind, layer))
    if heads is None:
        return GridSpec("no grid yet: press Run", [], [], [])
    grid, which = (mean_of_heads(heads), "mean of heads") if head < 0 else (heads[head], f"head {head}")
    decoder_rows = kind != "encoder-self" and cap.encoder_decoder
    rows = cap.predicted if decoder_rows else cap.src
    cols = cap.tgt if kind == "decoder-self" and cap.encoder_decoder else cap.src
    notes = [f"decoder input {t!r} predicts it" for t in cap.tgt] if decoder_rows else []
    if kind == "copy":  # a row's mass is what is copied; the rest, p_gen, is generated from the vocabulary
        notes = [f"p_gen {1 - sum(row):.2f}; {note}" for row, note in zip(grid, notes, strict=False)]
    if kind == "cross" and cross_kind == "monotonic":
        marks = monotonic_notes(grid, len(heads), head, cols)
        notes = [f"{mark}; {note}" for mark, note in zip(marks, notes, strict=False)]
    causal = kind == "decoder-self"
    local = kind in ("decoder-self", "encoder-self") and pattern.window > 0
    entropy = cap.entropy.get((kind, layer))  # per head; None where the weights are no distribution
    ent = "" if entropy is None else f" · entropy {entropy[head] if head >= 0 else grid_entropy(grid):.2f} nats"
    guided = f" · {CROSS_KINDS[cross_kind]}" if kind == "cross" and cross_kind in CROSS_KINDS else ""
    title = f"{KIND_TITLES[kind]}{guided} · layer {layer} · {which} · {len(grid)} x {len(grid[0])}{ent}"
    mask = hatched_cells(len(grid), len(grid[0]), pattern, causal) if causal or local else None
    return GridSpec(title, grid, rows, cols, mask, lo=0.0, row_notes=notes)


def sine_spec(d_model: int) -> GridSpec:
    """The sinusoidal table as the Tour draws it: the sine columns only (the cos columns are the same waves a
    quarter turn on), so column i is one frequency, fast on the left, slow on the right; every k-th i when
    there are more than SINE_COLS, so the whole range of frequencies fits one screen. Rows are positions."""
    table = grids.sinusoidal_grid(POS_ROWS, d_model)  # (L, E): sin at 2i, cos at 2i + 1
    half = (d_model + 1) // 2
    step = -(-half // SINE_COLS)  # ceil
    picked = list(range(0, half, step))
    values = [[row[2 * i] for i in picked] for row in table]
    every = f" (every {step}th)" if step > 1 else ""
    title = f"PE(pos, 2i) = sin(pos / 10000^(2i/{d_model})): rows position 0..{POS_ROWS - 1}, columns i{every}"
    return GridSpec(title, values, [str(p) for p in range(POS_ROWS)], [str(i) for i in picked],
                    lo=-1.0, hi=1.0, axes=("position", "i"))


def grid_spec(cap: Capture, kind: str, layer: int, head: int, typed: str, d_model: int,
              pattern: Pattern = Pattern(), causal: bool = True, cross_kind: str = "softmax") -> GridSpec:
    """The grid of `kind` (an attention kind, a mask or a position table) for the pickers' choice.

    `pattern` is the live model's window; `causal` whether its self-attention over the typed tokens is causal;
    `cross_kind` its cross_attention (the guided kinds name themselves in the title)."""
    tokens = (cap.tgt if cap.encoder_decoder else cap.src) or typed.split()
    if kind == "mask-local":
        return local_spec(tokens, pattern, causal)
    if kind == "mask-causal":
        n = len(tokens)
        return GridSpec(KIND_TITLES[kind], grids.causal_grid(n), tokens, tokens, hatched_cells(n, n), 0.0, 1.0)
    if kind in ("mask-padding", "mask-both"):
        rows, row_labels, cols = grids.stacked_batch(causal=kind == "mask-both")
        mask = [[v == 0.0 for v in row] for row in rows]  # NaN separators stay blank, not masked
        return GridSpec(KIND_TITLES[kind], rows, row_labels, cols, mask, 0.0, 1.0)
    if kind == "pos-sinusoidal":
        return sine_spec(d_model)
    if kind == "pos-learned":
        if cap.learned is None:
            return GridSpec("this model has no learned position table", [], [], [])
        return GridSpec(KIND_TITLES[kind], cap.learned, [str(p) for p in range(len(cap.learned))],
                        [str(i) for i in range(len(cap.learned[0]))], axes=("position", "dim"))
    if kind in RELATIVE_KINDS:
        return relative_spec(cap, kind, layer, head, tokens, causal)
    return attention_spec(cap, kind, layer, head, pattern, cross_kind)


def relative_spec(cap: Capture, kind: str, layer: int, head: int, tokens: list[str], causal: bool) -> GridSpec:
    """T5's bias or Shaw's table over the tokens' query x key positions; a causal stack's future keys hatched."""
    heads = cap.grids.get((kind, layer))
    if heads is None:
        return GridSpec("no grid yet: press Run", [], [], [])
    grid, which = (mean_of_heads(heads), "mean of heads") if head < 0 or head >= len(heads) else \
        (heads[head], f"head {head}")
    labels = tokens[: len(grid)] + [str(i) for i in range(len(tokens), len(grid))]
    title = f"{KIND_TITLES[kind]} · layer {layer} · {which} · {len(grid)} x {len(grid[0])}"
    mask = hatched_cells(len(grid), len(grid[0])) if causal else None
    return GridSpec(title, grid, labels, labels, mask, axes=("query position", "key position"))


def has_attention(family: str, kind: str) -> bool:
    """Whether a model of `family` computes grids of `kind` (the masks and the positions: every model)."""
    return {"cross": family == "encoder-decoder", "decoder-self": family != "encoder-only"}.get(kind, True)
