"""The tour: seed 000's steps (2017 Transformer vs GPT-2), each one driving the live views.

A step is data: a title, a text built from the live config (numbers computed, not pasted), the view it
belongs to, and `drive(app)` which sets that view up (loads a preset, fills the attention input, picks
the grid). Text in English; the seed is the source of the ideas and of the 'gesehen'/'seen' example.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tui_lab.analysis import count_params, memory
from tui_lab.analysis.format import fmt_bytes
from tui_lab.config import ModelConfig
from tui_lab.presets import load_preset

SOURCE = "I have seen the film today"
TARGET = "<bos> ich habe heute den Film gesehen"
TOY_2017 = "transformer-2017-toy"


@dataclass(frozen=True)
class Step:
    title: str
    text: Callable[[ModelConfig], str]
    view: str  # the tab id the step's "go" key jumps to
    drive: Callable[[Any], None]


def _ensure_encoder_decoder(app: Any) -> None:
    """Cross-attention needs two stacks: switch the live model to the 2017 toy if it has one."""
    if app.live.config.family != "encoder-decoder":
        config = load_preset(TOY_2017)
        app.view("architecture").load_preset(TOY_2017)
        app.rebuild_model(config, origin=f"preset {TOY_2017} (tour)")


def _attention(app: Any, kind: str, cursor: tuple[str, str] | None = None, needs_two_stacks: bool = True) -> None:
    if needs_two_stacks:
        _ensure_encoder_decoder(app)
    app.view("attention").set_inputs(SOURCE, TARGET, kind=kind, cursor=cursor)


def _architecture(app: Any, preset: str, tab: str) -> None:
    view = app.view("architecture")
    view.load_preset(preset)
    view.show_tab(tab)


def _rnn_text(c: ModelConfig) -> str:
    n = len(SOURCE.split())
    return (f"Before 2017, translation models were recurrent networks (RNNs) reading one token at a time: "
            f"each step needs the previous one, so a GPU cannot run them in parallel. Self-attention links "
            f"every pair of positions with one matrix multiplication.\n\n"
            f"For the {n}-token sentence '{SOURCE}':  RNN: {n} sequential steps  ·  attention: 1 step "
            f"(a {n} x {n} score matrix, shown in the Attention view).")


def _stacks_text(c: ModelConfig) -> str:
    base, gpt = load_preset("transformer-2017-base"), load_preset("gpt2-small")
    return (f"GPT-2 has one stack. The 2017 Transformer has two: an encoder that reads the source sentence and "
            f"a decoder that writes the translation and reads the encoder's output through cross-attention. "
            f"It also normalises after each residual add, uses fixed sine waves for positions and ReLU in the MLP.\n\n"
            f"2017 base: {base.encoder_layers} encoder + {base.decoder_layers} decoder layers, d_model {base.d_model}, "
            f"{count_params(base).total:,} parameters.  GPT-2 small: {gpt.decoder_layers} blocks, d_model "
            f"{gpt.d_model}, {count_params(gpt).total:,}.  The Compare tab highlights every difference.")


def _translate_text(c: ModelConfig) -> str:
    s, t = len(SOURCE.split()), len(TARGET.split())
    return (f"The encoder reads the English sentence once. The decoder then writes German one token at a time, "
            f"like GPT-2, reading the encoder output on every pass. In training the correct translation is fed in "
            f"(teacher forcing) and the causal mask hides the future, so all positions run in one pass.\n\n"
            f"Here: encoder 1 pass over {s} tokens · decoder {t} passes when generating, 1 pass with teacher "
            f"forcing. The Attention view shows the decoder's masked self-attention: a lower triangle.")


def _kinds_text(c: ModelConfig) -> str:
    s, t = len(SOURCE.split()), len(TARGET.split())
    return (f"Three kinds of attention, all softmax(Q·Kᵀ / √d_k)·V. The encoder sees the whole source; the "
            f"decoder sees only earlier target tokens; cross-attention lets each target token see the whole "
            f"source. GPT-2 has only the middle one.\n\n"
            f"source x source {s} x {s}  ·  target x target {t} x {t}  ·  target x source {t} x {s}.  "
            f"Press k in the grid to cycle through them.")


def _cross_text(c: ModelConfig) -> str:
    s, t = len(SOURCE.split()), len(TARGET.split())
    return (f"In cross-attention the queries come from the decoder and the keys and values from the encoder "
            f"output, so the score matrix is target x source, not square. Each row looks for the source word it "
            f"needs next: 'gesehen' looks back at 'seen', although German moved it to the end.\n\n"
            f"Q {t} x d_k · Kᵀ d_k x {s} -> {t} x {s}  (d_k = {c.d_head} in the live model). The cursor sits on "
            f"('gesehen', 'seen'); move it, or the mouse, to read other cells. Random weights: a trained model "
            f"would put its weight there.")


def _norm_text(c: ModelConfig) -> str:
    return ("The 2017 model normalises after each residual add (post-LN), which puts LayerNorm on the main path "
            "of the residual stream; deep post-LN models need a long learning-rate warmup (4,000 steps in the "
            "paper). GPT-2 normalises the copy each sublayer reads (pre-LN), so the main path only adds.\n\n"
            "LN(x + f(x))  ->  x + f(LN(x)).  The Layer tab draws the 2017 layer; set norm_position to 'pre' in "
            "the form and watch the diagram change.")


def _positions_text(c: ModelConfig) -> str:
    return (f"Attention ignores order, so both models add a position vector to each token. The 2017 model computes "
            f"it from sine and cosine waves: no parameters, any position works. GPT-2 learns a table of 1,024 rows "
            f"(pick 'positions: learned' for a GPT-style live model). Shifting by k positions rotates each "
            f"sin/cos pair by a fixed angle.\n\n"
            f"PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(...), d_model = {c.d_model}: "
            f"rows are positions, columns dimensions; the left columns wave fast, the right ones slowly.")


def _kv_text(c: ModelConfig) -> str:
    mem = memory(c)
    return (f"When generating, each new token attends to every earlier one. Recomputing their keys and values each "
            f"step is wasted work: the KV cache keeps them, so a step only computes the new token's K and V. "
            f"Only causal (decoder) attention can be cached; the encoder's K/V for cross-attention are computed "
            f"once.\n\n"
            f"memory = 2 x layers x heads x d_head x tokens x bytes.  Live model ({c.name}): 2 x {c.decoder_layers} "
            f"x {c.heads} x {c.d_head} x 4 B = {mem.kv_cache_per_token:,} B per token; for {c.max_len:,} tokens "
            f"{fmt_bytes(mem.kv_cache_full)} per sequence.\n\n"
            f"g opens the Speed view: measure cached vs uncached generation of the live model.")


STEPS: tuple[Step, ...] = (
    Step("Before: one step at a time", _rnn_text, "attention",
         lambda app: _attention(app, "encoder-self" if app.live.config.has_encoder else "decoder-self",
                                needs_two_stacks=False)),
    Step("GPT-2 vs the 2017 Transformer", _stacks_text, "architecture",
         lambda app: _architecture(app, "transformer-2017-base", "arch-compare")),
    Step("Translating a sentence", _translate_text, "attention", lambda app: _attention(app, "decoder-self")),
    Step("Three kinds of attention", _kinds_text, "attention", lambda app: _attention(app, "encoder-self")),
    Step("Cross-attention", _cross_text, "attention", lambda app: _attention(app, "cross", ("gesehen", "seen"))),
    Step("Post-LN vs pre-LN", _norm_text, "architecture",
         lambda app: _architecture(app, "transformer-2017-base", "arch-layer")),
    Step("Sinusoidal positions", _positions_text, "attention",
         lambda app: _attention(app, "pos-sinusoidal", needs_two_stacks=False)),
    Step("The KV cache", _kv_text, "speed", lambda app: None),  # the Speed view measures what the text claims
)
