"""Torch modules of the Transformer family. Importing this package imports torch."""

from tui_lab.model.attention import AttentionCapture
from tui_lab.model.kv_cache import KVCache
from tui_lab.model.scaled_dot import attend
from tui_lab.model.transformer import ModelOutput, Transformer, build_model

__all__ = ["AttentionCapture", "KVCache", "ModelOutput", "Transformer", "attend", "build_model"]
