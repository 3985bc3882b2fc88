"""Generate view: tokens stream into the view with an attention row each; every decoding mode runs; the
probabilities shade the tokens on request; a random preset uses the byte fallback and says so; Stop cancels."""

from __future__ import annotations

from app_support import app_for, view_mounted, wait_for, wait_ready
from textual.widgets import Input

from tui_lab.app.views.generate import jobs
from tui_lab.app.views.generate.token_stream import TokenStream
from tui_lab.app.widgets.heatmap import Heatmap

SIZE = (120, 40)


async def generate_view(pilot, ready: bool = True, **fields: str):
    app = pilot.app
    if ready:
        await wait_ready(pilot)
    await view_mounted(pilot, "generate")
    app.show_view("generate")
    await pilot.pause()
    for name, value in fields.items():
        app.query_one(f"#gen-{name}", Input).value = value
    return app.view("generate")


async def test_streams_tokens_with_a_growing_attention_grid_and_every_mode():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        view = await generate_view(pilot, max_new_tokens="6", temperature="0")
        assert "byte fallback" in str(app.query_one("#gen-note").render())
        app.query_one("#gen-prompt", Input).value = "hello"
        view.action_generate()
        await wait_for(pilot, lambda: not view.running)
        stream = app.query_one(TokenStream)
        assert len(stream.tokens) == 6 and all(0 < t.prob <= 1 for t in stream.tokens)
        # one row per new token over the whole context; row i sees the 5 prompt bytes and the i tokens before it
        heatmap = app.query_one("#gen-att", Heatmap)
        assert heatmap.shape == (6, 5 + 6)
        for i, row in enumerate(heatmap.values):
            seen = [v for v in row if v == v]  # NaN: not yet in the context
            assert len(seen) == 5 + i and abs(sum(seen) - 1) < 1e-4
        plain = stream.render_text().plain
        await pilot.press("tab", "y")  # out of the prompt (letters there are text), then probabilities on
        assert stream.show_probs and stream.render_text().plain == plain  # shaded, not numbered
        assert plain.startswith("hello")
        for fields in ({"temperature": "1", "top_k": "5"}, {"temperature": "1", "top_p": "0.9"},
                       {"beam_size": "3"}):
            for name, value in fields.items():
                app.query_one(f"#gen-{name}", Input).value = value
            view.action_generate()
            await wait_for(pilot, lambda: not view.running)
            assert len(stream.tokens) == 6
        assert stream.tokens[0].prob is None  # beam search has no per-token probability
        view.action_compare()
        await wait_for(pilot, lambda: not view.running)
        assert sorted(app.query_one("#gen-compare").results) == sorted(jobs.MODES)
        assert all(str(app.query_one(f"#gen-mode-{m}").render()).strip() != "..." for m in jobs.MODES)


async def test_encoder_decoder_grid_is_target_by_source_and_stop_cancels(monkeypatch):
    import time

    from tui_lab.generation import session

    real = session.complete

    def paced(*args, on_token, **kwargs):
        # at least 5 ms a token: on a fast machine the toy wrote all 2,000 before the keys' idle waits were over
        # (two clean-clone CI runs, each passing on its rerun)
        def slower(token):
            time.sleep(0.005)
            on_token(token)
        return real(*args, on_token=slower, **kwargs)

    monkeypatch.setattr(session, "complete", paced)
    app = app_for("--preset", "transformer-2017-toy")
    async with app.run_test(size=SIZE) as pilot:
        view = await generate_view(pilot, max_new_tokens="5", temperature="0")
        app.query_one("#gen-prompt", Input).value = "abc"
        view.action_generate()
        await wait_for(pilot, lambda: not view.running)
        assert app.query_one("#gen-att", Heatmap).shape == (5, 3)  # cross-attention: target x source
        app.query_one("#gen-max_new_tokens", Input).value = "2000"
        view.action_generate()
        await wait_for(pilot, lambda: len(app.query_one(TokenStream).tokens) >= 2)
        await pilot.press("tab", "s")  # out of the prompt, then stop
        await wait_for(pilot, lambda: "stopped" in app.query_one(TokenStream).note or not view.running)
        assert len(app.query_one(TokenStream).tokens) < 2000


async def test_bad_settings_are_a_message_not_a_crash():
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await generate_view(pilot, ready=False, top_p="1.5")
        view.action_generate()
        await pilot.pause()
        assert not view.running and any("top_p" in str(n.message) for n in app._notifications)
