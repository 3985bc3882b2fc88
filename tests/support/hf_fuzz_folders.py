"""Random Hugging Face folders shaped the way real ones are, for the differential fuzzer (tests/hf/test_fuzz_hf.py).

A `FolderSpec` is what hypothesis draws (`specs(family)`); `build(spec, folder)` writes it: the model saved by
transformers' own `save_pretrained` (so config.json and generation_config.json hold what 5.24 writes, T5's tie and
scale keys included), then what real folders add or change by hand: a stored head beside a tied config, a
tokenizer (byte-level BPE whose post-processor adds BOS, Llama-2's sentencepiece-shaped tokenizer.json with
legacy true/false, T5's spiece.model), the bos named in tokenizer_config.json, special_tokens_map.json or only by
the class default, a tokenizer smaller than the model's rows, eos named only outside config.json, a
generation_config.json of decoding keys, and a real-shaped chat template. Nothing is downloaded.
"""

from __future__ import annotations

import functools
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from hf_family_fixtures import randomise
from hypothesis import strategies as st

FAMILIES = ("gpt2", "llama", "mistral", "qwen2", "mixtral", "marian", "t5", "bert", "vit")
DECODERS = ("gpt2", "llama", "mistral", "qwen2", "mixtral")
GENERATING = (*DECODERS, "marian", "t5")

# Every template's special tokens, so each chat template can be paired with each tokenizer.
SPECIALS = ["<unk>", "<s>", "</s>", "<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
            "<|end_header_id|>", "<|eot_id|>", "<|im_start|>", "<|im_end|>", "<|system|>", "<|user|>",
            "<|assistant|>", "<|end|>", "<start_of_turn>", "<end_of_turn>", "<|endoftext|>"]
CORPUS = [
    "The quick brown fox jumps over the lazy dog.\n", "Hello world, hello there! What is 2 and 2?\n",
    "system user assistant model [INST] [/INST] <<SYS>> <</SYS>>\n",
    "You are a helpful assistant. Cutting Knowledge Date: December 2023. Today Date: 26 Jul 2024\n",
    "Environment: ipython. You are Qwen, created by Alibaba Cloud.\n",
] * 20
PROMPTS = ("Hello world", "the quick brown fox", " What is 2 and 2?", "hello there", "lazy dog.")

# Chat templates as the Hub ships them (cut to what a one-turn conversation exercises; tools kept where the
# real template has them: the lab renders with tools=None, as apply_chat_template does without tools).
TEMPLATES = {
    "llama3": (
        "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
        "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + "
        "'<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}"
        "{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}"
        "{% endif %}"),
    "llama3.1-tools": (
        "{{- bos_token }}\n{%- if not date_string is defined %}\n    {%- set date_string = \"26 Jul 2024\" %}\n"
        "{%- endif %}\n{%- if messages[0]['role'] == 'system' %}\n"
        "    {%- set system_message = messages[0]['content']|trim %}\n    {%- set messages = messages[1:] %}\n"
        "{%- else %}\n    {%- set system_message = \"\" %}\n{%- endif %}\n"
        "{{- \"<|start_header_id|>system<|end_header_id|>\\n\\n\" }}\n"
        "{%- if tools is not none %}\n    {{- \"Environment: ipython\\n\" }}\n{%- endif %}\n"
        "{{- \"Cutting Knowledge Date: December 2023\\n\" }}\n{{- \"Today Date: \" + date_string + \"\\n\\n\" }}\n"
        "{%- if tools is not none %}\n    {%- for t in tools %}\n        {{- t | tojson(indent=4) }}\n"
        "        {{- \"\\n\\n\" }}\n    {%- endfor %}\n{%- endif %}\n{{- system_message }}\n{{- \"<|eot_id|>\" }}\n"
        "{%- for message in messages %}\n    {{- '<|start_header_id|>' + message['role'] + "
        "'<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}\n{%- endfor %}\n"
        "{%- if add_generation_prompt %}\n    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}\n"
        "{%- endif %}\n"),
    "qwen2.5-tools": (
        "{%- if tools %}\n    {{- '<|im_start|>system\\n' }}\n    {%- for tool in tools %}\n"
        "        {{- \"\\n\" }}\n        {{- tool | tojson }}\n    {%- endfor %}\n    {{- '<|im_end|>\\n' }}\n"
        "{%- else %}\n    {%- if messages[0]['role'] == 'system' %}\n"
        "        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n    {%- else %}\n"
        "        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant."
        "<|im_end|>\\n' }}\n    {%- endif %}\n{%- endif %}\n{%- for message in messages %}\n"
        "    {%- if (message.role == \"user\") or (message.role == \"system\" and not loop.first) or "
        "(message.role == \"assistant\" and not message.tool_calls) %}\n"
        "        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n"
        "    {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n"
        "{%- endif %}\n"),
    "phi3": (
        "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'system' %}"
        "{{'<|system|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}"
        "{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' %}"
        "{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}"),
    "zephyr": (
        "{% for message in messages %}\n{% if message['role'] == 'user' %}\n"
        "{{ '<|user|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n"
        "{{ '<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n"
        "{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n"
        "{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}"),
    "gemma": (
        "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
        "{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
        "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
        "{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}"
        "{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}"
        "{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}"),
    "llama2": (
        "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
        "{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}"
        "{% set system_message = false %}{% endif %}{% for message in loop_messages %}"
        "{% if loop.index0 == 0 and system_message != false %}"
        "{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}"
        "{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}"
        "{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}"
        "{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}"),
    # SmolLM3 / OLMo's assistant mask: {% generation %} marks the assistant's tokens (return_assistant_tokens_mask)
    "generation-block": (
        "{%- for message in messages %}{%- if message.role == 'assistant' %}{{ '<|im_start|>assistant\\n' }}"
        "{% generation %}{{ message.content + '<|im_end|>\\n' }}{% endgeneration %}{%- else %}"
        "{{ '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}{%- endif %}"
        "{%- endfor %}{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}"),
}


@dataclass(frozen=True)
class FolderSpec:
    """One folder: a family, what its files say, and how it was written. Printed on failure (replayable)."""

    family: str
    config: dict[str, Any] = field(default_factory=dict)  # config.json changes (the family's Config class)
    head: str = "saved"  # "saved" (save_pretrained's own) | "stored-differs" (tie true, another head stored)
    # none | bpe (Qwen2 shape: no BOS added) | bpe-bos (Llama-3 shape) | spm-llama (Llama-2 shape) | gpt2-files | spiece
    tokenizer: str = "none"
    legacy: bool | None = None  # spm-llama: tokenizer_config.json's legacy (None: not written)
    bos_in: str = "tokenizer_config"  # tokenizer_config | special_tokens_map | class_default
    extra_rows: int = 0  # model rows past the tokenizer's (a padded vocabulary)
    eos_outside_config: bool = False  # config.json names no eos; generation_config / tokenizer_config do
    generation: dict[str, Any] | None = None  # generation_config.json's decoding keys; None: save_pretrained's
    chat: str | None = None  # a TEMPLATES key: the prompt is one user turn through it
    prompt: str = "Hello world"
    new_tokens: int = 12  # the person's --max-new-tokens when the folder sets no length


# -- tokenizers (trained once per process: each fuzz example writes the same trained files) ------------------
@functools.cache
def _byte_level_json() -> str:
    """A byte-level BPE (Llama-3 shape) with every template's special tokens first."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=330, special_tokens=SPECIALS, show_progress=False, min_frequency=0,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    hf.train_from_iterator(CORPUS, trainer)
    return hf.to_str()


@functools.cache
def _llama2_json() -> str:
    """Llama-2's tokenizer.json shape: BPE with byte fallback behind a Prepend("▁") + Replace(" ", "▁")
    normalizer (what the Hub's legacy files hold), <unk> <s> </s> as 0 1 2."""
    from tokenizers import Tokenizer, decoders, models, normalizers, trainers

    hf = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    hf.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    hf.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                    decoders.Strip(" ", 1, 0)])
    trainer = trainers.BpeTrainer(vocab_size=200, special_tokens=SPECIALS, show_progress=False, min_frequency=0)
    hf.train_from_iterator(CORPUS, trainer)
    return hf.to_str()


@functools.cache
def _spiece() -> bytes:
    """T5's spiece.model (pad 0, </s> 1, <unk> 2, no <s>), as tests/test_hf_t5.py trains it."""
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(CORPUS[:5] * 20), model_writer=model, vocab_size=60, hard_vocab_limit=False,
        model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1, minloglevel=2, num_threads=1)
    return model.getvalue()


def _with_bos_processor(raw: str, bos: str) -> str:
    """tokenizer.json whose post-processor adds BOS to every encoding (Llama-2 and Llama-3 ship this)."""
    from tokenizers import Tokenizer, processors

    hf = Tokenizer.from_str(raw)
    bos_id = hf.token_to_id(bos)
    hf.post_processor = processors.TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A {bos} $B",
                                                      special_tokens=[(bos, bos_id)])
    return hf.to_str()


def tokenizer_size(spec: FolderSpec) -> int | None:
    from tokenizers import Tokenizer

    if spec.tokenizer in ("bpe", "bpe-bos"):
        return Tokenizer.from_str(_byte_level_json()).get_vocab_size()
    if spec.tokenizer == "spm-llama":
        return Tokenizer.from_str(_llama2_json()).get_vocab_size()
    if spec.tokenizer == "gpt2-files":
        return 320 + 1  # tests/hf_fixtures.py's BPE, <|endoftext|> appended last
    if spec.tokenizer == "spiece":
        import sentencepiece as spm

        return spm.SentencePieceProcessor(model_proto=_spiece()).get_piece_size() + 100  # + T5's sentinels
    return None


def _special_ids(spec: FolderSpec) -> tuple[str | None, str | None, dict[str, int]]:
    """(bos token, eos token, every special token's id) of the spec's tokenizer."""
    from tokenizers import Tokenizer

    if spec.tokenizer in ("bpe", "bpe-bos", "spm-llama"):
        hf = Tokenizer.from_str(_llama2_json() if spec.tokenizer == "spm-llama" else _byte_level_json())
        ids = {t: hf.token_to_id(t) for t in SPECIALS}
        return {"bpe": ("<|endoftext|>", "<|im_end|>", ids), "bpe-bos": ("<|begin_of_text|>", "<|eot_id|>", ids),
                "spm-llama": ("<s>", "</s>", ids)}[spec.tokenizer]
    if spec.tokenizer == "gpt2-files":
        return "<|endoftext|>", "<|endoftext|>", {"<|endoftext|>": 320}
    return None, None, {}


def _write_tokenizer(spec: FolderSpec, folder: Path) -> None:
    bos, eos, _ = _special_ids(spec)
    if spec.tokenizer == "gpt2-files":
        from hf_fixtures import write_gpt2_tokenizer

        write_gpt2_tokenizer(folder)
        return
    if spec.tokenizer == "spiece":
        (folder / "spiece.model").write_bytes(_spiece())
        return
    raw = _llama2_json() if spec.tokenizer == "spm-llama" else _byte_level_json()
    if spec.tokenizer != "bpe":  # Qwen2's adds nothing; Llama-2's and Llama-3's add BOS
        raw = _with_bos_processor(raw, bos)
    (folder / "tokenizer.json").write_text(raw, encoding="utf-8")
    config: dict[str, Any] = {"model_max_length": 64, "eos_token": eos, "unk_token": "<unk>",
                              "tokenizer_class": "PreTrainedTokenizerFast"}
    if spec.tokenizer == "spm-llama":
        config |= {"tokenizer_class": "LlamaTokenizer", "add_bos_token": True, "add_eos_token": False}
        if spec.legacy is not None:
            config["legacy"] = spec.legacy
    if spec.tokenizer == "bpe":
        config["bos_token"] = None  # Qwen2's tokenizer_config.json: bos null, config.json's bos_token_id set
    elif spec.bos_in == "tokenizer_config" or (spec.bos_in == "class_default" and spec.tokenizer != "spm-llama"):
        config["bos_token"] = bos
    elif spec.bos_in == "special_tokens_map":
        (folder / "special_tokens_map.json").write_text(json.dumps({"bos_token": bos, "eos_token": eos,
                                                                    "unk_token": "<unk>"}))
    if spec.chat is not None:
        (folder / "chat_template.jinja").write_text(TEMPLATES[spec.chat], encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")


# -- models ---------------------------------------------------------------------------------------------
DECODER_CLASSES = {"llama": ("LlamaConfig", "LlamaForCausalLM"), "mistral": ("MistralConfig", "MistralForCausalLM"),
                   "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"), "mixtral": ("MixtralConfig", "MixtralForCausalLM"),
                   "gpt2": ("GPT2Config", "GPT2LMHeadModel")}
SMALL = {
    "llama": dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, max_position_embeddings=128),
    "gpt2": dict(n_embd=32, n_head=4, n_layer=2, n_positions=128),
    "marian": dict(d_model=32, encoder_ffn_dim=48, decoder_ffn_dim=48, encoder_layers=2, decoder_layers=2,
                   encoder_attention_heads=4, decoder_attention_heads=4, max_position_embeddings=64),
    "t5": dict(d_model=32, d_kv=8, num_heads=4, d_ff=48, num_layers=2, relative_attention_num_buckets=8,
               relative_attention_max_distance=20, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1),
    "bert": dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
                 max_position_embeddings=64),
    "vit": dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, image_size=8,
                patch_size=2, num_channels=3),
}
NO_TOKENIZER_VOCAB = 61


def vocab_rows(spec: FolderSpec) -> int:
    size = tokenizer_size(spec)
    return (NO_TOKENIZER_VOCAB if size is None else size) + spec.extra_rows


def _reference_model(spec: FolderSpec):
    """The transformers model the spec describes, every weight random."""
    import transformers

    vocab = vocab_rows(spec)
    if spec.family in DECODER_CLASSES:
        config_class, model_class = DECODER_CLASSES[spec.family]
        base = SMALL["gpt2" if spec.family == "gpt2" else "llama"]
        bos, eos, ids = _special_ids(spec)
        tokens = {"bos_token_id": ids.get(bos), "eos_token_id": ids.get(eos)} if bos else {}
        if spec.family == "gpt2" and not tokens:
            tokens = {"bos_token_id": vocab - 1, "eos_token_id": vocab - 1}
        config = getattr(transformers, config_class)(**{**base, "vocab_size": vocab, **tokens, **spec.config})
        return randomise(getattr(transformers, model_class)(config))
    if spec.family == "marian":
        config = transformers.MarianConfig(**{**SMALL["marian"], "vocab_size": vocab, "pad_token_id": vocab - 1,
                                              "decoder_start_token_id": vocab - 1, "eos_token_id": 0,
                                              **spec.config})
        return randomise(transformers.MarianMTModel(config))
    if spec.family == "t5":
        config = transformers.T5Config(**{**SMALL["t5"], "vocab_size": vocab, **spec.config})
        return randomise(transformers.T5ForConditionalGeneration(config))
    if spec.family == "bert":
        return randomise(transformers.BertForMaskedLM(transformers.BertConfig(
            **{**SMALL["bert"], "vocab_size": vocab, **spec.config})))
    return randomise(transformers.ViTForImageClassification(transformers.ViTConfig(
        **{**SMALL["vit"], "num_labels": 5, **spec.config})))


def build(spec: FolderSpec, folder: Path) -> None:
    """Write the spec's folder: save_pretrained's files, then the hand-made changes real folders carry."""
    folder.mkdir(parents=True, exist_ok=True)
    model = _reference_model(spec)
    model.save_pretrained(folder)
    if spec.head == "stored-differs":
        _store_another_head(model, folder)
    if spec.tokenizer != "none":
        _write_tokenizer(spec, folder)
    if spec.eos_outside_config:
        _move_eos_out_of_config(spec, folder)
    if spec.generation is not None:
        path = folder / "generation_config.json"
        saved = json.loads(path.read_text()) if path.is_file() else {}
        kept = {k: v for k, v in saved.items() if k in ("bos_token_id", "eos_token_id", "pad_token_id",
                                                        "decoder_start_token_id", "transformers_version")}
        path.write_text(json.dumps({**kept, **spec.generation}), encoding="utf-8")


def _store_another_head(model, folder: Path) -> None:
    """A tied config whose weights still hold an lm_head.weight of their own (a FLAN folder re-saved, a merge
    tool's output): transformers 5.24 loads the stored head."""
    from safetensors.torch import load_file, save_file

    path = folder / "model.safetensors"
    state = load_file(str(path))
    embed = model.get_input_embeddings().weight
    state["lm_head.weight"] = (torch.randn(embed.shape, generator=torch.Generator().manual_seed(7)) * 0.5)
    save_file(state, str(path), metadata={"format": "pt"})
    raw = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**raw, "tie_word_embeddings": True}))


def _move_eos_out_of_config(spec: FolderSpec, folder: Path) -> None:
    """Qwen2's shape: config.json names no eos id; generation_config.json and tokenizer_config.json do."""
    raw = json.loads((folder / "config.json").read_text())
    eos = raw.pop("eos_token_id", None)
    raw.pop("bos_token_id", None)
    (folder / "config.json").write_text(json.dumps(raw))
    path = folder / "generation_config.json"
    generation = json.loads(path.read_text()) if path.is_file() else {}
    if eos is not None:
        path.write_text(json.dumps({**generation, "eos_token_id": eos}))


# -- strategies -------------------------------------------------------------------------------------------
CONFIG_OPTIONS: dict[str, dict[str, st.SearchStrategy]] = {
    "llama": {"rope_theta": st.sampled_from([10000.0, 500000.0]), "rms_norm_eps": st.sampled_from([1e-5, 1e-6]),
              "tie_word_embeddings": st.booleans(), "num_key_value_heads": st.sampled_from([1, 2, 4]),
              "hidden_act": st.sampled_from(["silu", "gelu"]), "attention_bias": st.booleans(),
              "mlp_bias": st.booleans(), "head_dim": st.sampled_from([8, 16])},
    "mistral": {"sliding_window": st.sampled_from([3, 5, 4096, None]), "num_key_value_heads": st.sampled_from([1, 2]),
                "rope_theta": st.sampled_from([10000.0, 1e6]), "tie_word_embeddings": st.booleans()},
    "qwen2": {"num_key_value_heads": st.sampled_from([2, 4]), "tie_word_embeddings": st.booleans(),
              "use_sliding_window": st.booleans(), "sliding_window": st.sampled_from([4, 4096]),
              "max_window_layers": st.sampled_from([0, 1, 2]), "rope_theta": st.sampled_from([10000.0, 1e6])},
    "mixtral": {"num_local_experts": st.sampled_from([2, 4]), "num_experts_per_tok": st.sampled_from([1, 2]),
                "num_key_value_heads": st.sampled_from([2, 4]), "sliding_window": st.sampled_from([None, 6]),
                "tie_word_embeddings": st.booleans(), "router_jitter_noise": st.sampled_from([0.0, 0.1])},
    "gpt2": {"activation_function": st.sampled_from(["gelu_new", "gelu", "relu", "gelu_pytorch_tanh"]),
             "n_inner": st.sampled_from([None, 48]), "layer_norm_epsilon": st.sampled_from([1e-5, 1e-6]),
             "scale_attn_weights": st.booleans(), "scale_attn_by_inverse_layer_idx": st.booleans(),
             "reorder_and_upcast_attn": st.booleans(), "tie_word_embeddings": st.booleans(),
             "eos_token_id": st.just(50256)},  # GPT2Config's default eos, kept in a small vocab
    "marian": {"scale_embedding": st.booleans(), "activation_function": st.sampled_from(["swish", "gelu", "relu"]),
               "share_encoder_decoder_embeddings": st.booleans(), "normalize_embedding": st.booleans()},
    "t5": {"feed_forward_proj": st.sampled_from(["relu", "gated-gelu", "gated-relu", "gelu_new"]),
           "tie_word_embeddings": st.booleans(), "num_decoder_layers": st.sampled_from([2, 3]),
           "layer_norm_epsilon": st.sampled_from([1e-6, 1e-5])},
    "bert": {"hidden_act": st.sampled_from(["gelu", "gelu_new", "relu"]), "tie_word_embeddings": st.booleans(),
             "type_vocab_size": st.sampled_from([1, 2]), "layer_norm_eps": st.sampled_from([1e-12, 1e-5]),
             "position_embedding_type": st.sampled_from(["absolute", "relative_key"])},
    "vit": {"hidden_act": st.sampled_from(["gelu", "gelu_new", "relu"]), "qkv_bias": st.booleans(),
            "layer_norm_eps": st.sampled_from([1e-12, 1e-6]), "patch_size": st.sampled_from([2, 4])},
}
MOSTLY_KEPT = {"attention_bias", "mlp_bias", "head_dim", "hidden_act", "position_embedding_type",
               "normalize_embedding", "reorder_and_upcast_attn"}  # options the lab refuses: drawn less often


@st.composite
def config_changes(draw, family: str) -> dict[str, Any]:
    options = CONFIG_OPTIONS[family]
    chosen = {}
    for key, values in options.items():
        if draw(st.integers(0, 9)) < (1 if key in MOSTLY_KEPT else 4):
            chosen[key] = draw(values)
    return chosen


def _token_ids(vocab: int) -> st.SearchStrategy[int]:
    return st.integers(0, vocab - 1)


# GenerationConfig's keys no folder draw holds, and why: none decides which ids are decoded from the file alone.
NOT_DRAWN = {
    "_from_model_config": "metadata", "transformers_version": "metadata",
    "constraints": "Python Constraint objects: no JSON form in a folder",
    "assistant_confidence_threshold": "assisted decoding: needs an assistant model passed to generate()",
    "assistant_early_exit": "assisted decoding", "assistant_ensemble_weight": "assisted decoding",
    "assistant_lookbehind": "assisted decoding", "is_assistant": "assisted decoding",
    "num_assistant_tokens": "assisted decoding", "num_assistant_tokens_schedule": "assisted decoding",
    "target_lookbehind": "assisted decoding", "speculation_type": "assisted decoding",
    "use_mtp": "multi-token-prediction drafts: a model with MTP heads",
    "cache_config": "cache memory layout: same ids", "max_cache_len": "cache memory layout: same ids",
    "compile_config": "torch.compile: same ids", "disable_compile": "torch.compile: same ids",
    "prefill_chunk_size": "prefill speed: same ids", "continuous_batching_config": "a serving mode",
}
ENCODER_DECODER_ONLY = {"encoder_repetition_penalty", "encoder_no_repeat_ngram_size", "forced_bos_token_id",
                        "decoder_start_token_id"}


@st.composite
def generation_settings(draw, vocab: int, encoder_decoder: bool) -> dict[str, Any] | None:
    """generation_config.json's decoding keys, as real folders write them (lists where lists are allowed);
    do_sample absent, false or true, with or without beams."""
    if draw(st.integers(0, 5)) == 0:
        return None  # save_pretrained's own file
    data: dict[str, Any] = {}
    # the decoding mode first (each about as likely), so beams and sampling are compared as often as greedy
    mode = draw(st.sampled_from(["no do_sample", "greedy", "sample", "beam", "beam sample"]))
    if mode != "no do_sample":
        data["do_sample"] = mode in ("sample", "beam sample")
    if mode.startswith("beam"):
        data["num_beams"] = draw(st.sampled_from([2, 3, 4]))
    optional = decoding_keys(vocab, encoder_decoder)
    # a few keys per folder, as real files hold (every key is reachable)
    for key in draw(st.lists(st.sampled_from(sorted(optional)), max_size=4, unique=True)):
        data.setdefault(key, draw(optional[key]))
    return data


def decoding_keys(vocab: int, encoder_decoder: bool) -> dict[str, st.SearchStrategy]:
    """Each generation_config.json key a folder may hold, and the values drawn for it."""
    ids = _token_ids(vocab)
    optional = {
        "temperature": st.sampled_from([0.6, 0.7, 1.0, 1.3]), "top_k": st.sampled_from([0, 5, 20, 50]),
        "top_p": st.sampled_from([0.8, 0.9, 0.95, 1.0]), "min_p": st.sampled_from([0.05, 0.1]),
        "typical_p": st.sampled_from([0.9, 1.0]), "epsilon_cutoff": st.sampled_from([0.0, 3e-4]),
        "eta_cutoff": st.sampled_from([0.0, 1e-3]), "repetition_penalty": st.sampled_from([1.0, 1.1, 1.3]),
        "no_repeat_ngram_size": st.sampled_from([0, 2, 3]), "num_beams": st.sampled_from([1, 2, 3, 4]),
        "length_penalty": st.sampled_from([0.6, 1.0, 1.5]), "early_stopping": st.sampled_from([True, False, "never"]),
        "min_new_tokens": st.integers(0, 6), "min_length": st.integers(0, 10),
        "max_new_tokens": st.integers(4, 16), "max_length": st.integers(12, 24),
        "bad_words_ids": st.lists(st.lists(ids, min_size=1, max_size=2), min_size=1, max_size=3),
        "suppress_tokens": st.lists(ids, min_size=1, max_size=3),
        "begin_suppress_tokens": st.lists(ids, min_size=1, max_size=2),
        "forced_eos_token_id": st.one_of(ids, st.lists(ids, min_size=1, max_size=2)),
        "eos_token_id": st.one_of(ids, st.lists(ids, min_size=1, max_size=3)),
        "renormalize_logits": st.booleans(),
        "exponential_decay_length_penalty": st.tuples(st.integers(2, 6), st.sampled_from([1.05, 1.2])).map(list),
        "sequence_bias": st.lists(st.tuples(st.lists(ids, min_size=1, max_size=1), st.sampled_from([-2.0, 3.0])),
                                  min_size=1, max_size=2).map(lambda pairs: [[list(s), b] for s, b in pairs]),
        "encoder_repetition_penalty": st.sampled_from([1.0, 1.2]),
        "encoder_no_repeat_ngram_size": st.sampled_from([0, 2]),
        "use_cache": st.booleans(), "output_scores": st.booleans(), "return_dict_in_generate": st.booleans(),
        "num_return_sequences": st.just(1), "remove_invalid_values": st.booleans(),
        "max_time": st.sampled_from([30.0, 600.0]), "stop_strings": st.lists(st.sampled_from(["dog", "."]), max_size=2),
        "guidance_scale": st.sampled_from([1.0, 1.5]), "top_h": st.sampled_from([0.9, 1.0]),
        "penalty_alpha": st.sampled_from([0.0, 0.6]), "dola_layers": st.sampled_from(["low", "high", [0]]),
        "num_beam_groups": st.sampled_from([1, 2]), "diversity_penalty": st.sampled_from([0.0, 0.5]),
        "low_memory": st.booleans(), "token_healing": st.booleans(),
        "watermarking_config": st.just({"greenlist_ratio": 0.25, "bias": 2.0, "hashing_key": 15485863,
                                        "seeding_scheme": "lefthash", "context_width": 1}),
        "cache_implementation": st.sampled_from(["dynamic", "static"]), "pad_token_id": ids,
        "bos_token_id": ids, "output_attentions": st.booleans(), "output_hidden_states": st.booleans(),
        "output_logits": st.booleans(), "prompt_lookup_num_tokens": st.sampled_from([2, 3]),
        "max_matching_ngram_size": st.sampled_from([1, 2]),
        "force_words_ids": st.lists(st.lists(ids, min_size=1, max_size=2), min_size=1, max_size=2),
    }
    if encoder_decoder:
        optional["forced_bos_token_id"] = optional["decoder_start_token_id"] = ids
    else:
        del optional["encoder_repetition_penalty"], optional["encoder_no_repeat_ngram_size"]
    return optional


@st.composite
def specs(draw, family: str) -> FolderSpec:
    config = draw(config_changes(family))
    head = "saved"
    if family in ("llama", "mistral", "qwen2", "mixtral", "t5") and draw(st.integers(0, 4)) == 0:
        head = "stored-differs"
    tokenizer, legacy, bos_in, chat = "none", None, "tokenizer_config", None
    eos_outside, extra = False, 0
    if family in DECODERS:
        choices = ["gpt2-files", "bpe-bos"] if family == "gpt2" else ["bpe", "bpe-bos", "spm-llama"]
        tokenizer = draw(st.sampled_from(choices))
        if tokenizer == "spm-llama":
            legacy = draw(st.sampled_from([None, True, False]))
        if tokenizer not in ("gpt2-files", "bpe"):
            bos_in = draw(st.sampled_from(["tokenizer_config", "special_tokens_map", "class_default"]))
        if tokenizer != "gpt2-files":
            chat = draw(st.one_of(st.none(), st.sampled_from(sorted(TEMPLATES))))
        eos_outside = family != "gpt2" and draw(st.integers(0, 5)) == 0
    elif family == "t5":
        tokenizer = draw(st.sampled_from(["none", "spiece"]))
    if family in GENERATING:
        extra = draw(st.sampled_from([0, 0, 8, 24]))
    spec = FolderSpec(family, config, head, tokenizer, legacy, bos_in, extra, eos_outside, None, chat,
                      draw(st.sampled_from(PROMPTS)), draw(st.integers(6, 16)))
    if family in GENERATING:
        spec = _replace(spec, generation=draw(generation_settings(vocab_rows(spec), family in ("marian", "t5"))))
    return spec


def _replace(spec: FolderSpec, **changes) -> FolderSpec:
    from dataclasses import replace

    return replace(spec, **changes)
