"""A Hugging Face folder's generation settings, read as transformers' `from_pretrained` and `generate` read them.

Where they come from: `generation_config.json` when the folder has one (every key there, token ids included),
else config.json's generation keys (transformers' `GenerationConfig.from_model_config`). What they become:

- `DecodingRules` (`tui_lab.generation.rules`): the eos list (any id stops), pad, min_length / min_new_tokens,
  repetition_penalty, no_repeat_ngram_size, forced_bos / forced_eos, bad_words_ids (one token or several),
  length_penalty and early_stopping; the decoding loop applies them with transformers' own processors.
- `defaults`: the settings a person has not given (`generation.folder_defaults`): max_new_tokens or
  max_length, num_beams, and do_sample with temperature / top_k / top_p. transformers samples only with
  `do_sample: true` (then top_k 50 unless the file says otherwise; with num_beams > 1 it samples the beams,
  `beam_sample`); anything else, `do_sample` absent included, makes greedy (or beam search) the default.
- decoder_start_token_id (else bos): where an encoder-decoder's target starts.

Every key is either in `applied` or in `ignored` with the reason, and `generate --json` reports both.

opus-mt folders say `"bad_words_ids": [[pad_token_id]]`: Marian's decoder starts from its pad token and must
never write it (transformers PR 4290). `Bans` keeps those one-token bans for the lab's own paths and the app's
label; a ban of an eos id is dropped, as transformers drops it (a model must be able to stop). No torch here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_lab.generation.rules import DecodingRules
from tui_lab.hf.generation_reader import KEY, Reader, eos_ids, is_id, settings, short


@dataclass(frozen=True)
class Bans:
    """Single token ids generation may never choose, where they were read, and what was left out."""

    ids: tuple[int, ...] = ()
    source: str = ""  # "generation_config.json" or "config.json"; "" when the folder bans nothing
    notes: tuple[str, ...] = ()  # one sentence per ban left out

    def summary(self) -> str:
        """One line for people: `bans 58100 (generation_config.json bad_words_ids)`, plus the notes."""
        if not self.ids and not self.notes:
            return ""
        said = f"bans {', '.join(map(str, self.ids))} ({self.source} {KEY})" if self.ids else ""
        return "; ".join([s for s in (said, *self.notes) if s])


def read_bans(folder: Path, hf: dict[str, Any], vocab: int) -> Bans:
    """The folder's single-token bans (longer ones are in `read_generation`'s rules); ValueError (one line naming
    the file and key) for a malformed list. `hf` is config.json's dict."""
    source, data = settings(folder, hf)
    raw, eos = data.get(KEY), eos_ids(data.get("eos_token_id"))
    if raw is None:
        return Bans()
    field = f"{source}: {KEY}"
    if not isinstance(raw, list) or not raw or not all(isinstance(seq, list) and seq for seq in raw):
        raise ValueError(f"{field} must be a non-empty list of non-empty lists of token ids, got {short(raw)}")
    ids, notes = [], []
    for seq in raw:
        bad = [i for i in seq if not is_id(i) or i >= vocab]
        if bad:
            raise ValueError(f"{field} must hold token ids in 0..{vocab - 1} (the model's vocab), got {bad[0]!r}")
        if len(seq) > 1:
            continue  # a sequence: the folder's rules ban it (`read_generation`), with transformers' processor
        if seq[0] in eos:
            notes.append(f"{KEY} {seq} left out: it is eos, which transformers never bans either")
        elif seq[0] not in ids:
            ids.append(seq[0])
    return Bans(tuple(ids), source, tuple(notes))


# Every key transformers' GenerationConfig knows (5.x); config.json's other keys are the model's, not generation's.
GENERATION_KEYS = frozenset("""
assistant_confidence_threshold assistant_early_exit assistant_ensemble_weight assistant_lookbehind bad_words_ids
begin_suppress_tokens bos_token_id cache_config cache_implementation compile_config constraints
continuous_batching_config decoder_start_token_id disable_compile diversity_penalty do_sample dola_layers
early_stopping encoder_no_repeat_ngram_size encoder_repetition_penalty eos_token_id epsilon_cutoff eta_cutoff
exponential_decay_length_penalty force_words_ids forced_bos_token_id forced_eos_token_id guidance_scale
is_assistant length_penalty low_memory max_cache_len max_length max_matching_ngram_size max_new_tokens max_time
min_length min_new_tokens min_p no_repeat_ngram_size num_assistant_tokens num_assistant_tokens_schedule
num_beam_groups num_beams num_return_sequences output_attentions output_hidden_states output_logits
output_scores pad_token_id penalty_alpha prefill_chunk_size prompt_lookup_num_tokens remove_invalid_values
renormalize_logits repetition_penalty return_dict_in_generate sequence_bias speculation_type stop_strings
suppress_tokens target_lookbehind temperature token_healing top_h top_k top_p typical_p use_cache use_mtp
watermarking_config""".split())
# transformers' defaults for keys the lab does not act on: a file that states one of these changes nothing.
NO_EFFECT = {"output_attentions": False, "output_hidden_states": False, "output_scores": False,
             "output_logits": False, "return_dict_in_generate": False, "num_return_sequences": 1,
             "typical_p": 1.0, "epsilon_cutoff": 0.0, "eta_cutoff": 0.0, "encoder_repetition_penalty": 1.0,
             "encoder_no_repeat_ngram_size": 0, "num_beam_groups": 1, "diversity_penalty": 0.0,
             "remove_invalid_values": False, "low_memory": False,
             "is_assistant": False}
METADATA = frozenset({"transformers_version", "_from_model_config"})
SAMPLING = ("temperature", "top_k", "top_p")
RULE_KEYS = ("eos_token_id", "pad_token_id", "min_length", "min_new_tokens", "repetition_penalty",
             "no_repeat_ngram_size", "forced_bos_token_id", "forced_eos_token_id", "bad_words_ids", "length_penalty",
             "early_stopping", "min_p", "renormalize_logits")


@dataclass(frozen=True)
class FolderGeneration:
    """A folder's generation settings: the rules every run obeys, the defaults a person may override."""

    source: str = ""  # "generation_config.json" or "config.json"
    rules: DecodingRules = field(default_factory=DecodingRules)
    # GenerationSettings fields the folder sets (max_new_tokens, temperature, top_k, top_p, beam_size,
    # use_cache), plus "max_length": the whole sequence's, resolved against the prompt when a run starts
    defaults: dict[str, Any] = field(default_factory=dict)
    start_id: int | None = None  # an encoder-decoder's first target token (decoder_start_token_id, else bos)
    applied: tuple[str, ...] = ()
    ignored: dict[str, str] = field(default_factory=dict)  # key -> why the lab does not act on it

    def line(self) -> str:
        """One line for people: which defaults and rules came from the folder."""
        if not self.applied:
            return ""
        shown = [k for k in self.applied if k not in ("bos_token_id", "decoder_start_token_id", "pad_token_id")]
        text = f"from {self.source}: {', '.join(shown) or 'token ids'}"
        return text + (f"; ignored: {', '.join(self.ignored)}" if self.ignored else "")


def read_generation(folder: Path, hf: dict[str, Any], vocab: int, encoder_decoder: bool) -> FolderGeneration:
    """The folder's generation settings as transformers reads them; ValueError (one line naming the file and
    key) for a value transformers could not use either. `hf` is config.json's dict."""
    source, data = settings(folder, hf)
    if source == "config.json":  # from_model_config: config.json's generation keys, None ones dropped
        data = {k: v for k, v in data.items() if k in GENERATION_KEYS and v is not None}
    read = Reader(source, data, vocab)
    rules = DecodingRules(
        eos_ids=tuple(read.ids("eos_token_id", anywhere=True)), pad_id=read.one_id("pad_token_id"),
        min_length=read.count("min_length"), min_new_tokens=read.count("min_new_tokens"),
        repetition_penalty=read.positive("repetition_penalty", 1.0),
        no_repeat_ngram_size=read.count("no_repeat_ngram_size"), forced_bos_id=read.one_id("forced_bos_token_id"),
        forced_eos_id=read.forced_eos(), bad_words_ids=read.bad_words(),
        length_penalty=read.number("length_penalty", 1.0), early_stopping=read.early_stopping(),
        min_p=read.fraction("min_p"), renormalize=read.flag("renormalize_logits") if "renormalize_logits" in data
        else False)
    applied = [k for k in RULE_KEYS if k in data and data[k] is not None]
    defaults, ignored = _defaults(read, data, applied)
    start = None
    if encoder_decoder:  # a decoder-only model starts from its prompt: its bos is the tokenizer's business
        start = read.one_id("decoder_start_token_id")
        start = start if start is not None else read.one_id("bos_token_id")
    for key in ("bos_token_id", "decoder_start_token_id"):
        if key in data:
            used = encoder_decoder and (key == "decoder_start_token_id" or "decoder_start_token_id" not in data)
            if used or (key == "bos_token_id" and data[key] == hf.get("bos_token_id")):
                applied.append(key)
            else:
                ignored[key] = ("a decoder-only model starts from its prompt" if key == "decoder_start_token_id"
                                else "differs from config.json's, whose bos the tokenizer uses")
    for key, value in data.items():
        if key not in applied and key not in ignored:
            ignored[key] = _why_ignored(key, value)
    return FolderGeneration(source, rules, defaults, start if encoder_decoder else None,
                            tuple(k for k in data if k in applied), ignored)


def _defaults(read: Reader, data: dict[str, Any], applied: list[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The settings the folder proposes (a person's own win), and the keys that propose nothing."""
    defaults: dict[str, Any] = {}
    ignored: dict[str, str] = {}
    if "max_new_tokens" in data:
        defaults["max_new_tokens"] = read.count("max_new_tokens", minimum=1)
        applied.append("max_new_tokens")
        if "max_length" in data:
            ignored["max_length"] = "max_new_tokens takes precedence (as in transformers)"
    elif "max_length" in data:
        defaults["max_length"] = read.count("max_length", minimum=1)
        applied.append("max_length")
    if "num_beams" in data:
        defaults["beam_size"] = read.count("num_beams", minimum=1)
        applied.append("num_beams")
    if "use_cache" in data:
        defaults["use_cache"] = read.flag("use_cache")
        applied.append("use_cache")
    sampling = [k for k in SAMPLING if k in data]
    if read.flag("do_sample") if "do_sample" in data else False:
        temperature = read.number("temperature", 1.0)
        top_k = read.count("top_k") if "top_k" in data else 50  # transformers' default when sampling
        top_p = read.number("top_p", 1.0)
        defaults |= {"temperature": temperature, "top_k": top_k or None, "top_p": top_p if top_p < 1 else None}
        if defaults.get("beam_size", 1) > 1:
            defaults["beam_sample"] = True  # transformers' beam sample: the beams are drawn, not ranked
        applied += ["do_sample", *sampling]
    else:
        # transformers decodes greedily unless do_sample is true, and an absent do_sample is false (what
        # save_pretrained writes): the lab's own default (temperature 1) must not stand in for it
        defaults["temperature"] = 0.0
        if "do_sample" in data:
            applied.append("do_sample")
        for key in sampling:
            ignored[key] = "do_sample is not true, so transformers does not sample either"
    return defaults, ignored


def _why_ignored(key: str, value: Any) -> str:
    if key in METADATA:
        return "metadata"
    if key in NO_EFFECT and value == NO_EFFECT[key]:
        return "transformers' default: no effect"
    if key not in GENERATION_KEYS:
        return "not a transformers generation setting"
    return "not applied by the lab"
