"""The live model's FFN as one matrix (Architecture view, Layer tab): seed 002's Q&A made visible.

With activation 'none' each FFN is W' = W_down W_up, E x E with rank <= min(E, F) (tui_lab.model.ffn_rank);
with a nonlinearity there is no such matrix, and the note says so. The SVDs run in a thread worker: for
GPT-2 small they take seconds, which the UI must not wait for.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Static
from textual.worker import get_current_worker


class FFNRankNote(Static):
    DEFAULT_CSS = "FFNRankNote { height: auto; margin-top: 1; color: $text-muted; }"

    def show(self, live: Any) -> None:
        model = getattr(live, "model", None)
        if model is None:
            self.update("live model's FFN: no live model yet")
            return
        activation = model.config.activation
        if activation != "none":
            self.update(f"live model's FFN: {activation} between up and down, so it is not one matrix "
                        "(with activation=none it collapses to W' = W_down W_up, rank <= min(E, F))")
            return
        self.update("live model's FFN without activation: computing W' = W_down W_up ...")
        self.run_worker(lambda: self._ranks(model), thread=True, exclusive=True, group="ffn-rank")

    def _ranks(self, model: Any) -> None:
        from tui_lab.model.ffn_rank import ffn_ranks

        try:
            lines = [r.line() for r in ffn_ranks(model)]
            text = ("live model's FFN without activation is one linear map, W' = W_down W_up (+ b'):\n  "
                    + "\n  ".join(lines))
        except Exception as err:  # noqa: BLE001 - one line in the note, never a traceback
            from tui_lab.errors import one_line

            text = f"live model's FFN: {one_line(err)}"
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self.update, text)
