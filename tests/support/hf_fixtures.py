"""Tiny random-weight Hugging Face GPT-2 folders, made inside the tests (nothing is downloaded)."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

END_OF_TEXT = "<|endoftext|>"
CORPUS = [
    "The quick brown fox jumps over the lazy dog.\n",
    "  Leading spaces, trailing spaces  \n\nand blank lines.\n",
    "Unicode: naïve café, Größe, Ελληνικά, 日本語のテキスト, emoji 🙂🚀.\n",
    "def f(x):\n    return x * 2  # code, tabs\tand symbols <>{}[]\n",
] * 20
MIXED_TEXT = " Hello  world!\n\n  naïve café — 日本語 🙂\tTabs and   spaces\nThe quick brown fox.  "


def write_gpt2_tokenizer(folder: Path, vocab_size: int = 320) -> int:
    """vocab.json + merges.txt of a byte-level BPE trained here, <|endoftext|> last as in GPT-2; its id."""
    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  min_frequency=0, show_progress=False)
    hf.train_from_iterator(CORPUS, trainer)
    folder.mkdir(parents=True, exist_ok=True)
    hf.model.save(str(folder))
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    vocab[END_OF_TEXT] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    return vocab[END_OF_TEXT]


def hf_gpt2(seed: int = 0, **config):
    """A GPT2LMHeadModel with every parameter random (biases and LayerNorms too, so no mistake hides)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    model = GPT2LMHeadModel(GPT2Config(**config)).eval()
    with torch.no_grad():
        for param in model.parameters():
            param.normal_(0.0, 0.2)
    return model


def save_hf_gpt2(folder: Path, weights: str = "safetensors", seed: int = 0, **config):
    """A complete GPT-2 folder: config.json, weights in the asked format, vocab.json + merges.txt.

    `weights="bin"` writes a pytorch_model.bin the way the original OpenAI conversion did: GPT2Model
    names without the 'transformer.' prefix, no lm_head, and the old attn.bias/masked_bias buffers.
    """
    eot = write_gpt2_tokenizer(folder)
    config = {"vocab_size": eot + 7, "bos_token_id": eot, "eos_token_id": eot, **config}  # a padded vocab
    model = hf_gpt2(seed, **config)
    model.save_pretrained(folder)
    if weights == "bin":
        (folder / "model.safetensors").unlink()
        state = {k.removeprefix("transformer."): v for k, v in model.state_dict().items() if k != "lm_head.weight"}
        n = model.config.n_positions
        for i in range(model.config.n_layer):
            state[f"h.{i}.attn.bias"] = torch.tril(torch.ones(n, n, dtype=torch.bool)).view(1, 1, n, n)
            state[f"h.{i}.attn.masked_bias"] = torch.tensor(-1e4)
        torch.save(state, folder / "pytorch_model.bin")
    return model
