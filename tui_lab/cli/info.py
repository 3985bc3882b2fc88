"""`tui-lab info`: architecture, shape trace, parameter table, FLOPs and memory of a config."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.table import Table

from tui_lab.analysis import count_params, flops_per_token, memory, shape_trace
from tui_lab.analysis.format import fmt_bytes, fmt_count
from tui_lab.analysis.shapes import image_length
from tui_lab.cli.config_args import add_config_arguments, config_from_args, overrides_from_args
from tui_lab.cli.layout import say
from tui_lab.cli.model_args import FROM_HF_HELP, add_hub_arguments, check_hub_arguments, hub_options
from tui_lab.config import ModelConfig
from tui_lab.presets import paper_claims


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser)
    parser.add_argument("--from-hf", dest="from_hf", metavar="ID|DIR", help=FROM_HF_HELP)
    add_hub_arguments(parser)
    parser.add_argument("--batch", type=int, default=1, metavar="N")
    parser.add_argument("--seq-len", dest="seq_len", type=int, default=None, metavar="N")
    parser.add_argument("--json", action="store_true", help="one JSON object")


def _config(args: argparse.Namespace) -> tuple[ModelConfig, tuple[str, dict | None] | None, dict | None]:
    """The config, and for an HF folder one line on its tokenizer (what it is, or why there is none) with who built
    it (`tokenizer_used`), and its generation settings (which keys are applied, which ignored and why)."""
    check_hub_arguments(args)
    if args.from_hf:
        from tui_lab.hf import hf_config
        from tui_lab.hf.family_tokenizer import describe, folder_tokenizer
        from tui_lab.hf.load import hf_generation

        with hub_options(args) as options:  # info reads config.json alone, but --download fetches the whole model
            config = hf_config(args.from_hf, **options)
            codec, note = folder_tokenizer(args.from_hf, **options)  # its files only: no weights
            folder = hf_generation(args.from_hf, **options)
        generation = {"source": folder.source, "applied": list(folder.applied), "ignored": folder.ignored,
                      "line": folder.line(), "decoding": _default_decoding(folder)}
        return config.replace(**overrides_from_args(args)), (describe(codec, note), _used(codec)), generation
    return config_from_args(args), None, None


def _used(codec: object) -> dict | None:
    """Who built the folder's tokenizer and whether a prompt gets bos (None without a tokenizer)."""
    from tui_lab.hf.auto_tokenizer import tokenizer_report

    return None if codec is None else tokenizer_report(codec)


def _default_decoding(folder) -> dict[str, str]:
    """The decoding mode `generate` takes for this folder when no flag says otherwise, and what chooses it."""
    from tui_lab.generation.folder_defaults import decoding_mode, with_folder_defaults
    from tui_lab.generation.settings import GenerationSettings

    settings, taken = with_folder_defaults(GenerationSettings(), set(), folder, 1)
    return decoding_mode(settings, set(), taken, folder)


def report(config: ModelConfig, batch: int, seq_len: int) -> dict:
    """Everything `info` shows, as plain data (the JSON output)."""
    count = count_params(config)
    return {
        "config": config.to_dict(),
        **count.to_dict(),
        "breakdown": count.components(),
        "shapes": [row.to_dict() for row in shape_trace(config, batch, seq_len)],
        "flops_per_token": flops_per_token(config, seq_len),
        "memory": memory(config, batch, seq_len).to_dict(),
        "paper": paper_claims(config.name),
        "batch": batch,
        "seq_len": seq_len,
    }


def run(args: argparse.Namespace) -> int:
    config, tokenizer, generation = _config(args)
    seq_len = args.seq_len if args.seq_len is not None else min(config.max_len, 128)
    for name in ("batch", "seq_len"):
        value = args.batch if name == "batch" else seq_len
        if value <= 0:
            raise ValueError(f"--{name.replace('_', '-')} ({value}) must be a positive integer")
    image = image_length(config)
    if image and seq_len != image:  # the trace would use the image's length anyway
        raise ValueError(f"--seq-len ({seq_len}) must be {image} for input 'patches' (an image is "
                         f"(image_size/patch_size)^2 patches plus the class token)")
    data = report(config, args.batch, seq_len)
    if tokenizer is not None:
        data["tokenizer"], used = tokenizer
        if used is not None:
            data["tokenizer_used"] = used
    if generation is not None:
        data["generation_config"] = generation
    if args.json:
        print(json.dumps(data))
    else:
        _print(config, data)
    return 0


def _print(config: ModelConfig, data: dict) -> None:
    console = Console()
    arch = Table(title=f"{config.name}: {config.family}", show_header=False)
    for key, value in config.to_dict().items():
        arch.add_row(key, str(value))
    console.print(arch)
    claims = paper_claims(config.name)
    title = f"parameters: {data['total_params']:,}"
    if data["active_params"] != data["total_params"]:  # a mixture of experts: what one token goes through
        title += f", {data['active_params']:,} active per token"
    if "params" in claims:
        title += f" (the source says {claims['params']}; see presets/{config.name}.toml)"
    say(console, title, indent=2)  # a long line over a table, never centred in fragments above it
    params = Table("component", "parameters", "share")
    for name, value in data["breakdown"].items():
        params.add_row(name, f"{value:,}", f"{100 * value / data['total_params']:.1f}%")
    console.print(params)
    console.print(_trace_table(data, console.width))
    mem = data["memory"]
    say(console, f"forward FLOPs per token at context {data['seq_len']}: {fmt_count(data['flops_per_token'])}",
        indent=2)
    kv = (f"KV cache {fmt_bytes(mem['kv_cache_per_token'])}/token ({fmt_bytes(mem['kv_cache_full'])} at max_len "
          f"{config.max_len})") if config.has_decoder else "no KV cache (an encoder reads its input in one pass)"
    say(console, f"memory (fp32): weights {fmt_bytes(mem['weights'])}, training with AdamW "
                 f"{fmt_bytes(mem['training'])}, activations {fmt_bytes(mem['activations'])}, {kv}", indent=2)
    if "tokenizer" in data:
        say(console, f"tokenizer: {data['tokenizer']}", indent=2)
    if "tokenizer_used" in data:
        used = data["tokenizer_used"]
        bos = "starts with bos" if used["bos"]["added"] else "gets no bos"
        say(console, f"tokenizer built by: {used['built_by']}; a prompt {bos} ({used['bos']['why']})", indent=2)
    if data.get("generation_config", {}).get("line"):
        say(console, f"generation: {data['generation_config']['line']}", indent=2)


def _trace_table(data: dict, width: int) -> Table:
    """The shape trace; shape tuples and counts never broken, the kind wrapped at its spaces. Where the five
    columns do not fit, input and output stack in one column (input over output)."""
    rows = []
    for row in data["shapes"]:
        depth = row["path"].count(".")
        short = row["path"] if depth < 2 else row["path"].split(".", 2)[2]
        rows.append(("  " * min(depth, 2) + short, row["kind"], str(tuple(row["input"])), str(tuple(row["output"])),
                     f"{row['params']:,}"))
    longest = [max(len(word) for r in rows for word in (r[i].split() if i == 1 else [r[i]])) for i in range(5)]
    stacked = sum(longest) + 3 * 5 + 1 > width
    trace = Table(title=f"shape trace (batch {data['batch']}, seq len {data['seq_len']})")
    trace.add_column("module", no_wrap=True)
    trace.add_column("kind", min_width=longest[1])
    for name in ("input\n-> output",) if stacked else ("input", "output"):
        trace.add_column(name, no_wrap=True)
    trace.add_column("params", no_wrap=True, justify="right")
    for module, kind, shape_in, shape_out, params in rows:
        shapes = (f"{shape_in}\n-> {shape_out}",) if stacked else (shape_in, shape_out)
        trace.add_row(module, kind, *shapes, params)
    return trace
