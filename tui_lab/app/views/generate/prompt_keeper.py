"""The Generate view's prompt as the live model changes: the default it holds, the note under it, and the
search for a held-out source of the model's own task.

A plain object the view owns (`PromptKeeper(view)`), which reads and writes the view's `#gen-prompt` and
`#gen-note`. Only a prompt nobody has typed into (the default the keeper last set) follows a new model: a
person's prompt stays. The note is the live model's line (`live.note_text`) and, while the prompt has words the
tokenizer lacks, a warning that each reads <unk>. A checkpoint trained on a task whose words the default lacks
gets a source of that task, found in a thread worker (`jobs.PromptFound` comes back to the view, which hands it
to `found`).
"""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widgets import Input, Static

from tui_lab.app.view_contract import LabView
from tui_lab.app.views.generate import jobs
from tui_lab.app.views.generate.live import DEFAULT_PROMPT, followed_prompt, unknown_note


class PromptKeeper:
    """The prompt's default and the note's text for `view`."""

    def __init__(self, view: LabView) -> None:
        self.view = view
        self.default = DEFAULT_PROMPT  # the prompt the view last set: untouched while the field holds it
        self.model_note = Content()  # the note's line about the live model; the prompt's <unk> warning goes after it

    @property
    def text(self) -> str:
        return self.view.query_one("#gen-prompt", Input).value

    @property
    def untouched(self) -> bool:
        return self.text == self.default

    def follow(self, live: Any, translating: bool) -> None:
        """An untouched prompt becomes the live model's default: a sentence to translate, or text to continue."""
        self._set_default(followed_prompt(live, translating, self.text, self.default))

    def note(self, model_note: Content, live: Any) -> None:
        """The live model's line in the note; a checkpoint of a task whose words the prompt lacks looks for its
        own held-out source."""
        self.model_note = model_note
        self.show_note()
        if live.ready and live.example is None and self.untouched and unknown_note(live, self.text):
            self._find_task_prompt(live)

    def show_note(self) -> None:
        """The model's line, and a warning while the prompt has words the tokenizer lacks (each reads <unk>)."""
        self.view.query_one("#gen-note", Static).update(self.model_note + unknown_note(self.view.lab.live, self.text))

    def found(self, message: jobs.PromptFound) -> None:
        """A held-out source of the live model's task, for a prompt nobody has typed into since."""
        if message.generation == self.view.lab.live.generation and self.untouched:
            self._set_default(message.prompt)
            self.show_note()

    def _set_default(self, text: str) -> None:
        """Put `text` in the prompt as the view's default (a person's typed prompt is never passed here)."""
        prompt = self.view.query_one("#gen-prompt", Input)
        if prompt.value != text:
            prompt.value = text
        self.default = text

    def _find_task_prompt(self, live: Any) -> None:
        from tui_lab.generation.prompt import task_prompt

        tokenizer, generation, view = live.tokenizer, live.generation, self.view

        def find() -> None:
            found = task_prompt(tokenizer)
            if found is not None:
                view.post_message(jobs.PromptFound(found, generation))

        view.run_worker(find, thread=True, exclusive=True, group="generate-prompt", exit_on_error=False)
