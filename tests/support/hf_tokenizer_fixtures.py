"""Tokenizers shaped like real checkpoints' at toy size, written into a tiny model's folder: Llama 2's sentencepiece
BPE (byte fallback, `<s>` added by the post-processor, `legacy` true or false), Llama 3's byte-level BPE (its
post-processor adds <|begin_of_text|>) and Qwen 2's (no bos, eos named outside config.json); the bos token named
in tokenizer_config.json, only in special_tokens_map.json, or only by the tokenizer class's default."""

from __future__ import annotations

import json
from pathlib import Path

from hf_family_fixtures import save_causal
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

CORPUS = ["Hello there, how are you? [INST] what is two and two? [/INST] four.",
          "the quick brown fox jumps over the lazy dog", "system user assistant"] * 3
VOCAB = 512  # the model's rows: every toy tokenizer here fits

LLAMA2_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] == 'user' %}"
    "{{ bos_token + '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ ' ' + message['content'] + ' ' + eos_token }}{% endif %}"
    "{% endfor %}")
LLAMA31_TEMPLATE = (
    "{{- bos_token }}{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + "
    "'<|eot_id|>' }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}")
QWEN_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
GENERATION_TEMPLATE = (  # transformers' AssistantTracker tag, as training templates (SmolLM, OLMo) write it
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'assistant' %}"
    "{% generation %}{{ message['content'] + eos_token }}{% endgeneration %}"
    "{% else %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% endif %}{% endfor %}")


def save_llama2(folder: Path, legacy: bool = True, bos_in: str = "config", template: str = LLAMA2_TEMPLATE,
                kind: str = "llama") -> None:
    """A Llama with Llama 2's tokenizer.json (the legacy normalizer: prepend ▁, spaces to ▁) and LlamaTokenizer
    in tokenizer_config.json. `bos_in`: "config" (tokenizer_config.json), "map" (special_tokens_map.json only)
    or "default" (named nowhere: LlamaTokenizer's `<s>`). `kind="mistral"`: Mistral 7B's folder, the same tokenizer
    (transformers 5.24 loads it as TokenizersBackend there, keeping the stored pipeline)."""
    save_causal(kind, folder, vocab_size=VOCAB, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False)
    norm = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    trained = Tokenizer(models.BPE())
    trained.normalizer = norm
    trained.pre_tokenizer = pre_tokenizers.Split("▁", behavior="merged_with_next")
    trained.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=120, show_progress=False))
    model = json.loads(trained.to_str())["model"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2} | {f"<0x{b:02X}>": 3 + b for b in range(256)}
    for token in sorted(model["vocab"], key=model["vocab"].get):
        vocab.setdefault(token, len(vocab))
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    hf = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    hf.normalizer = norm
    hf.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                    decoders.Strip(" ", 1, 0)])
    hf.add_special_tokens(["<unk>", "<s>", "</s>"])
    hf.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B",
                                                      special_tokens=[("<s>", 1)])
    hf.save(str(folder / "tokenizer.json"))
    config = {"tokenizer_class": "LlamaTokenizer", "legacy": legacy, "eos_token": "</s>", "unk_token": "<unk>",
              "model_max_length": 64, "chat_template": template}
    _write_bos(folder, config, "<s>", bos_in)


def save_llama3(folder: Path, bos_in: str = "config", template: str = LLAMA31_TEMPLATE,
                tokenizer_class: str = "PreTrainedTokenizerFast") -> None:
    """A Llama with Llama 3's byte-level BPE: <|begin_of_text|> added by the post-processor, <|eot_id|> ends a
    turn; PreTrainedTokenizerFast in tokenizer_config.json (some fine-tunes say LlamaTokenizerFast: transformers
    warns and loads it as TokenizersBackend). `bos_in` as `save_llama2` ("default" is not: the class has no
    default bos)."""
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
    hf = _byte_level(specials)
    bos = hf.token_to_id("<|begin_of_text|>")
    hf.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B",
                                      special_tokens=[("<|begin_of_text|>", bos)])])
    save_causal("llama", folder, vocab_size=VOCAB, bos_token_id=bos, eos_token_id=hf.token_to_id("<|eot_id|>"),
                tie_word_embeddings=False)
    hf.save(str(folder / "tokenizer.json"))
    config = {"tokenizer_class": tokenizer_class, "eos_token": "<|eot_id|>", "model_max_length": 64,
              "chat_template": template}
    _write_bos(folder, config, "<|begin_of_text|>", bos_in)


def save_qwen2(folder: Path) -> dict[str, int]:
    """A Qwen2 whose config.json names no bos or eos id: eos is in generation_config.json and
    tokenizer_config.json only (Qwen2.5-Instruct's layout). Returns the special ids."""
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    hf = _byte_level(specials)
    ids = {token: hf.token_to_id(token) for token in specials}
    save_causal("qwen2", folder, vocab_size=VOCAB, bos_token_id=None, eos_token_id=None, tie_word_embeddings=False)
    config = json.loads((folder / "config.json").read_text())
    for key in ("bos_token_id", "eos_token_id"):
        config.pop(key, None)
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "generation_config.json").write_text(json.dumps(
        {"eos_token_id": [ids["<|im_end|>"], ids["<|endoftext|>"]], "pad_token_id": ids["<|endoftext|>"],
         "do_sample": False}))
    hf.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "Qwen2Tokenizer", "bos_token": None, "eos_token": "<|im_end|>",
         "pad_token": "<|endoftext|>", "model_max_length": 64, "chat_template": QWEN_TEMPLATE}))
    return ids


def _byte_level(specials: list[str]) -> Tokenizer:
    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=300, special_tokens=specials, show_progress=False,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return hf


def _write_bos(folder: Path, config: dict, bos: str, bos_in: str) -> None:
    if bos_in == "config":
        config["bos_token"] = bos
    elif bos_in == "map":
        (folder / "special_tokens_map.json").write_text(json.dumps({"bos_token": bos}))
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
