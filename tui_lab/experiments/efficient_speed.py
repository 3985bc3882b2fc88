"""efficient-attention, part 2: time and peak memory of one attention call against the sequence length.

Exact (the fused kernel), Linformer and Performer bidirectional, then exact and Performer causal, on the same
q, k, v; timed and measured as `fused-attention` does.
"""

from __future__ import annotations

from typing import Any

from tui_lab.experiments.base import Cancel, Progress, check
from tui_lab.experiments.efficient_error import attention_config, inputs
from tui_lab.experiments.fused_attention import median_seconds, peak_bytes
from tui_lab.experiments.result import Result, Table

SPEED_PATHS = ("exact (fused)", "linformer", "performer", "exact causal (fused)", "performer causal")


def speed_calls(options: dict[str, Any], length: int, device: str) -> dict[str, Any]:
    """The five paths at one length, each a no-argument call on the same q, k, v."""
    import torch

    from tui_lab.model.efficient import LinformerProjection, PerformerFeatures, linformer_attend, performer_attend
    from tui_lab.model.scaled_dot import attend

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
