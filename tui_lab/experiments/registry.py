"""The experiments, one module each, listed here in the order a person meets them.

A module defines `EXPERIMENT` (a `base.Experiment`) and imports torch only inside its run, so listing the
experiments (the CLI's `list`, the app's first paint of the view) costs no torch import. Adding one is a
module and a line below.
"""

from __future__ import annotations

import difflib
import importlib

from tui_lab.experiments.base import Experiment

MODULES: dict[str, str] = {
    "order-blindness": "tui_lab.experiments.order_blindness",
    "lora": "tui_lab.experiments.lora",
    "scaling": "tui_lab.experiments.scaling",
    "fused-attention": "tui_lab.experiments.fused_attention",
    "attention-scale": "tui_lab.experiments.attention_scale",
    "length-extrapolation": "tui_lab.experiments.length_extrapolation",
    "post-ln-warmup": "tui_lab.experiments.post_ln_warmup",
    "layernorm-vs-batchnorm": "tui_lab.experiments.layernorm_vs_batchnorm",
    "induction-heads": "tui_lab.experiments.induction_heads",
    "efficient-attention": "tui_lab.experiments.efficient_attention",
    # seed 002's sequence-to-sequence methods, then seed 003's mixture of experts
    "nat-vs-at": "tui_lab.experiments.nat_vs_at",
    "copy-names": "tui_lab.experiments.copy_names",
    "scheduled-sampling": "tui_lab.experiments.scheduled_sampling",
    "guided-attention": "tui_lab.experiments.guided_attention",
    "activation-none": "tui_lab.experiments.activation_none",
    "moe-vs-dense": "tui_lab.experiments.moe_vs_dense",
    "sweep": "tui_lab.experiments.sweep",
}


def names() -> tuple[str, ...]:
    return tuple(MODULES)


def get(name: str) -> Experiment:
    """The experiment called `name`, or a one-line ValueError naming the near miss or the choices."""
    if name not in MODULES:
        near = difflib.get_close_matches(name, MODULES, n=1, cutoff=0.6)
        hint = f"did you mean {near[0]!r}?" if near else f"the experiments are {', '.join(MODULES)}"
        raise ValueError(f"unknown experiment {name!r}; {hint}")
    return importlib.import_module(MODULES[name]).EXPERIMENT


def experiments() -> list[Experiment]:
    return [get(name) for name in MODULES]
