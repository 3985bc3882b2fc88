"""Write one of our gpt2-family models as a Hugging Face GPT-2 folder that `transformers` loads.

The folder is built in a temporary sibling and renamed into place, so a failed export leaves no
half-written checkpoint behind.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import torch
from safetensors.torch import save_file

from tui_lab.data.tokenizers import Tokenizer
from tui_lab.hf.config import check_exportable, hf_config_from
from tui_lab.hf.tokenizer import save_hf_tokenizer
from tui_lab.hf.weights import hf_state_dict


def export_hf_gpt2(model: torch.nn.Module, tokenizer: Tokenizer, out_dir: str | Path, overwrite: bool = False) -> Path:
    """config.json + model.safetensors (HF names, Conv1D layout) + tokenizer files in `out_dir`."""
    config = model.config
    check_exportable(config)  # before touching the disk
    if tokenizer.vocab_size > config.vocab:
        raise ValueError(f"cannot export: the tokenizer has {tokenizer.vocab_size} tokens but the model's vocab "
                         f"is {config.vocab}")
    out = Path(out_dir).expanduser()
    if out.exists() and not (out.is_dir() and (overwrite or not any(out.iterdir()))):
        raise ValueError(f"--hf: {out} already exists and is not an empty folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        _write(model, tokenizer, tmp)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return out


def _write(model: torch.nn.Module, tokenizer: Tokenizer, folder: Path) -> None:
    config = model.config
    dtype = str(next(model.parameters()).dtype).removeprefix("torch.")
    hf = hf_config_from(config, tokenizer.bos_id, tokenizer.eos_id, dtype)
    (folder / "config.json").write_text(json.dumps(hf, indent=2) + "\n", encoding="utf-8")
    # metadata format=pt: transformers refuses safetensors files without it.
    save_file(hf_state_dict(model), str(folder / "model.safetensors"), metadata={"format": "pt"})
    save_hf_tokenizer(tokenizer, folder, config.max_len)
