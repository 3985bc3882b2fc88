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

from dataclasses import dataclass
from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, at_least, check, heads_divide, span
from tui_lab.experiments.result import Grid, Result, Table

PHASE = 0.5  # the repeated block's loss under this fraction of the first block's: the phase change
SCORED = 0.5  # an induction head: induction score above this


@dataclass
class Batch:
    ids: Any  # (N, L) tokens
    start: Any  # (N,) first block's start
    k: Any  # (N,) block length

    def masks(self):
        """(first, repeat) boolean masks (N, L-1) over the next-token predictions: position t predicts t+1;
        each block's k - 1 predictable tokens (its first token follows nothing in particular)."""
        import torch

        t = torch.arange(self.ids.shape[1] - 1)[None]  # (1, L-1)
        s, k = self.start[:, None], self.k[:, None]
        first = (t >= s) & (t < s + k - 1)
        repeat = (t >= s + k) & (t < s + 2 * k - 1)
        return first, repeat


def batch(n: int, options: dict[str, Any], generator) -> Batch:
    """n sequences of `window` random tokens, each with a random block of k tokens repeated once."""
    import torch

    window, lo, hi = options["window"], options["k_min"], options["k_max"]
    ids = torch.randint(1, options["vocab"], (n, window), generator=generator)  # token 0: the filler
    k = torch.randint(lo, hi + 1, (n,), generator=generator)
    start = (torch.rand(n, generator=generator) * (window - 2 * k + 1)).long()  # s + 2k <= window
    pos = torch.arange(window)[None]
    second = (pos >= start[:, None] + k[:, None]) & (pos < start[:, None] + 2 * k[:, None])
    src = (pos - k[:, None]).clamp(min=0)  # the earlier copy's position
    ids = torch.where(second, ids.gather(1, src), ids)
    if options["filler"] == "constant":  # outside the two copies every token is 0
        first = (pos >= start[:, None]) & (pos < start[:, None] + k[:, None])
        ids = torch.where(first | second, ids, torch.zeros_like(ids))
    return Batch(ids, start, k)


def block_losses(logits, b: Batch) -> tuple[float, float]:
    """Mean next-token loss on the first block and on the repeated block."""
    import torch.nn.functional as F

    loss = F.cross_entropy(logits[:, :-1].transpose(1, 2), b.ids[:, 1:], reduction="none")  # (N, L-1)
    first, repeat = b.masks()
    return float(loss[first].mean()), float(loss[repeat].mean())


def head_scores(patterns, b: Batch):
    """patterns (layers, N, H, L, L) -> (induction, previous_token), each (layers, H), TransformerLens' way."""
    import torch

    layers, n, heads, length, _ = patterns.shape
    pos = torch.arange(length)[None]
    s, k = b.start[:, None], b.k[:, None]
    repeat = (pos >= s + k) & (pos < s + 2 * k)  # (N, L): every token of the second copy
    source = (pos - k + 1).clamp(min=0)  # the token after the earlier occurrence
    index = source[None, :, None, :, None].expand(layers, n, heads, length, 1)
    to_source = patterns.gather(-1, index)[..., 0]  # (layers, N, H, L)
    mask = repeat[None, :, None, :].float()
    induction = (to_source * mask).sum(dim=(1, 3)) / mask.sum(dim=(1, 3))
    previous = patterns.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(1, 3))  # (layers, H)
    return induction, previous


def model_config(options: dict[str, Any], layers: int):
    from tui_lab.config import ModelConfig

    return ModelConfig(name=f"attn-only-{layers}l", family="decoder-only", decoder_layers=layers,
                       d_model=options["d_model"], heads=options["heads"], d_ff=4 * options["d_model"],
                       vocab=options["vocab"], max_len=options["window"], ffn="none", dropout=0.0,
                       positions=options["positions"], norm_position="pre", tie_embeddings=False)


def init_range(model, scale: float) -> None:
    """Every matrix drawn again from N(0, (scale / sqrt(d_model))^2): TransformerLens' init for its toy models
    (initializer_range 0.8 / sqrt(d_model), 0.1 at d_model 64). The lab's GPT-2 0.02 left attention uniform
    for longer: at 800 steps the repeated block's loss had fallen to 0.74 x the first's with it and to 0.95
    with 0.02 (two layers, seed 0, learned positions)."""
    import torch

    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, scale / model.config.d_model ** 0.5)


@dataclass
class Run:
    layers: int
    steps: list[int]
    first: list[float]
    repeat: list[float]
    induction: list[float]  # the best head's induction score at each evaluation
    previous: list[float]
    model: Any = None
    final_induction: Any = None  # (layers, H)
    final_previous: Any = None
    phase_step: int | None = None
    train_loss: float = 0.0


def evaluate(model, b: Batch):
    """(first loss, repeat loss, induction (layers, H), previous (layers, H)) on batch b."""
    import torch

    from tui_lab.mechanism.cache import layer_points, run_with_cache

    points = layer_points(model.config, "attn.hook_pattern")
    with torch.no_grad():
        logits, cache = run_with_cache(model, b.ids, names=points)
    first, repeat = block_losses(logits, b)
    induction, previous = head_scores(cache.stack(points), b)
    return first, repeat, induction, previous


def train(options: dict[str, Any], layers: int, progress: Progress, cancel: Cancel,
          result: Result | None = None) -> Run:
    """One attention-only model: AdamW at a constant rate after a short warmup, scored every eval_every steps."""
    import torch
    import torch.nn.functional as F

    from tui_lab.model import build_model

    torch.manual_seed(options["seed"])
    model = build_model(model_config(options, layers))
    init_range(model, options["init"])
    opt = torch.optim.AdamW(model.parameters(), lr=options["lr"], weight_decay=options["weight_decay"])
    warmup = options["warmup"]  # a fixed count (not a share of steps): a quick run is the full run cut short
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / warmup))
    data = torch.Generator().manual_seed(options["seed"])  # the same batches for both models
    held = batch(options["eval_batch"], options, torch.Generator().manual_seed(options["seed"] + 10_000))
    run = Run(layers, [], [], [], [], [])
    for step in range(options["steps"] + 1):
        if step % options["eval_every"] == 0 or step == options["steps"]:
            check(cancel, "induction-heads")
            model.eval()
            first, repeat, induction, previous = evaluate(model, held)
            model.train()
            run.steps.append(step)
            run.first.append(first)
            run.repeat.append(repeat)
            run.induction.append(float(induction.max()))
            run.previous.append(float(previous.max()))
            if run.phase_step is None and repeat < PHASE * first:
                run.phase_step = step
            run.final_induction, run.final_previous = induction, previous
            if result is not None:  # the live plot: this run's curves so far, the phase change once it is seen
                _plot(result, run)
            progress(step / options["steps"], f"{_label(layers)} step {step}/{options['steps']}: repeated "
                                              f"{repeat:.2f} vs first {first:.2f}, induction {induction.max():.2f}",
                     result)
        if step == options["steps"]:
            break
        b = batch(options["batch_size"], options, data)
        logits = model(b.ids)
        loss = F.cross_entropy(logits[:, :-1].transpose(1, 2), b.ids[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        run.train_loss = loss.item()
    run.model = model.eval()
    return run


class RepeatLoss:
    """The ablation metric: the next-token loss on the repeated block of `b` (mechanism.ablation's Metric)."""

    name = "repeated-block loss"

    def __init__(self, b: Batch) -> None:
        self.b = b

    def __call__(self, logits, ids) -> float:
        return block_losses(logits, self.b)[1]


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    result = Result("induction-heads", options)
    runs = {}
    for i, layers in enumerate((1, 2)):
        runs[layers] = train(options, layers, span(progress, i / 2, (i + 1) / 2), cancel, result)
        progress((i + 1) / 2, f"{layers} layer(s) trained", result)
    for r in runs.values():
        _summarise_run(result, r)
    _circuit(result, runs[2], options)
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
    return describe(found, _label(r.layers), r.phase_step is not None)


def _label(layers: int) -> str:
    return f"{layers} layer{'s' if layers > 1 else ''}"


def _plot(result: Result, r: Run) -> None:
    """This run's curves (replacing what an earlier evaluation drew) and its phase change as a vertical line."""
    loss = result.plot("loss", "held-out loss: repeated block vs first block", "step", "loss (nats)")
    for plot in result.plots.values():
        plot.curves = [c for c in plot.curves if not c.label.startswith(_label(r.layers))]
    loss.add(f"{_label(r.layers)}, first block", r.steps, r.first)
    loss.add(f"{_label(r.layers)}, repeated block", r.steps, r.repeat)
    score = result.plot("induction", "best head's induction score", "step", "induction score")
    score.add(_label(r.layers), r.steps, r.induction)
    if r.phase_step is not None:  # the phase change, marked as a vertical line on both plots
        top = max(max(r.first), 1.0)
        loss.add(f"{_label(r.layers)}: phase change (step {r.phase_step})", [r.phase_step] * 2, [0.0, top])
        score.add(f"{_label(r.layers)}: phase change (step {r.phase_step})", [r.phase_step] * 2, [0.0, 1.0])


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
    rows = [[_label(r.layers), layer, h, round(float(r.final_induction[layer, h]), 4),
             round(float(r.final_previous[layer, h]), 4)]
            for layer in range(r.layers) for h in range(r.final_induction.shape[1])]
    table.rows[:0] = rows if r.layers == 2 else []
    table.rows += rows if r.layers == 1 else []
    result.grids[f"induction_{key}"] = Grid(f"induction score per head ({_label(r.layers)})",
                                            [[round(float(v), 4) for v in row] for row in r.final_induction],
                                            [f"L{layer}" for layer in range(r.layers)],
                                            [f"H{h}" for h in range(r.final_induction.shape[1])], ("layer", "head"))


def _circuit(result: Result, r: Run, options: dict[str, Any]) -> None:
    """The two-layer model's circuit: the induction head, the layer-0 head its keys read, the ablations."""
    import torch

    from tui_lab.mechanism.ablation import head_ablation
    from tui_lab.mechanism.attribution import composition_scores

    s = result.scalars
    layer, head = divmod(int(r.final_induction[1:].argmax()), r.final_induction.shape[1])
    layer += 1  # the induction head is looked for past layer 0: it needs an earlier head to read
    k_comp = composition_scores(r.model, "K")[0, :, layer, head]  # (H,): each layer-0 head's K-composition
    reads = int(k_comp.argmax())
    best = f"L{layer}H{head}"
    s["best_induction_head"] = best  # the best-scoring head past layer 0, an induction head or not
    s["induction_head"] = best if r.final_induction[layer, head] > SCORED else None  # named only when one formed
    s["induction_head_score"] = round(float(r.final_induction[layer, head]), 4)
    s["k_composition_top"] = f"L0H{reads}"
    s["k_composition_top_score"] = round(float(k_comp[reads]), 4)
    s["k_composition_others_max"] = round(float(torch.cat([k_comp[:reads], k_comp[reads + 1:]]).max()), 4) \
        if len(k_comp) > 1 else None
    s["previous_token_head"] = f"L0H{int(r.final_previous[0].argmax())}"
    s["k_composition_top_previous_score"] = round(float(r.final_previous[0, reads]), 4)
    held = batch(options["eval_batch"], options, torch.Generator().manual_seed(options["seed"] + 20_000))
    table = head_ablation(r.model, held.ids, mode="mean", metric=RepeatLoss(held))
    ranked = sorted(((v, f"L{li}H{h}") for li, row in enumerate(table.values) for h, v in enumerate(row)),
                    reverse=True)
    s["ablation_clean_repeat_loss"] = round(table.clean, 4)
    s["ablation_top_two"] = ", ".join(name for _, name in ranked[:2])
    s["ablation_top_two_are_circuit"] = {name for _, name in ranked[:2]} == {best, s["k_composition_top"]}
    by_layer = [max(range(len(row)), key=row.__getitem__) for row in table.values]  # each layer's top head
    s["ablation_top_per_layer"] = ", ".join(f"L{li}H{h}" for li, h in enumerate(by_layer))
    s["induction_head_tops_its_layer"] = by_layer[layer] == head
    s["k_composition_top_tops_layer0"] = by_layer[0] == reads
    s["induction_heads_over_half"] = ", ".join(f"L{li}H{h}" for li, row in enumerate(r.final_induction.tolist())
                                               for h, v in enumerate(row) if v > SCORED)
    _reads(result, r, held, layer, head)
    order = [name for _, name in ranked]  # rank 1: the head whose ablation raises the repeated loss most
    s["ablation_rank_induction_head"] = order.index(best) + 1
    s["ablation_rank_k_composition_top"] = order.index(s["k_composition_top"]) + 1
    s["ablation_rank_previous_token_head"] = order.index(s["previous_token_head"]) + 1
    s["ablation_rank_read_head"] = order.index(s["reads_by_ablation"]) + 1
    result.tables["ablation"] = Table("two layers: repeated-block loss rise when a head is mean-ablated",
                                      ["head", "loss rise"], [[name, round(v, 4)] for v, name in ranked])
    grid = [[round(v, 4) for v in row] for row in table.values]
    result.grids["ablation_2l"] = Grid("repeated-block loss rise when each head is mean-ablated (two layers)", grid,
                                       [f"L{li}" for li in range(len(grid))], [f"H{h}" for h in range(len(grid[0]))],
                                       ("layer", "head"))
    result.grids["k_composition_2l"] = Grid(f"K-composition of each layer-0 head into {best}",
                                            [[round(float(v), 4) for v in k_comp]], ["L0"],
                                            [f"H{h}" for h in range(len(k_comp))], ("layer", "head"))


def _reads(result: Result, r: Run, held: Batch, layer: int, head: int) -> None:
    """Which layer-0 head the induction head reads, measured: its induction score with each one mean-ablated."""
    import torch

    from tui_lab.mechanism.ablation import ablate_head
    from tui_lab.mechanism.cache import run_with_cache
    from tui_lab.model.hooks import attached

    z0, pattern = "blocks.0.attn.hook_z", f"blocks.{layer}.attn.hook_pattern"
    with torch.no_grad():
        _, cache = run_with_cache(r.model, held.ids, names=[z0])
        means = cache[z0].mean(dim=(0, 1))  # (H, D)
        drops = []
        for h in range(means.shape[0]):
            with attached(r.model, [(z0, ablate_head(0, h, means[h]))]):
                _, cache = run_with_cache(r.model, held.ids, names=[pattern])
            induction, _ = head_scores(cache[pattern][None], held)
            drops.append(float(r.final_induction[layer, head] - induction[0, head]))
    top = max(range(len(drops)), key=drops.__getitem__)
    s = result.scalars
    s["reads_by_ablation"] = f"L0H{top}"
    s["reads_by_ablation_drop"] = round(drops[top], 4)
    s["k_composition_top_is_read"] = s["k_composition_top"] == s["reads_by_ablation"]
    result.tables["reads"] = Table(f"{s['best_induction_head']}'s induction score drop with each layer-0 head "
                                   "mean-ablated", ["head", "score drop", "previous token"],
                                   [[f"L0H{h}", round(d, 4), round(float(r.final_previous[0, h]), 4)]
                                    for h, d in enumerate(drops)])


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
