"""The README's pictures are snapshots: each is the screen a seeded run of the app draws now, timing masked.

A picture that no longer matches the app fails here with the lines that changed. `TUI_LAB_UPDATE_PICTURES=1
python -m pytest tests/app/shell/test_readme_pictures.py` rewrites them (tests/support/snapshots.py says how they
compare).
The runs are small (shipped toys, 150 training steps of 8 x 64 tokens, lengths to 256) so the check stays
fast, and every wait is for a condition, never a timer, so a loaded machine only makes it slower.
"""

from __future__ import annotations

import json
import re

import pytest
from app_support import app_for, wait_for
from snapshots import (
    _MARK,
    HAND_KEPT,
    PICTURES,
    check_picture,
    mask_text,
    masked_lines,
    readme_pictures,
    settle,
)
from textual.widgets import Input, Select

from tui_lab.app.examples import TOY_DE
from tui_lab.train.config import TrainConfig

SIZE = (120, 36)
# The train picture's run: past the warmup (40 steps) into the cosine decay, with val evaluated at 50, 100, 150
# so its legend has a line; the speed picture's lengths: the uncached curve's bend shows by 256 tokens.
TRAIN_STEPS, SPEED_LENGTHS = 150, "64, 256"
NAMES = {"architecture", "architecture-model", "architecture-compare", "architecture-layer", "attention",
         "attention-masks", "tour", "train", "generate", "speed"}


async def ready(pilot) -> None:
    """The live model built: a loaded machine (CI beside other work) may take a minute."""
    pilot.app.animation_level = "none"  # a tab's underline never caught mid-slide
    await wait_for(pilot, lambda: pilot.app.live.generation >= 1 and not pilot.app.live.building, 180)
    await pilot.pause()


def test_every_readme_picture_is_a_snapshot_and_every_snapshot_is_in_the_readme():
    kept = {p.stem for p in PICTURES.glob("*.svg")} - set(HAND_KEPT)  # a long run's picture, kept by hand
    shown = readme_pictures() - set(HAND_KEPT)
    assert shown == NAMES == kept, (shown ^ NAMES, kept ^ NAMES)


def test_timing_is_masked_and_sizes_are_not():
    line = "20 tokens in 0.47 s, 21 passes (43.0 tokens/s) 0.68x faster ETA 1:05 tokens/s 1,234 MFU 3.2%"
    assert mask_text(line) == "20 tokens in #, 21 passes (#) # faster # # #"
    assert mask_text("batch 2 x 16 · demo (128x2, window 1024) · 63,082,496 parameters · 24.0 KiB") == \
        "batch 2 x 16 · demo (128x2, window 1024) · 63,082,496 parameters · 24.0 KiB"


def _kept(name: str) -> tuple[str, tuple]:
    svg = (PICTURES / f"{name}.svg").read_text()
    mark = json.loads(_MARK.search(svg).group(1))
    return svg, (mark["width"], mark["height"], mark["masked"], mark.get("decimals", False))


def test_a_stale_colour_fails_as_a_stale_word_does_and_timing_stays_masked():
    """The attention picture with one grid cell a colour off (same text) is stale; the generate picture
    with another tokens/s (same colours) is not."""
    svg, args = _kept("attention")
    rects = list(re.finditer(r'<rect fill="(#[0-9a-fA-F]{6})" x="[\d.]+" y="([\d.]+)"', svg))
    fills = [m.group(1) for m in rects]
    cell = next(m for m in rects if fills.count(m.group(1)) < 20 and float(m.group(2)) > 200)  # a grid colour
    stale = svg[:cell.start(1)] + "#ff00ff" + svg[cell.end(1):]
    now, then = masked_lines(svg, *args), masked_lines(stale, *args)
    assert [line.split("\n")[0] for line in now] == [line.split("\n")[0] for line in then]  # the text agrees
    assert now != then, "a cell's colour changed and the picture still matched"
    svg, args = _kept("generate")
    rate = re.search(r"\((\d+)\.\d&#160;tokens/s", svg)  # "(62.5 tokens/s, cached)" -> "(162.5 ..."
    faster = svg[:rate.start(1)] + "1" + svg[rate.start(1):]
    assert masked_lines(faster, *args) == masked_lines(svg, *args)


@pytest.mark.slow  # the app, the shipped toys
async def test_architecture_attention_and_tour_pictures():
    app = app_for("--preset", TOY_DE)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        attention = app.view("attention")
        await wait_for(pilot, lambda: attention.grids, 60)
        app.view("architecture").load_preset("transformer-2017-base")
        await settle(pilot)
        text = check_picture(app, "architecture")
        assert "63,082,496 parameters" in text and '"65M"' in text and "Apply" in text
        app.view("architecture").show_tab("arch-model")
        await settle(pilot)
        assert "(N, S, E) = (2, 16, 512)" in check_picture(app, "architecture-model")
        app.view("architecture").show_tab("arch-compare")
        await settle(pilot)
        text = check_picture(app, "architecture-compare")
        assert "124,439,808" in text and "63,082,496" in text and "norm_position" in text
        app.view("architecture").show_tab("arch-layer")
        await settle(pilot)
        assert "LN(x + f(x))" in check_picture(app, "architecture-layer")
        app.show_view("attention")
        app.query_one("#att-kind", Select).value = "cross"
        await pilot.pause()
        attention.point_at("zwei", "two")  # the trained toy's learned alignment: German swaps units and tens
        await settle(pilot)
        text = check_picture(app, "attention")
        assert "shipped toy" in text and "cross-attention (target x source)" in text and "'two'" in text
        app.query_one("#att-kind", Select).value = "mask-both"
        await settle(pilot)
        assert "causal AND padding" in check_picture(app, "attention-masks")
        await pilot.press("f3")
        tour = app.view("tour")
        await wait_for(pilot, lambda: tour.ready, timeout=120)  # the shipped toys' pictures, not the loading line
        for _ in range(4):  # step 5: cross-attention from the trained toy
            await pilot.press("n")
        await settle(pilot)
        text = check_picture(app, "tour")
        assert "Step 5 of 8" in text and "loading the shipped toys" not in text
        assert "gesehen" not in text and "'zwei'" in text and "'two'" in text  # the words name what it shows


@pytest.mark.slow  # the app, a training run
async def test_train_generate_and_speed_pictures(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = app_for()  # the default launch: the shipped English toy
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: bool(app.query("#view-speed")))
        app.show_view("generate")
        await pilot.pause()
        generate = app.view("generate")
        app.query_one("#gen-temperature", Input).value = "0"  # greedy: the same words every run
        app.query_one("#gen-max_new_tokens", Input).value = "40"
        generate.action_generate()
        await wait_for(pilot, lambda: not generate.running, 60)
        await pilot.press("tab", "y")  # out of the prompt, then shade each token by its probability
        await settle(pilot)
        assert "In the morning, Anna walked to" in check_picture(app, "generate")
        app.show_view("speed")
        await pilot.pause()
        speed = app.view("speed")
        # Long enough that the uncached curve bends upward, as the README says (at 32 tokens it could not)
        app.query_one("#sp-lengths", Input).value = SPEED_LENGTHS
        app.query_one("#sp-repeats", Input).value = "3"  # the README's median of 3
        await pilot.press("r")
        await wait_for(pilot, lambda: not speed.running, 120)
        await settle(pilot)
        # the latency plot, the notes drawn from it (a line more or less with the timing) and the table of
        # times are masked; the inputs, the summary's words and the layout are checked
        text = check_picture(app, "speed", masked=("#sp-plot", "#sp-analysis", "#sp-table"), decimals=True)
        assert "identical" in text and f"at {SPEED_LENGTHS.split()[-1]} tokens" in text  # the longest length
        app.show_view("train")
        await pilot.pause()
        train = app.view("train")
        for name, value in {"steps": str(TRAIN_STEPS), "batch_size": "8", "seq_len": "64"}.items():
            app.query_one(f"#tf-{name}", Input).value = value
        train.action_start()
        await wait_for(pilot, lambda: not train.training, 240)  # to its end: the seeded run's whole curve
        await wait_for(pilot, lambda: not train.dirty, 60)  # drawn (a loaded machine's tick comes late)
        await settle(pilot)
        text = check_picture(app, "train")
        assert f"step {TRAIN_STEPS}/{TRAIN_STEPS}" in text and "val (held out)" in text
        assert TRAIN_STEPS > 3 * TrainConfig().warmup  # well past the learning rate's warmup, into its decay
