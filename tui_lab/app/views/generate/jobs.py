"""Generation for the app, run in thread workers: stream one prompt, or compare the decoding modes.

The decoding loop is the core's (`tui_lab.generation.session.complete`, the same as `tui-lab generate`);
this module runs it on the worker thread and turns its tokens into messages (`post_message`, one per
token). The loop polls `is_cancelled` between tokens, so Stop and quitting end it at once. A model
without a tokenizer (a random preset) uses the core's byte fallback. A copy model (pointer-generator)
points at the prompt's words: `Pointer` gives them temporary ids, so a copied name reads as itself, and
each token carries p_gen and its row is the copy distribution over the source.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from textual.content import Content
from textual.message import Message
from textual.worker import get_current_worker

from tui_lab.errors import one_line
from tui_lab.generation.prompt import prompt_ids, unknown_words
from tui_lab.generation.settings import SEED_LIMIT, GenerationSettings

STOPPED = Content.from_markup("[dim]stopped (s)[/]")  # a compare or side-by-side box whose run s cut off
MODES = ("greedy", "top-k", "top-p", "beam")
CANDIDATES = 5  # the top candidates shown for the token under the cursor
# The byte fallback's labels as the tokenizers write theirs: whitespace visible (a grid label or a candidate
# that is a space would otherwise read as nothing).
_VISIBLE = str.maketrans({" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"})
COMPARE_TOP_K, COMPARE_TOP_P, COMPARE_BEAM = 40, 0.9, 4


class Started(Message):
    def __init__(self, job: int, context: list[str], fallback: bool, cross: bool, copy: bool = False) -> None:
        super().__init__()
        self.job, self.context, self.fallback, self.cross, self.copy = job, context, fallback, cross, copy


class NewToken(Message):
    """One generated token: its id, text, probability, the whole completion so far, its attention row, and
    the top candidates of its step as (id, label, probability), best first."""

    def __init__(self, job: int, index: int, token_id: int, piece: str, label: str, prob: float | None,
                 text: str, row: list[float] | None, candidates: tuple[tuple[int, str, float], ...] = (),
                 p_gen: float | None = None) -> None:
        super().__init__()
        self.job, self.index, self.token_id, self.piece, self.label = job, index, token_id, piece, label
        self.prob, self.text, self.row, self.candidates, self.p_gen = prob, text, row, candidates, p_gen


class Finished(Message):
    def __init__(self, job: int, text: str, tokens: int, seconds: float, cancelled: bool, note: str = "") -> None:
        super().__init__()
        self.job, self.text, self.tokens, self.seconds = job, text, tokens, seconds
        self.cancelled, self.note = cancelled, note


class CompareResult(Message):
    def __init__(self, job: int, mode: str, text: str, seconds: float, detail: str) -> None:
        super().__init__()
        self.job, self.mode, self.text, self.seconds, self.detail = job, mode, text, seconds, detail


class PromptFound(Message):
    """A held-out source of the live model's task (`generation.prompt.task_prompt`), for the model of
    `generation`."""

    def __init__(self, prompt: str, generation: int) -> None:
        super().__init__()
        self.prompt, self.generation = prompt, generation


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


def encode_prompt(model: Any, codec: Any, prompt: str, chat: bool = False) -> list[int]:
    """The core's rules: unknown text refused unless the tokenizer has <unk>; empty starts at bos. With `chat`,
    the prompt is one user turn through the model's chat template (`hf.chat`, as `generate --chat`)."""
    if chat:
        from tui_lab.hf.chat import chat_prompt_ids

        return chat_prompt_ids(model, codec, [{"role": "user", "content": prompt}], field="chat")
    from tui_lab.hf.auto_tokenizer import prompt_encoder  # a folder's tokenizer adds its bos, as transformers

    return prompt_ids(prompt_encoder(codec), prompt, model.config.family)


def labels(codec: Any, ids: list[int]) -> list[str]:
    """One display string per id: the tokenizer's, or for the byte fallback the byte's character (a byte that
    is only part of a character, or a control byte, as \\xNN)."""
    if hasattr(codec, "token_strings"):
        return codec.token_strings(ids)
    return [_byte_label(codec, i) for i in ids]


def _byte_label(codec: Any, token_id: int) -> str:
    text = codec.decode([token_id])
    if text == "\ufffd":  # part of a character, or a control byte the codec will not print
        return f"\\x{token_id % 256:02x}"
    return text.translate(_VISIBLE) or "·"


class Pointer:
    """A prompt as a copy model sees it: extended ids, and decoding that turns temporary ids into its words."""

    def __init__(self, model: Any, codec: Any, prompt: str) -> None:
        from tui_lab.data import extended

        self.codec, self.extended = codec, extended
        self.copy = bool(model.config.copy)
        self.src_ext, self.oov = extended.source_ids(codec, prompt) if self.copy else (None, [])

    def decode(self, ids: list[int]) -> str:
        return self.extended.decode(self.codec, ids, self.oov) if self.copy else self.codec.decode(ids)

    def labels(self, ids: list[int]) -> list[str]:
        if self.copy and hasattr(self.codec, "hf"):
            return self.extended.token_strings(self.codec, ids, self.oov)
        return labels(self.codec, ids)


def stream_job(poster: Any, job: int, model: Any, tokenizer: Any, prompt: str, s: GenerationSettings,
               chat: bool = False) -> None:
    """Stream one generation (worker thread): NewToken per token, then Finished."""
    try:
        _stream(poster, job, model, tokenizer, prompt, s, chat)
    except Exception as err:  # noqa: BLE001 - a bad prompt or setting is a message, never a crash
        poster.post_message(GenerateFailed(job, one_line(err)))


def _stream(poster: Any, job: int, model: Any, tokenizer: Any, prompt: str, s: GenerationSettings,
            chat: bool = False) -> None:
    from tui_lab.generation.session import complete

    worker = get_current_worker()
    codec, fallback = codec_for(model, tokenizer)
    ids = encode_prompt(model, codec, prompt, chat)
    cross = model.config.family == "encoder-decoder"
    pointer = Pointer(model, codec, prompt)
    poster.post_message(Started(job, pointer.labels(pointer.src_ext or ids), fallback, cross, pointer.copy))
    kind = "copy" if pointer.copy else None  # a copy model's row: the copy distribution over the source

    def post(token: Any) -> None:  # a NewToken of the core's loop
        poster.post_message(NewToken(job, token.index, token.id, pointer.decode([token.id]),
                                     pointer.labels([token.id])[0], token.prob, pointer.decode(token.ids),
                                     attention_row(token.attentions, cross, kind),
                                     candidates(pointer, token.candidates), token.p_gen))

    done = complete(model, codec, ids, s, on_token=post, should_stop=lambda: worker.is_cancelled,
                    need_attention=True, need_candidates=CANDIDATES, src_ext=pointer.src_ext)
    unknown = [] if pointer.copy else unknown_words(codec, prompt)  # a copy model copies the words it lacks
    unk = f"; mapped to <unk>: {' '.join(unknown)}" if unknown else ""
    poster.post_message(Finished(job, pointer.decode(done.ids), len(done.ids), done.seconds, worker.is_cancelled,
                                 done.summary(s) + unk))


def candidates(codec: Any, top: list[tuple[int, float]] | None) -> tuple[tuple[int, str, float], ...]:
    """The core's (id, prob) candidates with their labels (`codec` a codec or a Pointer); none for beam search."""
    if not top:
        return ()
    names = codec.labels([i for i, _ in top]) if isinstance(codec, Pointer) else labels(codec, [i for i, _ in top])
    return tuple((i, name, p) for (i, p), name in zip(top, names, strict=True))


def attention_row(attentions: list | None, cross: bool, kind: str | None = None) -> list[float] | None:
    """The new token's attention over the context: last layer, mean of heads (cross-attention for enc-dec;
    `kind` "copy": the copy distribution, (1 - p_gen) x that attention)."""
    if not attentions:
        return None
    kind = kind or ("cross" if cross else "decoder-self")
    chosen = [a for a in attentions if a.kind == kind]
    if not chosen:
        return None
    return chosen[-1].weights[0, :, -1].float().mean(0).cpu().tolist()  # (H, 1, K) -> (K,)


def compare_job(poster: Any, job: int, model: Any, tokenizer: Any, prompt: str, s: GenerationSettings,
                chat: bool = False) -> None:
    """Greedy, top-k, top-p and beam for one prompt (worker thread): one CompareResult each, as they finish."""
    try:
        _compare(poster, job, model, tokenizer, prompt, s, chat)
    except Exception as err:  # noqa: BLE001
        poster.post_message(GenerateFailed(job, one_line(err)))


def compare_modes(s: GenerationSettings) -> dict[str, tuple[GenerationSettings, str]]:
    """Each mode's settings and a description; the form's values where set, else common ones.

    top-p draws with the next seed after top-k's: on one seed the two drew the same uniform numbers from nearly
    the same distribution, and their boxes read the same text word for word. Each box names its seed."""
    t = s.temperature if s.temperature > 0 else 1.0
    k, p = s.top_k or COMPARE_TOP_K, s.top_p or COMPARE_TOP_P
    beam = s.beam_size if s.beam_size > 1 else COMPARE_BEAM
    plain = replace(s, top_k=None, top_p=None, beam_size=1)
    seed_p = (s.seed + 1) % SEED_LIMIT
    return {
        "greedy": (replace(plain, temperature=0.0), "temperature 0"),
        "top-k": (replace(plain, temperature=t, top_k=k), f"T {t:g}, k {k}, seed {s.seed}"),
        "top-p": (replace(plain, temperature=t, top_p=p, seed=seed_p), f"T {t:g}, p {p:g}, seed {seed_p}"),
        "beam": (replace(plain, beam_size=beam), f"{beam} beams"),
    }


def _compare(poster: Any, job: int, model: Any, tokenizer: Any, prompt: str, s: GenerationSettings,
             chat: bool = False) -> None:
    from tui_lab.generation.session import complete

    worker = get_current_worker()
    codec, _ = codec_for(model, tokenizer)
    ids = encode_prompt(model, codec, prompt, chat)
    pointer = Pointer(model, codec, prompt)
    stopped = lambda: worker.is_cancelled  # noqa: E731
    for mode, (settings, detail) in compare_modes(s).items():
        done = complete(model, codec, ids, settings, src_ext=pointer.src_ext, should_stop=stopped)
        if stopped():  # s: the boxes still to come say "stopped"; a mode cut short is not shown as if whole
            return
        poster.post_message(CompareResult(job, mode, pointer.decode(done.ids), done.seconds, detail))
