"""The Attention view's inputs: a labelled source (and target), the Run button, and text the live model can read.

A widget of its own (`AttentionInputs`): it fills the inputs with defaults for the model's family, swaps in
text from the loaded model's own data when its tokenizer lacks the typed words (never a grid of <unk>), and
turns the inputs into ids and labels, including what each decoder query predicts (`ids`). An
encoder-decoder with a tokenizer and an empty target reads its own greedy translation as the decoder input
(`translating`); a loaded translation model (Marian from Hugging Face) starts that way. Enter in an input,
the Run button, or text found for a new model post `AttentionInputs.RunAsked`: the view captures again.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Input, Label

from tui_lab.app import grids
from tui_lab.app.examples import ENGLISH_SENTENCE, SOURCE_TEXT, TOY_DE, TOY_EN, numbers_pair, previous_token_meta
from tui_lab.app.origin import describe_origin
from tui_lab.app.views.attention import capture as work
from tui_lab.app.views.attention.mlm import MLM_TEXT, is_mlm, mlm_ids
from tui_lab.app.widgets.field_input import FieldInput
from tui_lab.data.masking import TYPED_MASK

TARGET_TEXT = "<bos> ich habe heute den Film gesehen"
GPT_TEXT = "the cat sat on the mat because it was tired"
OWN_TRANSLATION = "empty: its own translation"  # the target's placeholder when an empty target translates


def learned_head(config) -> tuple[int, int] | None:
    """(layer, head) of the pattern meta.json names for the live shipped toy, to open on; else None."""
    if config.name != TOY_EN:
        return None
    meta = previous_token_meta()
    return int(meta["layer"]), int(meta["head"])


class AttentionInputs(Horizontal):
    """The view calls `set_defaults` on mount, `follow_model` and `fit_to_tokenizer` for a new model,
    `set_text` for the tour, and reads `ids()`, `source` and `translating` to capture."""

    class RunAsked(Message):
        """Enter in an input, the Run button, or text found that the new model reads: capture again."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._searched_over: tuple[str, str] | None = None  # the inputs a search for covered text replaces

    def compose(self) -> ComposeResult:
        yield Label("source", id="att-src-label", classes="att-input-label")
        yield FieldInput(placeholder="sentence (source)", id="att-src", compact=True)
        yield Label("target", id="att-tgt-label", classes="att-input-label")
        yield FieldInput(placeholder="target", id="att-tgt", compact=True)
        yield Button("Run r", id="att-run", variant="primary", compact=True)

    @property
    def source(self) -> str:
        return self.query_one("#att-src", Input).value

    @property
    def encoder_decoder(self) -> bool:
        return self.app.live.config.family == "encoder-decoder"

    def key(self) -> tuple[str, str | None, bool]:
        """The text as typed (the target only where there is one): a capture of it is told from a new one."""
        target = self.query_one("#att-tgt", Input).value if self.encoder_decoder else None
        return self.source, target, self.translating

    def set_text(self, source: str, target: str | None = None) -> None:
        self.query_one("#att-src", Input).value = source
        if target is not None:
            self.query_one("#att-tgt", Input).value = target

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.post_message(self.RunAsked())

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "att-run":
            self.post_message(self.RunAsked())

    def set_defaults(self) -> None:
        src, tgt = self.query_one("#att-src", Input), self.query_one("#att-tgt", Input)
        if self.encoder_decoder:
            source, target = numbers_pair() if self._shipped_2017_toy() else (SOURCE_TEXT, None)
            src.value = src.value or source
            tgt.value = tgt.value or (f"{grids.BOS_TEXT} {target}" if target else self.default_target())
        elif is_mlm(self.app.live.config):
            src.value = src.value or MLM_TEXT
        elif self.app.live.config.input == "patches":
            src.value = src.value or "0"  # which held-out image
        else:
            src.value = src.value or (ENGLISH_SENTENCE if self._shipped_english_toy() else GPT_TEXT)
        self._show_target()

    def follow_model(self) -> None:
        """Rebuilt or loaded: the inputs for the new model's family; untouched defaults become the new model's."""
        self._show_target()
        self._default_for_mlm()
        target = self.query_one("#att-tgt", Input)
        if self.encoder_decoder and target.value in ("", TARGET_TEXT):  # untouched: the new model's default
            target.value = self.default_target()
            if not target.value and self._untouched():  # a translation model gets seed 000's sentence to translate
                self.query_one("#att-src", Input).value = SOURCE_TEXT

    def _default_for_mlm(self) -> None:
        """A masked-LM model reads a sentence with a [MASK] in it; swap it in for an untouched default."""
        src = self.query_one("#att-src", Input)
        if self.app.live.config.input == "patches":
            src.value = src.value if src.value.strip().isdigit() else "0"
        elif is_mlm(self.app.live.config) and self._untouched():
            src.value = MLM_TEXT
        elif not is_mlm(self.app.live.config) and src.value == MLM_TEXT:
            src.value = GPT_TEXT

    def _show_target(self) -> None:
        """The target input and its label only for an encoder-decoder; the source is then 'source'."""
        two = self.encoder_decoder
        self.query_one("#att-tgt", Input).display = self.query_one("#att-tgt-label").display = two
        self.query_one("#att-src-label", Label).update("source" if two else "text")
        live = self.app.live
        self.query_one("#att-tgt", Input).placeholder = OWN_TRANSLATION if live.tokenizer is not None else "target"

    def default_target(self) -> str:
        """A loaded translation model (an encoder-decoder from Hugging Face) translates what is typed: its
        target starts empty. The 2017 toys keep the paper's German sentence, fed by teacher forcing."""
        live = self.app.live
        own = describe_origin(live.origin).kind == "hf" and live.tokenizer is not None
        return "" if own else TARGET_TEXT

    @property
    def translating(self) -> bool:
        """The decoder input is the model's own greedy translation: an encoder-decoder with a tokenizer
        (random weights hash words instead) whose target is left empty."""
        typed = self.query_one("#att-tgt", Input).value.strip().removeprefix(grids.BOS_TEXT).strip()
        return self.encoder_decoder and self.app.live.tokenizer is not None and not typed

    def _shipped_2017_toy(self) -> bool:
        """The shipped trained 2017 toy: its held-out number shows learned cross-attention (random weights
        would show noise whatever the text, so a random toy keeps the paper's 'gesehen' sentence)."""
        return self.app.live.config.name == TOY_DE

    def _shipped_english_toy(self) -> bool:
        """The shipped trained English toy: the tour's sentence, which its BPE covers and its
        head leaning most on the previous token shows the shift by one (the random toy keeps the cat on the mat)."""
        return self.app.live.config.name == TOY_EN

    def _untouched(self) -> bool:
        """The inputs still hold a default text (the person has typed nothing of their own)."""
        tgt = self.query_one("#att-tgt", Input).value
        return (self.query_one("#att-src", Input).value in (SOURCE_TEXT, GPT_TEXT, ENGLISH_SENTENCE, MLM_TEXT)
                and tgt in ("", TARGET_TEXT))

    def fit_to_tokenizer(self) -> bool:
        """Words the live tokenizer lacks would all read <unk>: use the model's own data instead.

        The shipped 2017 toy gets its held-out example (the one the tour shows), so its first
        cross-attention grid shows the learned word-order swap. True when a search for text started in a
        worker (it asks for a capture when it is done).
        """
        live = self.app.live
        if self.encoder_decoder and self._shipped_2017_toy() and self._untouched():
            self._use_inputs(*numbers_pair(), f"the held-out example of {TOY_DE}")
        elif self._shipped_english_toy() and self.query_one("#att-src", Input).value == GPT_TEXT:
            self._use_inputs(ENGLISH_SENTENCE, None, f"the tour's sentence for {TOY_EN}")  # swapped in later
        if live.tokenizer is None or not hasattr(live.tokenizer, "unknown") or live.config.input == "patches":
            return False
        texts = [self.query_one("#att-src", Input).value.replace(TYPED_MASK, "")]
        if self.encoder_decoder:
            texts.append(self.query_one("#att-tgt", Input).value.replace(grids.BOS_TEXT, ""))
        if not [word for text in texts for word in live.tokenizer.unknown(text)]:
            return False
        if live.example is not None:
            self._use_inputs(*live.example, "a held-out example of the live model")
            return False
        # translating: only a source is needed (the model writes the target), so no target is filled in
        tokenizer, two, generation = live.tokenizer, self.encoder_decoder and not self.translating, live.generation
        self._searched_over = self._texts()  # text typed (or set by the tour) while it searches is kept

        def find() -> None:
            source, target, where = work.model_inputs(tokenizer, two)
            self.post_message(work.InputsFound(source, target, where, generation))

        self.run_worker(find, thread=True, exclusive=True, group="attention-inputs", exit_on_error=False)
        return True

    def _use_inputs(self, source: str, target: str | None, where: str) -> None:
        self.query_one("#att-src", Input).value = source
        if target is not None:
            self.query_one("#att-tgt", Input).value = f"{grids.BOS_TEXT} {target}"
        self.app.notify(f"inputs set to {where}: {source!r}", title="attention")

    def _texts(self) -> tuple[str, str]:
        return self.query_one("#att-src", Input).value, self.query_one("#att-tgt", Input).value

    def on_inputs_found(self, message: work.InputsFound) -> None:
        message.stop()
        if message.generation == self.app.live.generation and self._texts() == self._searched_over:
            self._use_inputs(message.source, message.target, message.where)
            self.post_message(self.RunAsked())

    def ids(self) -> tuple[list[int], list[str], list[int] | None, list[str], list[str]]:
        """Source ids and labels, decoder input ids and labels, and the labels of what each query predicts."""
        live = self.app.live
        text = self.query_one("#att-src", Input).value
        masked = mlm_ids(text, live.tokenizer) if is_mlm(live.config) else None
        src_ids, src = masked or grids.tokenize(text, live.config.vocab, live.tokenizer)
        tgt_ids, tgt = None, []
        if self.encoder_decoder and not self.translating:  # translating: the worker writes the target
            tgt_ids, tgt = grids.tokenize(self.query_one("#att-tgt", Input).value, live.config.vocab,
                                          live.tokenizer, target=True)
        limit = min(grids.MAX_TOKENS, live.config.max_len if live.config.positions == "learned" else 10**9)
        if len(src_ids) > limit or (tgt_ids and len(tgt_ids) > limit):
            self.app.notify(f"input cut to {limit} tokens", severity="warning")
        src_ids, src = src_ids[:limit], src[:limit]
        if tgt_ids is not None:
            tgt_ids, tgt = tgt_ids[:limit], tgt[:limit]
            if not tgt_ids:
                raise ValueError("target is empty: type a target sentence for the encoder-decoder")
        if not src_ids:
            raise ValueError("sentence is empty: type a few words")
        return src_ids, src, tgt_ids, tgt, grids.predicted_labels(tgt, live.tokenizer)
