"""Chat models: a folder's chat template rendered as transformers' `apply_chat_template(add_generation_prompt=True)`
renders it (ids identical), in Jinja's sandbox; `generate --chat` continues the conversation and stops on the
eos list's end-of-turn, as transformers' `generate` does on the same ids."""

from __future__ import annotations

import json

import pytest
import torch
from cli_support import run_cli
from hf_family_fixtures import save_instruct

from tui_lab.hf.chat import ChatTemplate, encode_rendered, read_chat_template
from tui_lab.hf.load import open_hf

transformers = pytest.importorskip("transformers")
CONVERSATION = [{"role": "system", "content": "You answer briefly."}, {"role": "user", "content": "hi there"},
                {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "  what is 2 and 2?"}]


def theirs_prompt(folder, messages) -> list[int]:
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    out = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=False)
    return list(out)


@pytest.mark.parametrize("template_in", ["jinja", "tokenizer_config"])
def test_rendered_ids_equal_apply_chat_template(tmp_path, template_in):
    ids = save_instruct(tmp_path, template_in)
    opened = open_hf(tmp_path)
    template = opened.model.chat_template
    assert template.where == ("chat_template.jinja" if template_in == "jinja" else "tokenizer_config.json")
    for messages in (CONVERSATION, CONVERSATION[1:2]):
        mine = encode_rendered(opened.tokenizer, template.render(messages))
        assert mine == theirs_prompt(tmp_path, messages)
        assert mine[0] == ids["<bos>"] and mine[-2:] == [ids["<|assistant|>"], opened.tokenizer.encode("\n")[0]]
    assert opened.tokenizer.encode("<|eot|>") != [ids["<|eot|>"]]  # a person's text stays literal


def test_a_template_is_sandboxed_and_its_errors_are_one_line(tmp_path):
    save_instruct(tmp_path)
    template = read_chat_template(tmp_path)
    with pytest.raises(ValueError, match=r"^chat_template\.jinja: the chat template failed \(roles are system, "
                                         r"user and assistant, got tool\)$"):
        template.render([{"role": "tool", "content": "x"}])
    escape = ChatTemplate("{{ ''.__class__.__mro__[1].__subclasses__() }}", "chat_template.jinja")
    with pytest.raises(ValueError, match=r"^chat_template\.jinja: the chat template failed \(.*unsafe"):
        escape.render([])
    mutate = ChatTemplate("{% set x = [] %}{{ x.append(1) }}", "chat_template.jinja")
    with pytest.raises(ValueError, match="^chat_template.jinja: the chat template failed"):
        mutate.render([])
    helpers = ChatTemplate("{{ messages | tojson }} {{ strftime_now('%Y') | length }}", "chat_template.jinja")
    assert helpers.render([{"role": "user", "content": "é<>"}]) == '[{"role": "user", "content": "é<>"}] 4'


def test_generate_chat_matches_transformers_on_the_same_conversation(tmp_path, capsys):
    ids = save_instruct(tmp_path)
    done = run_cli(capsys, "generate", "--from-hf", str(tmp_path), "--chat", "--prompt", "what is 2 and 2?",
                   "--temperature", "0", "--max-new-tokens", "40", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    prompt = theirs_prompt(tmp_path, [{"role": "user", "content": "what is 2 and 2?"}])
    assert result["prompt_ids"] == prompt
    reference = transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path)).eval()
    expected = reference.generate(torch.tensor([prompt]), max_new_tokens=40, do_sample=False)[0, len(prompt):]
    assert result["ids"] == expected.tolist()
    assert result["ids"][-1] == ids["<|eot|>"] and result["new_tokens"] < 40  # the eos list's end of turn stops it
    config = result["generation_config"]
    assert {"eos_token_id", "repetition_penalty", "do_sample", "temperature", "top_p"} <= set(config["applied"])
    assert config["ignored"] == {"transformers_version": "metadata"} and config["defaults_taken"] == []


def test_chat_without_a_template_is_one_line(tmp_path, capsys):
    save_instruct(tmp_path)
    (tmp_path / "chat_template.jinja").unlink()
    done = run_cli(capsys, "generate", "--from-hf", str(tmp_path), "--chat", "--prompt", "hi", "--json")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("tui-lab: error: --chat: the model has no chat template (chat_template.jinja")
    assert len(done.stderr.splitlines()) == 1
