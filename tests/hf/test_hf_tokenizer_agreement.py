"""A folder's prompt and chat ids equal transformers' AutoTokenizer and apply_chat_template on the shapes real
checkpoints have and the older tests' folders did not (issue 38): a post-processor that adds bos (Llama 2 and 3),
Llama 2 with `legacy: false`, bos named only in special_tokens_map.json or only by LlamaTokenizer's default, eos
named outside config.json (Qwen2), a `{% generation %}` template. And `generate --json` / `info --json` say
which tokenizer encoded the prompt and why it starts with bos."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run_cli
from hf_fixtures import save_hf_gpt2
from hf_tokenizer_fixtures import GENERATION_TEMPLATE, LLAMA2_TEMPLATE, save_llama2, save_llama3, save_qwen2
from tokenizers import Tokenizer, processors

from tui_lab.generation.prompt import prompt_ids
from tui_lab.hf.auto_tokenizer import prompt_encoder
from tui_lab.hf.chat import chat_prompt_ids
from tui_lab.hf.load import open_hf

transformers = pytest.importorskip("transformers")
CHAT = [{"role": "user", "content": "what is two and two?"}]
TALK = [{"role": "user", "content": "Hello there"}, {"role": "assistant", "content": "four."},
        {"role": "user", "content": " how are you?"}]
PROMPTS = ["Hello there", "[INST] the fox [/INST]", "  two\nfour é", ""]


def theirs(folder):
    return transformers.AutoTokenizer.from_pretrained(str(folder))


def assert_chat_equal(folder, messages=CHAT, generation_prompt=True):
    """The lab's rendered text and ids equal apply_chat_template's."""
    opened, reference = open_hf(folder), theirs(folder)
    text = reference.apply_chat_template(messages, add_generation_prompt=generation_prompt, tokenize=False)
    ids = reference.apply_chat_template(messages, add_generation_prompt=generation_prompt, tokenize=True,
                                        return_dict=False)
    assert opened.model.chat_template.render(messages, generation_prompt) == text
    assert chat_prompt_ids(opened.model, opened.tokenizer, messages) == list(ids) or not generation_prompt
    return opened, list(ids)


@pytest.mark.parametrize("shape", ["llama2", "llama2-strict", "llama3", "mistral"])
def test_a_plain_prompt_gets_the_bos_the_post_processor_adds(tmp_path, shape):
    """Item 5: AutoTokenizer(prompt) starts with bos where the post-processor adds it; the lab wrote none."""
    save = {"llama2": lambda f: save_llama2(f), "llama2-strict": lambda f: save_llama2(f, legacy=False),
            "llama3": save_llama3, "mistral": lambda f: save_llama2(f, legacy=False, kind="mistral")}[shape]
    save(tmp_path)
    opened, reference = open_hf(tmp_path), theirs(tmp_path)
    for prompt in PROMPTS:
        expected = reference(prompt)["input_ids"]
        assert prompt_ids(prompt_encoder(opened.tokenizer), prompt, "decoder-only") == expected, prompt
        assert expected[0] == reference.bos_token_id


@pytest.mark.parametrize("rule", ["post-processor", "add_bos_token", "none"])
def test_a_gpt2_folder_adds_bos_where_transformers_does(tmp_path, rule):
    """GPT-2's reader keeps a stored post-processor that adds bos, and follows tokenizer_config.json's add_bos_token
    (transformers rewrites the post-processor then); a bos_token + ... template renders."""
    save_hf_gpt2(tmp_path)
    config = {"tokenizer_class": "GPT2Tokenizer", "chat_template": LLAMA2_TEMPLATE}
    if rule == "post-processor":
        hf = Tokenizer.from_file(str(tmp_path / "tokenizer.json")) if (tmp_path / "tokenizer.json").is_file() else \
            theirs(tmp_path).backend_tokenizer
        eot = hf.token_to_id("<|endoftext|>")
        hf.post_processor = processors.TemplateProcessing(single="<|endoftext|> $A",
                                                          special_tokens=[("<|endoftext|>", eot)])
        hf.save(str(tmp_path / "tokenizer.json"))
    elif rule == "add_bos_token":
        config["add_bos_token"] = True
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    opened, reference = open_hf(tmp_path), theirs(tmp_path)
    for prompt in PROMPTS:  # the lab starts an empty prompt from bos where transformers' ids are empty
        expected = reference(prompt)["input_ids"] or [reference.bos_token_id]
        assert prompt_ids(prompt_encoder(opened.tokenizer), prompt, "decoder-only") == expected
    assert opened.tokenizer.describe()["bos"]["added"] == (rule != "none")
    assert_chat_equal(tmp_path, TALK)


@pytest.mark.parametrize("legacy", [True, False])
def test_llama2_legacy_false_is_rebuilt_as_transformers_rebuilds_it(tmp_path, legacy):
    """Item 4: with legacy false transformers writes `<s>[INST]`; the stored tokenizer.json gave `<s>▁[INST]`."""
    save_llama2(tmp_path, legacy=legacy)
    opened, ids = assert_chat_equal(tmp_path, TALK)
    tokens = theirs(tmp_path).convert_ids_to_tokens(ids)
    assert tokens[1] == ("▁[INST]" if legacy else "[")  # the shapes differ: the case tells them apart
    assert opened.tokenizer.source == "transformers"


@pytest.mark.parametrize("shape", ["llama2", "llama3"])
@pytest.mark.parametrize("bos_in", ["map", "default"])
def test_bos_named_outside_tokenizer_config_reaches_the_template(tmp_path, shape, bos_in):
    """Item 3: `{{ bos_token }}` rendered empty and `bos_token + ...` failed ('bos_token' is undefined) when bos
    was named only in special_tokens_map.json or only by LlamaTokenizer's default."""
    if shape == "llama3" and bos_in == "default":
        pytest.skip("PreTrainedTokenizerFast has no default bos")
    (save_llama2 if shape == "llama2" else save_llama3)(tmp_path, bos_in=bos_in)
    opened, ids = assert_chat_equal(tmp_path, TALK)
    assert ids[0] == theirs(tmp_path).bos_token_id


def test_a_generation_tag_renders_as_transformers(tmp_path):
    """`{% generation %}` (transformers' AssistantTracker) was refused: 'Encountered unknown tag'."""
    save_llama2(tmp_path, template=GENERATION_TEMPLATE)
    assert_chat_equal(tmp_path, TALK, generation_prompt=False)


def test_qwen2_with_eos_outside_config_json_has_a_tokenizer_and_chats(tmp_path, capsys):
    """Its config.json names no eos: the folder loaded with no tokenizer ('--chat: the model has no tokenizer')."""
    ids = save_qwen2(tmp_path)
    opened, expected = assert_chat_equal(tmp_path)
    assert opened.tokenizer.eos_id == ids["<|im_end|>"]
    done = run_cli(capsys, "generate", "--from-hf", str(tmp_path), "--chat", "--prompt", CHAT[0]["content"],
                   "--max-new-tokens", "3", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["prompt_ids"] == expected
    assert result["tokenizer_used"]["bos"] == {"added": False, "why": "the chat template writes none"}


def test_generate_and_info_json_name_the_tokenizer_and_why_bos(tmp_path, capsys):
    save_llama3(tmp_path)
    done = run_cli(capsys, "generate", "--from-hf", str(tmp_path), "--prompt", "Hello there", "--max-new-tokens", "2",
                   "--temperature", "0", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["prompt_ids"] == theirs(tmp_path)("Hello there")["input_ids"]
    used = result["tokenizer_used"]
    assert used["source"] == "transformers" and used["built_by"].endswith("TokenizersBackend")
    assert used["bos"] == {"added": True, "why": "the tokenizer's post-processor adds it (tokenizer.json)"}
    done = run_cli(capsys, "info", "--from-hf", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)["tokenizer_used"]
    assert info["source"] == "transformers" and info["bos"]["added"] is True
    save_llama2(tmp_path / "l2")
    info = json.loads(run_cli(capsys, "info", "--from-hf", str(tmp_path / "l2"), "--json").stdout)["tokenizer_used"]
    assert "LlamaTokenizer" in info["built_by"]
    shown = " ".join(run_cli(capsys, "info", "--from-hf", str(tmp_path / "l2")).stdout.split())  # wrapped at 80
    assert "a prompt starts with bos (the tokenizer's post-processor adds it (tokenizer.json))" in shown
    assert info["bos"] == {"added": True, "why": "the tokenizer's post-processor adds it (tokenizer.json)"}


def test_a_tokenizer_transformers_cannot_build_is_read_as_stored_and_never_runs_remote_code(tmp_path):
    """A tokenizer_config.json asking for remote code: transformers refuses it (trust_remote_code=False), nothing
    of the folder's code runs, and the lab reads tokenizer.json as stored, saying why in one line."""
    save_llama3(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    config |= {"tokenizer_class": "EvilTokenizer", "auto_map": {"AutoTokenizer": ["evil.EvilTokenizer", None]}}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    marker = tmp_path / "ran"
    (tmp_path / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    opened = open_hf(tmp_path)
    used = opened.tokenizer.describe()
    assert not marker.exists()
    assert used["source"] == "lab" and used["built_by"].startswith("tokenizer.json as stored: transformers could")
    assert "\n" not in used["built_by"]
    assert prompt_ids(prompt_encoder(opened.tokenizer), "Hello", "decoder-only")[0] == opened.tokenizer.bos_id


def test_loading_a_folder_writes_no_warning(tmp_path):
    """transformers' advisory messages are held back: the base-install smoke fails on any 'warning' in stderr.
    A Llama 3 folder naming LlamaTokenizerFast over a byte-level tokenizer.json makes transformers warn."""
    save_llama3(tmp_path, tokenizer_class="LlamaTokenizerFast")
    reference = subprocess.run([sys.executable, "-c", f"import transformers as t; "
                                f"t.AutoTokenizer.from_pretrained({str(tmp_path)!r})"], capture_output=True, text=True)
    assert "is ByteLevel; loading `TokenizersBackend`" in reference.stderr  # the message the lab must hold back
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "tui_lab.cli", "generate", "--from-hf", str(tmp_path), "--chat",
                           "--prompt", "hi", "--max-new-tokens", "2", "--json"], capture_output=True, text=True,
                          cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, timeout=240)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # not a word: the smoke fails on 'warning', and people on noise
