"""The Model tab's diagram for configs nobody listed: every preset, and every value of every axis (with the fields
it needs) on every toy preset where the config accepts it, drawn narrow and wide. The long tier's translator
100x30 walk at a64af23 (seed 22111683) set kv_heads on the form and the app died drawing the Model tab
(`int('3 kv heads')`: grouped-query attention's note read as the scores' shape); the same diagram died on
llama-toy as shipped, on a Performer and on every ViT, and drew a classifier as "memory"."""

from __future__ import annotations

import re

import pytest

from tui_lab.analysis import shape_trace
from tui_lab.app.views.architecture.model_diagram import model_diagram
from tui_lab.config import AXES
from tui_lab.presets import list_presets, load_preset

TOYS = [name for name in list_presets() if name.endswith("-toy")]


def configs():
    """(label, config) for every preset, then every axis value on every toy that accepts it."""
    out = [(name, load_preset(name)) for name in list_presets()]
    for toy in TOYS:
        for axis, spec in AXES.items():
            for value in spec.values:
                try:
                    config = load_preset(toy, **{axis: value, **spec.companions.get(value, {})})
                except ValueError:
                    continue  # refused in one line by the form; nothing to draw
                out.append((f"{toy} {axis}={value}", config))
    # BERT's classifier needs a second change (the classifier always has its bias): the one pair added by hand
    out.append(("bert-toy head=classifier", load_preset("bert-toy", head="classifier", classes=3, output_bias=False)))
    return out


def test_the_generated_configs_reach_the_shapes_that_broke_the_diagram():
    labels = [label for label, _ in configs()]
    assert len(labels) > 200
    for wanted in ("llama-toy", "vit-toy", "gpt2-toy self_attention=performer", "bert-toy head=classifier",
                   "transformer-2017-toy kv_heads=1"):
        assert wanted in labels, wanted


@pytest.mark.parametrize("width", [40, 200])
def test_every_config_draws_its_whole_path_with_the_traces_shapes(width):
    for label, config in configs():
        rows = shape_trace(config, 2, 9, 7)
        text = "\n".join(model_diagram(config, 2, 9, 7, width))
        # the input's shape, the first stack's embedding output and the output (logits or labels) are drawn
        for row in (rows[0], rows[-1]):
            assert "= (" + ", ".join(map(str, row.output_shape)) + ")" in text, (label, row.path)
        assert "= (" + ", ".join(map(str, rows[0].input_shape)) + ")" in text, (label, "input")
        # each attention's weights: the numbers of its trace note, under the axes the note names
        weights = re.findall(r"(scores|features) \(([^)]*)\) = \(([\d,]+)\)", text)
        notes = " ".join(r.note.replace(", ", ",") for r in rows if r.kind.endswith("attention"))
        assert weights, label
        for _, _, numbers in weights:
            assert f"({numbers})" in notes, (label, numbers)
        # at 40 columns (the 80x24 panel) no line is wider than the panel: nothing needs a sideways scroll
        assert width > 40 or max(map(len, text.splitlines())) <= 44 or config.family == "encoder-decoder", label
        if config.head == "classifier":
            assert "logits: a score per class" in text and "memory" not in text, label


def test_every_config_fills_the_other_tabs():
    """Summary, KV table, the paper's note, the Layer diagram and Compare (against gpt2-toy) for the same configs:
    each gives its text (none of them may take the app down on a config the form accepts)."""
    from tui_lab.analysis import count_params
    from tui_lab.app.views.architecture.compare import compare_table
    from tui_lab.app.views.architecture.tables import kv_table, paper_note, summary_text
    from tui_lab.app.widgets.block_diagram import layer_diagram

    reference = load_preset("gpt2-toy")
    for label, config in configs():
        paper_note(config)  # empty for a model no paper describes
        texts = [summary_text(config, 2, 9), layer_diagram(config), compare_table(config, reference, "current",
                 "gpt2-toy", 9), kv_table(config) if config.has_decoder else "no decoder: no KV cache"]
        assert all(str(t) for t in texts), label
        assert sum(count_params(config).components().values()) == count_params(config).total, label
