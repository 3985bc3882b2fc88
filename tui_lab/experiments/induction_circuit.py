"""induction-heads' circuit, traced in the trained two-layer model: the induction head, the layer-0 head its keys
read (K-composition, and measured by ablating each layer-0 head), and each head's mean-ablation loss rise.
"""

from __future__ import annotations

from typing import Any

from tui_lab.experiments.induction_data import Batch, batch, block_losses, head_scores
from tui_lab.experiments.induction_training import Run
from tui_lab.experiments.result import Grid, Result, Table

SCORED = 0.5  # an induction head: induction score above this


class RepeatLoss:
    """The ablation metric: the next-token loss on the repeated block of `b` (mechanism.ablation's Metric)."""

    name = "repeated-block loss"

    def __init__(self, b: Batch) -> None:
        self.b = b

    def __call__(self, logits, ids) -> float:
        return block_losses(logits, self.b)[1]


def circuit(result: Result, r: Run, options: dict[str, Any]) -> None:
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
