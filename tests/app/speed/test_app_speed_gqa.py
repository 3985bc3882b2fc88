"""Speed's MHA vs GQA vs MQA panel at 80x24, read from the rendered screen: a run on a tiny live model finishes
with three rows of numbers (tokens/s, KV bytes per token following kv_heads); a bad field is one line and
nothing runs. The core function it shares with benchmarks/speed/gqa_speed.py is checked headless."""

from __future__ import annotations

import pytest
from app_support import app_for, screen_lines, view_mounted, wait_for, wait_ready
from textual.widgets import Input

from tui_lab.analysis import memory
from tui_lab.analysis.format import fmt_bytes
from tui_lab.bench.gqa_speed import check_kv_comparison, compare_kv_heads, kv_choices
from tui_lab.config import ModelConfig
from tui_lab.presets import load_preset

TINY = ModelConfig(name="kv-tiny", family="decoder-only", decoder_layers=2, d_model=32, heads=4, d_ff=64, vocab=64,
                   max_len=64, norm="rmsnorm", positions="rope", activation="swiglu", bias=False, dropout=0.0)


def test_three_models_interleaved_with_measured_kv_bytes():
    progress = []
    report = compare_kv_heads(TINY, prompt_len=8, new_tokens=6, repeats=2, batch=3, threads=1,
                              on_progress=lambda d, t: progress.append((d, t)))
    assert [(r.name, r.kv_heads) for r in report.rows] == [("MHA", 4), ("GQA", 2), ("MQA", 1)]
    assert progress[-1] == (9, 9) and not report.cancelled  # 3 warm-ups + 2 repeats x 3 models
    for r in report.rows:
        assert r.kv_bytes_per_token == memory(TINY.replace(kv_heads=r.kv_heads)).kv_cache_per_token
        assert r.kv_bytes_per_token == 2 * 2 * r.kv_heads * 8 * 4  # 2 x layers x kv heads x d_head x fp32
        assert r.cache_bytes == r.kv_bytes_per_token * 3 * (8 + 6)  # read from the cache's buffers
        assert len(r.step_s) == 2 * 5 and r.tokens_per_s(3) > 0


def test_cancel_between_tokens_keeps_what_was_timed():
    calls = []
    report = compare_kv_heads(TINY, prompt_len=4, new_tokens=8, repeats=3, threads=1,
                              should_stop=lambda: calls.append(1) or len(calls) > 30)
    assert report.cancelled and sum(len(r.step_s) for r in report.rows) < 3 * 3 * 7


@pytest.mark.parametrize("change,sizes,rule", [
    ({}, (60, 8, 1, 1), "prompt + new tokens (68) must fit max_len (64)"),
    ({"heads": 1, "d_model": 32}, (4, 4, 1, 1), "heads (1) must be >= 2"),
    ({"family": "encoder-only", "decoder_layers": 0, "encoder_layers": 2}, (4, 4, 1, 1), "must be decoder-only"),
    ({}, (4, 1, 1, 1), "new tokens (1) must be >= 2"),
])
def test_bad_inputs_are_one_line(change, sizes, rule):
    with pytest.raises(ValueError, match=rule.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")) as err:
        check_kv_comparison(TINY.replace(**change), *sizes)
    assert "\n" not in str(err.value)


def test_gqa_is_the_config_own_grouping_when_it_has_one():
    assert kv_choices(load_preset("llama-toy"))[1] == ("GQA", load_preset("llama-toy").n_kv_heads)
    assert [name for name, _ in kv_choices(TINY.replace(heads=2, d_model=32))] == ["MHA", "MQA"]  # no divisor


async def open_panel(pilot) -> None:
    await wait_ready(pilot)
    await view_mounted(pilot, "speed")
    pilot.app.show_view("speed")
    await pilot.pause()
    await pilot.press("k")
    await pilot.pause()


def fill(app, **values: str) -> None:
    for name, value in values.items():
        app.query_one(f"#kv-{name}", Input).value = value


async def test_a_run_at_80x24_shows_three_rows_with_numbers(monkeypatch):
    monkeypatch.setenv("TUI_LAB_DECODE_THREADS", "1")
    app = app_for("--preset", "llama-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_panel(pilot)
        fill(app, prompt="8", new="6", repeats="2", batch="2")
        await pilot.press("r")
        panel = app.query_one("#sp-kv")
        await wait_for(pilot, lambda: panel.report is not None, 120)
        await pilot.pause()
        lines = screen_lines(app)
        config = app.live.config
        for name, k in kv_choices(config):
            row = next(line.split() for line in lines if line.split()[:2] == [name, str(k)])
            kv = fmt_bytes(memory(config.replace(kv_heads=k)).kv_cache_per_token)
            assert " ".join(row[2:4]) == kv  # KV bytes per token, as the analysis counts them
            report_row = next(r for r in panel.report.rows if r.name == name)
            assert f"{report_row.tokens_per_s(2):,.0f}" in row  # tokens/s, measured
        assert any("a step reads" in line for line in lines)
        assert all(len(line) <= 80 for line in lines)


async def test_a_bad_field_is_one_line_and_nothing_runs():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_panel(pilot)
        fill(app, prompt="two")
        await pilot.press("r")
        await pilot.pause()
        panel = app.query_one("#sp-kv")
        text = "\n".join(screen_lines(app))
        assert "not run: prompt must be a whole number, got 'two'" in text and not panel.running
        fill(app, prompt="250", new="64")
        await pilot.press("r")
        await pilot.pause()
        assert "prompt + new tokens (314) must fit max_len (256)" in "\n".join(screen_lines(app))
        assert not panel.running and panel.report is None
