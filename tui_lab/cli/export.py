"""`tui-lab export --checkpoint DIR --hf OUT`: a trained gpt2-family model of ours as a Hugging Face GPT-2 folder.

`transformers.GPT2LMHeadModel.from_pretrained(OUT)` then computes the same logits. Architectures GPT-2
cannot express (RoPE, RMSNorm, SwiGLU, post-LN, ...) are refused with the field and the reason.
"""

from __future__ import annotations

import argparse
import json

from tui_lab.cli import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--checkpoint", required=True, metavar="DIR", help="a checkpoint folder of ours")
    parser.add_argument("--hf", required=True, metavar="OUT", help="the Hugging Face GPT-2 folder to write")
    parser.add_argument("--force", action="store_true", help="replace OUT if it already holds files")
    parser.add_argument("--json", action="store_true", help="one JSON object")


def run(args: argparse.Namespace) -> int:
    from tui_lab.hf import export_hf_gpt2
    from tui_lab.hf.config import check_exportable
    from tui_lab.loading import load_model

    checkpoint = load_model("checkpoint", args.checkpoint)
    try:
        check_exportable(checkpoint.config)
    except ValueError as err:
        raise UsageError(f"--checkpoint {args.checkpoint}: {err}") from None
    out = export_hf_gpt2(checkpoint.model, checkpoint.tokenizer, args.hf, overwrite=args.force)
    files = sorted(p.name for p in out.iterdir())
    if args.json:
        print(json.dumps({"out": str(out), "files": files, "config": checkpoint.config.to_dict()}))
    else:
        print(f"wrote {out}: {', '.join(files)}")
        print(f"load it with transformers.GPT2LMHeadModel.from_pretrained({str(out)!r})")
    return 0
