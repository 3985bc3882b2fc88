"""One layer drawn as text from the config: where the norm sits, and where cross-attention reads memory.

Post-LN (2017, section 3.1): x = LN(x + f(x)), the norm on the main path. Pre-LN (GPT-2): x = x + f(LN(x)),
the main path only adds.
"""

from __future__ import annotations

from textual.widgets import Static

from tui_lab.config import ModelConfig


def _sublayer(c: ModelConfig, name: str, side: str = "") -> list[str]:
    norm = "RMSNorm" if c.norm == "rmsnorm" else "LayerNorm"
    if c.norm_position == "pre":
        return [f"  ├──► {norm} ──► {name} ──┐{side}",
                "  + ◄" + "─" * (len(norm) + len(name) + 10) + "┘",
                "  │"]
    return [f"  ├──► {name} ──┐{side}",
            "  + ◄" + "─" * (len(name) + 5) + "┘",
            f"  {norm}            ◄ on the main path: LN(x + f(x))",
            "  │"]


def _ffn(c: ModelConfig) -> str:
    inner = "SwiGLU" if c.activation == "swiglu" else c.activation
    return f"FFN {c.d_model}→{c.d_ff}→{c.d_model} ({inner})"


def _stack(c: ModelConfig, title: str, count: int, cross: bool, causal: bool) -> list[str]:
    attn = f"{'masked ' if causal else ''}self-attention ({c.heads} heads)"
    lines = [f"{title} (x{count})", "  y" if cross or causal else "  x", "  │"]
    lines += _sublayer(c, attn)
    if cross:
        lines += _sublayer(c, f"cross-attention ({c.heads} heads)", "  Q from y; K, V ◄══ encoder output (memory)")
    lines += _sublayer(c, _ffn(c))
    if c.final_norm:
        lines.append("  ▼  (after the last layer: a final norm)")
    else:
        lines.append("  ▼")
    return lines


def layer_diagram(c: ModelConfig) -> str:
    """Text art of one layer per stack; the first line names the norm rule."""
    rule = "pre-LN: x + f(LN(x))" if c.norm_position == "pre" else "post-LN: LN(x + f(x))"
    lines = [f"norm position: {rule}", ""]
    if c.family == "decoder-only":
        lines += _stack(c, "decoder block (GPT-style, no cross-attention)", c.decoder_layers, False, True)
    else:
        lines += _stack(c, "encoder layer", c.encoder_layers, False, False)
        if c.family == "encoder-decoder":
            lines += ["  ║  encoder output = memory (N, S, E), read by every decoder layer", ""]
            lines += _stack(c, "decoder layer", c.decoder_layers, True, True)
    return "\n".join(lines)


class BlockDiagram(Static):
    def show(self, config: ModelConfig) -> None:
        self.update(layer_diagram(config))
