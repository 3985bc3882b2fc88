"""One layer drawn as text from the config: where the norm sits, and where cross-attention reads memory.

Post-LN (2017, section 3.1): x = LN(x + f(x)), the norm on the main path. Pre-LN (GPT-2): x = x + f(LN(x)),
the main path only adds. Lines stay within ~40 columns (the panel at 80x24) and are never wrapped: the
details (heads, sizes, where K and V come from) sit on their own line under each sublayer.
"""

from __future__ import annotations

from textual.widgets import Static

from tui_lab.config import ModelConfig


def _sublayer(c: ModelConfig, name: str, detail: str) -> list[str]:
    norm = {"rmsnorm": "RMSNorm", "batchnorm": "BatchNorm"}.get(c.norm, "LayerNorm")
    if c.norm_position == "pre":
        arm = f"  ├─► {norm} ─► {name} ─┐"
        return [arm, f"  │    {detail}", "  + ◄" + "─" * (len(arm) - 6) + "┘", "  │"]
    arm = f"  ├─► {name} ─┐"
    return [arm, f"  │    {detail}", "  + ◄" + "─" * (len(arm) - 6) + "┘",
            f"  {norm}  ◄ on the main path", "  │"]


def _ffn(c: ModelConfig) -> str:
    inner = {"swiglu": "SwiGLU", "geglu": "GeGLU", "reglu": "ReGLU"}.get(c.activation, c.activation)
    if c.ffn == "moe":  # the router sends each token to experts_per_token of the experts
        return f"top-{c.experts_per_token} of {c.experts} experts, each {c.d_model}→{c.d_ff}→{c.d_model}, {inner}"
    return f"{c.d_model}→{c.d_ff}→{c.d_model}, {inner}"


def _stack(c: ModelConfig, title: str, count: int, cross: bool, causal: bool) -> list[str]:
    lines = [f"{title} x{count}", "  y" if cross or causal else "  x", "  │"]
    lines += _sublayer(c, "masked self-attn" if causal else "self-attention", f"{c.heads} heads")
    if cross:
        lines += _sublayer(c, "cross-attention", "Q from y; K, V from memory")
    if c.ffn != "none":  # attention-only blocks (ffn 'none') have no FFN sublayer
        lines += _sublayer(c, "FFN", _ffn(c))
    lines.append("  ▼  then a final norm" if c.final_norm else "  ▼")
    return lines


def layer_diagram(c: ModelConfig) -> str:
    """Text art of one layer per stack; the first line names the norm rule."""
    rule = "pre-LN: x + f(LN(x))" if c.norm_position == "pre" else "post-LN: LN(x + f(x))"
    lines = [rule, ""]
    if c.family == "decoder-only":
        lines += _stack(c, "decoder block (no cross-attn)", c.decoder_layers, False, True)
    else:
        lines += _stack(c, "encoder layer", c.encoder_layers, False, False)
        if c.family == "encoder-decoder":
            lines += ["  ║  encoder output = memory (N, S, E),", "  ║  read by every decoder layer", ""]
            lines += _stack(c, "decoder layer", c.decoder_layers, True, True)
    return "\n".join(lines)


class BlockDiagram(Static):
    def show(self, config: ModelConfig) -> None:
        self.update(layer_diagram(config))
