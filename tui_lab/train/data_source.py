"""Which data source a training config names: a seq2seq task, images, masked LM or the LM windows of a text.

Above the sources it picks from (`sources`, `images`, `mlm`), so none of them imports another's maker."""

from __future__ import annotations

from tui_lab.train.config import TrainConfig
from tui_lab.train.images import ImageSource
from tui_lab.train.mlm import MLMSource, with_mask_token
from tui_lab.train.sources import LMSource, Seq2SeqSource


def build_source(c: TrainConfig, tokenizer=None, model_config=None):
    """The data a config names; `tokenizer` (from a checkpoint) replaces a freshly trained one.

    A model with BERT's head (`head = "mlm"`) learns masked language modelling on the same text."""
    if c.task is not None:
        from tui_lab.data.tasks import load_task

        return Seq2SeqSource(load_task(c.task))
    from tui_lab.data.corpus import builtin_corpus, read_text
    from tui_lab.data.lm import lm_data

    text = read_text(c.data) if c.data else builtin_corpus()
    if tokenizer is None:
        from tui_lab.data.tokenizers import bpe_tokenizer, char_tokenizer

        tokenizer = char_tokenizer(text) if c.tokenizer == "char" else bpe_tokenizer(text, c.vocab)
    if model_config is not None and model_config.input == "patches":
        return ImageSource()
    if model_config is not None and model_config.head == "mlm":
        return MLMSource(lm_data(text, with_mask_token(tokenizer), c.val_fraction), c.seq_len)
    return LMSource(lm_data(text, tokenizer, c.val_fraction), c.seq_len)
