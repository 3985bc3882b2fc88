"""How a Hugging Face folder decodes when the person says little (issue 38, items 6, 7 and 8, and the refusals
transformers does not make): `generate` compared with transformers 5.24's `generate()` on the same folder.

- no `do_sample` in generation_config.json (what save_pretrained writes): greedy, as transformers;
- `do_sample: true` with `num_beams: 3`: transformers' beam sample, the same ids for the same seed;
- a model padded past its tokenizer (128 rows, 120 tokens): ids past the tokenizer are chosen when the weights say
  so, as transformers chooses them, and display as `<id N>`;
- GPT-2's default eos 50256 in a vocab of 61, and forced_eos_token_id as a list: accepted, as transformers does;
- `generate --json` names the decoding mode and what chose it.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from cli_support import run_cli
from hf_family_fixtures import randomise, save_causal

from tui_lab.generation.folder_defaults import with_folder_defaults
from tui_lab.generation.session import complete
from tui_lab.generation.settings import GenerationSettings
from tui_lab.hf.load import open_hf

transformers = pytest.importorskip("transformers")
TOKENS, ROWS = 120, 128


def _generation(folder: Path, **changes) -> None:
    path = folder / "generation_config.json"
    data = {**json.loads(path.read_text()), **changes}
    path.write_text(json.dumps({k: v for k, v in data.items() if v is not None}))


def _copy(source: Path, folder: Path) -> Path:
    folder.mkdir()
    for file in source.iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    return folder


@pytest.fixture(scope="module")
def padded(tmp_path_factory) -> Path:
    """A Llama of 128 rows with a 120-token BPE tokenizer; rows 120..127 of its head are made likely enough that
    transformers' greedy run writes some of them (not all: the run must also write decodable text)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    folder = tmp_path_factory.mktemp("padded")
    reference = save_causal("llama", folder, vocab_size=ROWS, tie_word_embeddings=False, eos_token_id=2, bos_token_id=1)
    with torch.no_grad():
        head = reference.lm_head.weight
        head[TOKENS:] = head[TOKENS:] * 4.0
    reference.save_pretrained(folder)
    hf = Tokenizer(models.BPE(unk_token="<unk>"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    words = " ".join(f"w{i}x{j}" for i in range(40) for j in range(9))
    hf.train_from_iterator(
        [words] * 3,
        trainers.BpeTrainer(vocab_size=TOKENS, show_progress=False, special_tokens=["<unk>", "<s>", "</s>"]),
    )
    hf.save(str(folder / "tokenizer.json"))
    saved = json.loads((folder / "generation_config.json").read_text())
    assert "do_sample" not in saved  # what save_pretrained writes
    return folder


def _theirs(folder: Path, prompt: list[int], seed: int = 0, **kwargs) -> list[int]:
    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    torch.manual_seed(seed)
    return model.generate(torch.tensor([prompt]), **kwargs)[0, len(prompt) :].tolist()


def _cli(capsys, folder: Path, *flags: str) -> dict:
    out = run_cli(capsys, "generate", "--from-hf", str(folder), "--prompt", "w1x2 w3x4", "--json", *flags)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_no_do_sample_decodes_greedily_as_transformers(padded, capsys):
    """Item 6: without --temperature the lab sampled at temperature 1 (seeds 1 and 2 differed, neither was
    generate()'s) and said defaults_taken []."""
    runs = [_cli(capsys, padded, "--max-new-tokens", "40", "--seed", seed) for seed in ("1", "2")]
    want = _theirs(padded, runs[0]["prompt_ids"], max_new_tokens=40)
    assert runs[0]["ids"] == runs[1]["ids"] == want
    assert runs[0]["generation_config"]["defaults_taken"] == ["temperature"]
    assert runs[0]["decoding"] == {
        "mode": "greedy",
        "from": "transformers' default (no do_sample in generation_config.json: false)",
    }
    flagged = _cli(capsys, padded, "--max-new-tokens", "4", "--temperature", "0.8")
    assert flagged["decoding"] == {"mode": "sample", "from": "--temperature"}


def test_a_padded_vocab_chooses_what_transformers_chooses(padded, capsys):
    """Item 8: transformers bans no id past the tokenizer; the lab did and diverged where the weights pick one.
    Those ids decode to nothing (transformers' decode skips them too) and display as <id N>."""
    run = _cli(capsys, padded, "--max-new-tokens", "40")
    want = _theirs(padded, run["prompt_ids"], max_new_tokens=40)
    assert run["ids"] == want
    past = [i for i in want if i >= TOKENS]
    assert past and len(past) < len(want)  # the comparison covers both kinds of id
    opened = open_hf(padded)
    assert opened.tokenizer.token_strings(past[:1]) == [f"<id {past[0]}>"]
    assert run["completion"] == opened.tokenizer.decode([i for i in want if i < TOKENS])


def test_beam_sampling_is_transformers_beam_sample(padded, tmp_path, capsys):
    """Item 7: do_sample with num_beams 3 was reported applied and ran deterministic beam search (1 distinct output
    over 4 seeds; transformers 4). Now the same draws as transformers' for the same seed."""
    folder = _copy(padded, tmp_path / "beam-sample")
    _generation(folder, do_sample=True, num_beams=3, temperature=0.9, top_k=40, top_p=0.95)
    outs = []
    for seed in range(4):
        run = _cli(capsys, folder, "--max-new-tokens", "12", "--seed", str(seed))
        assert run["ids"] == _theirs(folder, run["prompt_ids"], seed, max_new_tokens=12), seed
        outs.append(tuple(run["ids"]))
    assert len(set(outs)) >= 3
    assert run["decoding"] == {
        "mode": "beam-sample",
        "from": "generation_config.json do_sample, generation_config.json num_beams",
    }
    assert {"do_sample", "temperature", "top_k", "top_p", "num_beams"} <= set(run["generation_config"]["applied"])
    greedy = _cli(capsys, folder, "--max-new-tokens", "12", "--temperature", "0")
    assert greedy["decoding"]["mode"] == "beam"
    assert greedy["ids"] == _theirs(folder, greedy["prompt_ids"], max_new_tokens=12, do_sample=False)


def test_beam_sample_without_eos_keeps_transformers_draws(tmp_path):
    """No eos at all: transformers keeps 2 tokens per beam through its warpers; draws equal for several seeds."""
    save_causal("qwen2", tmp_path, eos_token_id=None)
    _generation(tmp_path, do_sample=True, num_beams=2, top_k=3, eos_token_id=None)
    opened = open_hf(tmp_path)
    codec = SimpleNamespace(eos_id=None, bos_id=None, unk_id=None, vocab_size=None)
    prompt = [3, 14, 15, 9, 26]
    for seed in range(3):
        settings, _ = with_folder_defaults(
            GenerationSettings(max_new_tokens=10, seed=seed), {"max_new_tokens"}, opened.generation, len(prompt)
        )
        assert settings.mode == "beam-sample"
        assert complete(opened.model, codec, prompt, settings).ids == _theirs(tmp_path, prompt, seed, max_new_tokens=10)


def test_gpt2_with_the_default_eos_outside_a_small_vocab(tmp_path):
    """GPT2Config's eos/bos 50256 kept with vocab 61: transformers loads it and generates, never stopping on 50256;
    the lab refused the folder ("even logits are unavailable")."""
    config = transformers.GPT2Config(n_embd=32, n_layer=2, n_head=4, vocab_size=61, n_positions=64)
    reference = randomise(transformers.GPT2LMHeadModel(config))
    reference.save_pretrained(tmp_path)
    assert json.loads((tmp_path / "generation_config.json").read_text())["eos_token_id"] == 50256
    opened = open_hf(tmp_path)
    x = torch.tensor([[3, 14, 15, 9, 26]])
    with torch.no_grad():
        assert (opened.model(x) - reference(x).logits).abs().max() < 1e-4
    codec = SimpleNamespace(eos_id=None, bos_id=None, unk_id=None, vocab_size=None)
    settings, _ = with_folder_defaults(GenerationSettings(max_new_tokens=20), {"max_new_tokens"}, opened.generation, 5)
    got = complete(opened.model, codec, x[0].tolist(), settings).ids
    assert got == _theirs(tmp_path, x[0].tolist(), max_new_tokens=20) and len(got) == 20


def test_forced_eos_as_a_list_is_obeyed_as_transformers(tmp_path):
    """forced_eos_token_id [a, b]: at the length limit only a or b may be written (the lab refused the list)."""
    save_causal("llama", tmp_path)
    _generation(tmp_path, forced_eos_token_id=[40, 41], max_length=14, do_sample=False)
    prompt = [3, 14, 15, 9, 26]
    want = _theirs(tmp_path, prompt)
    assert want[-1] in (40, 41) and len(want) == 9
    opened = open_hf(tmp_path)
    codec = SimpleNamespace(eos_id=None, bos_id=None, unk_id=None, vocab_size=None)
    settings, _ = with_folder_defaults(GenerationSettings(), set(), opened.generation, len(prompt))
    assert complete(opened.model, codec, prompt, settings).ids == want


def test_a_t5_tokenizer_smaller_than_its_vocab_chooses_what_transformers_chooses(tmp_path, capsys):
    """Item 8 for T5: 160 tokens (60 pieces, 100 sentinels) and 168 rows, rows past the tokenizer made likely."""
    pytest.importorskip("sentencepiece")
    from test_hf_t5 import SMALL, _spiece

    model = randomise(
        transformers.T5ForConditionalGeneration(transformers.T5Config(**{**SMALL, "num_decoder_layers": 2}))
    )
    with torch.no_grad():
        model.lm_head.weight[160:] *= 4.0
    model.save_pretrained(tmp_path)
    _spiece(tmp_path)
    out = run_cli(
        capsys, "generate", "--from-hf", str(tmp_path), "--prompt", "the cat sat", "--json", "--max-new-tokens", "16"
    )
    assert out.returncode == 0, out.stderr
    run = json.loads(out.stdout)
    reference = transformers.T5ForConditionalGeneration.from_pretrained(str(tmp_path)).eval()
    want = reference.generate(torch.tensor([run["prompt_ids"]]), max_new_tokens=16)[0, 1:].tolist()
    assert run["ids"] == want and run["decoding"]["mode"] == "greedy"
    assert any(i >= 160 for i in want)


@pytest.mark.parametrize(
    "flags, decoding",
    [
        ((), {"mode": "sample", "from": "the lab's default (temperature 1, one beam)"}),
        (("--temperature", "0"), {"mode": "greedy", "from": "--temperature"}),
        (("--beam-size", "2"), {"mode": "beam", "from": "--beam-size"}),
    ],
)
def test_a_lab_model_names_its_decoding_mode_too(capsys, flags, decoding):
    out = run_cli(
        capsys, "generate", "--preset", "gpt2-toy", "--prompt", "Hi", "--max-new-tokens", "2", "--json", *flags
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["decoding"] == decoding


def test_info_names_the_decoding_mode_generate_takes(padded, tmp_path, capsys):
    """info --from-hf --json (config files only) says which mode a run without flags takes, and why."""
    run = run_cli(capsys, "info", "--from-hf", str(padded), "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["generation_config"]["decoding"]["mode"] == "greedy"
    folder = _copy(padded, tmp_path / "beam-sample-info")
    _generation(folder, do_sample=True, num_beams=3)
    run = run_cli(capsys, "info", "--from-hf", str(folder), "--json")
    assert json.loads(run.stdout)["generation_config"]["decoding"] == {
        "mode": "beam-sample",
        "from": "generation_config.json do_sample, generation_config.json num_beams",
    }
