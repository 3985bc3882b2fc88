"""What `tui-lab train` prints while it runs: one JSON object per event (--json), or a progress bar with the
evaluations and samples above it and, at the end, where the model went and a command to try it on a prompt the
model gets right."""

from __future__ import annotations

import json
import os
import shlex

from tui_lab.cli.layout import say

CHECKED = 64  # held-out sources tried for the closing hint's prompt


def right_prompt(source, model, device) -> str | None:
    """A held-out source of a seq2seq task (`source`, a Seq2SeqSource) that `model` translates right, greedily
    (as the hint's command decodes); None when none of the first CHECKED is (undertrained: a hint would show a
    wrong answer)."""
    rows = source.translations(model, device, "val", CHECKED)
    return next((source for source, output, target in rows if output == target), None)


def is_main_rank() -> bool:
    """Rank 0 of a torchrun (or a plain run) alone prints and writes."""
    return os.environ.get("RANK", "0") == "0"


def _masked(e) -> str:
    """MLM: masked-token accuracy beside what context-free guessing gets; images: held-out accuracy."""
    if e.accuracy is not None:
        return f", held-out accuracy {e.accuracy:.3f} (majority class {e.baseline_accuracy:.3f})"
    if e.masked_accuracy is None:
        return ""
    return (f", masked-token accuracy {e.masked_accuracy:.3f} (baselines: most frequent token "
            f"{e.baseline_accuracy:.3f}, unigram draw {e.unigram_accuracy:.3f})")


class JsonPrinter:
    """One JSON object per event on stdout; the start line also says the thread count chosen and why."""

    threads: dict | None = None

    def __enter__(self) -> JsonPrinter:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __call__(self, event) -> None:
        extra = {"threads": self.threads} if event.kind == "start" else {}
        print(json.dumps(event.to_dict() | extra), flush=True)


class RichPrinter:
    """A progress bar with loss, tokens/s and ETA; evaluations and samples printed above it.

    tokens/s is the trainer's one figure (docs/CONTRACTS.md): the bar's last value and the done line agree.
    """

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.console = Console(stderr=False)
        self.progress = Progress(
            TextColumn("[bold]train"), BarColumn(), MofNCompleteColumn(),
            TextColumn("loss {task.fields[loss]}"), TextColumn("{task.fields[speed]} tok/s"),
            TextColumn("eta"), TimeRemainingColumn(), console=self.console, disable=not is_main_rank(),
        )
        self.task = None
        self.total = 0
        self.family = ""
        # The closing hint's prompt: a held-out source once a translation sample is printed (a word the
        # task's model knows), else a plain start of text for a language model.
        self.prompt = "The"
        self.prompt_check = None  # a seq2seq run: finds a held-out source the model gets right, else None

    def __enter__(self) -> RichPrinter:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.__exit__(*exc)

    def __call__(self, event) -> None:
        handler = getattr(self, f"_on_{event.kind}", None)
        if handler is not None:
            handler(event)

    def _on_start(self, e) -> None:
        m = e.model
        say(self.console, f"{m['name']} {m['family']}, {e.params:,} parameters, on {e.device}"
                          + (f" x {e.world_size} processes" if e.world_size > 1 else ""))
        for note in e.notes:
            say(self.console, f"  note: {note}", indent=4)
        self.total = e.total_steps
        self.family = m["family"]
        if e.train.get("task") and m["family"] == "encoder-decoder":  # a held-out source of the task
            from tui_lab.data.tasks import load_task

            self.prompt = load_task(e.train["task"]).examples("val")[0][0]
        self.task = self.progress.add_task("train", total=e.total_steps, completed=e.step, loss="-", speed="-")

    def _on_step(self, e) -> None:
        self.progress.update(self.task, completed=e.step, loss=f"{e.train_loss:.3f}", speed=f"{e.tokens_per_s:,.0f}")

    def _on_eval(self, e) -> None:
        exact = f", exact match {e.exact_match:.3f}" if e.exact_match is not None else ""
        say(self.console, f"step {e.step}: val loss {e.val_loss:.4f}{exact}{_masked(e)}")

    def _on_sample(self, e) -> None:
        if e.target is not None:  # a seq2seq source: a prompt the trained model can translate
            self.prompt = e.prompt
        target = f"  (want: {e.target})" if e.target is not None else ""
        say(self.console, f"  sample: {e.prompt!r} -> {e.text!r}{target}", indent=4)

    def _on_checkpoint(self, e) -> None:
        if e.step < self.total:  # a periodic save; the last one is reported with the done line
            say(self.console, f"checkpoint written to {e.path}")

    def _on_done(self, e) -> None:
        exact = f", exact match {e.exact_match:.3f}" if e.exact_match is not None else ""
        mfu = f", MFU {e.mfu:.1%}" if e.mfu is not None else ""
        say(self.console, f"done at step {e.step}: train loss {e.train_loss:.4f}, val loss {e.val_loss:.4f}"
                          f"{exact}{_masked(e)}, {e.tokens_per_s:,.0f} tokens/s{mfu}")
        self._where(e.checkpoint, finished=True)

    def _on_stopped(self, e) -> None:
        say(self.console, f"stopped at step {e.step}")
        self._where(e.checkpoint, finished=False)

    def _where(self, folder: str | None, finished: bool) -> None:
        """Where the run went, or that it went nowhere and how to keep the next one."""
        if folder is None:
            say(self.console, "not saved: the trained model is discarded; add --out DIR to keep it "
                              "(then tui-lab generate --checkpoint DIR --prompt TEXT)")
            return
        # Printed for a person to paste: each command runs as printed (tests/cli/test_cli_words.py runs them).
        where = shlex.quote(folder)
        generate = "" if self.family == "encoder-only" else \
            f"generate: tui-lab generate --checkpoint {where} --prompt {shlex.quote(self.prompt)}; "
        if self.prompt_check is not None and finished:  # suggest what the model gets right, or say it does not
            right = self.prompt_check()
            generate = (f"undertrained: none of {CHECKED} held-out sources comes out right yet; " if right is None
                        else f"generate: tui-lab generate --checkpoint {where} --prompt {shlex.quote(right)} "
                             "--temperature 0; ")
        then = (f"{generate}train on to N steps in all: tui-lab train --resume {where} --steps N") if finished \
            else f"finish the run: tui-lab train --resume {where}"
        say(self.console, f"saved to {folder} ({then})")

    def _on_error(self, e) -> None:
        from rich.console import Console

        say(Console(stderr=True), f"tui-lab: error: {e.message}", style="red")  # stderr, as every refusal
