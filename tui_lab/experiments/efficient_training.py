"""efficient-attention, part 3: held-out loss after the same training budget, exact vs Linformer vs Performer.

Masked-character modelling of the built-in corpus (BERT's objective, `train/mlm.py`) with the bert-toy
architecture at the options' size, one run per seed and attention, the same steps, batches and schedule.
"""

from __future__ import annotations

import statistics
from typing import Any

from tui_lab.experiments.base import Cancel, Progress, check, span
from tui_lab.experiments.result import Result, Table

KINDS = ("softmax", "linformer", "performer")


def training(result: Result, options: dict[str, Any], progress: Progress, cancel: Cancel) -> None:
    """Masked-character modelling, exact vs Linformer vs Performer, one run per seed, the same budget."""
    finals: dict[str, list[float]] = {kind: [] for kind in KINDS}
    params: dict[str, int] = {}
    source, seeds = mlm_source(options["seq_len"]), options["seeds"]
    plot = result.plot("train", "training loss (masked characters), first seed", "step", "loss")
    runs = len(KINDS) * len(seeds)
    for i, (seed, kind) in enumerate((s, k) for s in seeds for k in KINDS):
        check(cancel, "efficient-attention")
        curve = _train(options, kind, seed, source, span(progress, i / runs, (i + 1) / runs), cancel)
        finals[kind].append(curve.final_val)
        params[kind] = curve.params
        if seed == seeds[0]:
            plot.add(kind, curve.steps, curve.losses)
    table = Table(f"held-out masked-character loss after {options['steps']} steps (seeds {list(seeds)})",
                  ["attention", "params", *[f"seed {s}" for s in seeds], "mean"])
    for kind in KINDS:
        table.rows.append([kind, params[kind], *[round(v, 4) for v in finals[kind]],
                           round(statistics.mean(finals[kind]), 4)])
    result.tables["training"] = table
    result.scalars["held_out_loss"] = {kind: round(statistics.mean(v), 4) for kind, v in finals.items()}


def mlm_source(seq_len: int):
    """The built-in corpus, characters plus BERT's mask token, in windows of seq_len (train/mlm.py)."""
    from tui_lab.data.corpus import builtin_corpus
    from tui_lab.data.lm import lm_data
    from tui_lab.data.tokenizers import char_tokenizer
    from tui_lab.train.mlm import MLMSource, with_mask_token

    text = builtin_corpus()
    return MLMSource(lm_data(text, with_mask_token(char_tokenizer(text)), 0.1), seq_len)


def model_config(options: dict[str, Any], kind: str):
    from tui_lab.experiments.training import lm_config

    length = options["seq_len"]
    changes = {"linformer": {"linformer_k": max(1, length // 4)},
               "performer": {"performer_features": options["train_m"]}, "softmax": {}}[kind]
    return lm_config(options | {"preset": "bert-toy"}, max_len=length, self_attention=kind, **changes)


def _train(options: dict[str, Any], kind: str, seed: int, source, progress: Progress, cancel: Cancel):
    from tui_lab.experiments.training import lm_train_config, train_curve

    steps = options["steps"]  # evaluated at the start and the end only: the held-out loss is the result
    train = lm_train_config(options | {"seed": seed}, warmup=min(30, steps // 10), eval_every=steps)
    return train_curve(model_config(options, kind), train, progress, cancel, f"{kind} seed {seed}", data=source)
