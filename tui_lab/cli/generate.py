"""`tui-lab generate`: continue a prompt with a preset (random weights) or a trained checkpoint.

With `--checkpoint`, the checkpoint's own tokenizer encodes the prompt and decodes the completion. A bare
`--preset` has random weights and no trained tokenizer, so `ByteCodec` stands in: the output is noise,
but the machinery (cache, sampling, timing) is the real one.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import torch
from rich.console import Console

from tui_lab.cli.model_args import add_model_arguments, load_from_args
from tui_lab.generation.prompt import prompt_ids
from tui_lab.loading import LoadedModel


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_arguments(parser)
    parser.add_argument("--prompt", required=True, help="text to continue (the source, for an encoder-decoder)")
    parser.add_argument("--max-new-tokens", type=int, default=64, metavar="N")
    parser.add_argument("--temperature", type=float, default=1.0, metavar="T", help="0 is greedy (default: 1)")
    parser.add_argument("--top-k", type=int, default=None, metavar="K")
    parser.add_argument("--top-p", type=float, default=None, metavar="P")
    parser.add_argument("--beam-size", type=int, default=1, metavar="B", help="> 1: beam search (deterministic)")
    parser.add_argument("--no-cache", action="store_true", help="recompute the whole sequence at every step")
    parser.add_argument("--json", action="store_true", help="one JSON object")


def run(args: argparse.Namespace) -> int:
    _check_args(args)
    loaded = load_from_args(args)
    ids = prompt_ids(loaded.codec, args.prompt, loaded.config.family, field="--prompt")
    console = Console(stderr=True)
    if not args.json:
        console.print(f"[dim]{loaded.label} on {next(loaded.model.parameters()).device}[/]")
    result = _generate(loaded, ids, args, live=not args.json)
    if args.json:
        print(json.dumps(result))
        return 0
    note = f"{result['new_tokens']} tokens in {result['seconds']:.2f} s ({result['tokens_per_s']:.1f} tokens/s, "
    note += "no cache)" if args.no_cache else "cached)"
    if result["unknown"]:
        note += f"; mapped to <unk>: {' '.join(result['unknown'])}"
    if result["cropped"] or result["slid"]:
        note += f"; past max_len {loaded.model.config.max_len}: the window slid to the last tokens"
    console.print(f"[dim]{note}[/]", markup=True, highlight=False)
    return 0


def _generate(loaded: LoadedModel, ids: list[int], args: argparse.Namespace, live: bool) -> dict[str, Any]:
    from tui_lab.generate import generate, stream

    model, codec, config = loaded.model, loaded.codec, loaded.model.config
    device = next(model.parameters()).device
    x = torch.tensor([ids], dtype=torch.long, device=device)  # (1, L)
    settings = dict(temperature=args.temperature, top_k=args.top_k, top_p=args.top_p, use_cache=not args.no_cache,
                    eos_id=codec.eos_id, bos_id=codec.bos_id,
                    generator=torch.Generator(device=device).manual_seed(args.seed))
    start_len = len(ids) if config.family == "decoder-only" else 1  # an encoder-decoder's target starts at bos
    printer = _LivePrinter(codec, args.prompt if config.family == "decoder-only" else None) if live else None
    start = time.perf_counter()
    if args.beam_size > 1:
        new_ids = generate(model, x, args.max_new_tokens, beam_size=args.beam_size, **settings)[0, start_len:].tolist()
    else:
        new_ids = []
        for step in stream(model, x, args.max_new_tokens, **settings):
            new_ids.append(int(step.ids[0]))
            if printer is not None:
                printer.update(new_ids)
    seconds = time.perf_counter() - start
    completion = codec.decode(new_ids)
    if printer is not None:
        printer.finish(completion)
    window = config.max_len if config.positions == "learned" else None  # the decoder's position limit
    return {"completion": completion, "prompt": args.prompt, "prompt_ids": ids, "ids": new_ids,
            "new_tokens": len(new_ids), "seconds": seconds, "tokens_per_s": len(new_ids) / max(seconds, 1e-9),
            "cropped": window is not None and start_len > window,
            "slid": window is not None and start_len + len(new_ids) - 1 > window,
            "unknown": codec.unknown(args.prompt), "model": loaded.label, "device": str(device),
            "tokenizer": codec.kind}


class _LivePrinter:
    """Prints the completion as it grows; a trailing partial UTF-8 character waits for its next byte."""

    def __init__(self, codec, prompt: str | None) -> None:
        self.codec, self.shown = codec, ""
        self.console = Console(highlight=False, markup=False)
        if prompt is not None:
            self.console.print(prompt, style="bold", end="")

    def update(self, new_ids: list[int]) -> None:
        self._show(self.codec.decode(new_ids).rstrip("\ufffd"))

    def finish(self, completion: str) -> None:
        self._show(completion)
        self.console.print()

    def _show(self, text: str) -> None:
        if text.startswith(self.shown) and len(text) > len(self.shown):
            self.console.print(text[len(self.shown):], end="")
            self.shown = text


def _check_args(args: argparse.Namespace) -> None:
    if args.max_new_tokens < 1:
        raise ValueError(f"--max-new-tokens ({args.max_new_tokens}) must be >= 1")
    if args.temperature < 0:
        raise ValueError(f"--temperature ({args.temperature}) must be >= 0 (0 is greedy)")
    if args.top_k is not None and args.top_k < 1:
        raise ValueError(f"--top-k ({args.top_k}) must be >= 1")
    if args.top_p is not None and not 0 < args.top_p <= 1:
        raise ValueError(f"--top-p ({args.top_p}) must be in (0, 1]")
    if args.beam_size < 1:
        raise ValueError(f"--beam-size ({args.beam_size}) must be >= 1")
