"""Which Hugging Face model types the lab opens, and how: one table, keyed by config.json's model_type.

Each family gives its config mapping (torch-free, so `info --from-hf` is instant), its weight slot
table, the prefixes its checkpoints may carry and the stored tensors that are not weights. Adding a
family is one module and one entry here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tui_lab.config import ModelConfig
from tui_lab.hf import encoders, llama, marian, t5
from tui_lab.hf.config import model_config_from_hf as gpt2_config
from tui_lab.hf.slots import Slot


@dataclass(frozen=True)
class Family:
    label: str  # for people: "Llama"
    config: Callable[[dict[str, Any], str], ModelConfig]
    slots: Callable[[ModelConfig], dict[str, Slot]]
    strip: str = ""  # a prefix some checkpoints put before every name (GPT2Model without the LM head)
    ignored: re.Pattern = re.compile(r"^$")  # stored tensors that are not weights (buffers, caches)


def _gpt2_slots(c: ModelConfig) -> dict[str, Slot]:
    from tui_lab.hf.weights import gpt2_slots

    return gpt2_slots(c)


_LLAMA_IGNORED = re.compile(r"^model\.layers\.\d+\.self_attn\.rotary_emb\.inv_freq$")
FAMILIES: dict[str, Family] = {
    "gpt2": Family("GPT-2", gpt2_config, _gpt2_slots, "transformer.",
                   re.compile(r"^h\.\d+\.attn\.(bias|masked_bias)$")),
    **{kind: Family(llama.LABELS[kind], llama.config_from_hf, llama.slots, "", _LLAMA_IGNORED)
       for kind in llama.DEFAULTS},
    "marian": Family("Marian", marian.config_from_hf, marian.slots, "",
                     re.compile(r"^model\.(encoder|decoder)\.embed_positions\.weight$")),
    # BertForPreTraining's checkpoints (bert-base-uncased) also hold the pooler and the next-sentence head,
    # which BertForMaskedLM drops too; older ones store the position_ids buffer.
    "bert": Family("BERT", encoders.bert_config, encoders.bert_slots, "",
                   re.compile(r"^(bert\.pooler\.|cls\.seq_relationship\.|bert\.embeddings\.position_ids$)")),
    "vit": Family("ViT", encoders.vit_config, encoders.vit_slots, "", re.compile(r"^vit\.pooler\.")),
    "t5": Family("T5", t5.config_from_hf, t5.slots),
}


def family_of(hf: dict[str, Any]) -> Family:
    model_type = hf.get("model_type")
    if model_type not in FAMILIES:
        raise ValueError(f"config.json: model_type is {model_type!r}; the lab opens {', '.join(FAMILIES)}")
    return FAMILIES[model_type]


def hf_model_config(hf: dict[str, Any], name: str) -> ModelConfig:
    """Our ModelConfig for any supported config.json, or one line naming the HF key that stops it."""
    return family_of(hf).config(hf, name)
