"""The Train view's pictures say what they show, read from the rendered screen: a note above the loss plot
names what the train loss includes that the val loss does not (label smoothing with its computed floor,
dropout), the val curve is drawn under the train curve (never hiding it), and a sample labels and quotes
each part (a reference 'null' is the German word, not a missing value)."""

from __future__ import annotations

from app_support import app_for, screen_lines, screen_text, wait_for, wait_ready
from app_train_support import train_view

from tui_lab.app.views.train.loss_words import smoothing_floor
from tui_lab.train.events import SampleEvent

SIZE = (160, 48)
BRAILLE = range(0x2801, 0x2900)  # a braille cell with at least one dot


def _plot_rows(app) -> list[str]:
    """The loss plot's rows between its frame lines (the first plot on the Train view's right)."""
    lines = screen_lines(app)
    top = next(i for i, line in enumerate(lines) if "┌" in line)
    bottom = next(i for i in range(top + 1, len(lines)) if "└" in lines[i])
    start = lines[top].index("┌") + 1
    end = lines[top].index("┐", start)
    return [line[start:end] for line in lines[top + 1:bottom]]


async def test_the_losses_say_what_they_include_val_stays_under_train_and_a_sample_labels_its_parts():
    app = app_for("--preset", "transformer-2017-toy-numbers-de")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        view = await train_view(pilot, {"steps": "2", "batch_size": "8"})
        view.action_start()
        await wait_for(pilot, lambda: not view.training and view.store.current.val_loss, 120)
        config, smoothing = view.session.run_config, view.session.train_config.label_smoothing
        assert smoothing == 0.1 and config.dropout > 0
        floor = smoothing_floor(smoothing, config.vocab)
        await wait_for(pilot, lambda: "label smoothing" in screen_text(app))
        text = screen_text(app)
        assert f"train loss includes label smoothing 0.1 (floor {floor:.2f}), dropout {config.dropout:g}" in text
        assert "val loss: neither" in text
        # a val point on every tenth step, exactly on the train curve: the train curve stays whole
        run = view.store.current
        run.train_loss = [(s, 3.0 - s / 100) for s in range(1, 101)]
        run.val_loss = [(s, 3.0 - s / 100) for s in range(10, 101, 10)]
        view.monitor.draw_loss()
        await pilot.pause()
        assert "⢕⢕ val (held out)" in screen_text(app)
        rows = [row for row in _plot_rows(app) if "⢕⢕" not in row]  # the legend's rows left out
        columns = ["".join(row[c] for row in rows) for c in range(len(rows[0]))]
        drawn = [c for c, col in enumerate(columns) if any(ord(ch) in BRAILLE for ch in col)]
        gaps = [c for c in range(drawn[0], drawn[-1] + 1) if c not in drawn]
        assert not gaps and "•" not in "".join(rows)
        # a translation sample: each part on its own labelled row, quoted, with whether it matches
        view.replies.event(SampleEvent(100, "zwölf", "zero", "null"))
        view.monitor.redraw()
        await pilot.pause()
        text = screen_text(app)
        assert "source     'zero'" in text and "model      'zwölf'" in text
        assert "reference  'null'  (differs)" in text
