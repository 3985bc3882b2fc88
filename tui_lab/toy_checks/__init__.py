"""What the shipped toys learned, measured on a model: the English toy's previous-token pattern over held-out
text (`patterns.py`) and the checks of its greedy samples (`checks.py`).

These need torch and the generation loop, so they live here, above the layers they use; `tui_lab/shipped/`
stays pure file reads, in the bottom layer beside the presets that name its toys.
"""
