"""efficient-attention: what Linformer and Performer give up against exact softmax attention, and what they buy.

Seed 001: "Linformer and Performer use low-rank or kernel approximations" beside FlashAttention's exact kernel.
Three measurements, all on the lab's own code (`model/efficient.py`, `model/scaled_dot.attend`):

1. Approximation error on the same inputs (q, k, v Gaussian, q and k scaled by `qk_std`, one sequence of n):
   ||out - exact|| / ||exact|| for Performer at each m (mean over `draws` feature draws; FAVOR+'s error falls
   about as 1/sqrt(m), the run fits the slope) and for Linformer at k = n/8, n/4, n/2, n with the random
   projections a model starts from, the same projections fitted to these very inputs (`fit_steps` of Adam on
   the output error: a best case, what training could reach), and identity projections at k = n (exact).
2. Time and peak memory against the sequence length (`lengths`, up to 8,192) of one attention call, beside
   the fused exact kernel (`F.scaled_dot_product_attention`, as `fused-attention` measures it); bidirectional
   for all three, then causal for exact and Performer's prefix sums. Peak memory as `fused-attention` measures
   it (on CPU the tensors the call's operations return, live at once: a fused kernel's scratch is not seen).
3. Held-out loss after the same training budget: masked-character modelling of the built-in corpus (BERT's
   objective, `train/mlm.py`) with the bert-toy architecture at the options' size, exact vs Linformer
   (k = seq_len/4) vs Performer (m = `train_m`), one run per seed, the same steps, batches and schedule.
"""

from __future__ import annotations

from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, at_least, span, usable_device
from tui_lab.experiments.efficient_error import approximation
from tui_lab.experiments.efficient_speed import SPEED_PATHS, speed
from tui_lab.experiments.efficient_training import KINDS, training
from tui_lab.experiments.result import Result

__all__ = ["EXPERIMENT", "KINDS", "SPEED_PATHS"]


def run(options: dict[str, Any], progress: Progress, cancel: Cancel) -> Result:
    from tui_lab.devices import pick_device

    result = Result("efficient-attention", options)
    progress(0.0, "approximation error on the same inputs")
    approximation(result, options, cancel)
    device = pick_device(options["device"])
    speed(result, options, span(progress, 0.1, 0.4), cancel, device)
    training(result, options, span(progress, 0.4, 1.0), cancel)
    result.notes = notes(result.scalars, options)
    return result


def notes(s: dict[str, Any], options: dict[str, Any]) -> list[str]:
    """What was measured, in the run's own numbers, the lesson first."""
    perf, lin, loss = s["performer_error"], s["linformer_error"], s["held_out_loss"]
    wins = s["fused_wins_time_up_to"]
    won = ", ".join(f"{p} up to L={w}" if w is not None else f"{p} at no measured L" for p, w in wins.items())
    return [
        f"Performer's error {_arrow(perf)} at m = {', '.join(perf)} (slope {s['performer_slope']} in log-log; "
        f"1/sqrt(m) is -0.5); Linformer with random E, F {_arrow(lin)} at k = {', '.join(lin)}, fitted to these "
        f"inputs {_arrow(s['linformer_fitted_error'])}, identity at k = n {s['linformer_identity_error']:.0e} (exact)",
        f"the fused exact kernel is faster than {won} (lengths to {max(options['lengths'])}, on {s['device']}); "
        f"at L={max(options['lengths'])} ms: {_pairs(s['ms_at_longest'])}",
        f"peak MiB at L={max(options['lengths'])}: {_pairs(s['peak_mib_at_longest'])} (the fused kernel never "
        f"materialises L x L; {_memory_method(s['device'])})",
        f"held-out masked-character loss after the same {options['steps']} steps, mean of {len(options['seeds'])} "
        f"seeds: softmax {loss['softmax']}, linformer {loss['linformer']}, performer {loss['performer']}",
    ]


def _memory_method(device: str) -> str:
    return "allocator peak" if device.startswith("cuda") else "on CPU: tensors ops return, a kernel's scratch unseen"


def _pairs(values: dict[str, float]) -> str:
    return ", ".join(f"{k} {v}" for k, v in values.items())


def _arrow(values: dict[str, float]) -> str:
    return " -> ".join(str(v) for v in values.values())


def _check(options: dict[str, Any]) -> None:
    for name in ("n", "heads", "d_head", "features", "draws", "lengths", "speed_k", "speed_m", "repeats", "steps",
                 "batch_size", "layers", "d_model", "train_m", "seeds"):
        at_least(options, name, 0 if name == "seeds" else 1)
    at_least(options, "n", 8)
    at_least(options, "seq_len", 4)
    if options["d_model"] % options["heads"]:
        raise ValueError(f"d_model ({options['d_model']}) must be divisible by heads ({options['heads']})")
    if (options["d_model"] // options["heads"]) % 2:
        raise ValueError(f"d_model / heads ({options['d_model'] // options['heads']}) must be even: bert-toy's "
                         "RoPE rotates pairs")
    usable_device(options)


EXPERIMENT = Experiment(
    name="efficient-attention",
    title="Linformer and Performer vs exact attention",
    lesson="Seed 001: Linformer and Performer use low-rank or kernel approximations; FlashAttention computes "
           "exact attention without materialising the weights.",
    options={"n": 256, "heads": 4, "d_head": 64, "qk_std": 0.5, "features": (64, 256, 1024), "draws": 3,
             "fit_steps": 200, "lengths": (512, 1024, 2048, 4096, 8192), "speed_k": 256, "speed_m": 256,
             "repeats": 3, "device": "auto", "seeds": (0, 1, 2), "steps": 300, "batch_size": 16, "seq_len": 64,
             "layers": 2, "d_model": 64, "lr": 2e-3, "train_m": 64, "seed": 0, "threads": 1},
    quick={"n": 128, "draws": 2, "fit_steps": 30, "lengths": (256, 1024, 2048), "repeats": 1, "steps": 25,
           "batch_size": 8, "seq_len": 32},
    runner=run,
    help={"n": "length of the error test's inputs (Linformer's k: n/8, n/4, n/2, n)", "heads": "H of the inputs",
          "d_head": "D of the inputs", "qk_std": "scale of q and k (the scores' std is qk_std^2)",
          "features": "Performer's m values", "draws": "feature draws averaged per m",
          "fit_steps": "Adam steps fitting Linformer's E, F to the inputs", "lengths": "lengths timed",
          "speed_k": "Linformer's k when timed", "speed_m": "Performer's m when timed",
          "repeats": "timed calls per path and length (median kept)", "device": "auto, cpu, cuda, cuda:N or mps",
          "seeds": "one training run per seed and attention", "steps": "training steps per run",
          "batch_size": "sequences per step", "seq_len": "training windows (max_len; Linformer's k = seq_len/4)",
          "layers": "bert-toy's layers", "d_model": "bert-toy's width", "lr": "peak learning rate",
          "train_m": "Performer's m in training",
          "seed": "the inputs, the features and the projections", "threads": "torch CPU threads"},
    check_options=_check,
)
