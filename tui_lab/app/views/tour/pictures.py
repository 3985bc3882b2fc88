"""Everything the tour draws, computed once on a worker thread from the two shipped trained toys.

No Textual here (plain data out): the view runs `compute()` in a thread worker and keeps the result.
The tour holds its own copies of the toys (`Pictures.toys`), so the person's live model is never touched.
Every number a page states is read off these grids. Dimension legend: H heads, T target, S source, L length.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tui_lab.app.examples import (
    ENGLISH_SENTENCE,
    MASK_BATCH,
    SINE_ROWS,
    TOY_DE,
    TOY_EN,
    numbers_pair,
    previous_token_meta,
    previous_token_name,
)
from tui_lab.app.grids import GridSpec


@dataclass(frozen=True)
class DecodeRow:
    fed: str  # the token fed at this step
    new: str  # the token chosen
    cache: int  # positions whose K and V the cache holds after the step
    prob: float  # the model's probability of `new`


@dataclass
class Pictures:
    toys: dict[str, Any]  # preset name -> tui_lab.loading.LoadedModel, held by the tour alone
    positions: GridSpec
    prev_head: GridSpec
    prev_stats: dict[str, float]  # rows whose top weight is the previous token, mean weight on it, chance
    masks: list[GridSpec]
    cross: GridSpec
    decode: list[DecodeRow]
    decode_grid: GridSpec
    kv_bytes_per_token: int
    configs: dict[str, Any] = field(default_factory=dict)


def _rows(t) -> list[list[float]]:
    return [[float(v) for v in row] for row in t.tolist()]


def _masked(allowed) -> list[list[bool]]:
    """The heatmap's mask (True = may not attend) from the project's convention (True = may attend)."""
    return [[not v for v in row] for row in allowed.tolist()]


def rnn_grids(words: list[str]) -> tuple[GridSpec, GridSpec]:
    """Sequential steps for word j to reach word i: a left-to-right RNN needs i - j (and never sees a later
    word); self-attention needs 1 for every pair. Pure arithmetic, drawn on one scale."""
    n = len(words)
    rnn = [[float(q - k) if k <= q else float("nan") for k in range(n)] for q in range(n)]
    mask = [[k > q for k in range(n)] for q in range(n)]
    attention = [[1.0] * n for _ in range(n)]
    top = float(n - 1)
    return (GridSpec(f"RNN: {n - 1} steps, one after another", rnn, words, words, mask=mask, lo=0.0, hi=top,
                 axes=("word", "from word"), cursor=(n - 1, 0)),
            GridSpec("attention: 1 step, all pairs at once", attention, words, words, lo=0.0, hi=top,
                 axes=("word", "from word"), cursor=(n - 1, 0)))


def _positions(d_model: int) -> GridSpec:
    from tui_lab.model.positions import sinusoidal_table

    table = sinusoidal_table(SINE_ROWS, d_model)  # (L, E)
    sines = table[:, 0::2]  # PE(pos, 2i): one column per frequency; the cos columns are the same waves shifted
    cols = [str(i) for i in range(sines.shape[1])]
    return GridSpec(f"PE(pos, 2i), i = 0..{sines.shape[1] - 1}, d_model {d_model}", _rows(sines),
                [str(p) for p in range(SINE_ROWS)], cols, lo=-1.0, hi=1.0, axes=("position", "i"))


def _prev_head(loaded) -> tuple[GridSpec, dict[str, float]]:
    import torch

    from tui_lab.toy_checks.patterns import chance_previous_weight

    layer, head = previous_token_meta()["layer"], previous_token_meta()["head"]
    ids = loaded.codec.encode(ENGLISH_SENTENCE)
    labels = list(loaded.codec.token_strings(ids))
    with torch.inference_mode():
        caps = loaded.model.run(torch.tensor([ids]), need_weights=True).attentions
    w = next(c.weights[0, head] for c in caps if c.kind == "decoder-self" and c.layer == layer)  # (L, L)
    n = len(ids)
    hits = sum(int(w[i].argmax()) == i - 1 for i in range(1, n))
    prev = torch.diagonal(w, offset=-1)  # (L - 1,) weight of query i on key i-1
    best = int(prev.argmax()) + 1
    mask = [[k > q for k in range(n)] for q in range(n)]
    stats = {"hits": hits, "queries": n - 1, "mean": float(prev.mean()), "chance": chance_previous_weight(n),
             "layer": layer, "head": head}
    name = previous_token_name(previous_token_meta())
    grid = GridSpec(f"gpt2-toy-english · layer {layer} head {head} ({name})", _rows(w), labels, labels,
                mask=mask, lo=0.0, cursor=(best, best - 1))
    return grid, stats


def _masks() -> list[GridSpec]:
    from tui_lab.model.masks import causal_mask, combine, padding_mask

    lengths = [len(s) for s in MASK_BATCH]
    keep = padding_mask(lengths)  # (N, L) True on real tokens
    pad = GridSpec("padding: the batch of 4/3/1", _rows(keep.float()), [f"len {n}" for n in lengths],
               [f"k{i}" for i in range(keep.shape[1])], mask=_masked(keep), lo=0.0, hi=1.0, axes=("sentence", "key"))
    second = list(MASK_BATCH[1]) + ["<PAD>"] * (keep.shape[1] - len(MASK_BATCH[1]))
    both = combine(causal_mask(keep.shape[1]), keep[1][None, :])  # (L, L): causal AND key not padding
    return [pad, GridSpec("causal AND padding: sentence 2", _rows(both.float()), second, second, mask=_masked(both),
                      lo=0.0, hi=1.0)]


def _cross(loaded) -> GridSpec:
    import torch

    source, target = numbers_pair()
    tok = loaded.codec
    src_ids, tgt_ids = tok.encode(source), [tok.bos_id] + tok.encode(target)
    with torch.inference_mode():
        caps = loaded.model.run(torch.tensor([src_ids]), torch.tensor([tgt_ids]), need_weights=True).attentions
    cross = [c for c in caps if c.kind == "cross"]
    last = cross[-1]
    w = last.weights[0].mean(0)  # (T, S): the last decoder layer, averaged over its heads
    predicted = [*tok.token_strings(tgt_ids[1:]), tok.token_strings([tok.eos_id])[0]]  # what each query writes
    fed = tok.token_strings(tgt_ids)
    src = list(tok.token_strings(src_ids))
    row = predicted.index("zwei")
    return GridSpec(f"cross-attention · layer {last.layer} · mean of {last.weights.shape[1]} heads"
                f" · {len(predicted)} x {len(src)}", _rows(w), predicted, src, lo=0.0, axes=("target", "source"),
                row_notes=[f"decoder input {t!r}" for t in fed], cursor=(row, int(w[row].argmax())))


def _decode(loaded) -> tuple[list[DecodeRow], GridSpec]:
    """Greedy decoding of the held-out number with the KV cache, reading the cache's length after each step."""
    import torch

    from tui_lab.generation.loop import Generation, Sampler

    tok = loaded.codec
    source, _ = numbers_pair()
    src = torch.tensor([tok.encode(source)])  # (1, S)
    rows, weights = [], []
    with torch.inference_mode():
        run = Generation(loaded.model, src, 12, Sampler(temperature=0.0), use_cache=True, eos_id=tok.eos_id,
                         bos_id=tok.bos_id)
        for step in run.steps(need_attention=True):
            fed = tok.token_strings([int(run.sequence[0, -2])])[0]
            new = tok.token_strings([int(step.ids[0])])[0]
            rows.append(DecodeRow(fed, new, run.state.cache.length, float(step.probs[0])))
            self_rows = [c for c in step.attentions if c.kind == "decoder-self"]
            weights.append(self_rows[-1].weights[0, :, 0].mean(0).tolist())  # (context,) mean over heads
    width = len(rows)
    values = [w + [float("nan")] * (width - len(w)) for w in weights]  # keys not yet written: blank
    grid = GridSpec("self-attention over the cache", values, [r.new for r in rows],
                [r.fed for r in rows], lo=0.0, axes=("new token", "cached key"),
                row_notes=[f"cache {r.cache}" for r in rows])
    return rows, grid


def compute() -> Pictures:
    """Load both shipped toys (their own copies) and compute every picture (worker thread: imports torch)."""
    from tui_lab.analysis import memory
    from tui_lab.loading import load_model

    toys = {name: load_model("preset", name) for name in (TOY_DE, TOY_EN)}
    de, en = toys[TOY_DE], toys[TOY_EN]
    prev, stats = _prev_head(en)
    rows, grid = _decode(de)
    return Pictures(toys=toys, positions=_positions(de.config.d_model), prev_head=prev, prev_stats=stats,
                    masks=_masks(), cross=_cross(de), decode=rows, decode_grid=grid,
                    kv_bytes_per_token=memory(de.config).kv_cache_per_token,
                    configs={TOY_DE: de.config, TOY_EN: en.config})

