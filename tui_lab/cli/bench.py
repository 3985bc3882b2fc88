"""`tui-lab bench generate`: cached vs uncached greedy generation, timed side by side.

Prints `{"runs": [...]}` with `--json` (see `tui_lab.bench.kv_speed.SpeedReport.to_dict`), a rich table otherwise.
The default lengths fit the model's max_len; a length that slides past it is marked in the table and explained
in a line below it (`slid`, `slid_steps` and `notes` in the JSON). Each path runs on its own thread count.
"""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from tui_lab.cli.model_args import add_model_arguments, load_from_args


def add_arguments(parser: argparse.ArgumentParser) -> None:
    kinds = parser.add_subparsers(dest="bench", required=True, metavar="KIND")
    generate = kinds.add_parser("generate", help="cached vs uncached greedy generation")
    add_model_arguments(generate)
    generate.add_argument("--new-tokens", type=int, nargs="+", default=None, metavar="N",
                          help="lengths to measure (default: 64 128 256, the longest cut to fit max_len after "
                               "the prompt, e.g. 240 for gpt2-toy)")
    generate.add_argument("--prompt-len", type=int, default=16, metavar="N", help="random prompt length (default: 16)")
    generate.add_argument("--repeats", type=int, default=3, metavar="N", help="timed runs per length; median kept")
    generate.add_argument("--batch", type=int, default=1, metavar="N", help="rows generated at once (default: 1)")
    generate.add_argument("--json", action="store_true", help="one JSON object")


def run(args: argparse.Namespace) -> int:
    from tui_lab.bench.kv_speed import compare_generation

    loaded = load_from_args(args)
    bos_id = loaded.codec.bos_id if loaded.codec.bos_id is not None else 0
    new_tokens = tuple(args.new_tokens) if args.new_tokens else None  # None: the core fits them to max_len
    settings = dict(prompt_len=args.prompt_len, new_tokens=new_tokens, repeats=args.repeats,
                    batch=args.batch, bos_id=bos_id, seed=args.seed)
    if args.json:
        report = compare_generation(loaded.model, **settings)
        print(json.dumps({"model": loaded.label, **report.to_dict()}))
        return 0
    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("cached vs uncached", total=None)
        report = compare_generation(loaded.model, **settings,
                                    on_progress=lambda done, total: progress.update(task, completed=done, total=total))
    Console().print(_table(report, loaded.label))
    for note in report.notes:  # a length that slid measured the window, not the cache: say so plainly
        Console().print(f"slid: {note}", markup=False, highlight=False, soft_wrap=True)
    return 0


def _table(report, label: str) -> Table:
    threads = report.threads
    on = (f", threads cached {threads['cached']} / uncached {threads['uncached']}"
          if threads.get("cached") is not None else "")
    table = Table(title=f"{label} on {report.device}: greedy, prompt {report.prompt_len}, batch {report.batch}, "
                        f"median of {report.repeats}{on}")
    for name in ("new tokens", "cached s", "uncached s", "cached tok/s", "uncached tok/s", "speedup", "identical"):
        table.add_column(name, justify="right")
    for run in report.to_dict()["runs"]:
        note = " (slid)" if run["slid"] else ""
        table.add_row(f"{run['new_tokens']}{note}", f"{run['cached_s']:.3f}", f"{run['uncached_s']:.3f}",
                      f"{run['cached_tokens_per_s']:.0f}", f"{run['uncached_tokens_per_s']:.0f}",
                      f"{run['speedup']:.2f}x", "yes" if run["identical"] else "NO")
    return table
