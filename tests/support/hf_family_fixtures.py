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


# An instruct-shaped folder (Llama-3-Instruct's layout at toy size): an eos list whose last id is the end of
# turn, a generation_config.json that samples with a repetition penalty, a chat template and a tokenizer whose
# special tokens the template writes.
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] not in ['system', 'user', 'assistant'] %}"
    "{{ raise_exception('roles are system, user and assistant, got ' + message['role']) }}{% endif %}"
    "<|{{ message['role'] }}|>\n{{ message['content'] | trim }}<|eot|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
CHAT_SPECIALS = ["<pad>", "<bos>", "<eos>", "<unk>", "<|system|>", "<|user|>", "<|assistant|>", "<|eot|>"]
CHAT_VOCAB = 64


def save_instruct(folder: Path, template_in: str = "jinja", **generation) -> dict[str, int]:
    """A random Llama with a char tokenizer (specials first) and a chat template in chat_template.jinja
    (`template_in="jinja"`, transformers 5) or in tokenizer_config.json (older folders). Returns the special ids.
    The end-of-turn's output row is 1.1x the row of "." (which the random model writes often): greedy replies
    end with it, as a trained chat model's do."""
    import json

    from tokenizers import Regex, decoders, models, pre_tokenizers
    from tokenizers import Tokenizer as HFTokenizer

    chars = " \n.,?!'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    vocab = {token: i for i, token in enumerate(CHAT_SPECIALS)}
    for char in chars[: CHAT_VOCAB - len(vocab)]:
        vocab[char] = len(vocab)
    hf = HFTokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    hf.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    hf.decoder = decoders.Fuse()
    hf.add_special_tokens(CHAT_SPECIALS)
    ids = {token: vocab[token] for token in CHAT_SPECIALS}
    eos = [ids["<eos>"], ids["<|eot|>"]]
    model = save_causal("llama", folder, vocab_size=CHAT_VOCAB, bos_token_id=ids["<bos>"], eos_token_id=eos,
                        pad_token_id=None, tie_word_embeddings=False)
    with torch.no_grad():
        head = model.get_output_embeddings().weight
        head[ids["<|eot|>"]] = 1.1 * head[vocab["."]]
    model.save_pretrained(folder)
    hf.save(str(folder / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<bos>", "eos_token": "<|eot|>",
              "unk_token": "<unk>", "pad_token": "<pad>", "model_max_length": 64}
    if template_in == "jinja":
        (folder / "chat_template.jinja").write_text(CHAT_TEMPLATE)
    else:
        config["chat_template"] = CHAT_TEMPLATE
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    settings = {"bos_token_id": ids["<bos>"], "eos_token_id": eos, "do_sample": True, "temperature": 0.6,
                "top_p": 0.9, "repetition_penalty": 1.1, "transformers_version": "5.0.0", **generation}
    (folder / "generation_config.json").write_text(json.dumps(settings))
    return ids
