"""nat-vs-at: a non-autoregressive decoder emits a whole sentence in one pass, faster and less exact.

Seed 002, section 3.2: an autoregressive (AT) decoder spends one decoder pass per output word; a
non-autoregressive one (NAT, Gu et al. 2018) fills a row of BEGIN tokens in one pass, its length guessed by a
classifier (`nat-length-classifier`) or fixed at the longest target (`nat-max-length`). The seed predicts NAT
is faster and worse: its words are chosen independently, so nothing keeps them consistent. Each mode trains
the same preset on the same task (the task's defaults, the same steps and seed); then held-out exact match
(greedy) and the time to decode held-out sources one at a time (batch 1, as a person generates), with the
decoder passes each took, then again with END ignored so that every mode decodes the task's longest target
(the equal-length comparison: AT's early END otherwise saves it passes). Measured on numbers-de (400 steps,
seed 0): tui_lab/model/nat.py's docstring.
"""

from __future__ import annotations

import time
from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, at_least, check, span
from tui_lab.experiments.result import Result, Table
from tui_lab.experiments.seq2seq import (
    SEQ_HELP,
    SEQ_OPTIONS,
    SEQ_TASKS,
    check_choices,
    rounded,
    task_data,
    task_run,
    task_train_config,
)

MODES = ("autoregressive", "nat-length-classifier", "nat-max-length")


def decode_time(model, task, count: int, stop: bool = True) -> tuple[float, float]:
    """Mean seconds and mean decoder passes per held-out sequence, each decoded alone (greedy). `stop=False`
    ignores END, so every mode decodes the task's longest target: the equal-length comparison."""
    import torch

    from tui_lab.generation import generate

    tok, passes, seconds = task.tokenizer, [], 0.0
    model.eval()
    for src, _ in task.val[:count]:
        x = torch.tensor([src], dtype=torch.long)  # (1, S)
        steps: list[int] = []
        start = time.perf_counter()
        generate(model, x, task.max_target_len, temperature=0.0, bos_id=tok.bos_id,
                 eos_id=tok.eos_id if stop else None,
                 on_step=lambda s, steps=steps: steps.append(s.passes))
        seconds += time.perf_counter() - start
        passes.append(steps[-1])
    return seconds / count, sum(passes) / count


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    from tui_lab.presets import load_preset

    result = Result("nat-vs-at", options)
    task, modes = options["task"], options["modes"]
    data = task_data(task, options["seed"])
    plot = result.plot("loss", f"training loss, {task}", "step", "loss")
    table = result.tables.setdefault("modes", Table(f"{task}: held-out exact match and decoding one at a time", [
        "decoder_mode", "exact match", "ms per sequence", "decoder passes", f"ms at length {data.max_target_len}",
        "val loss"]))
    for i, mode in enumerate(modes):
        check(cancel, "nat-vs-at")
        r = task_run(load_preset(options["preset"], decoder_mode=mode), task_train_config(task, options), data,
                     span(progress, i / len(modes), (i + 0.9) / len(modes)), cancel, mode)
        plot.add(mode, r.steps, r.losses)
        seconds, passes = decode_time(r.trainer.model, data, options["decode"])
        full, full_passes = decode_time(r.trainer.model, data, options["decode"], stop=False)
        key = mode.replace("-", "_")
        result.scalars |= {f"exact_match_{key}": rounded(r.exact_match), f"ms_per_seq_{key}": round(1000 * seconds, 3),
                           f"passes_{key}": round(passes, 2), f"ms_full_length_{key}": round(1000 * full, 3),
                           f"passes_full_length_{key}": round(full_passes, 2)}
        table.rows.append([mode, rounded(r.exact_match, 3), round(1000 * seconds, 2), round(passes, 1),
                           round(1000 * full, 2), rounded(r.val_loss)])
        progress((i + 1) / len(modes), f"{mode} done", result)
    _summarise(result, modes)
    return result


def _summarise(result: Result, modes: tuple[str, ...]) -> None:
    s, lines = result.scalars, []
    if "autoregressive" in modes:
        at = s["ms_per_seq_autoregressive"]
        for mode in (m for m in modes if m != "autoregressive"):
            key = mode.replace("-", "_")
            full = s["ms_full_length_autoregressive"] / max(s[f"ms_full_length_{key}"], 1e-9)
            lines.append(f"{mode}: exact match {s[f'exact_match_{key}']} vs AT's {s['exact_match_autoregressive']}; "
                         f"{at / max(s[f'ms_per_seq_{key}'], 1e-9):.1f}x AT's speed per sequence "
                         f"({s[f'passes_{key}']:g} vs {s['passes_autoregressive']:g} decoder passes), "
                         f"{full:.1f}x at equal length")
    result.notes[:0] = lines or ["add autoregressive to modes to compare against it"]


def _check(options: dict[str, Any]) -> None:
    check_choices(options, "task", tuple(t for t in SEQ_TASKS if t != "names"))
    check_choices(options, "modes", MODES)
    at_least(options, "decode", 1)


EXPERIMENT = Experiment(
    name="nat-vs-at",
    title="Non-autoregressive vs autoregressive decoding",
    lesson="Seed 002, section 3.2: a NAT decoder emits every word in one pass: faster than AT, and worse, since "
           "its words are chosen independently.",
    options={"task": "numbers-de", "modes": MODES, **SEQ_OPTIONS, "decode": 100},
    quick={"task": "copy", "steps": 150, "decode": 30, "eval_examples": 100},  # at 100 AT had not learned copy
    runner=run,
    help={"task": "the task every mode trains on (numbers-de, copy, reverse)",
          "modes": "decoder_mode values compared, comma-separated", **SEQ_HELP,
          "decode": "held-out sources timed one at a time (batch 1, greedy)"},
    check_options=_check,
)
