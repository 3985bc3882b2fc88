"""The tour's eight pages (seed 000's explainer): words, a picture beside them, and the view `g` opens.

A step is data: a title, `text(pictures)` (every number read off the pictures or the presets, never
pasted), `visual(pictures)` (a widget from `visuals`), and `go(app)`, which opens the step's full view
without touching the live model (it may pick a grid kind the live model has), through the App's `show_view`
with an `Opening` (view_contract.py): the step never reaches into the view it opens. Text in English; the seed is
the source of the ideas.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from textual.widget import Widget

from tui_lab.analysis import count_params
from tui_lab.app.examples import (
    ENGLISH_SENTENCE,
    MASK_BATCH,
    NUMBER,
    PREVIOUS_TOKEN_HEAD,
    TOY_DE,
    TOY_EN,
    numbers_pair,
    previous_token_meta,
)
from tui_lab.app.view_contract import LabServices, Opening
from tui_lab.app.views.tour.pictures import Pictures, rnn_grids
from tui_lab.app.views.tour.visuals import DecodeSteps, GridPanel, NormDiagrams, counts_table, side_by_side
from tui_lab.presets import load_preset

BASE, SMALL = "transformer-2017-base", "gpt2-small"
# The papers' own round numbers (seed 000's table), shown beside our exact counts.
PAPER = {BASE: ("37k", "65M"), SMALL: ("50,257", "124M")}


@dataclass(frozen=True)
class Step:
    title: str
    text: Callable[[Pictures], str]
    visual: Callable[[Pictures], Widget]
    view: str  # the tab `g` opens
    go: Callable[[LabServices], None]


# -- opening the full views (never the live model) ------------------------------------------------
def _attention(app: LabServices, kind: str | None = None, cursor: tuple[str, str] | None = None) -> None:
    app.show_view("attention", Opening(kind=kind, cursor=cursor))  # the view checks the live model has that kind


def _architecture(app: LabServices, tab: str) -> None:
    app.show_view("architecture", Opening(tab=tab))


# -- the words of each page -----------------------------------------------------------------------
def _rnn_text(p: Pictures) -> str:
    n = len(ENGLISH_SENTENCE.split())
    return (f"Before 2017, translation used recurrent networks (RNNs): one token at a time, each step waiting for "
            f"the one before, so a GPU cannot run them in parallel. Here the first of {n} words reaches the last "
            f"after {n - 1} steps (left: word j reaches word i after i - j). Self-attention links every pair in "
            f"one matrix multiplication: 1 step (right).")


def _positions_text(p: Pictures) -> str:
    d = p.configs[TOY_DE].d_model
    fast, slow = 2 * math.pi, 2 * math.pi * 10000 ** ((d - 2) / d)
    learned = load_preset(SMALL).max_len
    return (f"Attention ignores order, so each token embedding (x √d_model = {math.sqrt(d):.1f}) gets a position "
            f"vector added: sine waves, no parameters, any length (GPT-2 learns {learned:,} rows instead). "
            f"PE(pos, 2i) = sin(pos / 10000^(2i/{d})): i = 0 repeats every {fast:.1f} positions, i = {d // 2 - 1} "
            f"every {slow:,.0f}. Shown: the sine columns of the numbers-de toy's table.")


def _self_text(p: Pictures) -> str:
    s, meta = p.prev_stats, previous_token_meta()
    return (f"Self-attention: each token weighs every earlier one (rows sum to 1; hatched: the future). The "
            f"English toy's layer {s['layer']} head {s['head']} {_previous_claim(meta)}: {meta['score']:.2f} "
            f"mean weight on the token before over held-out text, {meta['chance']:.3f} for a uniform head. Here "
            f"{s['hits']} of {s['queries']} rows put their top weight on the previous token (mean "
            f"{s['mean']:.2f}, uniform {s['chance']:.2f}).")


def _previous_claim(meta: dict) -> str:
    """"is its previous-token head" only when the measured score earns the name (examples.PREVIOUS_TOKEN_HEAD)."""
    if meta["score"] >= PREVIOUS_TOKEN_HEAD:
        return "is its previous-token head"
    return (f"leans on the previous token more than any other head, yet is no previous-token head (one puts "
            f"{PREVIOUS_TOKEN_HEAD:g} or more there)")


def _masks_text(p: Pictures) -> str:
    counts = " and ".join(f"{sum(map(sum, g.mask))} of {len(g.values) * len(g.values[0])}" for g in p.masks)
    lengths = "/".join(str(len(s)) for s in MASK_BATCH)
    return (f"Padding mask: a batch is padded to one length and no query reads a <PAD> key (left: seed 002's "
            f"{lengths} batch). Causal mask: decoder query i reads keys 0..i only, so training feeds the whole "
            f"target at once; the decoder applies both (right). A masked score becomes -inf before the softmax: "
            f"weight 0. Hatched cells: {counts}.")


def _cross_text(p: Pictures) -> str:
    g = p.cross
    source, target = numbers_pair()

    def top(word: str) -> str:
        row = g.values[g.rows.index(word)]
        col = max(range(len(row)), key=row.__getitem__)
        return f"'{word}' puts {row[col]:.2f} on '{g.cols[col]}'"

    units, tens = target.split()[2], target.split()[-1]
    return (f"Cross-attention: queries from the decoder, keys from the encoder: target x source, "
            f"{len(g.rows)} x {len(g.cols)}. The numbers-de toy translates the held-out {NUMBER}: '{source}' -> "
            f"'{target}'. German says units first, so {top(units)}, past '{source.split()[2]}', and "
            f"{top(tens)}: each German word reads the English word it translates, wherever that stands.")


def _norm_text(p: Pictures) -> str:
    return ("The 2017 model normalises after each residual add (post-LN): LayerNorm sits on the main path and deep "
            "stacks need a long warmup (4,000 steps in the paper). GPT-2 normalises the copy each sublayer reads "
            "(pre-LN): the main path only adds. LN(x + f(x)) -> x + f(LN(x)). Left: the numbers-de toy's "
            "encoder layer; right: the English toy's block.")


def table_rows() -> list[tuple[str, str, str]]:
    """Seed 000's table, every architecture number from the presets, our counts from count_params."""
    base, small = load_preset(BASE), load_preset(SMALL)
    return [
        ("", "2017 base", "GPT-2 small"),
        ("layers", f"{base.encoder_layers} + {base.decoder_layers}", f"{small.decoder_layers}"),
        ("d_model", f"{base.d_model}", f"{small.d_model}"),
        ("heads", f"{base.heads}", f"{small.heads}"),
        ("d_ff", f"{base.d_ff:,}", f"{small.d_ff:,}"),
        ("vocab (ours)", f"{base.vocab:,}", f"{small.vocab:,}"),
        ("vocab (paper)", PAPER[BASE][0], PAPER[SMALL][0]),
        ("params (paper)", PAPER[BASE][1], PAPER[SMALL][1]),
        ("params (ours)", f"{count_params(base).total:,}", f"{count_params(small).total:,}"),
    ]


def _table_text(p: Pictures) -> str:
    base, small = load_preset(BASE), load_preset(SMALL)
    nb, ns = count_params(base).total, count_params(small).total
    return (f"The papers' round numbers beside ours, counted exactly from the presets: {nb / 1e6:.1f}M for the base "
            f"(a {base.vocab:,}-token shared vocabulary, embeddings tied), {ns / 1e6:.1f}M for GPT-2 small (the "
            f"weights Hugging Face ships). GPT-2: one stack of {small.decoder_layers} blocks, wider "
            f"({small.d_model} vs {base.d_model}).")


def _kv_text(p: Pictures) -> str:
    c, last = p.configs[TOY_DE], p.decode[-1]
    return (f"Generating, each new token attends to all earlier ones. The KV cache keeps their keys and values: a "
            f"step computes K, V for 1 token and reads the rest (uncached, step {len(p.decode)} recomputes all "
            f"{last.cache}). A position costs 2 x {c.decoder_layers} layers x {c.heads} heads x {c.d_head} x 4 B = "
            f"{p.kv_bytes_per_token:,} B; cross-attention's K, V are computed once. g: Speed measures it.")


# -- the pictures ---------------------------------------------------------------------------------
def _rnn_visual(p: Pictures) -> Widget:
    return side_by_side(*(GridPanel(g) for g in rnn_grids(ENGLISH_SENTENCE.split())), stack=True)


def _norm_visual(p: Pictures) -> Widget:
    post = dataclasses.replace(p.configs[TOY_DE], family="encoder-only", decoder_layers=0)  # one layer, no cross
    return NormDiagrams(post, p.configs[TOY_EN])


STEPS: tuple[Step, ...] = (
    Step("Before: one step at a time", _rnn_text, _rnn_visual, "attention", lambda app: _attention(app)),
    Step("Tokens -> embeddings + positions", _positions_text, lambda p: GridPanel(p.positions), "attention",
         lambda app: _attention(app, "pos-sinusoidal")),
    Step("Self-attention as a grid", _self_text, lambda p: GridPanel(p.prev_head), "attention",
         lambda app: _attention(app, "decoder-self")),
    Step("The padding and causal masks", _masks_text, lambda p: side_by_side(*(GridPanel(g) for g in p.masks)),
         "attention", lambda app: _attention(app, "mask-both")),
    Step("Cross-attention", _cross_text, lambda p: GridPanel(p.cross), "attention",
         lambda app: _attention(app, "cross", ("zwei", "two"))),
    Step("Post-LN vs pre-LN", _norm_text, _norm_visual, "architecture", lambda app: _architecture(app, "arch-layer")),
    Step("2017 base vs GPT-2 small", _table_text, lambda p: counts_table(table_rows()), "architecture",
         lambda app: _architecture(app, "arch-compare")),
    Step("Decoding with the KV cache", _kv_text,
         lambda p: DecodeSteps(p.decode, p.decode_grid, p.kv_bytes_per_token), "speed",
         lambda app: app.show_view("speed")),
)
