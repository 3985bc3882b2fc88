"""Generation for the app, run in thread workers: stream one prompt, or compare the decoding modes.

Everything torch-related happens here, on the worker thread; results cross to the UI as messages
(`post_message`, one per token). The worker polls `is_cancelled` between tokens, so Stop and quitting
end it at once. A model without a tokenizer (a random preset) uses the generate CLI's byte fallback.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from textual.message import Message
from textual.worker import get_current_worker

from tui_lab.generation.prompt import prompt_ids

MODES = ("greedy", "top-k", "top-p", "beam")
COMPARE_TOP_K, COMPARE_TOP_P, COMPARE_BEAM = 40, 0.9, 4


@dataclass(frozen=True)
class Settings:
    max_new_tokens: int = 64
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    beam_size: int = 1
    use_cache: bool = True
    seed: int = 0


class Started(Message):
    def __init__(self, job: int, context: list[str], fallback: bool, cross: bool) -> None:
        super().__init__()
        self.job, self.context, self.fallback, self.cross = job, context, fallback, cross


class NewToken(Message):
    """One generated token: its id, text, probability, the whole completion so far, its attention row."""

    def __init__(self, job: int, index: int, token_id: int, piece: str, label: str, prob: float | None,
                 text: str, row: list[float] | None) -> None:
        super().__init__()
        self.job, self.index, self.token_id, self.piece, self.label = job, index, token_id, piece, label
        self.prob, self.text, self.row = prob, text, row


class Finished(Message):
    def __init__(self, job: int, text: str, tokens: int, seconds: float, cancelled: bool, note: str = "") -> None:
        super().__init__()
        self.job, self.text, self.tokens, self.seconds = job, text, tokens, seconds
        self.cancelled, self.note = cancelled, note


class CompareResult(Message):
    def __init__(self, job: int, mode: str, text: str, seconds: float, detail: str) -> None:
        super().__init__()
        self.job, self.mode, self.text, self.seconds, self.detail = job, mode, text, seconds, detail


class GenerateFailed(Message):
    def __init__(self, job: int, error: str) -> None:
        super().__init__()
        self.job, self.error = job, error


def codec_for(model: Any, tokenizer: Any) -> tuple[Any, bool]:
    """The model's tokenizer, or the core's byte fallback (True) when it has none."""
    if tokenizer is not None:
        return tokenizer, False
    from tui_lab.data.byte_codec import ByteCodec

    return ByteCodec(model.config.vocab), True


def encode_prompt(model: Any, codec: Any, prompt: str) -> list[int]:
    """The core's rules: unknown text refused unless the tokenizer has <unk>; empty starts at bos."""
    return prompt_ids(codec, prompt, model.config.family)


def labels(codec: Any, ids: list[int]) -> list[str]:
    if hasattr(codec, "token_strings"):
        return codec.token_strings(ids)
    return [codec.decode([i]) or "·" for i in ids]


def stream_job(poster: Any, job: int, model: Any, tokenizer: Any, prompt: str, s: Settings) -> None:
    """Stream one generation (worker thread): NewToken per token, then Finished."""
    try:
        _stream(poster, job, model, tokenizer, prompt, s)
    except Exception as err:  # noqa: BLE001 - a bad prompt or setting is a message, never a crash
        poster.post_message(GenerateFailed(job, _one_line(err)))


def _stream(poster: Any, job: int, model: Any, tokenizer: Any, prompt: str, s: Settings) -> None:
    import torch

    from tui_lab.generate import generate, stream

    worker, codec_fallback = get_current_worker(), codec_for(model, tokenizer)
    codec, fallback = codec_fallback
    ids = encode_prompt(model, codec, prompt)
    device = next(model.parameters()).device
    x = torch.tensor([ids], dtype=torch.long, device=device)  # (1, P)
    cross = model.config.family == "encoder-decoder"
    poster.post_message(Started(job, labels(codec, ids), fallback, cross))
    common = dict(use_cache=s.use_cache, eos_id=codec.eos_id, bos_id=codec.bos_id)
    start, new = time.perf_counter(), []
    if s.beam_size > 1:  # beam search keeps several hypotheses: the winner comes at the end
        out = generate(model, x, s.max_new_tokens, beam_size=s.beam_size, **common)
        new = out[0, 1 if cross else len(ids):].tolist()
        for i, token in enumerate(new):
            poster.post_message(NewToken(job, i, token, codec.decode([token]), labels(codec, [token])[0], None,
                                         codec.decode(new[: i + 1]), None))
    else:
        generator = torch.Generator(device=device).manual_seed(s.seed)
        steps = stream(model, x, s.max_new_tokens, s.temperature, s.top_k, s.top_p, generator=generator,
                       need_attention=True, **common)
        for step in steps:
            if worker.is_cancelled:
                steps.close()
                break
            token = int(step.ids[0])
            new.append(token)
            prob = float(step.probs[0]) if step.probs is not None else None
            poster.post_message(NewToken(job, step.index, token, codec.decode([token]), labels(codec, [token])[0],
                                         prob, codec.decode(new), attention_row(step.attentions, cross)))
    seconds = time.perf_counter() - start
    note = f"{len(new)} tokens in {seconds:.2f} s ({len(new) / max(seconds, 1e-9):.1f} tokens/s, "
    note += ("cached" if s.use_cache else "no cache") + (f", beam {s.beam_size}" if s.beam_size > 1 else "") + ")"
    poster.post_message(Finished(job, codec.decode(new), len(new), seconds, worker.is_cancelled, note))


def attention_row(attentions: list | None, cross: bool) -> list[float] | None:
    """The new token's attention over the context: last layer, mean of heads (cross-attention for enc-dec)."""
    if not attentions:
        return None
    kind = "cross" if cross else "decoder-self"
    chosen = [a for a in attentions if a.kind == kind]
    if not chosen:
        return None
    return chosen[-1].weights[0, :, -1].float().mean(0).cpu().tolist()  # (H, 1, K) -> (K,)


def compare_job(poster: Any, job: int, model: Any, tokenizer: Any, prompt: str, s: Settings) -> None:
    """Greedy, top-k, top-p and beam for one prompt (worker thread): one CompareResult each, as they finish."""
    try:
        _compare(poster, job, model, tokenizer, prompt, s)
    except Exception as err:  # noqa: BLE001
        poster.post_message(GenerateFailed(job, _one_line(err)))


def compare_modes(s: Settings) -> dict[str, tuple[dict[str, Any], str]]:
    """Each mode's generate() settings and a description; the form's values where set, else common ones."""
    t = s.temperature if s.temperature > 0 else 1.0
    k, p = s.top_k or COMPARE_TOP_K, s.top_p or COMPARE_TOP_P
    beam = s.beam_size if s.beam_size > 1 else COMPARE_BEAM
    return {
        "greedy": (dict(temperature=0.0), "temperature 0"),
        "top-k": (dict(temperature=t, top_k=k), f"T {t:g}, k {k}"),
        "top-p": (dict(temperature=t, top_p=p), f"T {t:g}, p {p:g}"),
        "beam": (dict(beam_size=beam), f"{beam} beams"),
    }


def _compare(poster: Any, job: int, model: Any, tokenizer: Any, prompt: str, s: Settings) -> None:
    import torch

    from tui_lab.generate import generate

    worker = get_current_worker()
    codec, fallback = codec_for(model, tokenizer)
    ids = encode_prompt(model, codec, prompt)
    device = next(model.parameters()).device
    x = torch.tensor([ids], dtype=torch.long, device=device)  # (1, P)
    skip = 1 if model.config.family == "encoder-decoder" else len(ids)
    for mode, (settings, detail) in compare_modes(s).items():
        if worker.is_cancelled:
            return
        generator = torch.Generator(device=device).manual_seed(s.seed)
        start = time.perf_counter()
        out = generate(model, x, s.max_new_tokens, use_cache=s.use_cache, eos_id=codec.eos_id, bos_id=codec.bos_id,
                       generator=generator, **settings)
        poster.post_message(CompareResult(job, mode, codec.decode(out[0, skip:].tolist()),
                                          time.perf_counter() - start, detail))


def _one_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__
