"""The whole model as text: ids -> embeddings + positions -> N x block -> final norm -> head -> logits.

Every arrow carries the tensor shape flowing along it, in seed 003's letters and in numbers for the chosen
batch and lengths: `(N, L, E) = (2, 16, 128)`. The numbers are read from `analysis.shape_trace` (the same rows
the Shapes tab lists), never computed here. For the 2017 encoder-decoder the encoder's output, the memory
(N, S, E), runs along a double line into every decoder layer's cross-attention: beside the decoder when the
panel is wide, down a rail on the right when it is narrow (80x24), where the view scrolls instead of cutting.
Dimension legend: N batch, L length (S source, T target), E d_model, F d_ff, H heads, V vocab; where the model has
them, K kv heads (grouped-query), k Linformer's projected keys, m Performer's features.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.events import Resize
from textual.widgets import Static

from tui_lab.analysis import shape_trace
from tui_lab.analysis.shapes import ShapeRow
from tui_lab.app.widgets.block_diagram import layer_diagram
from tui_lab.config import ModelConfig

GAP = 8  # columns between the encoder and the decoder when they stand side by side
NORM_NAMES = {"layernorm": ("LN", "LayerNorm"), "rmsnorm": ("RMS", "RMSNorm"), "batchnorm": ("BN", "BatchNorm")}


def shape_text(letters: str | Sequence[str], shape: tuple[int, ...], compact: bool = False) -> str:
    """"(N, L, E) = (2, 16, 128)": the letters say what each axis is, the numbers what it holds. Inside a box
    `compact` drops the spaces ("(N,H,L,L) = (2,4,16,16)") so a block stays within the 80x24 panel."""
    if len(letters) != len(shape):  # a trace that changed its rank must not be mislabelled
        raise ValueError(f"shape {shape} does not match the axes {letters}")
    sep = "," if compact else ", "
    return f"({sep.join(letters)}) = ({sep.join(str(n) for n in shape)})"


@dataclass
class Column:
    """Lines of one stack drawn top to bottom; `marks` names rows the memory line connects."""

    params: bool = False  # parameter counts in the box titles: only where the panel is wide enough
    lines: list[str] = field(default_factory=list)
    marks: dict[str, int] = field(default_factory=dict)

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def arrow(self, letters: str | Sequence[str], shape: tuple[int, ...]) -> None:
        self.add(f"  │ {shape_text(letters, shape)}", "  ▼")

    def box(self, title: str, body: list[str], mark: tuple[str, int] | None = None, params: int = 0,
            each: str = "") -> None:
        """A framed stage; `mark` (name, body line) records that line's screen row, "top" its top border."""
        if self.params and params:
            body = [*body, f"{params:,} params{each}"]
        self.marks["top"] = len(self.lines)
        inner = max([len(title) + 3, *(len(line) for line in body)])
        self.add(f"┌─ {title} " + "─" * (inner - len(title) - 1) + "┐")
        if mark is not None:
            self.marks[mark[0]] = len(self.lines) + mark[1]
        self.add(*(f"│ {line.ljust(inner)} │" for line in body))
        self.add("└" + "─" * (inner + 2) + "┘")

    @property
    def width(self) -> int:
        return max(len(line) for line in self.lines)


def _sublayer(c: ModelConfig, name: str, memory: bool) -> str:
    """The residual rule as a formula: pre-LN x + f(LN(x)) (GPT-2), post-LN LN(x + f(x)) (2017, 3.1)."""
    norm = NORM_NAMES[c.norm][0]
    mem = ", memory" if memory else ""
    return f"x + {name}({norm}(x){mem})" if c.norm_position == "pre" else f"{norm}(x + {name}(x{mem}))"


def _stack(c: ModelConfig, col: Column, rows: list[ShapeRow], stack: str, length: str, memory: str) -> None:
    """The N x block box: each sublayer's rule, with the shapes that exist only inside a block."""
    first = [r for r in rows if r.path.startswith(f"{stack}.0.")]
    blocks = [r for r in rows if r.kind == f"{stack} block"]
    body, cross_line = [], None
    for row in first:
        if row.kind.endswith("attention"):
            if row.kind == "cross-attention":
                cross_line = len(body)
            body.append(_sublayer(c, row.kind, row.kind == "cross-attention"))
            keys = memory if row.kind == "cross-attention" else length
            body.append(f"  {_scores(row, length, keys)}")
        elif row.path.endswith("ffn.router"):  # a mixture of experts: scores for X experts, then K of them
            body.append(_sublayer(c, "MoE FFN", False))
            body.append(f"  router {shape_text('N' + length + 'X', row.output_shape, True)}, {row.note}")
        elif row.path.endswith("ffn.up"):
            body.append(_sublayer(c, "FFN", False))
            body.append(f"  {shape_text('N' + length + 'F', row.output_shape, True)}, {row.note}")
    heads = f"{c.heads} heads" if c.heads != 1 else "1 head"
    mark = ("cross", cross_line) if cross_line is not None else None
    col.box(f"{stack} block x {len(blocks)}, {heads}", body, mark, blocks[0].params, " per block")
    col.marks["block"] = col.marks["top"]
    col.arrow("N" + length + "E", blocks[-1].output_shape)


# The trace's note on an attention row names what its weights are first, "scores (N, H, L, L) = (2, 4, 16, 16)"
# (cross-attention: "scores target x source = (...)"), and may go on: grouped-query's "K = 2 kv heads", Linformer's
# projections. The first "= (numbers)" is the weights' shape; its axes, when named, say what the last one is.
_WEIGHTS = re.compile(r"(?:\((?P<axes>[A-Za-z, ]+)\) )?= \((?P<numbers>\d+(?:, \d+)*)\)")


def _scores(row: ShapeRow, length: str, keys: str) -> str:
    """"scores (N,H,T,S) = (...)": the attention weights' shape, from the trace's note. Linformer's scores end in
    its k projected keys; Performer has no scores, its features (N, H, L, m) stand there. A note in another form
    is shown as it is."""
    found = _WEIGHTS.search(row.note)
    if found is None:
        return row.note
    shape = tuple(int(n) for n in found["numbers"].split(", "))
    axes = (found["axes"] or "").replace(", ", "")
    last = axes[-1] if axes and axes[-1] != "L" else keys
    label = "features" if row.note.startswith("features") else "scores"
    return f"{label} {shape_text('NH' + length + last, shape, True)}"


def _embedding(c: ModelConfig, col: Column, rows: list[ShapeRow], length: str, ids_name: str) -> None:
    tok = rows[0]
    if tok.path == "patch_embed":
        _patches(c, col, rows, length)
        return
    col.add(f"{ids_name} ids")
    col.arrow("N" + length, tok.input_shape)
    if tok.kind == "embedding (shared)":
        body = ["the same token embedding"]
    else:
        body = [f"token embedding {c.vocab:,} x {c.d_model}"]
    if tok.note.startswith("x sqrt"):
        body.append(f"  scaled by sqrt({c.d_model})")
    pos = next((r for r in rows if r.path == "pos_embed"), None)
    if c.positions in ("rope", "alibi"):
        body.append(f"positions: {c.positions}, in attention")
    else:
        body.append(f"+ {c.positions} positions")
        if pos is not None:
            body.append(f"  {shape_text(length + 'E', pos.output_shape, True)}")
    col.box("embeddings", body, params=sum(r.params for r in rows if r.path in ("tok_embed", "pos_embed")))
    col.arrow("N" + length + "E", tok.output_shape)


def _patches(c: ModelConfig, col: Column, rows: list[ShapeRow], length: str) -> None:
    """A ViT's input: the image cut into patches by a strided conv, the class token put first, positions added."""
    patch = rows[0]
    col.add("image")
    col.arrow(["N", "C", "h", "w"], patch.input_shape)
    p = c.patch_size
    body = [f"patch embedding {c.channels}x{p}x{p} -> {c.d_model}", f"  conv {p}x{p} stride {p}",
            "+ a class token, first"]
    pos = next((r for r in rows if r.path == "pos_embed"), None)
    if pos is not None:
        body += [f"+ {c.positions} positions", f"  {shape_text(length + 'E', pos.output_shape, True)}"]
    col.box("embeddings", body, params=sum(r.params for r in rows if r.path in ("patch_embed", "pos_embed")))
    col.arrow("N" + length + "E", patch.output_shape)


def _head(c: ModelConfig, col: Column, rows: list[ShapeRow], length: str) -> bool:
    """The output end: BERT's MLM transform before the vocabulary, an lm_head, or a classifier's label per
    sequence; False when the stack has none (an encoder whose output is the memory)."""
    by_path = {r.path: r for r in rows}
    if "head.dense" in by_path:
        dense, norm = by_path["head.dense"], by_path["head.norm"]
        col.box("MLM transform", [f"linear {c.d_model} -> {c.d_model}, {dense.note}", NORM_NAMES[c.norm][1]],
                params=dense.params + norm.params)
        col.arrow("N" + length + "E", norm.output_shape)
    if "head.out" in by_path:
        out = by_path["head.out"]
        col.box("classifier", [f"{out.note}: (N, E)", f"linear {c.d_model} -> {c.classes}"], params=out.params)
        col.arrow(["N", "classes"], out.output_shape)
        col.add("logits: a score per class")
        return True
    head = by_path.get("lm_head")
    if head is None:
        return False
    tied = "tied to the embedding" if c.tie_embeddings else f"{head.params:,} params"
    col.box("lm_head", [f"linear {c.d_model} -> {c.vocab:,}", tied], params=head.params)
    col.arrow("N" + length + "V", head.output_shape)
    col.add("logits: a score per vocabulary entry")
    return True


def _column(c: ModelConfig, rows: list[ShapeRow], stack: str, length: str, memory: str = "",
            params: bool = False) -> Column:
    """One stack from ids to its output (the memory, or the logits when the head follows it)."""
    col = Column(params)
    _embedding(c, col, rows, length, {"S": "source", "T": "target"}.get(length, "token"))
    _stack(c, col, rows, stack, length, memory)
    norm = next((r for r in rows if r.path == f"{stack}_norm"), None)
    if norm is not None:
        col.box("final norm", [NORM_NAMES[c.norm][1]], params=norm.params)
        col.arrow("N" + length + "E", norm.output_shape)
    if not _head(c, col, rows, length):
        col.marks["memory"] = len(col.lines)
        col.add("memory, read by every decoder block")
    return col


def _split(c: ModelConfig, rows: list[ShapeRow]) -> tuple[list[ShapeRow], list[ShapeRow]]:
    """Encoder rows (embeddings, stack, norm) and decoder rows (shared embedding, stack, norm, head)."""
    starts = [i for i, r in enumerate(rows) if r.path == "tok_embed"]
    return rows[:starts[1]], rows[starts[1]:]


def _stacked(enc: Column, dec: Column) -> list[str]:
    """Encoder above decoder; the memory runs down a rail right of both into the cross-attention line."""
    lines = enc.lines + [""] + dec.lines
    top, bottom = enc.marks["memory"], len(enc.lines) + 1 + dec.marks["cross"]
    rail = max(len(line) for line in lines[top:bottom + 1]) + 1
    for i in range(top, bottom + 1):
        line = lines[i]
        if i == top:
            lines[i] = line + " " + "═" * (rail - len(line) - 1) + "╗"
        elif i == bottom:
            lines[i] = line + "◄" + "═" * (rail - len(line) - 1) + "╝"
        else:
            lines[i] = line.ljust(rail) + "║"
    return lines


def _side_by_side(enc: Column, dec: Column) -> list[str]:
    """Encoder left, decoder right, shifted so the memory line runs straight into the cross-attention."""
    return _beside(enc.lines, enc.marks["memory"], dec.lines, dec.marks["cross"], "═")


def _beside(left: list[str], at: int, right: list[str], to: int, fill: str) -> list[str]:
    """`right` to the right of `left`, shifted so row `at` of left meets row `to` of right along a `fill` line."""
    shift = at - to
    left = [""] * max(0, -shift) + left
    right = [""] * max(0, shift) + right
    row, width = max(at, to), max(map(len, left)) + GAP
    out = []
    for i in range(max(len(left), len(right))):
        a = left[i] if i < len(left) else ""
        b = right[i] if i < len(right) else ""
        a = a + " " + fill * (width - len(a) - 2) + "►" if i == row else a.ljust(width)
        out.append((a + b).rstrip())
    return out


def _opened(c: ModelConfig, col: Column) -> list[str]:
    """A single stack with one of its blocks opened beside it (the Layer tab's drawing): the wide layout."""
    inside = layer_diagram(c).splitlines()
    return _beside(col.lines, col.marks["block"], [" " + line for line in inside], 2, "┈")  # 2: the block title


def model_diagram(c: ModelConfig, batch: int, length: int, source: int, width: int = 0) -> list[str]:
    """The diagram's lines; the encoder-decoder stands side by side when `width` has room for it."""
    rows = shape_trace(c, batch, length, source)
    if c.family != "encoder-decoder":
        stack = "decoder" if c.has_decoder else "encoder"
        cols = [_column(c, rows, stack, "L", params=p) for p in (True, False)]
        layouts = [_opened(c, cols[0])] + [col.lines for col in cols]
        # the trace's own length: an encoder reads the source length, a ViT its patches and class token
        return _legend(c, batch, {"L": rows[0].output_shape[1]}, width) + _first_fit(layouts, width)
    enc_rows, dec_rows = _split(c, rows)
    layouts = []
    for arrange in (_side_by_side, _stacked):  # the memory runs sideways when there is room, else down a rail
        for params in (True, False):
            enc = _column(c, enc_rows, "encoder", "S", params=params)
            layouts.append(arrange(enc, _column(c, dec_rows, "decoder", "T", memory="S", params=params)))
    return _legend(c, batch, {"S": source, "T": length}, width) + _first_fit(layouts, width)


def _first_fit(layouts: list[list[str]], width: int) -> list[str]:
    """The first layout (richest first) that fits `width`; the last one otherwise (the box scrolls)."""
    return next((lines for lines in layouts if max(map(len, lines)) <= width), layouts[-1])


def _legend(c: ModelConfig, batch: int, lengths: dict[str, int], width: int) -> list[str]:
    """What each letter stands for and holds, wrapped to the panel (at least the diagram's own width)."""
    names = {"L": "length", "S": "source", "T": "target"}
    parts = [f"N batch {batch}"] + [f"{k} {names[k]} {v}" for k, v in lengths.items()]
    parts += [f"E d_model {c.d_model}", f"H heads {c.heads}", f"F d_ff {c.d_ff}"]
    parts += [f"V vocab {c.vocab:,}"] if c.vocab else []  # an image model has patches, not a vocabulary
    if c.input == "patches":
        parts.append(f"C channels {c.channels} · h x w pixels {c.image_size} x {c.image_size}")
    if c.n_kv_heads != c.heads:
        parts.append(f"K kv heads {c.n_kv_heads}")
    if c.self_attention == "linformer" and "L" in lengths:  # (only an encoder-only model may have it)
        parts.append(f"k projected keys {min(c.linformer_rows, lengths['L'])}")
    if c.self_attention == "performer":
        parts.append(f"m features {c.n_features}")
    lines = [parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + 3 + len(part) <= max(width, 36):
            lines[-1] += " · " + part
        else:
            lines.append(part)
    return lines + [""]


def styled(lines: list[str]) -> Text:
    """Numbers of every shape in bold, the memory line in the accent colour: what the eye looks for first."""
    text = Text("\n".join(lines), no_wrap=True)
    text.highlight_regex(r"= \([0-9, ]+\)", "bold")
    text.highlight_regex(r"[═║╗╝►◄]+", "magenta")
    return text


class ModelDiagram(VerticalScroll):
    """The diagram in a scrolling box (both ways): at 80x24 it scrolls, never wraps or cuts a line."""

    DEFAULT_CSS = """
    ModelDiagram { overflow-x: auto; height: 1fr; }
    ModelDiagram > Static { width: auto; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._args: tuple[ModelConfig, int, int, int] | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="model-diagram-text")

    def show(self, config: ModelConfig, batch: int, length: int, source: int) -> None:
        self._args = (config, batch, length, source)
        self._draw()

    def on_resize(self, event: Resize) -> None:
        self._draw()  # wide enough now for the side-by-side layout, or no longer

    def _draw(self) -> None:
        if self._args is None or not self.is_mounted:
            return
        width = self.size.width - 2  # a vertical scrollbar may take its columns
        self.query_one("#model-diagram-text", Static).update(styled(model_diagram(*self._args, width=width)))
