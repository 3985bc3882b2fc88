"""A checkpoint whose vocab is padded past its tokenizer (128 vs 120): `vocab_limit` keeps generation from picking an
id the tokenizer cannot decode, on every path (greedy, sampled, beam). A Hugging Face folder's run sets no limit, as
transformers' generate sets none (issue 38, tests/hf/test_hf_decoding_defaults.py): the CLI shows those ids safely."""

from __future__ import annotations

import json

import pytest
import torch
from cli_support import run_cli
from hf_family_fixtures import save_causal

from tui_lab.generation import generate
from tui_lab.hf import load_hf

pytest.importorskip("transformers")
TOKENS = 120


@pytest.fixture(scope="module")
def padded(tmp_path_factory):
    """A Llama of vocab 128 whose output rows past the tokenizer win every argmax, with a 120-token tokenizer."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    folder = tmp_path_factory.mktemp("padded")
    reference = save_causal("llama", folder, vocab_size=128, tie_word_embeddings=False)
    with torch.no_grad():
        reference.lm_head.weight[TOKENS:] = reference.model.norm.weight.sign() * 50.0  # huge logits for 120..127
    reference.save_pretrained(folder)
    hf = Tokenizer(models.BPE(unk_token="<unk>"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    words = " ".join(f"w{i}x{j}" for i in range(40) for j in range(9))
    hf.train_from_iterator([words] * 3, trainers.BpeTrainer(vocab_size=TOKENS, show_progress=False,
                                                            special_tokens=["<unk>", "<s>", "</s>"]))
    hf.save(str(folder / "tokenizer.json"))
    return folder


def test_the_padding_ids_would_win_without_the_limit(padded):
    model, tokenizer = load_hf(padded)
    assert (tokenizer.vocab_size, model.config.vocab) == (TOKENS, 128)
    prompt = torch.tensor([tokenizer.encode("w1x2 w3x4")])
    free = generate(model, prompt, 5, temperature=0.0)
    assert (free[0, prompt.shape[1]:] >= TOKENS).all()  # the bug: ids the tokenizer cannot decode
    for kwargs in (dict(temperature=0.0), dict(temperature=1.5, generator=torch.Generator().manual_seed(0)),
                   dict(temperature=0.0, beam_size=3)):
        out = generate(model, prompt, 8, vocab_limit=tokenizer.vocab_size, **kwargs)
        assert (out < TOKENS).all(), kwargs
        tokenizer.decode(out[0].tolist())  # decodes: no "outside the vocabulary"


def test_generate_from_the_folder_on_the_command_line(padded, capsys):
    out = run_cli(capsys, "generate", "--from-hf", str(padded), "--prompt", "w1x2", "--max-new-tokens", "6",
                  "--temperature", "1.0", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    # transformers bans nothing past the tokenizer: the weights' favourites are written, and decode to nothing
    assert data["new_tokens"] == 6 and any(i >= TOKENS for i in data["ids"]), data
    _, tokenizer = load_hf(padded)
    assert data["completion"] == tokenizer.decode([i for i in data["ids"] if i < TOKENS])
