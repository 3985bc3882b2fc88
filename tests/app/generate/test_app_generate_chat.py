"""The Generate view on a chat model: the folder's generation defaults fill the form and the note says which came
from generation_config.json; the chat toggle renders the prompt as one user turn through the chat template, and
the streamed ids equal transformers' generate on apply_chat_template's ids; a person's edit of a field wins."""

from __future__ import annotations

import pytest
import torch
from app_keys_support import TYPED, _type
from app_support import app_for, wait_for, wait_ready
from hf_family_fixtures import save_instruct
from textual.widgets import Input, Static

from tui_lab.app.views.generate.token_stream import TokenStream
from tui_lab.app.widgets.toggle import OnOffCheckbox

transformers = pytest.importorskip("transformers")
PROMPT = "what is 2 and 2?"


def theirs(folder, max_new_tokens: int) -> list[int]:
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    ids = list(tokenizer.apply_chat_template([{"role": "user", "content": PROMPT}], add_generation_prompt=True,
                                             tokenize=True, return_dict=False))
    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    return model.generate(torch.tensor([ids]), max_new_tokens=max_new_tokens, do_sample=False)[0, len(ids):].tolist()


async def test_chat_toggle_and_folder_defaults(tmp_path):
    save_instruct(tmp_path, max_new_tokens=30)
    app = app_for("--from-hf", str(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("f5")
        view = app.view("generate")
        note = str(app.query_one("#gen-note", Static).render())
        said = ("generation_config.json set max 30, temp 0.6, top-k 50, top-p 0.9; obeys eos_token_id, "
                "repetition_penalty; 1 key ignored")
        assert said in " ".join(note.split()), note
        assert app.query_one("#gen-temperature", Input).value == "0.6"
        assert app.query_one("#gen-top_k", Input).value == "50"  # transformers' default when sampling
        chat = app.query_one("#gen-chat", OnOffCheckbox)
        assert chat.display and view.has_class("-chat")
        chat.value = True
        app.query_one("#gen-temperature", Input).value = "0"  # the person's edit wins: greedy
        prompt = app.query_one("#gen-prompt", Input)
        prompt.value = PROMPT
        prompt.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: view.job == 1 and not view.running)
        ids = [t.id for t in app.query_one(TokenStream).tokens]
        assert ids == theirs(tmp_path, 30) and len(ids) < 30  # stopped on the end of turn, as transformers
        prompt.value = ""
        await _type(pilot, TYPED)  # typing in the prompt stays text with the chat toggle shown
        assert prompt.value == TYPED and app.focused is prompt
