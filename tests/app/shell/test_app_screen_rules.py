"""80x24 never lies: every view and tab, at 80x24 and 100x30, read from the rendered screen.

A number is whole or absent, a named word is never split, nothing overlaps, the footer keeps `q quit` and
the view's keys, a plot has 8 rows, a form field not typed in shows its whole value (free text may end in
"…" after whole words), and each view's named read-outs (total parameters, a module's count, FLOPs, KV
bytes, loss, tokens/s...) are on screen exactly as the formatter writes them. The rules are in
tests/support/screen_rules.py; one app walks every view and tab, resized to each size, and gathers what breaks them.
A second app, the numbers-de translator, walks what only an encoder-decoder or a finished job shows: the
cross-attention and positional-encoding grids, `m` (every head), Generate's compare and side by side, and the
Experiments view after a run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import partial

import pytest
from app_support import app_for, screen_lines, wait_for
from screen_rules import (
    cut_numbers,
    edge_words,
    footer_problems,
    forecast_rooms,
    input_values,
    missing_words,
    overlaps,
    plot_overruns,
    plot_rows,
    split_words,
    squeezed_boxes,
    table_cells,
    text_problems,
)
from textual.widgets import Input, Select

from tui_lab.analysis import count_params, flops_per_token, memory, shape_trace
from tui_lab.analysis.format import fmt_bytes, fmt_count
from tui_lab.app.views.architecture.analysis import DEFAULT_BATCH, DEFAULT_LENGTH
from tui_lab.app.views.speed.view import COLUMNS
from tui_lab.experiments.registry import names
from tui_lab.presets import load_preset

pytestmark = pytest.mark.slow
KEYS = {"architecture": ["^s apply"], "attention": ["k grid", "l layer", "h head"], "tour": ["n next", "p back"],
        "train": ["g start", "p pause"], "generate": ["g generate"], "speed": ["r run"],
        "experiments": ["r run"]}


SIZES = ((80, 24), (100, 30))


class Rules:
    """What broke the rules, screen by screen and size by size (all gathered, then reported together)."""

    def __init__(self, pilot) -> None:
        self.pilot, self.app, self.broken = pilot, pilot.app, []

    async def check(self, where: str, view: str, words: Sequence[str] = (),
                    readouts: Sequence[str] | Callable[[], Sequence[str]] = (),
                    prepare: Callable[[], object] | None = None) -> dict[tuple[int, int], list[str]]:
        """The screen at each size, checked; `readouts` may be a function (what a size shows), `prepare` runs
        after each resize (scroll a table into view). Returns the lines seen at each size."""
        seen = {}
        # The size the screen is at first, then the other: each check resizes once, not twice (a resize
        # relayouts and redraws the whole screen). Both sizes are still checked, and each is seen both drawn
        # as the view opened and reached by a resize, across the checks.
        current = tuple(self.app.size)
        for size in sorted(SIZES, key=lambda size: size != current):
            if size != current:
                await self.pilot.resize_terminal(*size)
            await self.pilot.pause()
            if prepare is not None:
                prepare()
            await self.pilot.pause()
            try:  # a footer is recomposed when focus moves: read it once drawn (a missing key fails below)
                await wait_for(self.pilot, lambda: "q quit" in screen_lines(self.app)[-1], 5)
            except AssertionError:
                pass
            lines = seen[size] = screen_lines(self.app)
            found = cut_numbers(lines[:-1], size[0])  # the footer's last cell is the palette key
            found += split_words(lines, list(words))
            found += [f"word not shown whole: {w!r}" for w in missing_words(lines, list(words))]
            found += footer_problems(lines[-1], KEYS[view])
            found += overlaps(self.app) + plot_rows(self.app, lines) + text_problems(self.app, lines)
            found += edge_words(self.app, lines)
            found += input_values(self.app, lines)
            found += plot_overruns(self.app, lines) + table_cells(self.app, lines)
            found += forecast_rooms(self.app)
            text = "\n".join(lines)
            wanted = readouts() if callable(readouts) else readouts
            found += [f"read-out not on screen as written: {r!r}" for r in wanted if r not in text]
            self.broken += [f"{size[0]}x{size[1]} {where}: {problem}" for problem in found]
        return seen


def _architecture_readouts(name: str, tab: str) -> list[str]:
    config = load_preset(name)
    if tab == "arch-summary":
        p, mem = count_params(config), memory(config, batch=DEFAULT_BATCH, seq_len=DEFAULT_LENGTH)
        return [f"{p.total:,}", f"{p.ffn:,}", fmt_count(flops_per_token(config, DEFAULT_LENGTH)),
                fmt_bytes(mem.kv_cache_per_token)]
    if tab == "arch-shapes":
        first = shape_trace(config, batch=DEFAULT_BATCH, seq_len=DEFAULT_LENGTH)[0]
        return [first.path, f"{first.params:,}"]
    if tab == "arch-compare":
        return [f"{count_params(load_preset(n)).total:,}" for n in ("transformer-2017-base", "gpt2-small")]
    return [f"{count_params(config).total:,}"]


async def _architecture(pilot, rules: Rules) -> None:
    app = pilot.app
    view = app.view("architecture")
    app.show_view("architecture")
    for name in ("transformer-2017-base", "llama-2-7b"):
        view.load_preset(name)
        total = f"{count_params(load_preset(name)).total:,} parameters"
        await wait_for(pilot, lambda total=total: total in "\n".join(screen_lines(app)))
        for tab in ("arch-summary", "arch-model", "arch-shapes", "arch-compare", "arch-layer"):
            view.show_tab(tab)
            await pilot.pause()
            words = ["encoder-decoder", "decoder-only"] if tab == "arch-compare" else []
            await rules.check(f"{name} {tab}", "architecture", words, partial(_shown_readouts, app, name, tab))


def _shown_readouts(app, name: str, tab: str) -> list[str]:
    readouts = _architecture_readouts(name, tab)
    if tab == "arch-shapes" and app.query_one("#shape-table").shown < 3:
        return readouts[:1]  # too narrow for the params column whole: it is absent, not cut
    return readouts


async def _attention_and_tour(pilot, rules: Rules) -> None:
    app = pilot.app
    app.show_view("attention")
    view = app.view("attention")
    await wait_for(pilot, lambda: view.captured_generation >= 1 and bool(view.grids), 90)
    await pilot.pause()
    await rules.check("attention", "attention")
    for kind in ("mask-causal", "mask-both"):
        app.query_one("#att-kind", Select).value = kind
        await pilot.pause()
        await rules.check(f"attention {kind}", "attention")
    app.show_view("tour")
    tour = app.view("tour")
    await wait_for(pilot, lambda: tour.ready, 120)
    for step in range(1, 9):
        await pilot.pause()
        params = [f"{count_params(load_preset(n)).total:,}" for n in ("transformer-2017-base", "gpt2-small")]
        await rules.check(f"tour step {step}", "tour", readouts=params if step == 7 else [])
        await pilot.press("n")


async def _generate(pilot, rules: Rules) -> None:
    app = pilot.app
    app.show_view("generate")
    view = app.view("generate")
    app.query_one("#gen-temperature", Input).value = "0"
    app.query_one("#gen-max_new_tokens", Input).value = "12"
    view.action_generate()
    await wait_for(pilot, lambda: not view.running, 90)
    await pilot.pause()
    for size, lines in (await rules.check("generate", "generate")).items():
        # the status line, as GenerationResult.summary writes it, whole though it wraps in the left box
        left = [line.split("│")[1] for line in lines if line.count("│") >= 2]
        joined = re.sub(r" +", " ", " ".join(left))
        if not re.search(r"12 tokens in \d+\.\d\d s, 13 decoder passes \(\d+\.\d tokens/s, cached\)", joined):
            rules.broken.append(f"{size} generate: the tokens/s read-out is not whole: {joined!r}")


async def _speed(pilot, rules: Rules) -> None:
    app = pilot.app
    app.show_view("speed")
    view = app.view("speed")
    app.query_one("#sp-lengths", Input).value = "8, 16"
    app.query_one("#sp-repeats", Input).value = "1"
    await pilot.press("r")
    await wait_for(pilot, lambda: not view.running and view.report is not None, 120)
    last = view.report.runs[-1]
    table = app.query_one("#sp-table")
    await rules.check("speed", "speed", words=list(COLUMNS),
                      readouts=[f"{last.speedup:.2f}x", f"{last.tokens_per_s(True, view.report.batch):.1f}"],
                      prepare=lambda: table.scroll_visible(animate=False))  # at 80x24 a scroll down
    await pilot.press("k")
    await pilot.pause()
    await rules.check("speed MHA/GQA", "speed")
    await pilot.press("k")


async def _experiments(pilot, rules: Rules) -> None:
    pilot.app.show_view("experiments")
    await pilot.pause()
    await rules.check("experiments", "experiments", words=list(names()))


async def _train(pilot, rules: Rules) -> None:
    app = pilot.app
    app.show_view("train")
    view = app.view("train")
    await pilot.pause()
    await rules.check("train, before a run", "train")
    for name, value in {"steps": "6", "batch_size": "4", "seq_len": "32"}.items():
        app.query_one(f"#tf-{name}", Input).value = value
    view.action_start()
    await wait_for(pilot, lambda: not view.training and "loss" in view.stats, 180)
    await wait_for(pilot, lambda: not view.dirty, 60)
    await pilot.pause()
    s = view.stats
    await rules.check("train, after a run", "train", readouts=[f"loss {s['loss']:.4f}", f"tokens/s {s['tps']:,.0f}"])


async def _attention_encoder_decoder(pilot, rules: Rules) -> None:
    """A translation's cross-attention, the positional-encoding table and every head at once (`m`)."""
    app = pilot.app
    app.show_view("attention")
    view = app.view("attention")
    await wait_for(pilot, lambda: view.captured_generation >= 1 and ("cross", 0) in view.grids, 90)
    kind = app.query_one("#att-kind", Select)
    for value in ("cross", "pos-sinusoidal"):
        kind.value = value
        await pilot.pause()
        await rules.check(f"attention {value}", "attention")
    kind.value = "cross"
    await pilot.pause()
    await pilot.press("m")
    await rules.check("attention m (every head)", "attention")
    await pilot.press("m")


async def _generate_modes(pilot, rules: Rules) -> None:
    """Generate's compare (greedy, top-k, top-p, beam) and side by side, each once finished."""
    app = pilot.app
    app.show_view("generate")
    view = app.view("generate")
    app.query_one("#gen-max_new_tokens", Input).value = "8"
    source = app.query_one("#gen-prompt", Input).value
    view.action_compare()
    await wait_for(pilot, lambda: not view.running and len(app.query_one("#gen-compare").results) == 4, 90)
    _readable("generate compare", await rules.check("generate compare", "generate"), source, rules)
    view.action_versus()
    await wait_for(pilot, lambda: not view.running and len(app.query_one("#gen-versus").done) == 2, 90)
    _readable("generate side by side", await rules.check("generate side by side", "generate"), source, rules)


def _readable(where: str, seen: dict[tuple[int, int], list[str]], source: str, rules: Rules) -> None:
    """Opening the compare boxes or the side by side leaves the prompt whole on screen and no box squeezed
    (at 80x24 the completion and the grid above them had 3 rows inside: neither prompt nor output read)."""
    for (w, h), lines in seen.items():
        problems = squeezed_boxes(lines)
        if not any(source in line for line in lines):
            problems.append(f"the prompt {source!r} is not on screen whole")
        rules.broken += [f"{w}x{h} {where}: {problem}" for problem in problems]


async def _experiments_done(pilot, rules: Rules) -> None:
    """An experiment's results shown: its status, notes and the results table."""
    app = pilot.app
    app.show_view("experiments")
    view = app.view("experiments")
    view.action_run()  # the first, order-blindness: a fraction of a second
    await wait_for(pilot, lambda: not view.running and view.result is not None, 90)
    await pilot.pause()
    await rules.check("experiments, after a run", "experiments")


async def test_an_encoder_decoder_and_finished_runs_keep_the_rules(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = app_for("--preset", "transformer-2017-toy-numbers-de")  # a trained translator: real grids and outputs
    async with app.run_test(size=SIZES[0]) as pilot:
        await wait_for(pilot, lambda: app.live.generation >= 1 and not app.live.building, 180)
        rules = Rules(pilot)
        for part in (_attention_encoder_decoder, _generate_modes, _experiments_done):
            await part(pilot, rules)
        assert not rules.broken, "\n".join(rules.broken)


# Two apps, not one: the longest test of the suite split in halves that the two CI workers can run side by side.
@pytest.mark.parametrize("parts", [(_architecture, _experiments), (_attention_and_tour, _generate, _speed, _train)],
                         ids=["forms", "grids-and-runs"])
async def test_every_view_and_tab_keeps_the_rules_at_80x24_and_100x30(parts, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = app_for()  # the shipped English toy: trained weights, real read-outs
    async with app.run_test(size=SIZES[0]) as pilot:  # one app, resized: the runs are made once
        await wait_for(pilot, lambda: app.live.generation >= 1 and not app.live.building, 180)
        rules = Rules(pilot)
        for part in parts:
            await part(pilot, rules)
        assert not rules.broken, "\n".join(rules.broken)
