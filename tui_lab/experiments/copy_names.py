"""copy-names: a pointer-generator repeats names it never saw; the same model without one cannot.

Seed 002 (section 4, Tips 1): a chat-bot must repeat a name it has never met ("I am Zebulon" -> "nice to meet
you Zebulon"). The `names` task's held-out names occur neither in training nor in the vocabulary, so a model
that can only choose vocabulary words answers <unk> for them; with `copy = true` (See et al. 2017's
pointer-generator) it mixes a copy distribution over the source words into its output and can say the name.
Both runs train the same preset with the task's defaults, the same steps and seed; only `copy` differs.
Measured (seed 0, 150 steps, 2 shared cores at load ~10-16): held-out exact match 0.000 without copy (val loss
0.0066: the templates are learned, the names cannot be said) and 1.000 with it (0.0058).
"""

from __future__ import annotations

from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, check, span
from tui_lab.experiments.result import Result, Table
from tui_lab.experiments.seq2seq import SEQ_HELP, SEQ_OPTIONS, check_counts, rounded, task_run, task_train_config

RUNS = ((False, "without copy", "no_copy"), (True, "with copy", "copy"))


def unseen_names_said(trainer, limit: int) -> tuple[float, list[tuple[str, str, str]]]:
    """The share of held-out pairs whose greedy output says the source's out-of-vocabulary word, and the pairs."""
    vocab = trainer.source.tokenizer.hf.get_vocab()
    rows = trainer.source.translations(trainer.model, "cpu", "val", limit)
    said = [any(w not in vocab and w in out.split() for w in src.split()) for src, out, _ in rows]
    return sum(said) / max(1, len(rows)), rows


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    from tui_lab.experiments.seq2seq import task_data
    from tui_lab.presets import load_preset

    result = Result("copy-names", options)
    data, plot = task_data("names", options["seed"]), result.plot("loss", "training loss, names", "step", "loss")
    table = result.tables.setdefault("runs", Table("held-out names (never in the vocabulary)", [
        "run", "exact match", "unseen names said", "val loss"]))
    examples = result.tables.setdefault("examples", Table("held-out sources and each run's greedy output",
                                                          ["source", "target", *(label for _, label, _ in RUNS)]))
    outputs = {}
    for i, (copy, label, key) in enumerate(RUNS):
        check(cancel, "copy-names")
        r = task_run(load_preset(options["preset"], copy=copy), task_train_config("names", options), data,
                     span(progress, i / 2, (i + 1) / 2), cancel, label)
        plot.add(label, r.steps, r.losses)
        said, rows = unseen_names_said(r.trainer, options["eval_examples"])
        outputs[key] = rows[:options["examples"]]
        table.rows.append([label, rounded(r.exact_match, 3), round(said, 3), rounded(r.val_loss)])
        result.scalars |= {f"exact_match_{key}": rounded(r.exact_match), f"unseen_said_{key}": round(said, 4),
                           f"val_loss_{key}": rounded(r.val_loss)}
        progress((i + 1) / 2, f"{label} done", result)
    for (src, out0, tgt), (_, out1, _) in zip(outputs["no_copy"], outputs["copy"], strict=True):
        examples.rows.append([src, tgt, out0, out1])
    s = result.scalars
    result.notes[:0] = [f"held-out exact match: {s['exact_match_no_copy']} without copy, {s['exact_match_copy']} "
                        f"with it; the unseen name said in {s['unseen_said_no_copy']:.0%} vs "
                        f"{s['unseen_said_copy']:.0%} of answers",
                        "without copy the model can only choose vocabulary words, so an unseen name comes out <unk>"]
    return result


def _check(options: dict[str, Any]) -> None:
    check_counts(options)


EXPERIMENT = Experiment(
    name="copy-names",
    title="The copy mechanism says unseen names",
    lesson="Seed 002, section 4, Tips 1: a chat-bot must repeat names it has never seen; a copy mechanism "
           "(pointer-generator) takes them from the source.",
    options={**SEQ_OPTIONS, "examples": 6},
    quick={"steps": 100, "eval_examples": 200},
    runner=run,
    help={**SEQ_HELP, "steps": "training steps per run (0: the names task's 150)",
          "examples": "held-out pairs shown with both runs' outputs"},
    check_options=_check,
)
