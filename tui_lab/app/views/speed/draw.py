"""What the Speed view draws from a report: the measured curves with their spread, the prediction from the
analysis, and the sentences that say how the two compare. Pure functions of the report (tests call them).

The prediction (`analysis.cost.decode_step_flops`) counts each step's FLOPs, split into the d_model^2 part
(weight matmuls) and the L*d part (attention over the context), and turns them into time at the matmul peak
measured on this machine with the path's thread count (`hardware.matmul_peak_flops`). That is a floor: one
token at a time reads every weight for 2 FLOPs per number, so a small model spends most of its step on
fixed per-step work (Python, kernel launches) and memory traffic. When the floor is under a fifth of what
was measured, the view says so rather than let the flat cached curve pass for the cache's cost.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from tui_lab.analysis.cost import decode_step_flops
from tui_lab.app.runs import downsample
from tui_lab.app.widgets.line_plot import Line

# Four hues of Okabe and Ito's colour-blind-safe set, each its own (named ANSI colours went through the theme's
# terminal palette, where textual-dark draws red and magenta alike), mid-lightness so that each reads on the
# dark theme's surface (L* 11) and the light one's (L* 86): bluish green, vermillion, blue, reddish purple.
PATHS = (("cached", True, (0, 158, 115)), ("uncached", False, (213, 94, 0)))
PREDICTED_COLOURS = {"cached": (0, 114, 178), "uncached": (204, 121, 167)}
OVERHEAD_SHARE = 0.2  # predicted compute under this share of the measured cached step: "mostly overhead"


@dataclass(frozen=True)
class Prediction:
    """Per step and path: (d^2, L*d) FLOPs, and the peak FLOP/s that turns them into seconds."""

    flops: dict[str, list[tuple[int, int]]]
    peaks: dict[str, float]

    def seconds(self, path: str) -> list[float]:
        return [(d2 + ld) / self.peaks[path] for d2, ld in self.flops[path]]


def predict(config: Any, report: Any, run: Any, peaks: dict[str, float]) -> Prediction:
    flops = {path: decode_step_flops(config, report.prompt_len, run.new_tokens, cached)
             for path, cached, _ in PATHS}
    return Prediction(flops, peaks)


def contexts(config: Any, prompt_len: int, new_tokens: int) -> list[int]:
    """The context each step's query sees: prompt + k (decoder-only) or bos + k (an encoder-decoder's target)."""
    start = 1 if config.family == "encoder-decoder" else prompt_len
    return [start + k for k in range(new_tokens)]


def plot_lines(run: Any, prediction: Prediction | None) -> list[Line]:
    """Seconds spent so far against tokens generated, per path: the uncached curve bends upward (each token
    re-reads a longer prefix) while the cached one stays nearly straight. A running total reads at a glance
    where per-token dots made a cloud, and one slow step bumps it by its own time rather than setting the
    axis. The prediction (compute at the matmul peak) is drawn the same way, each series named, and first: a later
    line draws over an earlier one where they share a cell, and the measured curves are what the view is for."""
    measured = [Line(path, *_cumulative(getattr(run, f"{path}_step_s")), colour=colour) for path, _, colour in PATHS]
    if prediction is None:
        return measured
    return [Line(f"{path} FLOPs at peak", *_cumulative(prediction.seconds(path)), colour=PREDICTED_COLOURS[path])
            for path, _, _ in PATHS] + measured


def plot_top(run: Any) -> float:
    """The y axis' top: the measured totals with a little room (the predicted floors sit below them)."""
    return 1.05 * max(sum(run.cached_step_s), sum(run.uncached_step_s))


def plot_title(report: Any, run: Any) -> str:
    """The totals and the speedup, annotated on the plot itself."""
    # Short enough for an 80-column terminal: plotext drops a title wider than the plot.
    return (f"cached {run.cached_s:.3g}s, uncached {run.uncached_s:.3g}s in all: {run.speedup:.2f}x "
            f"(median of {report.repeats})")


def analysis_lines(config: Any, report: Any, run: Any, prediction: Prediction, demo: bool) -> list[str]:
    """The predicted split at the last step, how it compares with the measurement, and the overhead note."""
    last = run.new_tokens - 1
    ctx = contexts(config, report.prompt_len, run.new_tokens)
    split = [f"{path} {_flops(sum(prediction.flops[path][last]))} (L*d {_ld_share(prediction.flops[path][last])})"
             for path, _, _ in PATHS]
    at_peak = ", ".join(_ms(prediction.seconds(path)[last]) for path, _, _ in PATHS)
    # A single step is noisy on a shared machine: the median of the run's last eighth stands for "at the end".
    tail = max(1, run.new_tokens // 8)
    measured = ", ".join(_ms(statistics.median(getattr(run, f"{path}_step_s")[-tail:])) for path, _, _ in PATHS)
    lines = [f"predicted per token at L={ctx[last]}: " + ", ".join(split),
             f"at the {prediction.peaks['cached'] / 1e9:.1f} GFLOP/s matmul peak: {at_peak}; "
             f"measured {measured} (last 1/8)"]
    growth = _growth(run.cached_step_s, prediction.seconds("cached"))
    if growth is not None:
        got, expected, first, end = growth
        lines.append(f"cached curve L={ctx[first]}..{ctx[end]}: measured {got:+.0%}, FLOPs predict {expected:+.0%}")
    share = overhead_share(run, prediction)
    if share is not None and share < OVERHEAD_SHARE:
        advice = "longer lengths" if demo else "the demo model (d), gpt2-small or longer lengths"
        # the floors then lie along a linear axis' bottom rows, one over the other: the log axis parts them
        lines.append(f"mostly per-step overhead at this size (compute {share:.0%} of a cached step): try {advice}; "
                     "the FLOPs floors lie low on a linear axis (l: log)")
    return lines


def overhead_share(run: Any, prediction: Prediction) -> float | None:
    """Predicted over measured time of a cached step (the prefill left out); None with one step only."""
    measured, predicted = run.cached_step_s[1:], prediction.seconds("cached")[1:]
    if not measured:
        return None
    return statistics.median(predicted) / statistics.median(measured)


def _growth(measured: list[float], predicted: list[float]) -> tuple[float, float, int, int] | None:
    """Relative rise of the cached step from the first eighth of the run to the last (prefill left out)."""
    steps = len(measured) - 1
    if steps < 4:
        return None
    width = max(1, steps // 8)
    head, tail = slice(1, 1 + width), slice(len(measured) - width, None)

    def rise(values: list[float]) -> float:
        return statistics.median(values[tail]) / statistics.median(values[head]) - 1

    return rise(measured), rise(predicted), 1 + width // 2, len(measured) - 1 - width // 2


def _ld_share(split: tuple[int, int]) -> str:
    return f"{split[1] / sum(split):.0%}"


def _cumulative(step_s: list[float]) -> tuple[list[float], list[float]]:
    """(tokens generated, seconds so far): the running total of the per-token times (from token 1, so a log
    axis keeps every point)."""
    points, total = [], 0.0
    for i, s in enumerate(step_s):
        total += s
        points.append((i + 1, total))
    points = downsample(points)
    return [x for x, _ in points], [y for _, y in points]


def _flops(n: float) -> str:
    for unit, size in (("TFLOP", 1e12), ("GFLOP", 1e9), ("MFLOP", 1e6), ("kFLOP", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} FLOP"


def _ms(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:.3g} ms" if ms >= 0.01 else f"{ms * 1000:.3g} us"
