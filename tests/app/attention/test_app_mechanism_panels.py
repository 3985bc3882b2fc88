"""The mechanism panels on the shipped English toy, read from the rendered screen: Generate's logit lens (l) and
patching (p), the Attention view's ablation (a) and direct logit attribution (d). Every number read is checked
against the core computed here; a running job can be cancelled while the view keeps answering keys."""

from __future__ import annotations

import re
import threading

import pytest
from app_support import app_for, screen_text, view_mounted, wait_for, wait_ready

from tui_lab.app.views.generate.patch_panel import DEFAULT_CORRUPT
from tui_lab.mechanism import readouts


@pytest.fixture(autouse=True)
def one_thread(monkeypatch):
    monkeypatch.setenv("TUI_LAB_DECODE_THREADS", "1")  # no thread-count measurement inside a test


def _line(app, text: str) -> str:
    return next((line for line in screen_text(app).splitlines() if text in line), "")


def _flat(app) -> str:
    """The screen's words joined by single spaces: a summary wrapped onto two lines reads as one."""
    return " ".join(screen_text(app).split())


async def _open(pilot, view: str) -> None:
    await wait_ready(pilot)
    pilot.app.show_view(view)
    await pilot.pause()


async def test_lens_then_patching_at_80x24():
    """l: the lens names each layer and the cursor cell's top-5 (as the core computes it); Escape gives the
    completion back; p: two prompts, the recovered share per cell, a bad pair refused in one line."""
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(pilot, "generate")
        await pilot.press("l")
        await wait_for(pilot, lambda: "top-5" in _line(app, "0_pre at 0 "), 60)
        live = app.live
        ids = live.tokenizer.encode(app.query_one("#gen-prompt").value)
        table = readouts.lens_of(live.model, live.tokenizer, ids)
        text = screen_text(app)
        layers = live.config.decoder_layers
        assert all(re.search(rf"^ {i}_pre ", text, re.M) for i in range(layers)) and re.search(r"^ final ", text, re.M)
        footer = text.rstrip("\n").splitlines()[-1]  # the grid's # and z are on the panel's line, not here
        assert "g generate" in footer and "q quit" in footer, footer
        await pilot.press("right")
        await wait_for(pilot, lambda: "0_pre at 1 " in screen_text(app))
        first = table.top[0][1][0]
        assert f"top-5 {first['token']!r} {first['prob']:.2f}" in screen_text(app)
        await pilot.press(*["down"] * layers, "right")  # the last row: the model's own prediction
        await wait_for(pilot, lambda: "final at 2 " in screen_text(app))
        top = table.top[layers][2][0]
        assert f"top-5 {top['token']!r} {top['prob']:.2f}" in screen_text(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: "attention of each new token" in screen_text(app))
        assert "top-5 '" not in screen_text(app)

        await pilot.press("p")
        await wait_for(pilot, lambda: "corrupt" in screen_text(app))
        await pilot.press("r")  # the grid has the keys as it opens
        await wait_for(pilot, lambda: "restores" in screen_text(app), 60)
        panel = app.query_one("#gen-patch")
        clean, corrupt = (live.tokenizer.encode(panel.value(n)) for n in ("clean", "corrupt"))
        result = readouts.patching_of(live.model, live.tokenizer, clean, corrupt)
        t = result.table
        assert f"clean {t.ld_clean:.2f}, corrupt {t.ld_corrupt:.2f}" in _flat(app)
        assert f"layer 0 at 0 {result.tokens[0]!r} restores {t.values[0][0]:.2f}" in screen_text(app)
        await pilot.press("right")
        await wait_for(pilot, lambda: f"layer 0 at 1 {result.tokens[1]!r} restores {t.values[0][1]:.2f}"
                       in screen_text(app))
        panel.query_one("#patch-corrupt").value = "Anna walked"
        await pilot.press("r")  # from the grid: runs again, and refuses in one line
        await wait_for(pilot, lambda: "corrupt must be as many tokens as clean" in screen_text(app))


async def test_patching_opens_with_its_keys_not_a_selected_prompt_at_80x24():
    """p shows the patching panel with its grid focused: r (named "Run r") runs, never types "corrupt r" into a
    prompt opened focused and selected; after Esc from a prompt r runs again (it did nothing)."""
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(pilot, "generate")
        await pilot.press("p")
        await wait_for(pilot, lambda: "Run r" in screen_text(app))
        assert "r runs" in _flat(app)  # and where the prompts are
        await pilot.press("r")
        panel = app.query_one("#gen-patch")
        await wait_for(pilot, lambda: "restores" in screen_text(app) or "corrupt r" in screen_text(app), 60)
        assert "corrupt r" not in screen_text(app)
        assert panel.value("corrupt") == DEFAULT_CORRUPT
        panel.query_one("#patch-corrupt").focus()  # a click into the corrupted prompt
        await wait_for(pilot, lambda: panel.query_one("#patch-corrupt").has_focus)
        await pilot.press("end", *["backspace"] * 12, "escape")  # cut it short, then leave it
        await wait_for(pilot, lambda: panel.value("corrupt") == DEFAULT_CORRUPT[:-12])
        assert panel.grid.has_focus
        await pilot.press("r")  # from the grid again: runs, and refuses the shorter prompt in one line
        await wait_for(pilot, lambda: "corrupt must be as many tokens as clean" in screen_text(app), 60)


@pytest.mark.parametrize("key", ["l", "p", "a"])
async def test_a_run_asked_before_the_live_model_waits_for_it_in_every_panel(key):
    """The lens, patching and the head effects answer a run asked for before the live model arrived alike: each
    says it waits and runs when the model comes (patching and the heads used to refuse with 'not run' while the
    lens waited); x drops the wait."""
    app = app_for("--preset", "gpt2-toy", build=False)
    view = "attention" if key == "a" else "generate"
    async with app.run_test(size=(80, 24)) as pilot:
        await view_mounted(pilot, view)
        app.show_view(view)
        await pilot.pause()
        await pilot.press(key)
        if key == "p":  # the byte fallback: as many bytes in each prompt, and few (a pass per byte and layer)
            await wait_for(pilot, lambda: app.query_one("#patch-map").has_focus)
            app.query_one("#patch-clean").value, app.query_one("#patch-corrupt").value = "to the", "to his"
            await pilot.press("r")
        await wait_for(pilot, lambda: "waiting for the live model" in _flat(app))
        assert "runs when it arrives" in _flat(app) and "not run" not in _flat(app)
        if key == "l":  # x: the lens no longer waits, and the model's arrival runs nothing; r runs it
            await pilot.press("x")
            await wait_for(pilot, lambda: "cancelled: nothing measured" in _flat(app))
            app.rebuild_model(app.live.config)
            await wait_ready(pilot)
            assert "cancelled: nothing measured" in _flat(app) and "logit lens of" not in _flat(app)
            await pilot.press("r")
            await wait_for(pilot, lambda: "0_pre at 0 " in screen_text(app), 60)
        elif key == "p":
            app.rebuild_model(app.live.config)
            await wait_for(pilot, lambda: "restores" in screen_text(app), 60)
        else:
            app.rebuild_model(app.live.config)
            await wait_for(pilot, lambda: "ablated: loss" in screen_text(app), 60)


async def test_every_head_ablation_cancel_and_attribution_at_160x48(monkeypatch):
    """a: the first run is held in its second pass: the screen still answers (x says cancelling at once) and the
    job stops at its next step without a table; run again, each head's loss change is the core's; d: each
    head's direct logit attribution; Enter opens the head under the cursor."""
    passed, go = threading.Event(), threading.Event()
    real = readouts.head_ablation

    def held(model, ids, mode, on_step, **kwargs):
        def step(done, total):
            if done == 2 and not go.is_set():
                passed.set()
                go.wait(20)
            if on_step is not None:
                on_step(done, total)

        return real(model, ids, mode, on_step=step, **kwargs)

    monkeypatch.setattr(readouts, "head_ablation", held)
    app = app_for()
    async with app.run_test(size=(160, 48)) as pilot:
        await _open(pilot, "attention")
        await pilot.press("m", "a")
        await wait_for(pilot, lambda: passed.is_set() and "mean ablation" in screen_text(app), 60)
        await pilot.press("x")
        await wait_for(pilot, lambda: "cancelling" in screen_text(app))
        go.set()
        await wait_for(pilot, lambda: "cancelled: nothing measured" in screen_text(app))
        assert "ablated: loss" not in screen_text(app)

        await pilot.press("r")
        await wait_for(pilot, lambda: "ablated: loss" in screen_text(app), 60)
        live, panel = app.live, app.query_one("#att-heads")
        expected = readouts.ablation_of(live.model, panel.text)
        v = expected.values[0][0]
        assert f"head L0 H0 ablated: loss {expected.clean + v:.3f} ({v:+.3f} nats)" in screen_text(app)
        await pilot.press("down", "right")
        v = expected.values[1][1]
        await wait_for(pilot, lambda: f"head L1 H1 ablated: loss {expected.clean + v:.3f} ({v:+.3f} nats)"
                       in screen_text(app))
        await pilot.press("d")
        await wait_for(pilot, lambda: "writes" in screen_text(app), 60)
        att = readouts.attribution_of(live.model, live.tokenizer, panel.text)
        assert f"logit({att.answer!r}) - logit({att.wrong!r}) = {att.total:.2f}" in _flat(app)
        assert f"head L1 H1 writes {att.values[1][1]:+.3f}" in screen_text(app)
        await pilot.press("enter")  # that head's attention, full size
        await wait_for(pilot, lambda: "layer 1 · head 1" in screen_text(app))


async def test_encoder_decoder_heads_and_patching_read_the_decoder_stream_at_80x24():
    """The shipped numbers-de toy (2017 shape): a ablates encoder, decoder self- and cross-attention heads on the
    typed target; p takes two sources and patches the decoder's stream where their translations part."""
    app = app_for("--preset", "transformer-2017-toy-numbers-de")
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(pilot, "attention")
        await pilot.press("a")
        await wait_for(pilot, lambda: "ablated: loss" in screen_text(app), 60)
        rows = ("enc L0", "dec L0 self", "dec L1 cross")
        assert all(re.search(rf"^ *{row} ", screen_text(app), re.M) for row in rows)
        live, panel = app.live, app.query_one("#att-heads")
        await pilot.press("down", "down", "down")  # from enc L0 to the first decoder layer's cross-attention
        expected = readouts.ablation_of(live.model, panel.text, src=panel.src)
        v = expected.values[3][0]
        await wait_for(pilot, lambda: f"head dec L0 cross H0 ablated: loss {expected.clean + v:.3f} ({v:+.3f} nats)"
                       in screen_text(app))
        await pilot.press("d")  # not for an encoder-decoder: one line saying why
        await wait_for(pilot, lambda: "d (direct logit attribution) covers decoder-only" in screen_text(app))

        app.show_view("generate")
        await pilot.pause()
        await pilot.press("p")
        await wait_for(pilot, lambda: "corrupt" in screen_text(app))
        patch = app.query_one("#gen-patch")
        patch.query_one("#patch-clean").value = "four hundred thirty two"
        patch.query_one("#patch-corrupt").value = "four hundred thirty five"
        await pilot.press("r")  # the panel opens on its grid (issue 36 item 2): r runs
        await wait_for(pilot, lambda: "restores" in screen_text(app), 60)
        codec = live.tokenizer
        result = readouts.patching_of(live.model, codec, codec.encode("four hundred thirty two"),
                                      codec.encode("four hundred thirty five"))
        assert (result.answer, result.wrong) == ("zwei", "fünf")  # where the two translations part
        t = result.table
        assert f"logit('zwei') - logit('fünf') restored · clean {t.ld_clean:.2f}, corrupt {t.ld_corrupt:.2f}" \
            in _flat(app)
        await pilot.press("down", "right", "right")
        await wait_for(pilot, lambda: f"layer 1 at 2 'hundert' restores {t.values[1][2]:.2f}" in screen_text(app))


async def test_r_on_the_lens_shown_says_so_and_a_new_prompt_runs_at_80x24():
    """`5 l r`: r in the lens panel on the prompt whose lens is drawn drew the same grid again and the screen did
    not change (a dead press the crawler found); it says so at once, in one line naming the Generate prompt and l
    (it said "change them (i or Tab), then r", with "r" alone on the next line). A new prompt runs."""
    from tui_lab.app.views.generate.lens_panel import LensPanel

    said = LensPanel.SAME.format(key="r")

    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(pilot, "generate")
        await pilot.press("l")
        await wait_for(pilot, lambda: "top-5" in _line(app, "0_pre at 0 "), 60)
        await pilot.press("r")
        await wait_for(pilot, lambda: any(said in line for line in screen_text(app).splitlines()), 10)
        panel = app.query_one("#gen-lens")
        before = panel.result
        await pilot.press("l")  # the view's own l on the same prompt: said, not run again unsaid
        said_l = LensPanel.SAME.format(key="l")
        await wait_for(pilot, lambda: any(said_l in line for line in screen_text(app).splitlines()), 10)
        assert panel.result is before and not panel.running
        panel.prompt = "The cat"
        await pilot.press("r")
        length = len(app.live.tokenizer.encode("The cat"))
        await wait_for(pilot, lambda: panel.result is not before and panel.result is not None, 60)
        assert len(panel.result.top[0]) == length != len(before.top[0])
        await wait_for(pilot, lambda: "top-5" in _line(app, "0_pre at 0 "))
        assert said not in _flat(app)
