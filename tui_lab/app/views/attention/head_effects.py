"""The every-head grid's effects: what each head does to the output, layers x heads like the model view.

`a`: mean ablation (each head's `hook_z` replaced by its mean over the sentence's positions, one pass per
head): the next-token loss on the sentence with the head taken away, minus the clean loss. Positive: the
model needs that head here. `d`: direct logit attribution at the last position: each head's write through
the final norm (its scale frozen) onto W_U[top] - W_U[second], the model's own top two next tokens; the heads'
shares plus the embeddings', the MLPs' and the biases' add up to the logit difference. Enter on a cell opens
that head's attention full size; Escape goes back to the grids.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.binding import Binding

from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.app.widgets.mechanism_panel import MechanismPanel, PanelMap

KINDS = {"ablation": "mean ablation: next-token loss change per head",
         "attribution": "direct logit attribution per head"}
KEYS = {"ablation": "a", "attribution": "d"}  # the view's key of each


def row_kind(label: str) -> tuple[str, int]:
    """A row of the head grid as (attention kind, layer): `L3`, `enc L0`, `dec L1 self`, `dec L1 cross`."""
    words = label.split()
    layer = int(next(w for w in words if w.startswith("L"))[1:])
    if words[0] == "enc":
        return "encoder-self", layer
    return ("cross" if words[-1] == "cross" else "decoder-self"), layer


class HeadMap(PanelMap):
    # m (every head) from here goes back to the grids as they were, rather than drawing them under the panel
    BINDINGS = [Binding("enter", "open", "open head", show=False), Binding("m", "leave", "the grids", show=False)]

    class Open(Heatmap.CellHighlighted):
        """Enter on a head: the view opens its attention grid."""

    def action_open(self) -> None:
        if self.values:
            r, c = self.cursor
            self.post_message(self.Open(self, r, c, self.values[r][c], self.row_labels[r], self.col_labels[c]))


def effects_refused(kind: str, config: Any) -> str | None:
    """None when `kind` (ablation or attribution) applies to a model of `config`, else the one line that says
    why not (the core's rule, `mechanism.cache.require_stream` / `require_causal`, read here without torch)."""
    causal = config.family == "decoder-only" and config.head == "lm"
    if causal or kind == "ablation" and config.family == "encoder-decoder" and not config.copy:
        return None
    if kind == "attribution" and config.family == "encoder-decoder":
        return ("d (direct logit attribution) covers decoder-only language models; for this encoder-decoder, "
                "a ablates each of its heads instead")
    return (f"{'a (ablation)' if kind == 'ablation' else 'd (direct logit attribution)'} covers decoder-only "
            f"language models{' and encoder-decoders' if kind == 'ablation' else ''} (this one is "
            f"{config.family}{', with copy' if config.copy else ''}, head {config.head})")


class HeadEffects(MechanismPanel):
    PREFIX = "heads"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.kind = "ablation"
        self.text: list[int] | None = []
        self.labels: list[str] = []
        self.src: list[int] | None = None  # an encoder-decoder's source (text is then its target, or None)
        self.row_names: list[str] = []

    def compose(self):
        for widget in super().compose():
            yield HeadMap(id="heads-map") if isinstance(widget, PanelMap) else widget

    @property
    def grid(self) -> HeadMap:
        return self.query_one("#heads-map", HeadMap)

    def measure(self, kind: str, ids: list[int] | None, labels: list[str], src: list[int] | None = None) -> None:
        """Run `kind` on the sentence `ids` (labelled `labels`) with the live model. An encoder-decoder: `ids` is
        the target the decoder reads with the source `src` (None: the model's own greedy translation)."""
        text = self.text
        self.kind, self.text, self.labels, self.src = kind, ids, labels, src
        if self.answered(KEYS[kind]):  # on the text drawn: shown, and said so
            self.text = text  # what the drawn run read (a translation model's own target, where none was typed)
            return
        self.run()

    def same_inputs(self, key: str) -> str:
        # r runs on the text a or d gave the pane: new text is the view's, measured with a or d
        return f"{key}: the {self.kind} shown is this text's already; edit the text (Tab), then {KEYS[self.kind]}"

    def inputs_key(self) -> Any:
        # the labels, not `text`: the run itself fills `text` in with a translation model's own target
        return self.app.live.generation, self.kind, tuple(self.labels), tuple(self.src or ())

    def run(self) -> None:
        self.show()
        model = self.live_model()  # None: the panel waits for the model and runs when it arrives
        if model is None:
            return
        ids, src, kind, tokenizer = self.text, self.src, self.kind, self.app.live.tokenizer

        def work(step) -> Any:
            from tui_lab.mechanism import readouts

            target = ids
            if target is None:  # a translation model with no typed target: its own translation of the source
                step.stage("translating the source (the decoder's input is its own translation)")
                target = readouts.greedy_target(model, tokenizer, src, "ablation")
            self.text = target
            if kind == "ablation":
                return readouts.ablation_of(model, target, "mean", step, src=src, on_stage=step.stage)
            return readouts.attribution_of(model, tokenizer, target, step)

        from tui_lab.mechanism.cache import head_points

        total = len(head_points(model.config)) * model.config.heads if kind == "ablation" else 1
        self.start(work, total, f"{KINDS[kind]}...")

    def draw(self, result: Any) -> None:
        values = result.values
        rows = getattr(result, "rows", None) or [f"L{layer}" for layer in range(len(values))]
        self.row_names = rows
        cols = [f"H{h}" for h in range(len(values[0]))]
        self.grid.set_grid(values, rows, cols, axes=("layer", "head"))
        if self.kind == "ablation":
            dla = "d attribution · " if effects_refused("attribution", self.app.live.config) is None else ""
            self.say(f"{KINDS['ablation']} (clean {result.clean:.3f} nats on {len(self.text or [])} tokens) · "
                     f"enter opens a head · {dla}esc back")
        else:
            share = sum(map(sum, values))
            self.say(f"{KINDS['attribution']}: logit({result.answer!r}) - logit({result.wrong!r}) = "
                     f"{result.total:.2f}, heads' direct part {share:.2f} · enter opens · a ablation · esc back")

    @on(Heatmap.CellHighlighted, "#heads-map")
    def _moved(self, event: Heatmap.CellHighlighted) -> None:
        if not isinstance(event, HeadMap.Open):
            self.describe(event.row, event.col)

    def describe(self, layer: int, head: int) -> None:
        if self.result is None:
            return
        v, row = self.result.values[layer][head], self.row_names[layer]
        if self.kind == "ablation":
            self.cell(f"head {row} H{head} ablated: loss {self.result.clean + v:.3f} ({v:+.3f} nats)")
        else:
            self.cell(f"head {row} H{head} writes {v:+.3f} onto logit({self.result.answer!r}) - "
                      f"logit({self.result.wrong!r})")
