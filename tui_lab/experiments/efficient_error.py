"""efficient-attention, part 1: the approximations' output error against exact softmax on the same inputs.

q, k, v Gaussian, q and k scaled by `qk_std`, one sequence of n. Performer at each m (mean over `draws` feature
draws; FAVOR+'s error falls about as 1/sqrt(m), the run fits the slope); Linformer at k = n/8, n/4, n/2, n with
random projections, the same projections fitted to these inputs (a best case) and identity projections at k = n.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from tui_lab.experiments.base import Cancel, check
from tui_lab.experiments.result import Result, Table


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

    from tui_lab.model.efficient import LinformerProjection, linformer_attend
    from tui_lab.model.scaled_dot import attend

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

    from tui_lab.model.scaled_dot import attend

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
