"""The Train view's form: data or task, tokenizer, sizes, learning rate and schedule -> TrainConfig fields.

Importing `tui_lab.train` imports torch (~3 s here), which must stay off the UI's first frame: the form
knows the choice lists and the language-model defaults itself (a test pins them to the engine's), asks
the engine for a task's defaults only when a person picks the task, and hands raw fields to the session,
whose worker builds and validates the TrainConfig.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Input, Label, Select

from tui_lab.app.widgets.field_input import FieldInput
from tui_lab.app.widgets.toggle import OnOffCheckbox
from tui_lab.served import page_path

SCHEDULES = ("noam", "cosine", "constant")  # == tui_lab.train.config.SCHEDULES
TOKENIZERS = ("char", "bpe")  # == tui_lab.train.config.TOKENIZERS
SAMPLING = ("none", "linear", "exponential", "inverse_sigmoid")  # == train.scheduled_sampling.SCHEDULED_SAMPLING
DATA_CHOICES = (("built-in corpus", "corpus"), ("text file", "file"), ("task: copy", "copy"),
                ("task: reverse", "reverse"), ("task: numbers-de", "numbers-de"),
                ("task: names", "names"))
# The headless engine's batch and length (`tui-lab train`): a step of 32 x 128 tokens is big enough that the
# UI thread's share of the GIL costs little (benchmarks/interface/ui_latency.py: in-app 78-80% of headless tokens/s;
# 16 x 64 gave 62-74%), and the plot still moves several times a second.
APP_LM: dict[str, Any] = dict(steps=400, batch_size=32, seq_len=128, lr=3e-3, schedule="cosine", vocab=512,
                              eval_every=50, eval_batches=4, sample_every=50)
APP_SEQ2SEQ: dict[str, Any] = dict(eval_every=50, eval_examples=100, sample_every=25, seq_len=64, vocab=512)
FIELDS = (("steps", "steps"), ("batch", "batch_size"), ("seq len", "seq_len"), ("lr", "lr"), ("vocab", "vocab"))


# What the live model learns, read off its config without torch: its own objective sets the data and defaults.
OBJECTIVES = {"lm": "", "mlm": "objective: masked LM", "image": "data: built-in shapes"}  # fit the form's 28 cells


def objective_of(model: Any) -> str:
    """"image" for a ViT (input patches), "mlm" for BERT's head, else "lm" (the task decides seq2seq)."""
    if model is None:
        return "lm"
    return "image" if model.input == "patches" else "mlm" if model.head == "mlm" else "lm"


def app_defaults(task: str | None, model: Any = None) -> dict[str, Any]:
    """The form's defaults: the app's language-model sizes, a task's, or those of the model's own objective,
    which `tui-lab train` applies too (`train.config.model_defaults`)."""
    if task is None and objective_of(model) == "lm":
        return dict(APP_LM)
    # Imports torch: only once a person picks a task, or once an MLM or image model is live (torch is loaded).
    from tui_lab.train.config import defaults_for, model_defaults

    if task is None:
        return APP_LM | model_defaults(model)
    return defaults_for(task) | APP_SEQ2SEQ


class TrainForm(VerticalScroll):
    DEFAULT_CSS = """
    TrainForm { width: 30; padding: 0 1; }
    TrainForm .tf-row { height: 1; }
    TrainForm .tf-name { width: 10; }
    TrainForm Input, TrainForm Select { width: 1fr; }
    TrainForm Button { width: 1fr; min-width: 6; margin: 0 1 0 0; }
    TrainForm .tf-buttons { height: 1; margin-top: 1; }
    TrainForm Checkbox { height: 1; border: none; padding: 0; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model: Any = None  # the config the defaults were taken for; None: a language model's

    def compose(self) -> ComposeResult:
        yield Label("", id="tf-objective")
        yield Select(DATA_CHOICES, value="corpus", allow_blank=False, id="tf-data", compact=True)
        yield FieldInput(placeholder="path of a UTF-8 text file", id="tf-file", compact=True)
        with Horizontal(classes="tf-row"):
            yield Label("tokenizer", classes="tf-name")
            yield Select([(t, t) for t in TOKENIZERS], value="char", allow_blank=False, id="tf-tokenizer",
                         compact=True)
            # a task brings its own word vocabulary ("words (task's)" lost its end at 80x24: the crawler, issue 36)
            yield Label("task's words", id="tf-task-tokenizer")
        for title, name in FIELDS:
            with Horizontal(classes="tf-row", id=f"tf-row-{name}"):
                yield Label(title, classes="tf-name")
                yield FieldInput(id=f"tf-{name}", compact=True)
        with Horizontal(classes="tf-row"):
            yield Label("schedule", classes="tf-name")
            yield Select([(s, s) for s in SCHEDULES], value="cosine", allow_blank=False, id="tf-schedule",
                         compact=True)
        # Seed 002's seq2seq methods (issue 13): shown for a task only.
        with Horizontal(classes="tf-row", id="tf-row-sampling"):
            yield Label("sampling", classes="tf-name")
            yield Select([(s, s) for s in SAMPLING], value="none", allow_blank=False, id="tf-sampling", compact=True)
        with Horizontal(classes="tf-row", id="tf-row-guided"):
            yield Label("guidance", classes="tf-name")  # guided attention: 10 columns, no room for more
            yield FieldInput(value="0", id="tf-guided", compact=True)
        # 19 characters at most: the compact form (80 columns) has 23 for the box and its label
        yield OnOffCheckbox("continue live model", id="tf-continue", compact=True)
        with Horizontal(classes="tf-buttons"):
            yield Button("Start g", id="tf-start", variant="success", compact=True)
            yield Button("Pause p", id="tf-pause", compact=True)
        with Horizontal(classes="tf-buttons"):
            yield Button("Step n", id="tf-step", compact=True)
            yield Button("Stop x", id="tf-stop", variant="error", compact=True)
        yield FieldInput(placeholder="checkpoint folder", id="tf-folder", compact=True, classes="tf-gap")
        with Horizontal(classes="tf-buttons"):
            yield Button("Save w", id="tf-save", compact=True)
            yield Button("Load o", id="tf-load", compact=True)
        with Horizontal(classes="tf-buttons"):
            yield Button("CSV c", id="tf-csv", compact=True)
            yield Button("Overlay v", id="tf-overlay", compact=True)

    def on_mount(self) -> None:
        self.fill(None)

    @property
    def task(self) -> str | None:
        data = self.query_one("#tf-data", Select).value
        return None if data in ("corpus", "file") or self.objective == "image" else str(data)

    @property
    def objective(self) -> str:
        return objective_of(self.model)

    def follow_model(self, model: Any) -> None:
        """The live model changed: when what it learns changes (LM, masked LM, images), so do the defaults."""
        before, self.model = self.objective, model
        if self.objective == before:
            return
        if self.objective != "lm" and self.task is not None:
            self.choose_data("corpus")  # a task's pairs are not what BERT or a ViT learns from
        self.fill(self.task)

    def fill(self, task: str | None) -> None:
        """Put the task's (or the model's objective's) defaults in the fields (the data choice is left as is)."""
        values = app_defaults(task, self.model)
        for _, name in FIELDS:
            self.query_one(f"#tf-{name}", Input).value = f"{values[name]:g}" if name == "lr" else str(values[name])
        self.query_one("#tf-schedule", Select).value = values["schedule"]
        self._show_fields()

    def choose_data(self, data: str) -> None:
        self.query_one("#tf-data", Select).value = data

    def _show_fields(self) -> None:
        lm = self.task is None
        image = self.objective == "image"  # images: no text, so no tokenizer, window or vocabulary
        objective = self.query_one("#tf-objective", Label)
        objective.update(OBJECTIVES[self.objective])
        objective.display = self.objective != "lm"
        data = self.query_one("#tf-data", Select).value
        self.query_one("#tf-data", Select).display = not image
        self.query_one("#tf-file", Input).display = data == "file" and not image
        self.query_one("#tf-tokenizer", Select).display = lm  # the run uses the task's words, whatever it says
        self.query_one("#tf-task-tokenizer", Label).display = not lm
        self.query_one("#tf-tokenizer", Select).parent.display = not image
        self.query_one("#tf-row-seq_len").display = lm and not image
        self.query_one("#tf-row-sampling").display = not lm
        self.query_one("#tf-row-guided").display = not lm
        self.query_one("#tf-row-vocab").display = lm and not image and \
            self.query_one("#tf-tokenizer", Select).value == "bpe"

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "tf-data":
            self.fill(self.task)
        elif event.select.id == "tf-tokenizer":
            self._show_fields()

    def fields(self) -> tuple[str | None, dict[str, Any]]:
        """(task, TrainConfig fields) the form describes; ValueError naming the field for a bad number.

        `tui_lab.train.config.train_config_for(task, **fields)` (in the worker) checks the rest."""
        values: dict[str, Any] = {}
        for title, name in FIELDS:
            text = self.query_one(f"#tf-{name}", Input).value.strip()
            values[name] = _number(title, text, float if name == "lr" else int)
        task = self.task
        extra = app_defaults(task, self.model) | values | {"schedule": self.query_one("#tf-schedule", Select).value}
        extra["tokenizer"] = self.query_one("#tf-tokenizer", Select).value
        if task is not None:
            extra["scheduled_sampling"] = self.query_one("#tf-sampling", Select).value
            extra["guided_attention"] = _number("guidance", self.query_one("#tf-guided", Input).value.strip(), float)
        if self.query_one("#tf-data", Select).value == "file" and self.objective != "image":
            path = self.query_one("#tf-file", Input).value.strip()
            if not path:
                raise ValueError("text file: give the path of a UTF-8 text file")
            extra["data"] = str(page_path(path, "text file"))  # ~ expanded; served: inside the session's folder
        return task, extra

    @property
    def continue_live(self) -> bool:
        return self.query_one("#tf-continue", OnOffCheckbox).value

    @property
    def folder(self) -> str:
        return self.query_one("#tf-folder", Input).value.strip()

    def set_folder(self, folder: str) -> None:
        self.query_one("#tf-folder", Input).value = folder


def _number(title: str, text: str, kind: type) -> Any:
    try:
        return kind(text)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise ValueError(f"{title} must be {what}, got {text!r}") from None
