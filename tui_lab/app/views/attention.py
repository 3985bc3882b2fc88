"""Attention: type a sentence (and a target), see every grid the live model computes, and the masks.

Without a tokenizer (a random preset) words are split on spaces and hashed to ids (`grids.hash_ids`):
the weights are random, so the grids show what an UNTRAINED model does. The capture
(`model.run(..., need_weights=True)`) runs in a thread worker; grids arrive as a message.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Label, Select, Static
from textual.worker import get_current_worker

from tui_lab.app import grids
from tui_lab.app.guard import guarded
from tui_lab.app.widgets.heatmap import Heatmap

KIND_TITLES = {
    "encoder-self": "encoder self-attention (source x source)",
    "decoder-self": "decoder masked self-attention (target x target)",
    "cross": "cross-attention (target x source)",
    "mask-causal": "mask: causal (1 = may attend)",
    "mask-padding": "mask: padding, seed 002's batch of 4, 3, 1 tokens",
    "mask-both": "mask: causal AND padding",
    "pos-sinusoidal": "positions: sinusoidal table (from the formula)",
    "pos-learned": "positions: learned table (live model)",
}
MASKS = ("mask-causal", "mask-padding", "mask-both", "pos-sinusoidal")
SOURCE_TEXT = "I have seen the film today"
TARGET_TEXT = "<bos> ich habe heute den Film gesehen"
GPT_TEXT = "the cat sat on the mat because it was tired"
POS_ROWS = 64


class Captured(Message):
    """Attention grids of one pass: {(kind, layer): [head][query][key]}, plus the labels."""

    def __init__(self, grids_by_kind: dict[tuple[str, int], list], src: list[str], tgt: list[str],
                 learned: list | None, generation: int) -> None:
        super().__init__()
        self.grids, self.src, self.tgt, self.learned, self.generation = grids_by_kind, src, tgt, learned, generation


class CaptureFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


def capture(model: Any, src_ids: list[int], tgt_ids: list[int] | None) -> tuple[dict, list | None]:
    """Run the model once with weights captured (worker thread). Returns grids and the learned table."""
    import torch

    device = next(model.parameters()).device
    src = torch.tensor([src_ids], device=device)  # (1, S)
    tgt = torch.tensor([tgt_ids], device=device) if tgt_ids is not None else None  # (1, T)
    with torch.no_grad():
        out = model.run(src, tgt, need_weights=True)
        result = {}
        for cap in out.attentions:
            w = cap.weights[0].float()  # (H, Lq, Lk)
            result[(cap.kind, cap.layer)] = w.cpu().tolist()
        table = getattr(model, "pos_embed", None)
        weight = getattr(table, "weight", None)
        learned = weight[:POS_ROWS].float().cpu().tolist() if weight is not None else None
    return result, learned


class AttentionView(Vertical):
    BINDINGS = [
        Binding("e", "export", "export JSON"),
        Binding("r", "run", "run"),
        Binding("k", "cycle_kind", "grid"),
        Binding("l", "cycle_layer", "layer"),
        Binding("h", "cycle_head", "head"),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.grids: dict[tuple[str, int], list] = {}
        self.src: list[str] = []
        self.tgt: list[str] = []
        self.learned: list | None = None
        self.pending_cursor: tuple[str, str] | None = None
        self.pending_kind: str | None = None
        self.captured_generation = -1
        self.last_export: Path | None = None
        self._choices: dict[str, list] = {}

    def compose(self) -> ComposeResult:
        with Horizontal(id="att-inputs"):
            yield Input(placeholder="sentence (source)", id="att-src", compact=True)
            yield Input(placeholder="target", id="att-tgt", compact=True)
            yield Button("Run", id="att-run", variant="primary", compact=True)
        with Horizontal(id="att-pickers"):
            yield Select([], id="att-kind", prompt="grid", allow_blank=True, compact=True)
            yield Select([], id="att-layer", prompt="layer", allow_blank=True, compact=True)
            yield Select([], id="att-head", prompt="head", allow_blank=True, compact=True)
        yield Label("", id="att-title")
        yield Heatmap(id="att-map")
        yield Static("", id="att-info")

    def on_mount(self) -> None:
        self._set_defaults()
        self._fill_kinds()
        self.live_model_changed()

    # -- the live model ----------------------------------------------------------------------------
    @property
    def encoder_decoder(self) -> bool:
        return self.app.live.config.family == "encoder-decoder"

    def _set_defaults(self) -> None:
        src, tgt = self.query_one("#att-src", Input), self.query_one("#att-tgt", Input)
        if self.encoder_decoder:
            src.value = src.value or SOURCE_TEXT
            tgt.value = tgt.value or TARGET_TEXT
        else:
            src.value = src.value or GPT_TEXT
        tgt.display = self.encoder_decoder

    def live_model_changed(self) -> None:
        """Rebuilt or loaded: redraw the inputs for the family and capture again."""
        self.query_one("#att-tgt", Input).display = self.encoder_decoder
        if self.encoder_decoder and not self.query_one("#att-tgt", Input).value:
            self.query_one("#att-tgt", Input).value = TARGET_TEXT
        self.grids = {}
        self._fill_kinds()
        self._fit_inputs_to_tokenizer()
        if self.app.live.ready:
            self.action_run()
        else:
            self._info(f"the live model is not ready yet ({self.app.live.status})")

    def _fit_inputs_to_tokenizer(self) -> None:
        """Words the new live tokenizer lacks would all read <unk>: use the model's own example instead."""
        live = self.app.live
        if live.tokenizer is None or not hasattr(live.tokenizer, "unknown"):
            return
        texts = [self.query_one("#att-src", Input).value]
        if self.encoder_decoder:
            texts.append(self.query_one("#att-tgt", Input).value.replace(grids.BOS_TEXT, ""))
        unknown = [word for text in texts for word in live.tokenizer.unknown(text)]
        if not unknown:
            return
        if live.example is not None:
            source, target = live.example
            self.query_one("#att-src", Input).value = source
            self.query_one("#att-tgt", Input).value = f"{grids.BOS_TEXT} {target}"
            self.app.notify(f"inputs set to a held-out example of the live model: {source!r}", title="attention")
        else:
            self.app.notify(f"the live tokenizer lacks {', '.join(map(repr, unknown[:5]))}: they read <unk>",
                            title="attention", severity="warning")

    # -- running -----------------------------------------------------------------------------------
    def set_inputs(self, source: str, target: str | None = None, kind: str | None = None,
                   cursor: tuple[str, str] | None = None) -> None:
        """For the tour: fill the inputs, then select `kind` and put the cursor on (query, key) tokens."""
        self.query_one("#att-src", Input).value = source
        if target is not None:
            self.query_one("#att-tgt", Input).value = target
        self.pending_kind, self.pending_cursor = kind, cursor
        if kind in MASKS or kind == "pos-learned":
            self._select_kind(kind)
        if self.app.live.ready:
            self.action_run()

    def _ids(self) -> tuple[list[int], list[str], list[int] | None, list[str]]:
        live = self.app.live
        src_ids, src = grids.tokenize(self.query_one("#att-src", Input).value, live.config.vocab, live.tokenizer)
        tgt_ids, tgt = None, []
        if self.encoder_decoder:
            tgt_ids, tgt = grids.tokenize(self.query_one("#att-tgt", Input).value, live.config.vocab,
                                          live.tokenizer, target=True)
        limit = min(grids.MAX_TOKENS, live.config.max_len if live.config.positions == "learned" else 10**9)
        if len(src_ids) > limit or (tgt_ids and len(tgt_ids) > limit):
            self.app.notify(f"input cut to {limit} tokens", severity="warning")
        src_ids, src = src_ids[:limit], src[:limit]
        if tgt_ids is not None:
            tgt_ids, tgt = tgt_ids[:limit], tgt[:limit]
            if not tgt_ids:
                raise ValueError("target is empty: type a target sentence for the encoder-decoder")
        if not src_ids:
            raise ValueError("sentence is empty: type a few words")
        return src_ids, src, tgt_ids, tgt

    @guarded
    def action_run(self) -> None:
        live = self.app.live
        if not live.ready:
            self._info(f"the live model is not ready yet ({live.status})")
            return
        src_ids, src, tgt_ids, tgt = self._ids()
        model, generation = live.model, live.generation
        self._info("capturing attention...")

        def work() -> None:
            try:
                result, learned = capture(model, src_ids, tgt_ids)
            except Exception as err:  # noqa: BLE001 - shown inline, never a crash
                self.post_message(CaptureFailed(str(err).splitlines()[0] if str(err) else type(err).__name__))
                return
            if not get_current_worker().is_cancelled:
                self.post_message(Captured(result, src, tgt, learned, generation))

        self.run_worker(work, thread=True, exclusive=True, group="attention", exit_on_error=False)

    def on_captured(self, message: Captured) -> None:
        first = not self.grids
        self.grids, self.src, self.tgt, self.learned = message.grids, message.src, message.tgt, message.learned
        self.captured_generation = message.generation
        self._fill_kinds()
        if first and not self.pending_kind:
            self._select_kind(self.kinds()[0])
        if self.pending_kind:
            self._select_kind(self.pending_kind)
            self.pending_kind = None
        self.redraw()
        if self.pending_cursor:
            self.point_at(*self.pending_cursor)
            self.pending_cursor = None

    def on_capture_failed(self, message: CaptureFailed) -> None:
        self._info(f"[red]capture failed:[/red] {message.error}")

    # -- selectors ---------------------------------------------------------------------------------
    def kinds(self) -> list[str]:
        present = sorted({kind for kind, _ in self.grids}, key=list(KIND_TITLES).index)
        extra = ["pos-learned"] if self.learned is not None else []
        return present + list(MASKS) + extra

    def _fill_kinds(self) -> None:
        kind = self.query_one("#att-kind", Select)
        current = kind.value
        options = self.kinds()
        kind.set_options([(KIND_TITLES[k], k) for k in options])
        self._choices["#att-kind"] = options
        kind.value = current if current in options else options[0]
        self._fill_layers()

    def _fill_layers(self) -> None:
        kind = self.query_one("#att-kind", Select).value
        layers = sorted(layer for k, layer in self.grids if k == kind)
        layer_sel, head_sel = self.query_one("#att-layer", Select), self.query_one("#att-head", Select)
        old_layer, old_head = layer_sel.value, head_sel.value
        layer_sel.set_options([(f"layer {i}", i) for i in layers])
        self._choices["#att-layer"] = layers
        if layers:
            layer_sel.value = old_layer if old_layer in layers else layers[0]
        heads = len(self.grids[(kind, layers[0])]) if layers else 0
        head_opts = [("mean of heads", -1)] + [(f"head {h}", h) for h in range(heads)]
        head_sel.set_options(head_opts if heads else [])
        self._choices["#att-head"] = [v for _, v in head_opts] if heads else []
        if heads:
            head_sel.value = old_head if old_head in [v for _, v in head_opts] else -1
        layer_sel.disabled = head_sel.disabled = not layers

    def _select_kind(self, kind: str) -> None:
        if kind in self.kinds():
            self.query_one("#att-kind", Select).value = kind
            self._fill_layers()

    @guarded
    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "att-kind":
            self._fill_layers()
        self.redraw()

    @guarded
    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_run()

    @guarded
    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "att-run":
            self.action_run()

    def _cycle(self, sid: str) -> None:
        select = self.query_one(sid, Select)
        values = self._choices.get(sid, [])
        if values:
            i = values.index(select.value) if select.value in values else -1
            select.value = values[(i + 1) % len(values)]

    def action_cycle_kind(self) -> None:
        self._cycle("#att-kind")

    def action_cycle_layer(self) -> None:
        self._cycle("#att-layer")

    def action_cycle_head(self) -> None:
        self._cycle("#att-head")

    # -- drawing -----------------------------------------------------------------------------------
    def current_grid(self) -> tuple[str, list[list[float]], list[str], list[str]]:
        """(title, values, row labels, column labels) of what the selectors point at."""
        kind = self.query_one("#att-kind", Select).value
        tokens = self.tgt if self.encoder_decoder else self.src
        if kind == "mask-causal":
            labels = tokens or self.query_one("#att-src", Input).value.split()
            return KIND_TITLES[kind], grids.causal_grid(len(labels)), labels, labels
        if kind in ("mask-padding", "mask-both"):
            rows, row_labels, cols = grids.stacked_batch(causal=kind == "mask-both")
            return KIND_TITLES[kind], rows, row_labels, cols
        if kind == "pos-sinusoidal":
            d = self.app.live.config.d_model
            return KIND_TITLES[kind], grids.sinusoidal_grid(POS_ROWS, d), [str(p) for p in range(POS_ROWS)], \
                [str(i) for i in range(d)]
        if kind == "pos-learned" and self.learned is not None:
            return KIND_TITLES[kind], self.learned, [str(p) for p in range(len(self.learned))], \
                [str(i) for i in range(len(self.learned[0]))]
        return self._attention_grid(str(kind))

    def _attention_grid(self, kind: str) -> tuple[str, list[list[float]], list[str], list[str]]:
        layer, head = self.query_one("#att-layer", Select).value, self.query_one("#att-head", Select).value
        heads = self.grids.get((kind, layer))
        if heads is None:
            return "no grid yet: press Run", [], [], []
        if head == -1 or head is Select.BLANK:
            grid = [[sum(h[q][k] for h in heads) / len(heads) for k in range(len(heads[0][0]))]
                    for q in range(len(heads[0]))]
            which = "mean of heads"
        else:
            grid, which = heads[int(head)], f"head {head}"
        rows = self.src if kind == "encoder-self" else (self.tgt if self.encoder_decoder else self.src)
        cols = self.tgt if kind == "decoder-self" and self.encoder_decoder else self.src
        title = f"{KIND_TITLES[kind]} · layer {layer} · {which} · {len(grid)} x {len(grid[0])}"
        return title, grid, rows, cols

    def redraw(self) -> None:
        title, values, rows, cols = self.current_grid()
        heatmap = self.query_one(Heatmap)
        kind = self.query_one("#att-kind", Select).value
        fixed = (0.0, 1.0) if str(kind).startswith("mask") else (None, None)
        heatmap.set_grid(values, rows, cols, lo=fixed[0], hi=fixed[1])
        untrained = "" if self.app.live.tokenizer is not None else "  (random weights: an untrained model's pattern)"
        is_attention = str(kind) in ("encoder-self", "decoder-self", "cross")
        self.query_one("#att-title", Label).update(title + (untrained if is_attention else ""))
        self._info(heatmap.describe_cursor())

    def point_at(self, query: str, key: str) -> None:
        """Move the heatmap cursor to the first cell whose row/column labels are `query`/`key`."""
        heatmap = self.query_one(Heatmap)
        if query in heatmap.row_labels and key in heatmap.col_labels:
            heatmap.move_cursor(heatmap.row_labels.index(query), heatmap.col_labels.index(key))

    def on_heatmap_cell_highlighted(self, event: Heatmap.CellHighlighted) -> None:
        self._info(event.heatmap.describe_cursor())

    def _info(self, text: str) -> None:
        self.query_one("#att-info", Static).update(text)

    def palette_commands(self) -> list[tuple[str, str, Any]]:
        heatmap = self.query_one(Heatmap)
        return [("Attention: run the capture", "r", self.action_run),
                ("Attention: export the grid", "e: JSON in the current folder", self.action_export),
                ("Attention: next grid kind", "k", self.action_cycle_kind),
                ("Attention: next layer", "l", self.action_cycle_layer),
                ("Attention: next head", "h", self.action_cycle_head),
                ("Attention: dense/full heatmap", "z", heatmap.action_toggle_density)]

    # -- export ------------------------------------------------------------------------------------
    @guarded
    def action_export(self) -> None:
        title, values, rows, cols = self.current_grid()
        if not values:
            raise ValueError("nothing to export yet: run a capture first")
        kind = self.query_one("#att-kind", Select).value
        path = Path.cwd() / f"tui-lab-{kind}-{time.strftime('%Y%m%d-%H%M%S')}.json"
        clean = [[v if v == v else None for v in row] for row in values]  # NaN -> null
        path.write_text(json.dumps({"title": title, "kind": kind, "rows": rows, "cols": cols, "values": clean}))
        self.app.notify(f"grid written to {path}", title="export")
        self.last_export = path
