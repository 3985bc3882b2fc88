"""The newcomer's walk, in one app session at 80x24: the 2017 toy and its count, GPT-2 small's 124,439,808,
an invalid edit and back, attention, a few training steps, save, load, generate, speed. Every screen's key
number is read from the RENDERED screen (what a person sees), and no notification is an error."""

from __future__ import annotations

from app_support import app_for, screen_lines, screen_text, wait_for, wait_ready
from app_train_support import start_paused, steps, train_view
from textual.widgets import Input

from tui_lab.analysis import count_params
from tui_lab.presets import load_preset


def seen(app) -> str:
    return " ".join(screen_text(app).split())  # one line: wrapped text reads whole


async def shows(pilot, *texts: str) -> None:
    """Until every text is on the screen (a redraw can lag a frame behind under load)."""
    await wait_for(pilot, lambda: all(t in seen(pilot.app) for t in texts), 60)


def errors(app) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications if n.severity == "error"]


async def test_newcomer_walk_at_80x24(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        toy = f"{count_params(load_preset('transformer-2017-toy')).total:,}"
        await shows(pilot, f"{toy} parameters")
        arch = app.view("architecture")
        arch.load_preset("gpt2-small")  # arithmetic only: nothing is built
        await shows(pilot, "124,439,808 parameters")
        app.query_one("#f-heads", Input).focus()
        await pilot.press("end", "backspace", "backspace", "5")
        await shows(pilot, "stale: form invalid")
        form_column = " ".join(" ".join(line[:35].split()) for line in screen_lines(app))  # the form, rows joined
        assert "d_model (768) must be divisible by heads (5)" in form_column
        await pilot.press("backspace", "1", "2", "escape")
        await shows(pilot, "124,439,808 parameters")
        assert "stale" not in seen(app)
        arch.load_preset("transformer-2017-toy")  # back to the live model's own config
        await pilot.pause()

        await pilot.press("f2")
        attention = app.view("attention")
        await wait_for(pilot, lambda: bool(attention.grids), 60)
        title = str(app.query_one("#att-title").render()).strip()
        assert title
        await shows(pilot, title[:30])

        await pilot.press("f4")
        await wait_for(pilot, lambda: app.query_one("#tf-data").value == "numbers-de")
        train = await train_view(pilot, batch_size="8")  # TINY's 40 steps
        await start_paused(pilot, train)
        await steps(pilot, train, 3)
        await shows(pilot, "step 3/40")
        await pilot.press("x")
        await wait_for(pilot, lambda: app.live.origin.startswith("trained run #1") and not app.live.building, 60)
        await pilot.press("w")
        where = str((tmp_path / "runs" / "run-1").resolve())
        await wait_for(pilot, lambda: "saved to" in train.message, 60)
        assert where in train.message
        await shows(pilot, "saved to", "run-1")  # the status line, where a long path may wrap
        generation = app.live.generation
        await pilot.press("o")
        await wait_for(pilot, lambda: app.live.generation > generation and not app.live.building, 60)
        assert app.live.origin == f"checkpoint {where}"
        vocab = app.live.tokenizer.vocab_size

        await pilot.press("f5", "i")  # the view opens on its completion; i enters the prompt
        generate = app.view("generate")
        prompt = app.query_one("#gen-prompt", Input)
        await wait_for(pilot, lambda: app.focused is prompt)
        prompt.value = "three hundred forty two"
        app.query_one("#gen-max_new_tokens", Input).value = "6"
        await pilot.press("enter")
        await wait_for(pilot, lambda: generate.job == 1 and not generate.running, 60)
        assert app.focused is prompt
        await shows(pilot, f"vocab {vocab}")

        await pilot.press("f6")
        for name, value in (("prompt", "4"), ("lengths", "4"), ("repeats", "1")):
            app.query_one(f"#sp-{name}", Input).value = value
        speed = app.view("speed")
        speed.query_one("#sp-run").focus()
        await pilot.press("r")
        await wait_for(pilot, lambda: speed.report is not None, 120)
        await shows(pilot, f"{speed.report.runs[-1].speedup:.2f}x faster")
        assert not errors(app), errors(app)
