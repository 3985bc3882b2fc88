"""Which head does which known job: every head's previous-token, duplicate-token and induction score in a table
(`tui_lab.mechanism.head_detectors`, as `tui-lab heads` prints it), sortable by each score, Enter opening a head.

The scores are mean attention weights on 8 rows of random tokens repeated: on the previous token, on the same
token's earlier occurrence (duplicate) and on the token after it (induction). They read what a causal head can
see from a later position, so they apply to decoder-only language models; the view keeps its key off the footer
for the rest and says so in one line when it is pressed.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from tui_lab.analysis.head_scores import SCORES, TITLES
from tui_lab.app.background_job import JobDone
from tui_lab.app.widgets.marked_table import MarkedTable
from tui_lab.app.widgets.mechanism_panel import MechanismPanel, PanelMap
from tui_lab.app.widgets.table_fill import fill_table

ORDERS = ("layer", *SCORES)  # what `s` steps through: layer and head, then each score highest first


def applies(config: Any) -> str | None:
    """None when the detectors apply to a model of `config`, else the one line that says why not."""
    if config.family == "decoder-only" and config.head == "lm":
        return None
    return (f"head detectors need a decoder-only language model (this one is {config.family}, head {config.head}): "
            "the scores are attention to earlier tokens that only a causal head's later positions read")


def sorted_rows(rows: list[dict[str, Any]], order: str) -> list[dict[str, Any]]:
    """`head_scores(...).to_dict()["heads"]` in the table's order: by layer and head, or a score highest first."""
    if order == "layer":
        return list(rows)
    return sorted(rows, key=lambda r: -r[order])


class HeadTable(MarkedTable):
    """The heads, a row each: Enter opens the head, Escape hands the keys back (s, the panel's, sorts)."""

    BINDINGS = [Binding("escape", "leave", "back", show=False)]

    class Leave(Message):
        """Escape: the panel hands the keys back to the view."""

    def action_leave(self) -> None:
        self.post_message(self.Leave())


class HeadDetectors(MechanismPanel):
    PREFIX = "detect"
    # s is the panel's, not its table's: its title names it, and it sorts while the Run button has the focus too
    BINDINGS = [Binding("s", "sort_next", "sort", show=False)]
    # the scores read rows of random tokens (a fixed seed), not the typed text: only another model changes them
    SAME = "{key}: these scores are the model's, not the text's; a new model (1), then j"
    DEFAULT_CSS = """
    HeadDetectors HeadTable { height: 1fr; }
    """

    class Open(Message):
        """Enter on a head's row: the view opens its attention grid."""

        def __init__(self, layer: int, head: int) -> None:
            super().__init__()
            self.layer, self.head = layer, head

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.order = "layer"
        self.rows: list[dict[str, Any]] = []  # in the table's order

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            yield HeadTable(id="detect-table", cursor_type="row", zebra_stripes=True, fixed_columns=1) \
                if isinstance(widget, PanelMap) else widget

    @property
    def grid(self) -> HeadTable:  # type: ignore[override] - the panel's table stands where the others' grid does
        return self.query_one("#detect-table", HeadTable)

    def inputs_key(self) -> Any:
        return self.app.live.generation  # its rows of random tokens are drawn from a fixed seed

    def run(self) -> None:
        self.show()
        model = self.live_model()  # None: the panel waits for the model and runs when it arrives
        if model is None:
            return

        def work(step) -> Any:
            from tui_lab.mechanism.readouts import head_detectors_of

            return head_detectors_of(model, step)

        self.start(work, 8, "head detectors: one pass per row of random tokens repeated...")

    def job_finished(self, done: JobDone, label: Any) -> None:
        if done.cancelled or done.error:
            super().job_finished(done, label)
            return
        self.keep(done.result)
        self.draw(done.result)
        self.grid.focus()
        self.tell_if_unchanged()

    def drawn_now(self) -> tuple:
        return list(self.rows), self.summary

    def draw(self, result: Any) -> None:
        self.say(f"mean attention on {result.batch} rows of {result.seq_len} random tokens repeated · s sort · "
                 "click a column · ⏎ open the head · esc back")
        self._fill()

    def action_sort_next(self) -> None:
        self.sort_by(ORDERS[(ORDERS.index(self.order) + 1) % len(ORDERS)])

    @on(HeadTable.Leave)
    def _leave(self, event: HeadTable.Leave) -> None:
        event.stop()
        self.hide()

    def sort_by(self, order: str) -> None:
        if order != self.order:
            self.order = order
            self._fill(keep_head=False)  # a new order: the cursor on its top row, the head that leads it

    def _fill(self, keep_head: bool = True) -> None:
        if self.result is None:
            return
        table = self.grid
        # the cursor stays on its head through new scores (the live model changed): Enter on the row a person
        # stood on opened another head when the refill put the cursor back on the top row
        row = table.cursor_row
        at = (self.rows[row]["layer"], self.rows[row]["head"]) if keep_head and 0 <= row < len(self.rows) else None
        labels = [Text("head ▲" if self.order == "layer" else "head")]
        labels += [Text(TITLES[name] + (" ▼" if self.order == name else ""), justify="right") for name in SCORES]
        self.rows = sorted_rows(self.result.to_dict()["heads"], self.order)
        cells = [[f"L{r['layer']}H{r['head']}", *(Text(f"{r[n]:.3f}", justify="right") for n in SCORES)]
                 for r in self.rows]
        # widths given with the columns: a frame before the table measured its rows cut none (table_fill)
        fill_table(table, labels, cells, keys=["layer", *SCORES])
        keep = next((i for i, r in enumerate(self.rows) if (r["layer"], r["head"]) == at), 0)
        table.move_cursor(row=keep)
        self.describe(keep, 0)

    @on(DataTable.HeaderSelected, "#detect-table")
    def _header(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.sort_by(str(event.column_key.value))

    @on(DataTable.RowHighlighted, "#detect-table")
    def _moved(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.describe(event.cursor_row, 0)

    @on(DataTable.RowSelected, "#detect-table")
    def _open(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self.rows):
            r = self.rows[event.cursor_row]
            self.post_message(self.Open(r["layer"], r["head"]))

    def describe(self, row: int, col: int) -> None:
        if not 0 <= row < len(self.rows):
            return
        r = self.rows[row]
        self.cell(f"L{r['layer']}H{r['head']} puts {r['previous']:.2f} of its attention on the previous token, "
                  f"{r['duplicate']:.2f} on the token's earlier occurrence, {r['induction']:.2f} on the one after it")
