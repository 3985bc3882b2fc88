"""Hugging Face models in the lab: GPT-2 folders found, read safely, mapped onto our model, written back.

    from tui_lab.hf import load_hf_gpt2, hf_gpt2_config, export_hf_gpt2

`gpt2` holds those entry points; `folder` and `config` import no torch (the app can show a checkpoint's
shape at once); `weights`, `tokenizer` and `export` do the heavy work.
"""

from tui_lab.hf.gpt2 import export_hf_gpt2, hf_gpt2_config, hf_gpt2_folder, load_hf_gpt2

__all__ = ["export_hf_gpt2", "hf_gpt2_config", "hf_gpt2_folder", "load_hf_gpt2"]
