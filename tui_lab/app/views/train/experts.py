"""The Train view's mixture-of-experts panel: tokens each layer routed to each expert, live, as a heatmap.

The counts come in every step event (`StepEvent.expert_load`, computed by the trainer in its process);
this module only names the rows and columns and draws them. Balanced routing is an even row.
"""

from __future__ import annotations

from textual.widgets import Static

from tui_lab.app.widgets.heatmap import Heatmap
from tui_lab.config import ModelConfig


def layer_labels(config: ModelConfig) -> list[str]:
    """Row names in the order the trainer reports them: the encoder's layers run before the decoder's."""
    if config.family == "decoder-only":
        return [f"layer {i}" for i in range(config.decoder_layers)]
    return [f"enc {i}" for i in range(config.encoder_layers)] + [f"dec {i}" for i in range(config.decoder_layers)]


def draw_expert_load(heatmap: Heatmap, title: Static, config: ModelConfig, stats: dict) -> None:
    load = stats.get("expert_load")
    if not load:
        return
    cols = [f"e{i}" for i in range(len(load[0]))]
    heatmap.set_grid(load, layer_labels(config), cols, lo=0.0, axes=("layer", "expert"))
    title.update(f"experts, step {stats.get('step', 0)}: tokens routed, top-{config.experts_per_token} "
                 f"of {config.experts}")
