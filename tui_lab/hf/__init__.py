"""Hugging Face models in the lab: folders found, read safely, mapped onto our model (GPT-2 written back).

    from tui_lab.hf import load_hf, hf_config, load_hf_gpt2, hf_gpt2_config, export_hf_gpt2

`load_hf` opens every family in `families.FAMILIES` (gpt2, llama, mistral, qwen2, mixtral, marian);

`gpt2` holds those entry points; `folder` and `config` import no torch (the app can show a checkpoint's
shape at once); `weights`, `tokenizer` and `export` do the heavy work.
"""

from tui_lab.hf.gpt2 import export_hf_gpt2, hf_gpt2_config, hf_gpt2_folder, load_hf_gpt2
from tui_lab.hf.load import hf_config, load_hf

__all__ = ["export_hf_gpt2", "hf_config", "hf_gpt2_config", "hf_gpt2_folder", "load_hf", "load_hf_gpt2"]
