"""Hugging Face GPT-2 folders: find them, read them safely, map them onto our model, and write them back.

`folder` and `config` import no torch (the app can show a checkpoint's shape at once); `weights`,
`tokenizer` and `export` do the heavy work. The public entry points live in `tui_lab.hf_gpt2`.
"""
