"""Checkpoints: one folder of safetensors and JSON (never pickle), written atomically.

Layout: `config.json` (the ModelConfig), `model.safetensors`, `tokenizer/`, `meta.json`, and for a
resumable run `optimizer.safetensors` (AdamW's moments) plus `train_state.json` (step, schedule, RNG
states, the optimizer's param groups, the TrainConfig): the list `tui_lab.checkpoint_files.CHECKPOINT_FILES`.

A save replaces only those entries: anything else in the folder stays (checkpoint_files.py says which folders
are refused instead). It writes the new entries into a hidden temporary folder beside the target first, so a
crash while writing leaves the previous checkpoint as it was; then it moves the old entries aside and the new
ones in. A crash during those moves is finished at the next save, load or `train` of the folder (`settle`):
the new entries were whole before the first move. A link to a folder is written through, and stays a link.

One job per module: save.py writes (and says in one line why a write failed), swap.py moves the written entries
in and settles what a crash left, load.py reads a folder as untrusted input, tensors.py turns the optimizer's
state and RNG states into what safetensors and JSON hold.
"""

from tui_lab.checkpoint.load import Checkpoint, load_checkpoint
from tui_lab.checkpoint.save import SaveError, SaveRefused, checkpoint_bytes, save_checkpoint
from tui_lab.checkpoint.swap import settle
from tui_lab.checkpoint.tensors import decode_bytes, encode_bytes
from tui_lab.checkpoint_files import CHECKPOINT_FILES, REQUIRED, is_checkpoint

__all__ = ["CHECKPOINT_FILES", "REQUIRED", "Checkpoint", "SaveError", "is_checkpoint", "load_checkpoint",
           "save_checkpoint", "SaveRefused", "settle", "checkpoint_bytes", "decode_bytes", "encode_bytes"]
