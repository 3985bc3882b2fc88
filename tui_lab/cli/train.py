"""`tui-lab train`: train a model headless; JSON lines with --json, a rich progress bar otherwise.

Runs unchanged under `torchrun --nproc-per-node N` (rank 0 alone prints and writes checkpoints).
Ctrl-C stops between steps and still writes the checkpoint when --out is given; a second Ctrl-C aborts.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from tui_lab.cli import UsageError
from tui_lab.cli.interrupt import stop_on_interrupt
from tui_lab.cli.model_args import add_hub_arguments, check_hub_arguments, hub_options
from tui_lab.cli.train_printers import JsonPrinter, RichPrinter, is_main_rank, right_prompt
from tui_lab.config import field_names, parse_value
from tui_lab.run_lock import run_lock
from tui_lab.train.config import model_defaults, parse_train_value, train_config_for, train_field_names

MODEL_SHORTCUTS = ("layers", "d_model", "heads", "d_ff")
TRAIN_FLAGS = ("steps", "batch_size", "seq_len", "lr", "seed", "tokenizer", "out")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", help="preset to start from (default: transformer-2017-toy for a task, "
                                         "gpt2-toy for text)")
    parser.add_argument("--from-hf", dest="from_hf", metavar="ID|DIR",
                        help="fine-tune a real decoder-only model (a Hugging Face folder or model id: gpt2, "
                             "llama, ...) with its own tokenizer on --data FILE or the built-in corpus; an id "
                             "not in the local cache needs --download")
    add_hub_arguments(parser)
    for name in MODEL_SHORTCUTS:
        parser.add_argument(f"--{name.replace('_', '-')}", dest=name, type=int, metavar="N")
    parser.add_argument("--vocab", type=int, metavar="N",
                        help="vocabulary size to train a BPE tokenizer to (the model follows the tokenizer)")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="FIELD=VALUE",
                        help="any model or training field, e.g. --set dropout=0.0 --set warmup=200")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--data", metavar="FILE", help="a UTF-8 text file to train a language model on")
    source.add_argument("--task", metavar="NAME", help="a seq2seq task: copy, reverse, numbers-de, names")
    parser.add_argument("--tokenizer", help="char or bpe (language models)")
    parser.add_argument("--steps", type=int, help="the total number of steps (with --resume too: the run trains on "
                                                  "until its step count reaches this)")
    parser.add_argument("--batch-size", dest="batch_size", type=int)
    parser.add_argument("--seq-len", dest="seq_len", type=int)
    parser.add_argument("--lr", type=float)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--out", metavar="DIR", help="checkpoint folder written at the end (without it the trained "
                                                     "model is not kept)")
    parser.add_argument("--resume", metavar="DIR", help="continue the run saved in this checkpoint folder")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps (default: auto)")
    parser.add_argument("--json", action="store_true", help="JSON lines on stdout, the last one 'done'")
    parser.add_argument("--yes", action="store_true",
                        help="run training estimated to take over an hour (refused otherwise; the estimate is a "
                             "floor: FLOPs at the best rate seen)")


def run(args: argparse.Namespace) -> int:
    model_overrides, train_overrides = _overrides(args)
    if args.data is not None:
        from tui_lab.data.corpus import read_text

        read_text(args.data)  # fail fast, before torch loads: missing, empty or not UTF-8
    if args.steps is not None and args.steps <= 0:
        raise UsageError(f"steps ({args.steps}) must be a positive integer")
    _check_out(args.out, args.resume)
    check_hub_arguments(args)
    if args.resume and (model_overrides or args.preset or args.from_hf):
        raise UsageError("--resume continues the saved model; drop --preset, --from-hf and the model options")
    _refuse_unused(args, train_overrides)
    if args.resume and not Path(args.resume).is_dir():
        raise UsageError(f"--resume {args.resume}: not a folder (give a checkpoint folder written by tui-lab train)")
    out = args.out or args.resume
    # One run writes a folder at a time (a second --resume of it would flip it between the runs): the lock is
    # taken before the checkpoint is even read, and the kernel drops it when this process ends, however it ends.
    with run_lock(out, "run folder") if out and is_main_rank() else contextlib.nullcontext():
        if out and is_main_rank():
            from tui_lab.checkpoint import settle

            settle(out)  # what a save killed mid-way left beside the folder, now that no other run writes it
        return _build_and_run(args, model_overrides, train_overrides)


def _build_and_run(args: argparse.Namespace, model_overrides: dict[str, Any], train_overrides: dict[str, Any]) -> int:
    from tui_lab.train import Trainer

    printer = JsonPrinter() if args.json else RichPrinter()
    if args.resume:
        if model_overrides or args.preset or args.from_hf:
            raise UsageError("--resume continues the saved model; drop --preset, --from-hf and the model options")
        train_overrides.setdefault("out", args.resume)
        trainer = Trainer.from_checkpoint(args.resume, device=args.device, on_event=printer, **train_overrides)
    elif args.from_hf:
        trainer = _pretrained_trainer(args, model_overrides, train_overrides, printer)
    else:
        trainer = _new_trainer(args, model_overrides, train_overrides, printer)
    check_budget(trainer.model_config, trainer.train_config, trainer.step_count, trainer.device, args.yes)
    if isinstance(printer, RichPrinter) and trainer.is_seq2seq:
        printer.prompt_check = lambda: right_prompt(trainer.source, trainer.model, trainer.device)
    _follow_threads(trainer, printer)
    return _run(trainer, printer)


def _follow_threads(trainer, printer) -> None:
    """The run's thread count, chosen for the load now and again as it trains (train/threads.py); the JSON's
    start line says the first choice and why."""
    from tui_lab.train.threads import TrainThreads

    follower = TrainThreads(trainer)
    choice = follower.apply()
    trainer.on_event = follower.follow(trainer.on_event)
    if isinstance(printer, JsonPrinter):
        printer.threads = choice.to_dict() if choice is not None else None


def _flag(args: argparse.Namespace, name: str) -> str:
    """The flag a person used for training field `name`: its own flag, else `--set name=`."""
    own = f"--{name.replace('_', '-')}"
    return own if getattr(args, name, None) is not None else f"--set {name}"


def _refuse_unused(args: argparse.Namespace, train: dict[str, Any]) -> None:
    """Tokenizer settings apply to a language model's own new tokenizer only: elsewhere they were ignored."""
    if args.from_hf:
        return  # the given weights bring their own tokenizer: their check names each flag to drop
    task = train.get("task", args.task)
    owner, why = ((f"--resume {args.resume}", "the run keeps its tokenizer and lengths") if args.resume else
                  (f"--task {task}", "a task brings its own word-level tokenizer and lengths") if task else
                  (None, ""))
    for name in ("tokenizer", "vocab") + (("seq_len",) if task else ()):
        if name in train and owner:
            raise UsageError(f"{_flag(args, name)} does not apply with {owner}: {why}")
    if "vocab" in train and train.get("tokenizer", "char") != "bpe" and not args.from_hf:
        raise UsageError(f"{_flag(args, 'vocab')} applies to the bpe tokenizer only (the char tokenizer's vocabulary "
                         "is the text's characters); add --tokenizer bpe or drop it")


def check_budget(model_config, train_config, start_step: int, device: str, yes: bool) -> None:
    """The steps still to run, their compute floor and memory, refused past the limits (time: unless --yes)."""
    from tui_lab.analysis.budget import TRAINING_LIMIT_S, budget_problem, training_budget
    from tui_lab.devices import free_memory

    steps = max(train_config.steps - start_step, 0)
    budget = training_budget(model_config, steps, train_config.batch_size, train_config.seq_len, device,
                             train_config.eval_every, train_config.eval_batches)
    from tui_lab.analysis import count_params
    from tui_lab.analysis.format import fmt_count

    what = (f"training {model_config.name} ({fmt_count(count_params(model_config).total)} parameters) for "
            f"--steps {train_config.steps} ({steps:,} to run) of batch {train_config.batch_size} x seq_len "
            f"{train_config.seq_len}")
    problem = budget_problem(budget, what, TRAINING_LIMIT_S, free_memory(device), yes)
    if problem:
        raise UsageError(problem)


def _check_out(out: str | None, resume: str | None = None) -> None:
    """Refuse a folder the final save would refuse, before the run instead of after it (a run lost): a file, a
    folder holding things but no checkpoint, a checkpoint entry holding something a save would delete."""
    from tui_lab.checkpoint_files import is_checkpoint, save_target

    flag, given = ("out", out) if out is not None else ("--resume", resume)
    if given is None or (out is None and not is_checkpoint(given)):  # not a checkpoint: the load says so
        return
    try:
        save_target(given)
    except ValueError as err:
        raise UsageError(f"{flag}: {err}") from None
    folder = Path(given)
    parent = next(p for p in (folder.absolute(), *folder.absolute().parents) if p.exists())
    if not os.access(parent, os.W_OK):
        raise UsageError(f"{flag} ({given}) cannot be written: {parent} is not writable")


def _new_trainer(args, model_overrides: dict[str, Any], train_overrides: dict[str, Any], printer):
    from tui_lab.presets import load_preset
    from tui_lab.train import Trainer

    task = train_overrides.pop("task", args.task)
    preset = args.preset or ("transformer-2017-toy" if task else "gpt2-toy")
    model_config = load_preset(preset, **model_overrides)
    # A ViT's shapes task and BERT's masked language modelling have their own tuned defaults (as in the app).
    train_overrides = model_defaults(model_config) | train_overrides
    train_config = train_config_for(task, data=args.data, **train_overrides)
    if not task and train_config.tokenizer == "bpe":  # the model follows the tokenizer it is about to train
        model_config = model_config.replace(vocab=train_config.vocab)
    from tui_lab.devices import pick_device

    # Before the model is built: a --d-model 10**6 is refused here, not by the allocator.
    check_budget(model_config, train_config, 0, pick_device(args.device, field="--device"), args.yes)
    return Trainer(model_config, train_config, device=args.device, on_event=printer)


def _pretrained_trainer(args, model_overrides: dict[str, Any], train_overrides: dict[str, Any], printer):
    """Fine-tune a Hugging Face GPT-2: its weights, its config and its own tokenizer (the vocab is not resized)."""
    from tui_lab.loading import load_model
    from tui_lab.train import Trainer
    from tui_lab.train.setup import FINETUNE_DEFAULTS

    clash = [flag for flag, given in (("--preset", args.preset), ("--task", args.task or "task" in train_overrides),
                                      ("--tokenizer", "tokenizer" in train_overrides),
                                      ("--vocab", "vocab" in train_overrides)) if given]
    clash += [f"--{name.replace('_', '-')}" for name in model_overrides]
    if clash:
        raise UsageError(f"--from-hf trains the model as it is, with its own tokenizer, on --data or the built-in "
                         f"corpus; drop {', '.join(clash)}")
    with hub_options(args) as options:  # on the CPU: the Trainer moves it where --device says
        loaded = load_model("hf", args.from_hf, "cpu", **options)
    _check_trainable(args.from_hf, loaded)
    train_config = train_config_for(None, data=args.data, **(FINETUNE_DEFAULTS | train_overrides))
    trainer = Trainer(None, train_config, device=args.device, on_event=printer, tokenizer=loaded.tokenizer,
                      model=loaded.model)
    tokenizer = loaded.tokenizer
    trainer.notes.insert(0, f"starting from {loaded.label}: its weights and its own {tokenizer.kind} tokenizer "
                            f"({tokenizer.vocab_size:,} tokens; the model's vocab {trainer.model_config.vocab:,} kept)")
    return trainer


def _check_trainable(spec: str, loaded) -> None:
    """Fine-tuning is language modelling with the model's own tokenizer: say which part is missing."""
    if loaded.config.family != "decoder-only":
        raise UsageError(f"--from-hf {spec}: {loaded.config.family} models are not fine-tuned here; "
                         "only decoder-only ones (gpt2, llama, mistral, qwen2, mixtral) train on --data")
    if loaded.tokenizer is None:
        raise UsageError(f"--from-hf {spec}: {loaded.label.rpartition('(no tokenizer: ')[2].rstrip(')')}; "
                         "fine-tuning needs the model's own tokenizer")


def _overrides(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """Model fields and training fields the user asked for (flags, then --set)."""
    model = {name: getattr(args, name) for name in MODEL_SHORTCUTS if getattr(args, name) is not None}
    train = {name: getattr(args, name) for name in TRAIN_FLAGS if getattr(args, name) is not None}
    if args.vocab is not None:
        train["vocab"] = args.vocab
    for item in args.sets:
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name:
            raise UsageError(f"--set takes FIELD=VALUE, got {item!r}")
        if name in field_names() or name in MODEL_SHORTCUTS:
            model[name] = parse_value(name, value)
        elif name in train_field_names():
            train[name] = parse_train_value(name, value)
        else:
            raise UsageError(f"--set: unknown field {name!r} (neither a model nor a training field)")
    return model, train


def _run(trainer, printer) -> int:
    from tui_lab.train import DoneEvent, ErrorEvent
    from tui_lab.train.distributed import teardown

    try:
        with stop_on_interrupt(trainer), printer:  # first Ctrl-C: stop between steps, checkpoint still written
            last = trainer.run()
    finally:
        teardown(trainer.dist)
    if isinstance(last, ErrorEvent):
        if trainer.save_failure is None:
            return 1
        if isinstance(printer, JsonPrinter):  # the event stays on stdout for a program; the line is for a person
            print(f"tui-lab: error: {last.message}", file=sys.stderr)
        return 2  # the disk or the folder refused the checkpoint: a refusal like any other
    return 0 if isinstance(last, DoneEvent) else 130
