"""moe-vs-dense: a mixture of experts holds more parameters than a dense model but spends the same per token.

Seed 003 (and Mixtral, Jiang et al. 2024): a router sends each token to `experts_per_token` of `experts` FFNs,
so total parameters grow with the experts while the compute per token stays that of top-k of them. moe-toy
(4 experts, top-2) trains beside its dense twin: the same model with `ffn = "dense"` and d_ff = top-k x d_ff,
so a token goes through the same FFN width (the MoE adds only its router, d_model x experts per layer). Both
train the same steps, batches and seed on the built-in corpus (characters). The result shows both loss
curves, total against active parameters, and how the router spread the last step's tokens over the experts.
Measured by the script this replaced (200 steps, batch 16 x 64, one thread, the trainer's default tokenizer): val
loss 0.674 nats/char for moe-toy (1,846,272 params, 1,059,840 active) and 0.680 for the dense twin (1,057,792):
equal within noise at this size and length, the MoE ~2% slower per token (its Python loop over experts). The
quick run (120 steps, batch 8 x 64, seed 0, characters): 1.998 vs 1.744, 905 vs 1,102 tokens/s at load ~11:
the MoE's router has not settled in so short a run.
"""

from __future__ import annotations

from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, at_least, check, span
from tui_lab.experiments.result import Grid, Result, Table
from tui_lab.experiments.training import char_data, lm_train_config, train_curve


def models(options: dict[str, Any]) -> dict[str, Any]:
    """moe-toy with the options' experts and its dense twin of equal active FFN width."""
    from tui_lab.presets import load_preset

    moe = load_preset("moe-toy", experts=options["experts"], experts_per_token=options["experts_per_token"],
                      decoder_layers=options["layers"])
    dense = moe.replace(name="moe-toy-dense-twin", ffn="dense", experts=0, experts_per_token=0,
                        d_ff=moe.experts_per_token * moe.d_ff)
    return {"moe": moe, "dense": dense}


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    from tui_lab.analysis import count_params

    result = Result("moe-vs-dense", options)
    loss = result.plot("loss", "training loss (nats/char)", "step", "train loss")
    val = result.plot("val", "held-out loss (nats/char)", "step", "val loss")
    table = result.tables.setdefault("models", Table("same steps, batches and seed", [
        "model", "params", "active per token", "val loss", "tokens/s"]))
    configs, data = models(options), char_data()
    labels = {"moe": f"moe ({options['experts']} experts, top-{options['experts_per_token']})",
              "dense": "dense twin, equal active"}
    for i, (key, config) in enumerate(configs.items()):
        check(cancel, "moe-vs-dense")
        curve = train_curve(config, lm_train_config(options), span(progress, i / 2, (i + 1) / 2), cancel,
                            labels[key], data=data)
        loss.add(labels[key], curve.steps, curve.losses)
        val.add(labels[key], curve.val_steps, curve.val_losses)
        counted = count_params(config)
        table.rows.append([labels[key], counted.total, counted.active, _round(curve.final_val),
                           round(curve.tokens_per_s)])
        result.scalars |= {f"params_{key}": counted.total, f"active_{key}": counted.active,
                           f"val_loss_{key}": _round(curve.final_val), f"tokens_per_s_{key}": round(curve.tokens_per_s)}
        if curve.expert_load:
            _routing(result, curve.expert_load)
        progress((i + 1) / 2, f"{labels[key]} done", result)
    _summarise(result)
    return result


def _routing(result: Result, load: list[list[int]]) -> None:
    """The last step's share of routed tokens per layer and expert, and how many experts each layer used."""
    shares = [[n / max(1, sum(row)) for n in row] for row in load]
    result.grids["experts"] = Grid("share of the last step's routed tokens per expert",
                                   [[round(x, 4) for x in row] for row in shares],
                                   [f"layer {i}" for i in range(len(load))],
                                   [f"expert {j}" for j in range(len(load[0]))], axes=("layer", "expert"))
    result.scalars["experts_used_min"] = min(sum(n > 0 for n in row) for row in load)
    result.scalars["expert_share_max"] = round(max(max(row) for row in shares), 4)


def _summarise(result: Result) -> None:
    s = result.scalars
    result.notes[:0] = [
        f"moe: {s['params_moe']:,} params, {s['active_moe']:,} active per token; dense twin {s['params_dense']:,}",
        f"val loss {s['val_loss_moe']} (moe) vs {s['val_loss_dense']} (dense); tokens/s {s['tokens_per_s_moe']:,} "
        f"vs {s['tokens_per_s_dense']:,}",
        f"every layer sent tokens to at least {s.get('experts_used_min', 0)} experts; the busiest took "
        f"{s.get('expert_share_max', 0):.0%} of a layer's"]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _check(options: dict[str, Any]) -> None:
    for name in ("layers", "steps", "batch_size", "seq_len", "experts_per_token"):
        at_least(options, name, 1)
    at_least(options, "experts", 2)
    if options["experts_per_token"] > options["experts"]:
        raise ValueError(f"experts_per_token ({options['experts_per_token']}) must be at most experts "
                         f"({options['experts']})")
    if options["seq_len"] > 256:
        raise ValueError(f"seq_len ({options['seq_len']}) must be at most moe-toy's max_len 256")


EXPERIMENT = Experiment(
    name="moe-vs-dense",
    title="Mixture of experts vs a dense twin",
    lesson="Seed 003: a mixture of experts routes each token to a few expert FFNs, so it holds more parameters "
           "than it spends per token.",
    options={"experts": 4, "experts_per_token": 2, "layers": 4, "steps": 300, "batch_size": 16, "seq_len": 128,
             "lr": 3e-3, "seed": 0, "threads": 1},
    quick={"steps": 120, "seq_len": 64, "batch_size": 8},
    runner=run,
    help={"experts": "expert FFNs per layer", "experts_per_token": "experts each token goes through (top-k)",
          "layers": "decoder blocks of both models", "steps": "training steps per model",
          "batch_size": "sequences per step", "seq_len": "characters per sequence", "lr": "peak learning rate",
          "seed": "weights and batches (the same for both)", "threads": "torch CPU threads for the runs"},
    check_options=_check,
)
