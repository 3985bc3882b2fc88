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

from tui_lab.cli.layout import say
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
    generate.add_argument("--yes", action="store_true", help="run a measurement estimated to take over ten minutes")


def run(args: argparse.Namespace) -> int:
    from tui_lab.bench.kv_speed import compare_generation

    loaded = load_from_args(args)
    bos_id = loaded.codec.bos_id if loaded.codec.bos_id is not None else 0
    new_tokens = tuple(args.new_tokens) if args.new_tokens else None  # None: the core fits them to max_len
    check_budget(loaded, args, new_tokens)
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
        say(Console(), f"slid: {note}")
    return 0


def check_budget(loaded, args: argparse.Namespace, new_tokens: tuple[int, ...] | None) -> None:
    """Each length runs cached and uncached, `--repeats` times, `--batch` rows: refuse what cannot end soon."""
    from tui_lab.analysis.budget import GENERATION_LIMIT_S, Budget, budget_problem, generation_budget
    from tui_lab.devices import free_memory
    from tui_lab.generation.lengths import default_lengths

    for flag, value in (("--prompt-len", args.prompt_len), ("--repeats", args.repeats), ("--batch", args.batch),
                        *(("--new-tokens", n) for n in new_tokens or ())):
        if value < 1:
            raise ValueError(f"{flag} ({value}) must be >= 1")
    config, device = loaded.config, str(next(loaded.model.parameters()).device)
    lengths = new_tokens or default_lengths(config, args.prompt_len)
    runs = [generation_budget(config, args.prompt_len, n, args.batch, cached, device)
            for n in lengths for cached in (True, False)]
    total = Budget(sum(b.seconds for b in runs) * args.repeats, max(b.bytes for b in runs))
    what = (f"bench generate ({len(lengths)} lengths up to {max(lengths)}, --repeats {args.repeats}, "
            f"--batch {args.batch})")
    problem = budget_problem(total, what, GENERATION_LIMIT_S, free_memory(device), args.yes)
    if problem:
        raise ValueError(problem)


def _table(report, label: str) -> Table:
    threads = report.threads
    on = (f", threads cached {threads['cached']} / uncached {threads['uncached']}"
          if threads.get("cached") is not None else "")
    table = Table(title=f"{label} on {report.device}: greedy, prompt {report.prompt_len}, batch {report.batch}, "
                        f"median of {report.repeats}{on}")
    for name in ("new tokens", "cached s", "uncached s", "cached tok/s", "uncached tok/s", "speedup", "identical"):
        # a header wraps at its spaces, never inside a word; the numbers never wrap
        table.add_column(name, justify="right", no_wrap=False, min_width=max(len(w) for w in name.split()))
    for run in report.to_dict()["runs"]:
        note = " (slid)" if run["slid"] else ""
        table.add_row(f"{run['new_tokens']}{note}", f"{run['cached_s']:.3f}", f"{run['uncached_s']:.3f}",
                      f"{run['cached_tokens_per_s']:.0f}", f"{run['uncached_tokens_per_s']:.0f}",
                      f"{run['speedup']:.2f}x", "yes" if run["identical"] else "NO")
    return table
