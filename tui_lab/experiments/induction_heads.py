"""induction-heads: an induction head forms during training in two attention-only layers, never in one.

Olsson et al. 2022 ("In-context learning and induction heads"); Elhage et al. 2021 ("A Mathematical
Framework for Transformer Circuits"). A sequence holds a random block of k tokens, then the same block again;
predicting the second copy needs "find where this token was before and copy what came after it". That takes
two heads in series: a previous-token head in one layer writes "my predecessor was A" into each position, and
an induction head in a later layer matches its query (the current token A) against those keys (K-composition)
and copies the token found there. One layer has no earlier head to read, so it cannot build the circuit.

Data (`batch`): random tokens over a vocabulary of `vocab`; each sequence of `window` tokens holds a block of
k tokens (k drawn per sequence from k_min..k_max, never token 0) at a random start, the same block right
after it, and filler elsewhere (token 0; `filler=random` draws random tokens), so no fixed offset finds the
copy. The losses compare
predicting the repeated block with predicting the first block (the same k - 1 predictions each: the block's
own first token cannot be known). Models: attention-only (ffn 'none'), one layer vs two, same width, steps,
seed and batches. Scores per head, read from `attn.hook_pattern` on a fixed evaluation batch as TransformerLens
computes them: induction, the mean attention from each token of the repeat to the token right after its earlier
occurrence; previous-token, the mean attention from each position to the one before it. The phase change is
the first evaluation step where the repeated block's loss is under half the first block's. Training is a short
loop of its own (AdamW, linear warmup, then a constant rate) rather than `training.train_curve`: the Trainer
reads a token stream, and the scores are taken between steps on held-out sequences.
After training, the two-layer model's K-composition scores (`mechanism.attribution`) name the layer-0 head the
top induction head reads, and mean ablation of each head (`mechanism.ablation`) measures how much the repeated
block's loss rises without it.

Measured (README, "Watching an induction head form", for the table): on seeds 0-4 of the full run the
two-layer model's repeated-block loss fell under half the first's at steps 650, 400, 600, 650, 450, an induction
head forming on 4 (induction score 0.45-0.75 at that step, 0.89-0.92 at the end; repeated/first 0.03-0.04);
seed 3's fell without one (best score 0.02: its layer-1 heads attend to the earlier occurrence + 4), which is why
each run says whether an induction head formed (`induction_offsets`). The one-layer model: none on 5 of 5
(repeated/first 0.68-0.74, best induction 0.08). The quick run is the full run cut at 1,000 steps, past all five
loss drops (at 500 steps two of five had one).
The defaults come from that tuning: RoPE (learned positions had no phase change in 1,200 steps), and
TransformerLens's init range. Three or four layer-1 heads share the induction job, so the per-layer-0 reading
is measured by ablation too (`_reads`); K-composition named it on 1 seed of the 4 with a head, and on seeds
0-2 RoPE's rotation taken in changed nothing (`composition_scores(rotary=True)` moved no score by more than
0.016: README).
"""

from __future__ import annotations

from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, at_least, heads_divide, span
from tui_lab.experiments.induction_circuit import SCORED, circuit
from tui_lab.experiments.induction_data import Batch, batch, block_losses, head_scores
from tui_lab.experiments.induction_training import PHASE, Run, label, model_config, train
from tui_lab.experiments.result import Grid, Result, Table

__all__ = ["PHASE", "SCORED", "Batch", "EXPERIMENT", "batch", "block_losses", "head_scores", "model_config", "train"]


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    result = Result("induction-heads", options)
    runs = {}
    for i, layers in enumerate((1, 2)):
        runs[layers] = train(options, layers, span(progress, i / 2, (i + 1) / 2), cancel, result)
        progress((i + 1) / 2, f"{layers} layer(s) trained", result)
    for r in runs.values():
        _summarise_run(result, r)
    circuit(result, runs[2], options)
    offsets = [_offsets(result, runs[layers], options) for layers in (2, 1)]
    notes = _notes(result.scalars, options)
    result.notes[:0] = notes[:2] + offsets + notes[2:]  # after each run's phase line, what its heads attend to
    return result


def _offsets(result: Result, r: Run, options: dict[str, Any]) -> str:
    """Whether this run formed an induction head, and the offsets its heads attend to (`induction_offsets`)."""
    import torch

    from tui_lab.experiments.induction_offsets import describe, offsets_found
    from tui_lab.mechanism.cache import layer_points, run_with_cache

    held = batch(options["eval_batch"], options, torch.Generator().manual_seed(options["seed"] + 20_000))
    points = layer_points(r.model.config, "attn.hook_pattern")
    with torch.no_grad():
        _, cache = run_with_cache(r.model, held.ids, names=points)
    found = offsets_found(cache.stack(points), held.start, held.k, r.final_induction, SCORED)
    key = f"{r.layers}l"
    result.scalars.update({f"{key}_{name}": value for name, value in found.items()})
    return describe(found, label(r.layers), r.phase_step is not None)


def _summarise_run(result: Result, r: Run) -> None:
    s, key = result.scalars, f"{r.layers}l"
    s[f"{key}_first_loss"] = round(r.first[-1], 4)
    s[f"{key}_repeat_loss"] = round(r.repeat[-1], 4)
    s[f"{key}_repeat_over_first"] = round(r.repeat[-1] / r.first[-1], 4)
    s[f"{key}_max_induction"] = round(float(r.final_induction.max()), 4)
    s[f"{key}_max_previous_token"] = round(float(r.final_previous.max()), 4)
    s[f"{key}_phase_step"] = r.phase_step
    at = r.steps.index(r.phase_step) if r.phase_step is not None else None
    s[f"{key}_induction_at_phase"] = None if at is None else round(r.induction[at], 4)
    s[f"{key}_induction_before_phase"] = None if not at else round(r.induction[at - 1], 4)
    table = result.tables.setdefault("heads", Table("per head, end of training (two layers, then one)",
                                                    ["model", "layer", "head", "induction", "previous token"]))
    rows = [[label(r.layers), layer, h, round(float(r.final_induction[layer, h]), 4),
             round(float(r.final_previous[layer, h]), 4)]
            for layer in range(r.layers) for h in range(r.final_induction.shape[1])]
    table.rows[:0] = rows if r.layers == 2 else []
    table.rows += rows if r.layers == 1 else []
    result.grids[f"induction_{key}"] = Grid(f"induction score per head ({label(r.layers)})",
                                            [[round(float(v), 4) for v in row] for row in r.final_induction],
                                            [f"L{layer}" for layer in range(r.layers)],
                                            [f"H{h}" for h in range(r.final_induction.shape[1])], ("layer", "head"))


def _notes(s: dict[str, Any], options: dict[str, Any]) -> list[str]:
    def phase(key: str) -> str:
        end = f"repeated/first {s[f'{key}_repeat_over_first']:.2f} at the end"
        if s[f"{key}_phase_step"] is None:
            return f"no phase change ({end})"
        if not s[f"{key}_induction_formed"]:  # the loss fell, but by another circuit (the next note says which)
            return f"the repeated block's loss fell under half the first's at step {s[f'{key}_phase_step']} ({end})"
        return f"phase change at step {s[f'{key}_phase_step']} (induction {s[f'{key}_induction_at_phase']:.2f}; {end})"

    reads = (f"ablated, {s['reads_by_ablation']} drops its induction score most (-{s['reads_by_ablation_drop']:.2f}); "
             f"top loss rise per layer: {s['ablation_top_per_layer']}")
    if s["induction_head"] is None:
        circuit = (f"no induction head to trace: the best layer-1 head by induction score, {s['best_induction_head']}, "
                   f"scores {s['induction_head_score']:.2f}; {reads}")
    else:
        circuit = (f"{s['induction_head']}'s keys read {s['k_composition_top']} most by K-composition "
                   f"({s['k_composition_top_score']:.2f}); {reads}")
    return [f"two layers: {phase('2l')}, best induction score {s['2l_max_induction']:.2f}",
            f"one layer: {phase('1l')}, best induction score {s['1l_max_induction']:.2f}",
            circuit,
            f"{options['steps']} steps, batch {options['batch_size']}, lr {options['lr']}, d_model "
            f"{options['d_model']}, {options['heads']} heads, vocab {options['vocab']}, k {options['k_min']}-"
            f"{options['k_max']} in {options['window']} tokens, seed {options['seed']} (one seed's run: the README's "
            "table says how often each result held over seeds 0-4)"]


def _check(options: dict[str, Any]) -> None:
    at_least(options, "warmup", 1)
    for name in ("steps", "batch_size", "eval_every", "eval_batch", "d_model", "heads", "vocab"):
        at_least(options, name, 1)
    at_least(options, "k_min", 2)
    if options["k_max"] < options["k_min"]:
        raise ValueError(f"k_max ({options['k_max']}) must be at least k_min ({options['k_min']})")
    if 2 * options["k_max"] > options["window"]:
        raise ValueError(f"window ({options['window']}) must hold the block twice (2 x k_max = {2 * options['k_max']})")
    from tui_lab.config import AXES

    if options["positions"] not in AXES["positions"].values:
        raise ValueError(f"positions ({options['positions']!r}) must be one of: {', '.join(AXES['positions'].values)}")
    if options["filler"] not in ("constant", "random"):
        raise ValueError(f"filler ({options['filler']!r}) must be constant or random")
    heads_divide(options)


OPTIONS: dict[str, Any] = {
    "d_model": 64, "heads": 4, "vocab": 64, "window": 64, "k_min": 8, "k_max": 24, "filler": "constant",
    "positions": "rope", "init": 0.8, "steps": 1500, "batch_size": 32, "lr": 3e-3, "warmup": 75,
    "weight_decay": 0.01, "eval_every": 50, "eval_batch": 64, "seed": 0, "threads": 1}


HELP = {
    "d_model": "width of both models", "heads": "attention heads per layer", "vocab": "random tokens drawn from",
    "window": "tokens per sequence", "k_min": "shortest repeated block", "k_max": "longest repeated block",
    "filler": "outside the block and its copy: constant (token 0) or random tokens",
    "positions": "position encoding of both models (rope, learned, sinusoidal, alibi, none)",
    "init": "weights drawn with std init / sqrt(d_model) (TransformerLens: 0.8)",
    "steps": "training steps per model", "batch_size": "sequences per step", "lr": "AdamW learning rate",
    "warmup": "steps of linear warmup to lr (then constant)", "weight_decay": "AdamW weight decay",
    "eval_every": "steps between scorings of the held-out batch", "eval_batch": "held-out sequences scored",
    "seed": "weights and batches (the same for both models)", "threads": "torch CPU threads"}


EXPERIMENT = Experiment(
    name="induction-heads",
    title="Induction heads need two layers",
    lesson="Seed 003 stacks two layers of 4-head attention; what the second layer buys (Olsson et al. 2022): a "
           "repeated block becomes predictable when an induction head forms, suddenly, reading a previous-token "
           "head in the layer before; one attention layer cannot do it.",
    options=OPTIONS,
    # 1,000 steps: the full run cut short after the latest induction head of seeds 0-4 formed (step 650);
    # 500 formed one on 2 seeds of 5 (README)
    quick={"steps": 1000, "eval_every": 25, "seed": 1},
    runner=run,
    help=HELP,
    check_options=_check,
)
