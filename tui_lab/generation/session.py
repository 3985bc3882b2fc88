"""One generation as a person asks for it: prompt ids in, new ids out, timed, streamed and cancellable.

The CLI prints each token as it comes and the app posts it to the UI; both call `complete`. Sampling is
seeded by `settings.seed` (beam sample too); beam search is deterministic and hands its tokens over once it has
chosen.
Decoding runs on the thread counts chosen for this call (`threads.decode_plan`: the model's op sizes and
the load now, read before the clock starts, the prefill's count and the steps', tried where the rule cannot
tell; `Completion.threads` says them and why) and torch's count comes back afterwards. A Hugging Face folder's rules
(`model.folder_generation`: its eos list, repetition penalty, forced eos...) apply to every run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from tui_lab.config import is_nat
from tui_lab.devices import out_of_memory
from tui_lab.generation.settings import GenerationSettings
from tui_lab.model import AttentionCapture, Transformer


@dataclass(frozen=True)
class NewToken:
    index: int  # 0 for the first new token
    id: int
    prob: float | None  # its probability at the temperature used; None for beam search
    ids: list[int]  # every new token so far, this one included
    attentions: list[AttentionCapture] | None  # with need_attention: weights (1, H, 1, context) per layer
    candidates: list[tuple[int, float]] | None = None  # with need_candidates=k: (id, prob), best first
    p_gen: float | None = None  # copy models: the weight of generating rather than copying this token


@dataclass(frozen=True)
class Completion:
    ids: list[int]  # the new tokens (an encoder-decoder's bos not included)
    seconds: float
    slid: bool  # learned positions: the decoder saw only the last max_len tokens
    cropped: bool  # the prompt alone was longer than max_len
    cancelled: bool  # should_stop() said yes before the end
    decoder_passes: int = 0  # decoder forward passes that made it: AT one per new token, NAT 1
    nat_begins: int | None = None  # NAT: the positions (BEGINs) decoded; None for AT
    predicted_length: int | None = None  # NAT length classifier: its length (even when nat_length overrode it)
    threads: dict[str, Any] | None = None  # the counts chosen and why (threads.DecodePlan.to_dict); None: torch's

    @property
    def tokens_per_s(self) -> float:
        return len(self.ids) / max(self.seconds, 1e-9)

    def summary(self, settings: GenerationSettings) -> str:
        """`12 tokens in 0.10 s (120.0 tokens/s, cached)`, for a status line."""
        how = ("cached" if settings.use_cache else "no cache") + (
            f", beam {settings.beam_size}" if settings.beam_size > 1 else "")
        if self.nat_begins is not None:
            how = "NAT" + (f", length {self.predicted_length} predicted" if self.predicted_length is not None else "")
            how += f", {self.nat_begins} decoded" if settings.nat_length is not None else ""
        passes = f"{self.decoder_passes} decoder pass{'es' if self.decoder_passes != 1 else ''}"
        return f"{len(self.ids)} tokens in {self.seconds:.2f} s, {passes} ({self.tokens_per_s:.1f} tokens/s, {how})"


def complete(model: Transformer, codec: Any, prompt_ids: list[int], settings: GenerationSettings,
             on_token: Callable[[NewToken], None] | None = None, should_stop: Callable[[], bool] | None = None,
             need_attention: bool = False, need_candidates: int | None = None,
             src_ext: list[int] | None = None) -> Completion:
    """Continue `prompt_ids` (the source, for an encoder-decoder) with `settings`; `codec` gives bos and eos.

    A copy model points with `src_ext`, the source in its extended vocabulary (`tui_lab.data.extended`):
    the new ids may then hold its temporary ids, the copied words.

    `on_token` sees each new token as it is made; `should_stop()` is polled between tokens and ends the
    run early (the tokens so far are kept). `need_candidates` = k: each token carries the k likeliest
    of its step (none for beam search).
    """
    from tui_lab.generation.decoder_state import position_window
    from tui_lab.generation.threads import decode_choice, decode_plan, torch_threads

    device = next(model.parameters()).device
    x = torch.tensor([prompt_ids], dtype=torch.long, device=device)  # (1, P)
    folder = getattr(model, "folder_generation", None)
    extra = {"src_ext": torch.tensor([src_ext], dtype=torch.long, device=device) if src_ext is not None else None,
             "unk_id": getattr(codec, "unk_id", None), "rules": folder.rules if folder is not None else None,
             "bos_id": folder.start_id if folder is not None and folder.start_id is not None else codec.bos_id}
    start_len = len(prompt_ids) if model.config.family == "decoder-only" else 1  # a target starts at bos
    # reads the load: not timed. NAT's one pass is not a decode step: torch's count stays. Beam search runs every
    # pass on one count (the rule's, untried); sampling and greedy on the plan (the prefill's, then the steps').
    beams, nat = settings.beam_size > 1, is_nat(model.config)
    choice = decode_choice(model, settings.use_cache, rows=settings.beam_size) if beams and not nat else None
    plan = decode_plan(model, settings.use_cache, prompt_tokens=len(prompt_ids)) if not beams and not nat else None
    _check_memory(model.config, len(prompt_ids), settings, str(device))
    with torch_threads(choice.threads if choice is not None else None), \
            out_of_memory(str(device), "generating", "try fewer new tokens or a smaller beam"):
        start = time.perf_counter()
        if beams:
            new, cancelled = _beam(model, codec, x, start_len, settings, extra), False
            info = _Info(passes=len(new))  # one batched pass over the beams per new token
        else:
            new, cancelled, info = _sample(model, codec, x, settings, on_token, should_stop, need_attention,
                                           need_candidates, {**extra, "plan": plan})
        seconds = time.perf_counter() - start
    said = choice if choice is not None else plan  # the count(s) the passes ran on: Completion.threads
    if beams:
        for i, token in enumerate(new):  # the winner is known only at the end
            if on_token is not None:
                on_token(NewToken(i, token, None, new[: i + 1], None))
    window = position_window(model)
    return Completion(new, seconds, slid=window is not None and start_len + len(new) - 1 > window,
                      cropped=window is not None and start_len > window, cancelled=cancelled,
                      decoder_passes=info.passes, nat_begins=info.begins, predicted_length=info.predicted,
                      threads=None if said is None else said.to_dict())


@dataclass
class _Info:
    """What the loop's last step said about the whole run."""

    passes: int = 0
    begins: int | None = None
    predicted: int | None = None

    def update(self, step: Any) -> None:
        self.passes = step.passes
        self.begins = int(step.begins[0]) if step.begins is not None else None
        self.predicted = int(step.predicted_length[0]) if step.predicted_length is not None else None


def _beam(model: Transformer, codec: Any, x: torch.Tensor, start_len: int, s: GenerationSettings,
          extra: dict[str, Any]) -> list[int]:
    from tui_lab.generation.loop import generate

    drawn = dict(temperature=s.temperature, top_k=s.top_k, top_p=s.top_p, beam_sample=True,
                 generator=torch.Generator(device=x.device).manual_seed(s.seed)) if s.mode == "beam-sample" else {}
    out = generate(model, x, s.max_new_tokens, beam_size=s.beam_size, use_cache=s.use_cache, eos_id=codec.eos_id,
                   nat_length=s.nat_length, vocab_limit=_vocab_limit(model, codec), **drawn, **extra)
    return out[0, start_len:].tolist()


def _sample(model: Transformer, codec: Any, x: torch.Tensor, s: GenerationSettings,
            on_token: Callable[[NewToken], None] | None, should_stop: Callable[[], bool] | None,
            need_attention: bool, need_candidates: int | None = None,
            extra: dict[str, Any] | None = None) -> tuple[list[int], bool, _Info]:
    from tui_lab.generation.loop import stream

    generator = torch.Generator(device=x.device).manual_seed(s.seed)
    steps = stream(model, x, s.max_new_tokens, s.temperature, s.top_k, s.top_p, use_cache=s.use_cache,
                   eos_id=codec.eos_id, generator=generator, need_attention=need_attention,
                   need_candidates=need_candidates, nat_length=s.nat_length, vocab_limit=_vocab_limit(model, codec),
                   **(extra or {}))
    new: list[int] = []
    info = _Info()
    for step in steps:
        if should_stop is not None and should_stop():
            steps.close()
            return new, True, info
        info.update(step)
        new.append(int(step.ids[0]))
        if on_token is not None:
            prob = float(step.probs[0]) if step.probs is not None else None
            p_gen = float(step.p_gen[0]) if step.p_gen is not None else None
            on_token(NewToken(step.index, new[-1], prob, list(new), step.attentions, _candidates(step), p_gen))
    return new, False, info


def _vocab_limit(model: Transformer, codec: Any) -> int | None:
    """A lab model generates only ids its codec can decode. A Hugging Face folder's model may be padded past its
    tokenizer (512 rows, 420 tokens): transformers' generate bans nothing there, so neither do we; its tokenizer
    decodes those ids to nothing and shows them as `<id N>` (`Tokenizer.model_vocab`)."""
    if getattr(model, "folder_generation", None) is not None:
        return None
    size = getattr(codec, "vocab_size", None)
    return size if isinstance(size, int) else None


def _candidates(step: Any) -> list[tuple[int, float]] | None:
    if step.candidates is None:
        return None
    ids, probs = step.candidates
    return list(zip(ids[0].tolist(), probs[0].tolist(), strict=True))


def _check_memory(config: Any, prompt_len: int, settings: GenerationSettings, device: str) -> None:
    """Refused before anything is allocated when the cache (sized for max_new_tokens up front) and the scores
    cannot fit: the app's max and beam fields take any number."""
    from tui_lab.analysis.budget import generation_budget
    from tui_lab.devices import check_free

    budget = generation_budget(config, prompt_len, settings.max_new_tokens, settings.beam_size, settings.use_cache,
                               device)
    beams = f" x {settings.beam_size:,} beams" if settings.beam_size > 1 else ""
    check_free(budget.bytes, device, f"generating {settings.max_new_tokens:,} new tokens{beams}",
               "try fewer new tokens or a smaller beam")
