"""Tiny random-weight Hugging Face models of the families `load_hf` opens, made inside the tests."""

from __future__ import annotations

from pathlib import Path

import torch

from tui_lab.config import field_names

# Each needs the config axes named; a build without one skips its tests, naming the axis.
CAUSAL = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", dict(rope_theta=500000.0, tie_word_embeddings=True), ()),
    "llama-gqa": ("LlamaConfig", "LlamaForCausalLM", dict(num_key_value_heads=2), ("kv_heads",)),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", dict(num_key_value_heads=2), ("kv_heads", "qkv_bias")),
    "mistral": ("MistralConfig", "MistralForCausalLM", dict(num_key_value_heads=2, sliding_window=5),
                ("kv_heads", "attention_window")),
    "mixtral": ("MixtralConfig", "MixtralForCausalLM",
                dict(num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, sliding_window=None),
                ("kv_heads", "ffn", "experts", "experts_per_token")),
}
SMALL = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, vocab_size=61,
             max_position_embeddings=64, rms_norm_eps=1e-5)


def missing_axes(axes: tuple[str, ...]) -> list[str]:
    return [a for a in axes if a not in field_names()]


def randomise(model):
    """Every weight random (norms and biases too, so no mistake hides); Marian's fixed sinusoids kept."""
    torch.manual_seed(0)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "embed_positions" not in name:
                param.normal_(0.0, 0.2)
    return model.eval()


def save_causal(kind: str, folder: Path, **changes):
    import transformers

    config_class, model_class, extra, _ = CAUSAL[kind]
    config = getattr(transformers, config_class)(**{**SMALL, **extra, **changes})
    model = randomise(getattr(transformers, model_class)(config))
    model.save_pretrained(folder)
    return model


def save_marian(folder: Path, bias: bool = True, vocab: int = 61):
    """Like opus-mt: </s> is 0 and <pad> (the decoder's start) the last id."""
    import transformers

    config = transformers.MarianConfig(
        d_model=32, encoder_ffn_dim=48, decoder_ffn_dim=48, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=4, decoder_attention_heads=4, vocab_size=vocab, pad_token_id=vocab - 1,
        decoder_start_token_id=vocab - 1, eos_token_id=0, activation_function="swish", scale_embedding=True,
        max_position_embeddings=64)
    model = randomise(transformers.MarianMTModel(config))
    if not bias:
        with torch.no_grad():
            model.final_logits_bias.zero_()
    model.save_pretrained(folder)
    return model


ENCODER = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4)


def save_bert(folder: Path, **changes):
    import transformers

    config = transformers.BertConfig(**{**ENCODER, "vocab_size": 61, "max_position_embeddings": 64, **changes})
    model = randomise(transformers.BertForMaskedLM(config))
    model.save_pretrained(folder)
    return model


def save_vit(folder: Path, **changes):
    import transformers

    config = transformers.ViTConfig(**{**ENCODER, "image_size": 8, "patch_size": 2, "num_channels": 3,
                                       "num_labels": 5, **changes})
    model = randomise(transformers.ViTForImageClassification(config))
    model.save_pretrained(folder)
    return model


def save_wordpiece(folder: Path, size: int = 61) -> None:
    """A BERT-style tokenizer.json (lowercasing, WordPiece, [CLS]/[SEP]) trained on a few words."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    hf = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    hf.normalizer = normalizers.BertNormalizer(lowercase=True)
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=size, show_progress=False,
                                        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    hf.train_from_iterator(["the cat sat on the mat", "a dog saw the cat", "seen gesehen"] * 5, trainer)
    hf.save(str(folder / "tokenizer.json"))
