"""Architecture view: exact counts for every preset, live edits, inline errors, comparison, layer diagram."""

from __future__ import annotations

import pytest
from app_support import SIZE, app_for, screen_lines, screen_text, wait_for, wait_ready
from textual.widgets import Button, Input, Label, Select, Static, Switch

from tui_lab.analysis import count_params, flops_per_token, memory
from tui_lab.analysis.format import fmt_bytes
from tui_lab.app.views.architecture.compare import compare_rows
from tui_lab.app.views.architecture.config_form import TEXT_FIELDS, ConfigForm, adjust_stacks, field_of_error
from tui_lab.app.widgets.block_diagram import layer_diagram
from tui_lab.presets import list_presets, load_preset

FORM_COLUMNS = 35  # the form panel (36) less the scrollbar that parts it from the results

PINNED = {"gpt2-small": "124,439,808", "transformer-2017-base": "63,082,496"}


def total_text(app) -> str:
    return str(app.query_one("#arch-total", Static).render())


async def set_text(pilot, field: str, text: str) -> None:
    widget = pilot.app.query_one(f"#f-{field}", Input)
    widget.value = text
    await pilot.pause()


async def test_first_screen_and_every_preset_show_exact_counts():
    app = app_for("--preset", "gpt2-small", build=False)  # the counts need no model
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "124,439,808" in app.export_screenshot()  # on the first screen, at 80x24
        for name in list_presets():
            app.query_one("#preset", Select).value = name
            await pilot.pause()
            await pilot.pause()
            expected = f"{count_params(load_preset(name)).total:,}"
            assert expected in total_text(app), name
            if name in PINNED:
                assert PINNED[name] in total_text(app)
        app.query_one("#preset", Select).value = "transformer-2017-base"
        await pilot.pause()
        note = str(app.query_one("#paper-note", Static).render())
        assert '"65M"' in note and "63,082,496" in note


async def test_edits_errors_and_garbage_in_the_form():
    app = app_for("--preset", "gpt2-toy", build=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        # typing in a field changes the count
        before = total_text(app)
        app.query_one("#f-d_model", Input).focus()
        await pilot.press("end", "backspace", "backspace", "backspace", "2", "5", "6")
        after = total_text(app)
        assert before != after
        assert f"{count_params(load_preset('gpt2-toy', d_model=256)).total:,}" in after
        # d_model 100 with 3 heads: the error beside d_model, Apply disabled
        await set_text(pilot, "heads", "3")
        await set_text(pilot, "d_model", "100")
        error = app.query_one("#e-d_model", Label)
        assert "divisible by heads" in str(error.render()) and error.display
        assert app.query_one("#apply", Button).disabled
        await set_text(pilot, "d_model", "99")
        assert not app.query_one("#apply", Button).disabled and not error.display
        # garbage in every field at once: every field says what is wrong, the app lives on
        await pilot.press("x", "%")
        for field in TEXT_FIELDS:
            app.query_one(f"#f-{field}", Input).value = "1x%é-"
        for field in ("tie_embeddings", "bias", "final_norm"):
            app.query_one(f"#f-{field}", Switch).toggle()
        for sid in ("shape-batch", "shape-seq", "shape-src"):
            app.query_one(f"#{sid}", Input).value = "-0x"
        await pilot.pause()
        for field in TEXT_FIELDS:
            assert str(app.query_one(f"#e-{field}", Label).render()), field
        assert app.query_one("#apply", Button).disabled
        await pilot.press("ctrl+s")  # Apply while invalid: a notification, nothing else
        app.query_one("#f-d_model", Input).value = "64"
        app.query_one(ConfigForm).load(load_preset("gpt2-toy"))
        await pilot.pause()
        assert "positive integer" in str(app.query_one("#shape-error", Label).render())
        assert app.is_running
        # a model that cannot fit is refused with the estimate and the free memory
        huge = load_preset("gpt2-toy", vocab=2_000_000, d_model=65_536, heads=1)
        app.rebuild_model(huge)
        await pilot.pause()
        texts = [n.message for n in app._notifications]
        assert any("refused" in t and "GiB" in t and "free" in t for t in texts), texts
        # the command palette has an entry per view and per action (a view's actions once it has mounted: the
        # views behind the first mount after it, and under CI's load the Attention view had not yet); the theme
        # toggles
        def titles() -> list[str]:
            return [c.title for c in app.get_system_commands(app.screen)]

        await wait_for(pilot, lambda: "Attention: export the grid" in titles(), 60)
        for view in ("Architecture", "Attention", "Tour"):
            assert f"Show {view}" in titles()
        assert "Apply the form (rebuild the live model)" in titles()
        dark = app.theme
        app.set_focus(None)
        await pilot.press("t")
        assert app.theme != dark
        await pilot.press("2")
        assert app.query_one("#views").active == "attention"


async def test_apply_rebuilds_the_live_model():
    app = app_for("--preset", "gpt2-toy")  # random weights: Apply rebuilds without asking
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await set_text(pilot, "decoder_layers", "1")
        app.query_one("#apply", Button).press()
        await wait_ready(pilot, generation=2)
        assert app.live.config.decoder_layers == 1
        assert len(app.live.model.decoder) == 1


def test_field_of_error_and_stacks():
    assert field_of_error("d_model (100) must be divisible by heads (3)") == "d_model"
    assert field_of_error("d_model (100) must be divisible by heads (3)", edited="heads") == "heads"
    assert field_of_error("encoder_layers must be 0 for a decoder-only model") == "encoder_layers"
    assert adjust_stacks("decoder-only", 6, 6) == (0, 6)
    assert adjust_stacks("encoder-decoder", 0, 12) == (12, 12)


def test_comparison_marks_differences():
    rows = {name: differs for name, _, _, differs in
            compare_rows(load_preset("transformer-2017-base"), load_preset("gpt2-small"))}
    assert rows["d_model"] and rows["norm_position"] and rows["parameters"]
    assert not rows["norm"] and not rows["tie_embeddings"]


@pytest.mark.parametrize("preset,rule,cross", [("transformer-2017-base", "LN(x + f(x))", True),
                                               ("gpt2-small", "x + f(LN(x))", False)])
def test_layer_diagram_places_the_norm(preset, rule, cross):
    text = layer_diagram(load_preset(preset))
    assert rule in text.splitlines()[0]
    assert ("encoder output" in text) == cross
    assert ("on the main path" in text) == (preset == "transformer-2017-base")


def _column(lines: list[str], start: int, stop: int) -> str:
    """The text of a screen column range, rows joined by spaces (a wrapped sentence reads whole)."""
    return " ".join(" ".join(line[start:stop].split()) for line in lines)


async def test_a_rule_shows_whole_under_the_field_that_broke_it_and_the_panel_goes_stale():
    app = app_for("--preset", "gpt2-small", build=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.query_one("#f-heads", Input).focus()
        await pilot.press("end", "backspace", "backspace", "5")
        await pilot.pause()
        rule = "d_model (768) must be divisible by heads (5)"
        assert rule in str(app.query_one("#e-heads", Label).render()) and app.query_one("#e-heads").display
        assert not app.query_one("#e-d_model").display
        lines = screen_lines(app)
        assert rule in _column(lines, 0, FORM_COLUMNS)  # wrapped, never cut
        heads_row = next(i for i, line in enumerate(lines) if line[:FORM_COLUMNS].split()[:1] == ["heads"])
        assert lines[heads_row + 1][:FORM_COLUMNS].split()[0] == "d_model"  # the rule's first line, right under heads
        assert "stale: form invalid" in screen_text(app)
        assert app.query_one("#arch-results").has_class("stale")
        await pilot.press("backspace", "1", "2")
        await pilot.pause()
        assert "stale" not in screen_text(app) and not app.query_one("#arch-results").has_class("stale")
        assert "124,439,808" in screen_text(app)


async def test_at_80x24_every_tab_shows_its_key_numbers_whole():
    app = app_for("--preset", "gpt2-small", build=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        view = app.view("architecture")
        view.show_tab("arch-compare")
        await pilot.pause()
        assert screen_text(app).count("124,439,808") >= 2 and "63,082,496" in screen_text(app)  # total + Compare
        view.show_tab("arch-shapes")
        await pilot.pause()
        text = screen_text(app)
        assert "(2,16,768)" in text and "(2,16,3072)" in text and "38,597,376" in text  # shape and params columns
        for preset in ("gpt2-small", "transformer-2017-base"):
            view.load_preset(preset)
            view.show_tab("arch-layer")
            await pilot.pause()
            await pilot.pause()
            text = screen_text(app)
            for line in layer_diagram(load_preset(preset)).splitlines()[:12]:
                assert line.rstrip() in text, line  # every visible line whole, none wrapped
        for key in ("f1", "f2", "f3", "f4", "f5", "f6"):
            await pilot.press(key)
            await pilot.pause()
            assert "f1 f2 f3 f4 f5 f6 f7 views" in screen_lines(app)[-1], key


def test_layer_diagram_of_an_attention_only_model_has_no_ffn():
    text = layer_diagram(load_preset("gpt2-toy", ffn="none"))
    assert "masked self-attn" in text and "FFN" not in text


async def test_an_images_length_is_its_patches_and_class_token_in_every_number():
    """A ViT's sequence is fixed by its image (vit-toy: 4x4 patches and the class token, 17): the length field is
    not asked for, its label says 17, and the summary counts FLOPs and activations at 17, as the Shapes trace does
    (it once counted them at the 16 typed above the tabs)."""
    config = load_preset("vit-toy")
    app = app_for("--preset", "vit-toy", build=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.query_one("#shape-seq", Input).value = "x"  # the hidden field's text is not read for an image
        await pilot.pause()
        panel = app.query_one("#arch-results").region
        text = _column(screen_lines(app), panel.x, panel.right)  # the panel's wrapped lines read whole
        assert f"length L {config.max_len} (image)" in text and not app.query_one("#shape-seq", Input).display
        assert f"context {config.max_len}" in text and f"batch 2 x {config.max_len} tokens" in text
        assert f"{flops_per_token(config, config.max_len):,}" in text
        assert "must be a positive integer" not in text
        assert "KV cache none" in text and "KV / token" not in text  # an encoder caches nothing
        app.query_one("#preset", Select).value = "gpt2-toy"  # text again: the field is back and read
        await pilot.pause()
        await pilot.pause()
        text = _column(screen_lines(app), panel.x, panel.right)
        assert app.query_one("#shape-seq", Input).display and "length L must be a positive integer" in text
        app.query_one("#shape-seq", Input).value = "16"
        await pilot.pause()
        assert "KV / token" in _column(screen_lines(app), panel.x, panel.right)


async def test_an_encoder_decoders_activations_follow_the_source_length_too():
    """Typing a longer source S grows the activations (the encoder's layers and cross-attention's target x source
    scores); they once followed only the target T. The FLOPs row says the length it is counted at."""
    config = load_preset("transformer-2017-toy")
    app = app_for("--preset", "transformer-2017-toy", build=False)
    async with app.run_test(size=(80, 40)) as pilot:  # 80 wide: the words wrap; tall: all in view
        await pilot.pause()
        panel = app.query_one("#arch-results").region
        for source in ("16", "40"):
            app.query_one("#shape-src", Input).value = source
            await pilot.pause()
            text = _column(screen_lines(app), panel.x, panel.right)
            expected = fmt_bytes(memory(config, 2, 16, source=int(source)).activations)
            assert f"activations {expected} batch 2 x (T 16 + S {source})" in text, source
            assert "forward, S = T = 16" in text
        assert memory(config, 2, 16, source=40).activations > memory(config, 2, 16).activations
