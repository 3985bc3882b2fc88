"""efficient-attention: what Linformer and Performer give up against exact softmax attention, and what they buy.

Seed 001: "Linformer and Performer use low-rank or kernel approximations" beside FlashAttention's exact kernel.
Three measurements, all on the lab's own code (`model/efficient.py`, `model/attention.attend`):

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

import math
import statistics
from typing import Any

from tui_lab.experiments.base import Cancel, Experiment, Progress, at_least, check, span, usable_device
from tui_lab.experiments.fused_attention import median_seconds, peak_bytes
from tui_lab.experiments.result import Result, Table

KINDS = ("softmax", "linformer", "performer")
SPEED_PATHS = ("exact (fused)", "linformer", "performer", "exact causal (fused)", "performer causal")


def attention_config(options: dict[str, Any], length: int, **changes: Any):
    """A one-layer encoder config of the options' heads and d_head: the approximations' modules read it."""
    from tui_lab.config import ModelConfig

    h, d = options["heads"], options["d_head"]
    return ModelConfig(family="encoder-only", encoder_layers=1, decoder_layers=0, d_model=h * d, heads=h,
                       max_len=length, **changes)


def inputs(options: dict[str, Any], length: int, device: str = "cpu"):
    """q, k, v (1, H, L, D), Gaussian; q and k scaled by qk_std (score std qk_std^2 at 1/sqrt(D))."""
    import torch

    gen = torch.Generator(device=device).manual_seed(options["seed"])
    shape = (1, options["heads"], length, options["d_head"])
    q, k, v = (torch.randn(shape, generator=gen, device=device) for _ in range(3))
    return q * options["qk_std"], k * options["qk_std"], v


def relative_error(out, exact) -> float:
    return ((out - exact).norm() / exact.norm()).item()


def performer_errors(options: dict[str, Any], q, k, v, exact) -> dict[int, float]:
    """Mean relative error over `draws` feature draws, per number of features m."""
    import torch

    from tui_lab.model.efficient import PerformerFeatures, performer_attend

    errors = {}
    for m in options["features"]:
        draws = []
        for draw in range(options["draws"]):
            torch.manual_seed(options["seed"] + 1 + draw)
            phi = PerformerFeatures(attention_config(options, q.shape[2], self_attention="performer",
                                                     performer_features=m))
            draws.append(relative_error(performer_attend(phi, q, k, v, None, False, None), exact))
        errors[m] = statistics.mean(draws)
    return errors


def linformer_errors(options: dict[str, Any], q, k, v, exact, cancel: Cancel) -> list[dict[str, Any]]:
    """Per k: the error with the initial random projections, then with them fitted to these inputs."""
    import torch

    from tui_lab.model.attention import attend
    from tui_lab.model.efficient import LinformerProjection, linformer_attend

    n, rows = q.shape[2], []
    for rank in (n // 8, n // 4, n // 2, n):
        check(cancel, "efficient-attention")
        torch.manual_seed(options["seed"])
        proj = LinformerProjection(attention_config(options, n, self_attention="linformer", linformer_k=rank))
        run = lambda: linformer_attend(proj, q, k, v, None, None, 0.0, attend)  # noqa: E731, B023 (used in its turn)
        with torch.no_grad():
            initial = relative_error(run(), exact)
        optimizer = torch.optim.Adam(proj.parameters(), lr=1e-2)
        for _ in range(options["fit_steps"]):
            loss = (run() - exact).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            rows.append({"k": rank, "random": initial, "fitted": relative_error(run(), exact)})
    with torch.no_grad():  # identity projections at k = n: the projected keys are the keys
        proj.e.copy_(torch.eye(n)[None])
        proj.f.copy_(torch.eye(n)[None])
        rows[-1]["identity"] = relative_error(run(), exact)
    return rows


def approximation(result: Result, options: dict[str, Any], cancel: Cancel) -> None:
    import torch

    from tui_lab.model.attention import attend

    q, k, v = inputs(options, options["n"])
    with torch.no_grad():
        exact = attend(q, k, v)[0]
        performer = performer_errors(options, q, k, v, exact)
    linformer = linformer_errors(options, q, k, v, exact, cancel)
    _draw_errors(result, options, performer, linformer)


def _draw_errors(result: Result, options: dict[str, Any], performer: dict[int, float],
                 linformer: list[dict[str, Any]]) -> None:
    ms, n = list(performer), options["n"]
    plot = result.plot("performer_error", f"Performer: output error vs exact softmax (n={n})", "features m",
                       "relative error")
    plot.add("performer", ms, [performer[m] for m in ms])
    plot.add("c/sqrt(m) from the first m", ms, [performer[ms[0]] * math.sqrt(ms[0] / m) for m in ms])
    slope = math.log(performer[ms[-1]] / performer[ms[0]]) / math.log(ms[-1] / ms[0]) if len(ms) > 1 else 0.0
    lin = result.plot("linformer_error", f"Linformer: output error vs exact softmax (n={n})", "k", "relative error")
    ks = [r["k"] for r in linformer]
    lin.add("random projections", ks, [r["random"] for r in linformer])
    lin.add(f"fitted ({options['fit_steps']} steps)", ks, [r["fitted"] for r in linformer])
    table = Table(f"output error ||out - exact|| / ||exact||, H={options['heads']} D={options['d_head']} "
                  f"qk_std={options['qk_std']}", ["method", "k or m", "error", "error (fitted E, F)"])
    table.rows += [["performer", m, round(performer[m], 4), "-"] for m in ms]
    table.rows += [["linformer", r["k"], round(r["random"], 4), round(r["fitted"], 4)] for r in linformer]
    table.rows.append(["linformer identity", n, f"{linformer[-1]['identity']:.1e}", "-"])
    result.tables["error"] = table
    result.scalars |= {"performer_error": {str(m): round(e, 4) for m, e in performer.items()},
                       "performer_slope": round(slope, 3), "linformer_identity_error": linformer[-1]["identity"],
                       "linformer_error": {str(r["k"]): round(r["random"], 4) for r in linformer},
                       "linformer_fitted_error": {str(r["k"]): round(r["fitted"], 4) for r in linformer}}


def speed_calls(options: dict[str, Any], length: int, device: str) -> dict[str, Any]:
    """The five paths at one length, each a no-argument call on the same q, k, v."""
    import torch

    from tui_lab.model.attention import attend
    from tui_lab.model.efficient import LinformerProjection, PerformerFeatures, linformer_attend, performer_attend

    q, k, v = inputs(options, length, device)
    torch.manual_seed(options["seed"])
    rank = min(options["speed_k"], length)
    with torch.device(device):
        proj = LinformerProjection(attention_config(options, length, self_attention="linformer", linformer_k=rank))
        phi = PerformerFeatures(attention_config(options, length, self_attention="performer",
                                                 performer_features=options["speed_m"]))
    return {"exact (fused)": lambda: attend(q, k, v)[0],
            "linformer": lambda: linformer_attend(proj, q, k, v, None, None, 0.0, attend),
            "performer": lambda: performer_attend(phi, q, k, v, None, False, None),
            "exact causal (fused)": lambda: attend(q, k, v, causal=True)[0],
            "performer causal": lambda: performer_attend(phi, q, k, v, None, True, None)}


def speed(result: Result, options: dict[str, Any], progress: Progress, cancel: Cancel, device: str) -> None:
    import torch

    rows = []
    for i, length in enumerate(options["lengths"]):
        check(cancel, "efficient-attention")
        progress(i / len(options["lengths"]), f"time and memory at L={length}")
        calls, row = speed_calls(options, length, device), {"L": length}
        with torch.no_grad():
            for path, call in calls.items():
                row[path] = (median_seconds(call, device, options["repeats"]), peak_bytes(call, device))
        rows.append(row)
    _draw_speed(result, options, rows, device)


def _draw_speed(result: Result, options: dict[str, Any], rows: list[dict[str, Any]], device: str) -> None:
    lengths, mib = [r["L"] for r in rows], 2 ** 20
    time_plot = result.plot("time", f"median time per call on {device}", "L", "ms")
    memory_plot = result.plot("memory", "peak memory per call", "L", "MiB")
    for path in SPEED_PATHS:
        time_plot.add(path, lengths, [1000 * r[path][0] for r in rows])
        memory_plot.add(path, lengths, [r[path][1] / mib for r in rows])
    sizes = (f"one call, N=1 H={options['heads']} D={options['d_head']}, linformer k={options['speed_k']}, "
             f"performer m={options['speed_m']}, float32")
    columns = ["L", "exact", "linformer", "performer", "exact causal", "performer causal"]
    for key, index, unit, scale in (("time", 0, "ms", 1000), ("memory", 1, "MiB", 1 / mib)):
        table = result.tables.setdefault(key, Table(f"{key} ({unit}) of {sizes}", columns))
        table.rows += [[r["L"], *[round(scale * r[p][index], 3) for p in SPEED_PATHS]] for r in rows]
    result.scalars["device"] = device
    result.scalars["fused_wins_time_up_to"] = {p: _exact_wins_up_to(rows, p, 0) for p in SPEED_PATHS[1:3]} | {
        "performer causal": _exact_wins_up_to(rows, "performer causal", 0, "exact causal (fused)")}
    result.scalars["fused_wins_memory_up_to"] = {p: _exact_wins_up_to(rows, p, 1) for p in SPEED_PATHS[1:3]}
    result.scalars["ms_at_longest"] = {p: round(1000 * rows[-1][p][0], 2) for p in SPEED_PATHS}
    result.scalars["peak_mib_at_longest"] = {p: round(rows[-1][p][1] / mib, 2) for p in SPEED_PATHS}


def _exact_wins_up_to(rows: list[dict[str, Any]], path: str, index: int, exact: str = "exact (fused)") -> int | None:
    """The longest measured L at which the fused exact kernel still beats `path` (0: time, 1: memory); None if never."""
    wins = [r["L"] for r in rows if r[exact][index] <= r[path][index]]
    return max(wins) if wins else None


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
