"""lora: fine-tune a trained toy with LoRA (through `peft`) beside full fine-tuning, then merge and save.

Seed 001: fine-tuning, LoRA, prefix tuning. LoRA (Hu et al. 2021) freezes the weights and learns, for each
adapted Linear W (out x in), a low-rank update B A with A (r x in) and B (out x r), so it trains
r x (in + out) numbers per Linear instead of in x out. Here the shipped English toy (`gpt2-toy-english`)
learns a text it never saw (number sentences, `new_text`), once with LoRA on the attention's fused qkv and
output projections and once with every weight free; both loss curves are kept. The adapters are then merged
into the weights (`merge_and_unload`) and saved as an ordinary lab checkpoint, and the merged model's logits
are checked against the adapted model's.
"""

from __future__ import annotations

import random
import time
from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, at_least, span
from tui_lab.experiments.result import Result, Table
from tui_lab.experiments.training import train_curve

WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen twenty").split()


def new_text(sentences: int = 3000, seed: int = 0) -> str:
    """Sentences the English toy never read: small sums and differences in words ("Seven plus two makes nine.")."""
    rng = random.Random(seed)
    lines = []
    for _ in range(sentences):
        a, b = rng.randint(0, 10), rng.randint(0, 10)
        if rng.random() < 0.5:
            lines.append(f"{WORDS[a].capitalize()} plus {WORDS[b]} makes {WORDS[a + b]}.")
        else:
            lines.append(f"{WORDS[a + b].capitalize()} minus {WORDS[b]} leaves {WORDS[a]}.")
    return " ".join(lines)


def lora_config(options: dict[str, Any]):
    from peft import LoraConfig

    return LoraConfig(r=options["lora_rank"], lora_alpha=options["lora_alpha"], lora_dropout=0.0,
                      target_modules=list(options["targets"]))


def adapted_linears(model, targets: tuple[str, ...]) -> list[tuple[str, int, int]]:
    """(name, in, out) of every Linear LoRA adapts: those whose last name part is one of `targets`."""
    from torch import nn

    return [(name, m.in_features, m.out_features) for name, m in model.named_modules()
            if isinstance(m, nn.Linear) and name.rsplit(".", 1)[-1] in targets]


def expected_trainable(model, options: dict[str, Any]) -> int:
    """LoRA's count from the shapes alone: rank x (in + out) per adapted Linear."""
    return sum(options["lora_rank"] * (n_in + n_out) for _, n_in, n_out in adapted_linears(model, options["targets"]))


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    from peft import get_peft_model

    from tui_lab.data.lm import lm_data
    from tui_lab.loading import load_model

    progress(0.0, f"loading {options['model']}")
    base = load_model("preset", options["model"], seed=options["seed"])
    data = lm_data(new_text(seed=options["seed"]), base.tokenizer)
    adapted = adapted_linears(base.model, options["targets"])
    if not adapted:
        raise ValueError(f"targets ({','.join(options['targets'])}): no Linear of {options['model']} has that name")
    expected = expected_trainable(base.model, options)
    peft_model = get_peft_model(base.model, lora_config(options))
    lora_model = peft_model.base_model.model  # our Transformer, its Linears wrapped, all else frozen
    trainable = sum(p.numel() for p in lora_model.parameters() if p.requires_grad)
    lora = train_curve(None, _train_config(options, options["lr_lora"]), span(progress, 0.0, 0.45), cancel,
                       "LoRA", data=data, model=lora_model)
    full_model = load_model("preset", options["model"], seed=options["seed"]).model
    full = train_curve(None, _train_config(options, options["lr_full"]), span(progress, 0.45, 0.9), cancel,
                       "full", data=data, model=full_model)
    progress(0.92, "merging the adapters and saving")
    saved, merged_diff = _merge_and_save(peft_model, lora.model, base.tokenizer, data, options)
    result = Result("lora", options)
    result.scalars = {"trainable_params": trainable, "trainable_expected": expected, "full_params": full.params,
                      "trainable_share": round(trainable / full.params, 5),
                      "start_val_loss": round(lora.val_losses[0], 4), "lora_val_loss": _round(lora.final_val),
                      "full_val_loss": _round(full.final_val), "merged_max_logit_diff": merged_diff,
                      "checkpoint": saved}
    _draw(result, lora, full, adapted, options)
    return result


def _train_config(options: dict[str, Any], lr: float):
    from tui_lab.train.config import train_config_for

    steps = options["steps"]
    return train_config_for(None, steps=steps, batch_size=options["batch_size"], seq_len=options["seq_len"], lr=lr,
                            seed=options["seed"], warmup=min(10, steps // 10), eval_every=max(steps // 5, 1),
                            eval_batches=4, sample_every=0, weight_decay=0.0)


def _merge_and_save(peft_model, lora_model, tokenizer, data, options: dict[str, Any]) -> tuple[str, float]:
    """Merge B A into each weight, save a plain checkpoint, load it back and compare logits with the adapters'."""
    import torch

    from tui_lab.checkpoint import checkpoint_bytes, load_checkpoint, save_checkpoint
    from tui_lab.paths import exports_dir
    from tui_lab.served import check_room

    x, _ = data.batch("val", 4, options["seq_len"], torch.Generator().manual_seed(0))
    lora_model.eval()
    with torch.no_grad():
        adapted_logits = lora_model(x)
    merged = peft_model.merge_and_unload()
    folder = options["out"] or str(exports_dir() / f"lora-merged-{time.strftime('%Y%m%d-%H%M%S')}")
    check_room(checkpoint_bytes(merged), "lora's merged checkpoint")  # served: queued runs cannot pass the quota
    save_checkpoint(folder, merged, tokenizer, meta={"lora": {k: list(v) if isinstance(v, tuple) else v
                                                              for k, v in options.items()}})
    loaded = load_checkpoint(folder)
    with torch.no_grad():
        diff = (loaded.model.eval()(x) - adapted_logits).abs().max().item()
    return str(folder), diff


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _draw(result: Result, lora, full, adapted, options: dict[str, Any]) -> None:
    train = result.plot("loss", "training loss on the new text", "step", "train loss")
    train.add(f"LoRA r={options['lora_rank']}", lora.steps, lora.losses)
    train.add("full fine-tuning", full.steps, full.losses)
    val = result.plot("val", "validation loss on the new text", "step", "val loss")
    val.add(f"LoRA r={options['lora_rank']}", lora.val_steps, lora.val_losses)
    val.add("full fine-tuning", full.val_steps, full.val_losses)
    rank = options["lora_rank"]
    table = Table("adapted Linears: rank x (in + out) each", ["module", "in", "out", "LoRA params", "full params"])
    table.rows = [[name, n_in, n_out, rank * (n_in + n_out), n_in * n_out] for name, n_in, n_out in adapted]
    result.tables["adapted"] = table
    s = result.scalars
    result.notes = [
        f"LoRA trains {s['trainable_params']:,} numbers ({100 * s['trainable_share']:.2f}% of {s['full_params']:,}): "
        f"val loss {s['start_val_loss']} -> {s['lora_val_loss']}; full fine-tuning {s['full_val_loss']}",
        f"merged and saved to {s['checkpoint']} (loads in the lab: --checkpoint); merged vs adapted logits differ "
        f"by at most {s['merged_max_logit_diff']:.1e}"]


def _check(options: dict[str, Any]) -> None:
    from tui_lab.presets import list_presets
    from tui_lab.shipped import shipped_checkpoint, shipped_config_data, shipped_names

    model = options["model"]
    if model in list_presets() and shipped_checkpoint(model) is None:  # random weights, and no tokenizer to feed
        toys = [name for name in shipped_names() if shipped_config_data(name).get("family") == "decoder-only"]
        raise ValueError(f"model ({model}) is a random preset: it has no tokenizer and nothing learned to fine-tune; "
                         f"use a shipped toy ({', '.join(toys)})")
    for name, low in (("lora_rank", 1), ("steps", 1), ("batch_size", 1), ("seq_len", 2)):
        at_least(options, name, low)
    for name in ("lr_lora", "lr_full", "lora_alpha"):
        if options[name] <= 0:
            raise ValueError(f"{name} ({options[name]}) must be a positive number")


EXPERIMENT = Experiment(
    name="lora",
    title="LoRA vs full fine-tuning",
    lesson="Seed 001: fine-tuning, LoRA, prefix tuning: adapt a trained model to a new task by training a small "
           "low-rank update (rank x (in + out) per Linear) instead of every weight.",
    options={"model": "gpt2-toy-english", "lora_rank": 4, "lora_alpha": 8.0, "targets": ("qkv", "out"),
             "steps": 150, "batch_size": 8, "seq_len": 64, "lr_lora": 1e-2, "lr_full": 1e-3, "seed": 0, "out": "",
             "threads": 1},
    quick={"steps": 40},
    runner=run,
    help={"model": "the trained model fine-tuned (a shipped toy: a random preset has no tokenizer)",
          "lora_rank": "r, the rank of B A",
          "lora_alpha": "LoRA's alpha (the update is scaled by alpha / r)",
          "targets": "names of the Linears adapted (qkv: the fused q/k/v projection, out: attention's output)",
          "steps": "steps of each fine-tuning run", "lr_lora": "peak learning rate of the LoRA run",
          "lr_full": "peak learning rate of full fine-tuning", "out": "where the merged checkpoint goes "
          "(empty: the exports folder)", "threads": "torch CPU threads for the runs (the toy's ops are too small "
          "to share out)"},
    check_options=_check,
)
