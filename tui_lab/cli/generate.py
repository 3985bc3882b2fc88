"""`tui-lab generate`: continue a prompt with a preset (random weights) or a trained checkpoint.

With `--checkpoint`, the checkpoint's own tokenizer encodes the prompt and decodes the completion. A bare
`--preset` has random weights and no trained tokenizer, so `ByteCodec` stands in: the output is noise,
but the machinery (cache, sampling, timing) is the real one.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console

from tui_lab.cli.layout import Flow, say
from tui_lab.cli.model_args import add_model_arguments, load_from_args
from tui_lab.generation.folder_defaults import decoding_mode, given_fields, with_folder_defaults
from tui_lab.generation.prompt import prompt_ids
from tui_lab.generation.settings import SEED_LIMIT, GenerationSettings
from tui_lab.loading import LoadedModel

if TYPE_CHECKING:
    from tui_lab.generation.session import Completion, NewToken


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_arguments(parser)
    parser.add_argument("--prompt", required=True, help="text to continue (the source, for an encoder-decoder)")
    # Defaults None: a flag left out takes a Hugging Face folder's generation_config.json value, else the lab's.
    parser.add_argument("--max-new-tokens", type=int, default=None, metavar="N", help="default: 64")
    parser.add_argument("--temperature", type=float, default=None, metavar="T", help="0 is greedy (default: 1)")
    parser.add_argument("--top-k", type=int, default=None, metavar="K")
    parser.add_argument("--top-p", type=float, default=None, metavar="P")
    parser.add_argument("--beam-size", type=int, default=None, metavar="B",
                        help="> 1: beam search (deterministic; default: 1)")
    parser.add_argument("--no-cache", action="store_true", help="recompute the whole sequence at every step")
    parser.add_argument("--chat", action="store_true",
                        help="a Hugging Face folder with a chat template: the prompt is one user turn, rendered as "
                             "transformers' apply_chat_template(add_generation_prompt=True) renders it")
    parser.add_argument("--nat-length", dest="nat_length", type=int, default=None, metavar="N",
                        help="NAT models (decoder_mode nat-*): decode exactly N tokens, overriding the length "
                             "classifier or the first END")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.add_argument("--yes", action="store_true",
                        help="run a generation estimated to take over ten minutes (refused otherwise; the estimate "
                             "is a floor: FLOPs at the best rate seen)")


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)  # before loading: a bad flag fails fast
    loaded = load_from_args(args)
    ids = _prompt(loaded, args)
    folder = getattr(loaded.model, "folder_generation", None)
    start_len = len(ids) if loaded.config.family == "decoder-only" else 1
    given = given_fields(_flags(args))
    settings, from_folder = with_folder_defaults(settings, given, folder, start_len)
    _check_nat(loaded, settings)
    check_budget(loaded, len(ids), settings, args.yes)
    console = Console(stderr=True)
    if not args.json:
        console.print(f"[dim]{loaded.label} on {next(loaded.model.parameters()).device}[/]")
    result, done = _generate(loaded, ids, args, settings, live=not args.json)
    result["seed"] = settings.seed if settings.mode in ("sample", "beam-sample") else None  # None: nothing drawn
    result["decoding"] = decoding_mode(settings, given, from_folder, folder)  # greedy/sample/beam/beam-sample, why
    result["tokenizer_used"] = _tokenizer_used(loaded.codec, ids, getattr(args, "chat", False))
    if folder is not None:  # every key of the folder's generation settings: applied, or ignored and why
        result["generation_config"] = {"source": folder.source, "applied": list(folder.applied),
                                       "ignored": folder.ignored, "defaults_taken": from_folder}
    if args.json:
        print(json.dumps(result))
        return 0
    note = done.summary(settings)
    if result["seed"] is not None:  # what a rerun needs to draw the same text (another --seed draws anew)
        note += f"; seed {result['seed']} (--seed {(result['seed'] + 1) % SEED_LIMIT} draws another)"
    if result["unknown"]:
        note += f"; mapped to <unk>: {' '.join(result['unknown'])}"
    if result["cropped"] or result["slid"]:
        note += f"; past max_len {loaded.config.max_len}: the window slid to the last tokens"
    if folder is not None and folder.line():
        note += f"; {folder.line()}" + (f" (defaults taken: {', '.join(from_folder)})" if from_folder else "")
    if folder is not None:
        note += f"; {result['decoding']['mode']} ({result['decoding']['from']})"
    say(console, note, style="dim")  # wrapped at spaces and separators; no markup read in a prompt's words
    return 0


def _flags(args: argparse.Namespace) -> dict[str, object]:
    """The settings as the flags give them, None where a flag was left out."""
    return {"max_new_tokens": args.max_new_tokens, "temperature": args.temperature, "top_k": args.top_k,
            "top_p": args.top_p, "beam_size": args.beam_size, "use_cache": False if args.no_cache else None}


def _prompt(loaded: LoadedModel, args: argparse.Namespace) -> list[int]:
    """The prompt's ids: as text, or with --chat as one user turn through the folder's chat template."""
    if not getattr(args, "chat", False):
        from tui_lab.hf.auto_tokenizer import prompt_encoder  # a folder's tokenizer adds its bos, as transformers

        return prompt_ids(prompt_encoder(loaded.codec), args.prompt, loaded.config.family, field="--prompt")
    from tui_lab.hf.chat import chat_prompt_ids

    return chat_prompt_ids(loaded.model, loaded.codec, [{"role": "user", "content": args.prompt}])


def _tokenizer_used(codec: Any, ids: list[int], chat: bool) -> dict[str, Any]:
    """Who built the tokenizer (transformers or the lab), and whether this prompt starts with bos and why."""
    from tui_lab.hf.auto_tokenizer import prompt_bos, tokenizer_report

    return {**tokenizer_report(codec), "bos": prompt_bos(codec, ids, chat)}


def settings_from_args(args: argparse.Namespace) -> GenerationSettings:
    """The core's one check of the settings, its messages naming our flags (`max_new_tokens` -> `--max-new-tokens`).
    A flag left out takes the lab's default here; a folder's defaults replace those later."""
    lab = GenerationSettings()
    try:
        settings = GenerationSettings(_or(args.max_new_tokens, lab.max_new_tokens),
                                      _or(args.temperature, lab.temperature), args.top_k, args.top_p,
                                      _or(args.beam_size, lab.beam_size),
                                      use_cache=not args.no_cache, seed=args.seed, nat_length=args.nat_length)
    except ValueError as err:
        name, _, rest = str(err).partition(" ")
        raise ValueError(f"--{name.replace('_', '-')} {rest}") from None
    _refuse_unused(args, settings)
    return settings


def _refuse_unused(args: argparse.Namespace, settings: GenerationSettings) -> None:
    """A sampling knob given where nothing samples would be silently ignored: say so instead."""
    knobs = [flag for flag, given in (("--temperature", args.temperature is not None), ("--top-k", args.top_k),
                                      ("--top-p", args.top_p)) if given is not None and given is not False]
    if settings.beam_size > 1 and knobs:
        raise ValueError(f"{knobs[0]} does not apply to beam search (--beam-size {settings.beam_size} is "
                         "deterministic); drop it or use --beam-size 1")
    if settings.temperature == 0 and (args.top_k is not None or args.top_p is not None):
        flag = "--top-k" if args.top_k is not None else "--top-p"
        raise ValueError(f"{flag} does not apply to greedy decoding (--temperature 0); drop it or sample with "
                         "--temperature above 0")


def check_budget(loaded: LoadedModel, prompt_len: int, settings: GenerationSettings, yes: bool) -> None:
    """Beam and top-k within the vocabulary, and the run's memory and time, before the first token; a beam search
    that costs something says so first (on stderr)."""
    from tui_lab.analysis.budget import GENERATION_LIMIT_S, beam_search_budget, budget_problem, generation_budget
    from tui_lab.devices import free_memory

    vocab = min(loaded.config.vocab, getattr(loaded.codec, "vocab_size", loaded.config.vocab))
    for flag, value in (("--beam-size", settings.beam_size), ("--top-k", settings.top_k)):
        if value is not None and value > vocab:
            raise ValueError(f"{flag} ({value}) must be at most the vocabulary ({vocab:,} tokens)")
    device = str(next(loaded.model.parameters()).device)
    beams, steps = settings.beam_size, settings.max_new_tokens
    if beams > 1:
        budget, cache = beam_search_budget(loaded.config, prompt_len, steps, beams, settings.use_cache, device)
    else:
        budget = generation_budget(loaded.config, prompt_len, steps, 1, settings.use_cache, device)
    what = f"--max-new-tokens {steps}" + (f" with --beam-size {beams}" if beams > 1 else "")
    problem = budget_problem(budget, what, GENERATION_LIMIT_S, free_memory(device), yes)
    if problem:
        raise ValueError(problem)
    if beams > 1 and (budget.seconds >= BEAM_NOTE_S or budget.bytes >= BEAM_NOTE_BYTES):
        print(f"tui-lab: note: {what}: {_beam_cost(steps, beams, cache, budget)}", file=sys.stderr, flush=True)


BEAM_NOTE_S, BEAM_NOTE_BYTES = 1.0, 64 * 2**20  # a beam search this costly says what it costs before it starts


def _beam_cost(steps: int, beams: int, cache: int, budget) -> str:
    from tui_lab.analysis.format import fmt_bytes

    reorder = (f"; their KV cache takes about {fmt_bytes(cache)} and is copied at every step "
               f"({fmt_bytes(cache * steps)} in all)") if cache else ""
    return f"up to {steps} decoding steps over {beams} beams{reorder}; {budget.line()} beyond the weights"


def _or(value, default):
    return default if value is None else value


def _check_nat(loaded: LoadedModel, settings: GenerationSettings) -> None:
    """The core's NAT rules, before any decoding, naming our flags."""
    from tui_lab.generation.nat import check_nat

    try:
        check_nat(loaded.config, settings.nat_length, settings.beam_size)
    except ValueError as err:
        name, _, rest = str(err).partition(" ")
        raise ValueError(f"--{name.replace('_', '-')} {rest}") from None


def _generate(loaded: LoadedModel, ids: list[int], args: argparse.Namespace, settings: GenerationSettings,
              live: bool) -> tuple[dict[str, Any], Completion]:
    from tui_lab.data import extended
    from tui_lab.generation.session import complete

    codec, family = loaded.codec, loaded.config.family
    # A copy model points at the prompt's words: out-of-vocabulary ones get temporary ids it may emit.
    src_ext, oov = extended.source_ids(codec, args.prompt) if loaded.config.copy else (None, [])
    decode = (lambda new: extended.decode(codec, new, oov)) if loaded.config.copy else codec.decode
    printer = _LivePrinter(decode, args.prompt if family == "decoder-only" else None) if live else None
    p_gens: list[float] = []

    def on_token(token: NewToken) -> None:
        if token.p_gen is not None:
            p_gens.append(token.p_gen)
        if printer is not None:
            printer.update(token)

    done = complete(loaded.model, codec, ids, settings, on_token=on_token, src_ext=src_ext)
    completion = decode(done.ids)
    if printer is not None:
        printer.finish(completion)
    device = str(next(loaded.model.parameters()).device)
    result = {"completion": completion, "prompt": args.prompt, "prompt_ids": ids, "ids": done.ids,
              "new_tokens": len(done.ids), "seconds": done.seconds, "tokens_per_s": done.tokens_per_s,
              "cropped": done.cropped, "slid": done.slid, "unknown": codec.unknown(args.prompt),
              "model": loaded.label, "device": device, "tokenizer": codec.kind,
              "decoder_mode": loaded.config.decoder_mode, "decoder_passes": done.decoder_passes,
              "nat_length": done.nat_begins, "predicted_length": done.predicted_length,
              "threads": done.threads}  # the count this call ran on and why (tui_lab/cpu_threads.py)
    if loaded.config.copy:  # per new token: the weight of generating it from the vocabulary (1 - copying)
        result |= {"p_gen": p_gens, "copied_words": oov}
    return result, done


class _LivePrinter:
    """Prints the completion as it grows; a trailing partial UTF-8 character waits for its next byte."""

    def __init__(self, decode, prompt: str | None) -> None:
        self.decode, self.shown = decode, ""
        self.flow = Flow(Console(highlight=False, markup=False))  # wrapped at spaces in a terminal
        if prompt is not None:
            self.flow.write(prompt, style="bold")

    def update(self, token: NewToken) -> None:
        self._show(self.decode(token.ids).rstrip("\ufffd"))

    def finish(self, completion: str) -> None:
        self._show(completion)
        self.flow.flush()
        self.flow.console.print()

    def _show(self, text: str) -> None:
        if text.startswith(self.shown) and len(text) > len(self.shown):
            self.flow.write(text[len(self.shown):])
            self.shown = text
