"""Architecture's Compare tab: what it costs (total and active parameters, KV cache and FLOPs per token) and
what changed (every differing field, axes included), read off the rendered screen at 80x24 and at 160x50."""

from __future__ import annotations

import pytest
from app_support import app_for, screen_lines, wait_for
from rich.console import Console
from textual.widgets import Input, Select

from tui_lab.analysis import count_params, flops_per_token, memory
from tui_lab.analysis.format import fmt_bytes, fmt_count
from tui_lab.app.views.architecture.compare import attention_kind, compare_table, cost_rows, field_rows
from tui_lab.presets import load_preset

PANE = 36  # the form's width at 80 columns: the Compare pane starts right of it (wider from 120 columns)


async def compare_screen(a: str, b: str, size: tuple[int, int], length: str = "16") -> list[str]:
    """The Compare pane's lines (the form's columns cut off), as a person sees them."""
    app = app_for("--preset", "gpt2-small", build=False)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: bool(app.query("#shape-seq")))
        app.query_one("#shape-seq", Input).value = length
        app.view("architecture").show_tab("arch-compare")
        await wait_for(pilot, lambda: bool(app.query("#cmp-a")))  # the tab's contents mount when it opens
        app.query_one("#cmp-a", Select).value = a
        app.query_one("#cmp-b", Select).value = b
        await pilot.pause()
        await pilot.pause()
        pane = app.query_one("#arch-results").region.x  # right of the form and its border
        return [line[pane:] for line in screen_lines(app)]


def row(lines: list[str], label: str) -> list[str]:
    """The cells of the first line that starts with `label`, split on runs of spaces."""
    for line in lines:
        text = line.strip(" ▕▁▂▃▄▅▆▇█")
        if text.startswith(label + " "):
            return [cell.strip() for cell in text[len(label):].split("  ") if cell.strip()]
    raise AssertionError(f"no row {label!r} in:\n" + "\n".join(lines))


async def test_mixtral_costs_at_80x24_total_active_kv_and_flops():
    lines = await compare_screen("gpt2-small", "mixtral-8x7b", (80, 24))
    gpt2, mixtral = load_preset("gpt2-small"), load_preset("mixtral-8x7b")
    counted = count_params(mixtral)
    assert counted.total == 46_702_792_704  # transformers' MixtralForCausalLM(MixtralConfig())
    assert counted.active < counted.total
    assert row(lines, "params") == [f"{count_params(gpt2).total:,}", "46,702,792,704"]
    assert row(lines, "active") == [f"{count_params(gpt2).total:,}", f"{counted.active:,}"]
    # 2 x 32 layers x 8 kv heads x 128 d_head x 4 bytes; GPT-2: 2 x 12 x 12 x 64 x 4
    assert row(lines, "KV/token") == [fmt_bytes(2 * 12 * 12 * 64 * 4), fmt_bytes(2 * 32 * 8 * 128 * 4)]
    assert row(lines, "attention") == ["MHA 12/12", "GQA 8/32"]
    assert row(lines, "FLOPs/tok") == [fmt_count(flops_per_token(gpt2, 16)), fmt_count(flops_per_token(mixtral, 16))]
    assert any("2 of 8 experts" in line for line in lines)
    assert all(len(line.rstrip()) <= 80 - PANE for line in lines)


async def test_gpt2_vs_llama_lists_every_differing_field_at_a_large_size():
    lines = await compare_screen("gpt2-small", "llama-2-7b", (160, 50), length="128")
    gpt2, llama = load_preset("gpt2-small"), load_preset("llama-2-7b")
    changed = [r for r in field_rows(gpt2, llama) if r[3]]
    for axis in ("norm", "positions", "activation", "tie_embeddings", "bias", "d_model"):
        assert axis in [name for name, *_ in changed]
    assert any(f"what changed: {len(changed)} of" in line for line in lines)
    for name, va, vb, _ in changed:
        assert row(lines, name) == [va, vb], name
    assert row(lines, "parameters") == ["124,439,808", "6,738,415,616", f"{6_738_415_616 / 124_439_808:.2f}x"]
    flops = row(lines, "FLOPs / token")
    assert flops[:2] == [fmt_count(flops_per_token(gpt2, 128)), fmt_count(flops_per_token(llama, 128))]
    start = next(i for i, line in enumerate(lines) if "same in both" in line)
    same = " ".join(line.strip(" ▕") for line in lines[start:start + 4])  # the sentence wraps
    assert "kv_heads" in same and "experts" in same  # equal fields are named, not hidden


def test_cost_rows_follow_kv_heads_and_the_active_experts():
    mixtral, smol = load_preset("mixtral-8x7b"), load_preset("smollm2-135m")
    rows = {r.key: r for r in cost_rows(smol, mixtral, 128)}
    assert rows["active"].b == f"{count_params(mixtral).active:,}" and rows["parameters"].b == "46,702,792,704"
    assert rows["kv"].a == fmt_bytes(memory(smol).kv_cache_per_token) == fmt_bytes(2 * 30 * 3 * 64 * 4)
    # FLOPs follow the active parameters: the same model with every expert active costs more per token.
    dense_cost = flops_per_token(mixtral.replace(experts_per_token=8), 128)
    assert flops_per_token(mixtral, 128) < dense_cost
    for k, kind in ((32, "MHA"), (8, "GQA"), (1, "MQA")):
        assert attention_kind(mixtral.replace(kv_heads=k)) == kind


@pytest.mark.parametrize("preset", ["bert-base", "vit-base-16"])
def test_an_encoder_has_no_kv_cache(preset):
    rows = {r.key: r for r in cost_rows(load_preset("gpt2-small"), load_preset(preset), 16)}
    assert rows["kv"].b == "no cache"


def test_an_images_flops_are_counted_at_its_own_length():
    """vit-toy is always 17 tokens (4x4 patches and the class token), whatever context the text model is at."""
    vit, gpt = load_preset("vit-toy"), load_preset("gpt2-toy")
    for context in (16, 128):
        rows = {r.key: r for r in cost_rows(gpt, vit, context)}
        assert rows["flops"].a == fmt_count(flops_per_token(gpt, context))
        assert rows["flops"].b == fmt_count(flops_per_token(vit, vit.max_len)) != fmt_count(flops_per_token(vit, 16))
    console = Console(width=60, record=True)
    console.print(compare_table(gpt, vit, "gpt2-toy", "vit-toy", 16))
    assert "context 16 (image 17)" in console.export_text()
