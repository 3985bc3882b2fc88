"""An experiment: a named, reproducible run (or set of runs) that shows one lesson of the seeds happen.

`Experiment.run(options, progress, cancel) -> Result`. `options` are the full run's defaults with `quick`
(about two minutes or less on 2 CPU cores) and a person's `--set name=value` overrides on top, each parsed
to its default's type here, before torch loads. `progress(fraction, message, partial=None)` is called from
the running thread (a `partial` Result lets a face draw what is finished); `cancel()` is polled between
steps and a run that sees it raises `Cancelled`.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from tui_lab.devices import device_problem
from tui_lab.experiments.result import Result


class Progress(Protocol):
    def __call__(self, fraction: float, message: str, partial: Result | None = None) -> None: ...


Cancel = Callable[[], bool]


class Cancelled(Exception):
    """The run saw `cancel()` between two steps and stopped; nothing half-done is returned."""

    def __init__(self, name: str = "") -> None:
        super().__init__(f"{name or 'experiment'} cancelled")


def no_progress(fraction: float, message: str, partial: Result | None = None) -> None:
    """The progress callback for callers that do not listen."""


def never() -> bool:
    return False


def check(cancel: Cancel, name: str = "") -> None:
    if cancel():
        raise Cancelled(name)


def span(progress: Progress, lo: float, hi: float) -> Progress:
    """A progress callback for one part of a run: its 0..1 maps onto lo..hi of the whole."""
    def part(fraction: float, message: str, partial: Result | None = None) -> None:
        progress(lo + (hi - lo) * min(max(fraction, 0.0), 1.0), message, partial)
    return part


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    lesson: str  # the seed's sentence the run makes visible, with the seed it comes from
    options: dict[str, Any]  # the full run's defaults; each option's type is its default's
    quick: dict[str, Any]  # overrides for --quick
    runner: Callable[[dict[str, Any], Progress, Cancel], Result]
    help: dict[str, str] = field(default_factory=dict)  # one line per option
    check_options: Callable[[dict[str, Any]], None] | None = None  # cross-option rules, one-line ValueErrors

    def resolve(self, quick: bool = False, sets: dict[str, str] | None = None) -> dict[str, Any]:
        """The options a run uses: defaults, then --quick, then each `name=value` text parsed and checked."""
        options = dict(self.options) | (dict(self.quick) if quick else {})
        for name, text in (sets or {}).items():
            options[name] = self.parse(name, text)
            check_bounds(name, options[name], self.options[name])
        if "threads" in options:
            at_least(options, "threads", 1)
        if self.check_options is not None:
            self.check_options(options)
        return options

    def parse(self, name: str, text: str) -> Any:
        if name not in self.options:
            raise ValueError(f"unknown option {name!r} for {self.name}; its options: {', '.join(self.options)}")
        return parse_option(name, text, self.options[name])

    def run(self, options: dict[str, Any] | None = None, progress: Progress = no_progress,
            cancel: Cancel = never) -> Result:
        options = self.resolve() if options is None else options
        start = time.perf_counter()
        with _threads(options.get("threads")):
            result = self.runner(options, progress, cancel)
        result.seconds = round(time.perf_counter() - start, 2)
        progress(1.0, "done", result)
        return result

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "lesson": self.lesson, "options": self.options,
                "quick": self.quick, "help": self.help}


def _threads(count: int | None):
    """torch's CPU threads for a run that names them (the training experiments: 1 by default), else as they are.

    Their toys' ops are too small to share out. Measured on the shared 2-core machine: 100 steps of
    post-ln-warmup's quick model took 3.8 CPU-s / 8.6 s wall on 1 thread and 28.8 / 51.2 on torch's default
    2 (load ~9: the second thread spins at every barrier while descheduled); scaling's full run took 131 s
    wall on 1 thread (load 3-5), and had not finished after 14 minutes on 2 (load ~8).
    """
    from tui_lab.generation.threads import torch_threads

    return torch_threads(count) if count else contextlib.nullcontext()


def parse_option(name: str, text: str, default: Any) -> Any:
    """`text` in the type of `default`: bool, int, float, str, or a comma-separated tuple of them."""
    text = text.strip()
    if isinstance(default, tuple):
        kind = type(default[0]) if default else str
        parts = [p for p in text.replace(" ", ",").split(",") if p]
        if not parts:
            raise ValueError(f"{name} must be one or more values separated by commas, got {text!r}")
        return tuple(parse_option(name, p, kind()) for p in parts)
    if isinstance(default, bool):
        words = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False,
                 "0": False}
        if text.lower() not in words:
            raise ValueError(f"{name} must be true or false, got {text!r}")
        return words[text.lower()]
    kinds = {int: "a whole number", float: "a number"}
    try:
        return type(default)(text) if type(default) in kinds else text
    except ValueError:
        raise ValueError(f"{name} must be {kinds[type(default)]}, got {text!r}") from None


RAISE_LIMIT = 10  # an option may be raised to ten times its full run's value; more is a typo or a script's job
SEED_LIMIT = 2**63  # torch's generators take a signed 64-bit seed


def check_bounds(name: str, value: Any, default: Any) -> None:
    """The range every numeric option shares: finite, never negative, and within ten times the full run's value
    (seeds below 2**63, threads at most the cores). The experiments' own checks come after (check_options)."""
    values = value if isinstance(value, tuple) else (value,)
    defaults = [v for v in (default if isinstance(default, tuple) else (default,))
                if isinstance(v, (int, float)) and not isinstance(v, bool)]
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} ({v}) must be a finite number, 0 or more")
        if name == "seed" and v >= SEED_LIMIT:
            raise ValueError(f"seed ({v}) must be below 2**63")
        if name == "threads" and v > (os.cpu_count() or 1):
            raise ValueError(f"threads ({v}) must be at most this machine's {os.cpu_count()} cores")
        top = max(defaults, default=0)
        if name not in ("seed", "threads") and top > 0 and v > RAISE_LIMIT * top:
            raise ValueError(f"{name} ({v}) must be at most {RAISE_LIMIT}x the full run's {top} "
                             f"({RAISE_LIMIT * top:g}); a longer run is a script's job")


def heads_divide(options: dict[str, Any]) -> None:
    """The config's own rule, checked before a run starts: d_model must split evenly into heads."""
    if options["d_model"] % options["heads"]:
        raise ValueError(f"d_model ({options['d_model']}) must be divisible by heads ({options['heads']})")


def usable_device(options: dict[str, Any]) -> None:
    """A one-line refusal when option `device` names one this machine lacks ('auto' always works)."""
    problem = device_problem(options["device"])
    if problem:
        raise ValueError(problem)


def at_least(options: dict[str, Any], name: str, low: int | float) -> None:
    """A one-line refusal unless option `name` (a number or each number of a tuple) is >= low."""
    values = options[name] if isinstance(options[name], tuple) else (options[name],)
    for value in values:
        if value < low:
            raise ValueError(f"{name} ({value}) must be at least {low}")
