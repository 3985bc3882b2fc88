"""A folder's generation_config.json obeyed as transformers' `generate` obeys it (random-weight folders saved
with `save_pretrained`; ids compared with `generate()` on the same folder, greedy and beam; sampling compared
as distributions, step by step, with transformers' processors)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from hf_family_fixtures import save_causal, save_marian

from tui_lab.generation import stream
from tui_lab.generation.folder_defaults import with_folder_defaults
from tui_lab.generation.session import complete
from tui_lab.generation.settings import GenerationSettings
from tui_lab.hf.generation_config import read_generation
from tui_lab.hf.load import open_hf

transformers = pytest.importorskip("transformers")
PROMPT = [3, 14, 15, 9, 26]


def with_generation(folder: Path, **changes) -> Path:
    """Rewrite the folder's generation_config.json with `changes` (None removes a key)."""
    path = folder / "generation_config.json"
    data = {**json.loads(path.read_text()), **changes}
    path.write_text(json.dumps({k: v for k, v in data.items() if v is not None}))
    return folder


def theirs(folder: Path, prompt: list[int], **kwargs) -> list[int]:
    """transformers' new ids on the folder, its generation_config.json applied as written."""
    auto = transformers.AutoModelForSeq2SeqLM if "marian" in folder.name else transformers.AutoModelForCausalLM
    model = auto.from_pretrained(str(folder)).eval()
    out = model.generate(torch.tensor([prompt]), **kwargs)
    return out[0, 1 if model.config.is_encoder_decoder else len(prompt):].tolist()


def ours(folder: Path, prompt: list[int], **given) -> list[int]:
    """The lab's new ids: the person's `given` settings win, the folder fills the rest (as the CLI does)."""
    opened = open_hf(folder)
    codec = SimpleNamespace(eos_id=None, bos_id=None, unk_id=None, vocab_size=None)  # no tokenizer in the folder
    start = len(prompt) if opened.model.config.family == "decoder-only" else 1
    settings, _ = with_folder_defaults(GenerationSettings(**given), set(given), opened.generation, start)
    return complete(opened.model, codec, prompt, settings).ids


@pytest.fixture(scope="module")
def llama(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("llama")
    save_causal("llama", folder)
    return folder


def test_every_id_of_an_eos_list_stops_as_in_transformers(llama, tmp_path_factory):
    """Llama-3-Instruct's shape: eos_token_id [a, b, c] with c the end of turn. Today's loop stopped only at a."""
    free = theirs(llama, PROMPT, max_new_tokens=50, eos_token_id=None, pad_token_id=0, do_sample=False)
    stop = max(free.index(t) for t in set(free))  # the last new token to appear for the first time
    c, (a, b) = free[stop], [t for t in range(61) if t not in free][:2]
    folder = tmp_path_factory.mktemp("llama-eos-list")
    save_causal("llama", folder, eos_token_id=[a, b, c])
    expected = theirs(folder, PROMPT, max_new_tokens=50, do_sample=False)
    assert expected == free[: stop + 1] and stop > 0
    assert ours(folder, PROMPT, max_new_tokens=50, temperature=0.0) == expected


@pytest.fixture(scope="module")
def qwen2(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("qwen2")
    save_causal("qwen2", folder, eos_token_id=[60, 33])  # 33 ends greedy runs late, 60 never
    return folder


@pytest.mark.parametrize("settings", [
    dict(repetition_penalty=1.1, do_sample=False),  # the instruct folder of the issue: greedy differs at step 39
    dict(repetition_penalty=1.3, no_repeat_ngram_size=2, min_new_tokens=12, do_sample=False),  # eos held back
    dict(bad_words_ids=[[59, 30], [33]], do_sample=False, max_new_tokens=30),  # 59 30 is written; 33 is eos: kept
    dict(forced_eos_token_id=60, max_length=25, do_sample=False),  # 60 is never written unforced
])
def test_greedy_with_the_folder_rules_equals_transformers(qwen2, tmp_path, settings):
    folder = tmp_path / "qwen2-rules"
    folder.mkdir()
    for file in qwen2.iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    with_generation(folder, **settings)
    expected = theirs(folder, PROMPT, **({} if "max_length" in settings or "max_new_tokens" in settings
                                         else {"max_new_tokens": 40}))
    given = {} if "max_length" in settings or "max_new_tokens" in settings else {"max_new_tokens": 40}
    assert ours(folder, PROMPT, **given) == expected  # greedy from the folder's do_sample: false


def test_the_person_wins_over_the_folder(qwen2, tmp_path):
    folder = tmp_path / "qwen2-person"
    folder.mkdir()
    for file in qwen2.iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    with_generation(folder, do_sample=True, temperature=0.7, top_k=20, max_new_tokens=9, num_beams=1)
    generation = open_hf(folder).generation
    settings, taken = with_folder_defaults(GenerationSettings(temperature=0.0), {"temperature"}, generation, 5)
    assert (settings.temperature, settings.max_new_tokens, settings.top_k) == (0.0, 9, None)
    assert taken == ["max_new_tokens"]  # num_beams 1 and use_cache true are the lab's own defaults
    assert ours(folder, PROMPT, temperature=0.0) == theirs(folder, PROMPT, do_sample=False)


@pytest.mark.parametrize("beam", [
    dict(num_beams=3),
    dict(num_beams=4, length_penalty=0.6, early_stopping=True, repetition_penalty=1.2),
    dict(num_beams=3, length_penalty=1.5, early_stopping="never", no_repeat_ngram_size=2),
])
def test_beam_search_from_the_folder_equals_transformers(qwen2, tmp_path, beam):
    folder = tmp_path / "qwen2-beam"
    folder.mkdir()
    for file in qwen2.iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    with_generation(folder, **beam, eos_token_id=[60, 33, 59])  # 59 and 33 end beams at different lengths
    assert ours(folder, PROMPT, max_new_tokens=24) == theirs(folder, PROMPT, max_new_tokens=24)


def test_marian_forced_eos_beams_and_bans_equal_transformers(tmp_path):
    """opus-mt's shape: num_beams 4, max_length, forced eos at the limit, pad banned, renormalized scores (which
    change beam ranking after a ban), a two-token ban too."""
    folder = tmp_path / "marian"
    save_marian(folder)
    src = [5, 17, 23, 8, 0]
    with_generation(folder, num_beams=4, max_length=12, bad_words_ids=[[60], [17, 23]], renormalize_logits=True)
    expected = theirs(folder, src)
    assert expected[-1] == 0 and len(expected) == 11  # forced eos at the length limit
    assert ours(folder, src) == expected
    with_generation(folder, num_beams=None, forced_bos_token_id=7)
    expected = theirs(folder, src)
    assert expected[0] == 7 and expected[-1] == 0
    assert ours(folder, src, temperature=0.0) == expected  # greedy, forced first and last tokens


def test_sampling_distributions_equal_transformers_processors(qwen2, tmp_path):
    """Sampled ids depend on random streams lining up, so compare what is sampled from: at each step of
    transformers' own sampled sequence, the lab's distribution equals softmax of transformers' processed
    scores within 1e-6."""
    folder = tmp_path / "qwen2-sample"
    folder.mkdir()
    for file in qwen2.iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    with_generation(folder, do_sample=True, temperature=0.7, top_k=20, top_p=0.8, repetition_penalty=1.05,
                    no_repeat_ngram_size=3, min_p=0.05, renormalize_logits=True)
    reference = transformers.AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    torch.manual_seed(0)
    out = reference.generate(torch.tensor([PROMPT]), max_new_tokens=12, output_scores=True,
                             return_dict_in_generate=True)
    opened = open_hf(folder)
    settings, _ = with_folder_defaults(GenerationSettings(), set(), opened.generation, len(PROMPT))
    assert (settings.temperature, settings.top_k, settings.top_p) == (0.7, 20, 0.8)
    for step, scores in enumerate(out.scores):
        prefix = out.sequences[:, : len(PROMPT) + step]
        [first] = list(stream(opened.model, prefix, 1, settings.temperature, settings.top_k, settings.top_p,
                              need_candidates=61, rules=opened.generation.rules))
        ids, probs = first.candidates
        mine = torch.zeros(61).scatter(0, ids[0], probs[0])
        assert (mine - torch.softmax(scores[0], dim=-1)).abs().max() < 1e-6, step


def test_every_key_is_applied_or_ignored_with_a_reason(tmp_path):
    (tmp_path / "generation_config.json").write_text(json.dumps({
        "eos_token_id": [1, 2], "pad_token_id": 0, "do_sample": False, "temperature": 0.6, "top_p": 0.9,
        "repetition_penalty": 1.1, "num_beams": 2, "max_length": 40, "max_new_tokens": 8, "typical_p": 0.5,
        "output_attentions": False, "transformers_version": "5.0", "my_key": 3}))
    read = read_generation(tmp_path, {}, vocab=61, encoder_decoder=False)
    assert set(read.applied) == {"eos_token_id", "pad_token_id", "do_sample", "repetition_penalty", "num_beams",
                                 "max_new_tokens"}
    assert read.ignored == {
        "max_length": "max_new_tokens takes precedence (as in transformers)",
        "temperature": "do_sample is not true, so transformers does not sample either",
        "top_p": "do_sample is not true, so transformers does not sample either",
        "typical_p": "not applied by the lab", "output_attentions": "transformers' default: no effect",
        "transformers_version": "metadata", "my_key": "not a transformers generation setting"}
    assert read.defaults == {"max_new_tokens": 8, "beam_size": 2, "temperature": 0.0}
    assert read.rules.eos_ids == (1, 2) and read.rules.repetition_penalty == 1.1


@pytest.mark.parametrize("data, message", [
    # an eos past the vocab is accepted, as transformers accepts it (test_hf_decoding_defaults.py); a negative one not
    ({"eos_token_id": [1, -1]}, "generation_config.json: eos_token_id must be a token id >= 0 or a list"),
    ({"repetition_penalty": 0}, "generation_config.json: repetition_penalty must be > 0, got 0"),
    ({"num_beams": 0}, "generation_config.json: num_beams must be an integer >= 1, got 0"),
    ({"early_stopping": "soon"}, 'generation_config.json: early_stopping must be true, false or "never"'),
])
def test_a_bad_value_is_one_line_naming_the_file_and_key(tmp_path, data, message):
    (tmp_path / "generation_config.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(".", r"\.")):
        read_generation(tmp_path, {}, vocab=61, encoder_decoder=False)


FAMILIES = ["gpt2", "llama", "mistral", "mixtral", "qwen2"]


@pytest.mark.parametrize("kind", FAMILIES)
def test_each_decoder_family_greedy_and_beam_equal_transformers(kind, tmp_path):
    """Every family that generates, with an instruct-like generation_config.json: greedy, then 3 beams."""
    folder = tmp_path / kind
    if kind == "gpt2":
        from hf_fixtures import save_hf_gpt2

        save_hf_gpt2(folder, n_embd=16, n_head=2, n_layer=2, n_positions=64)
    else:
        from hf_family_fixtures import CAUSAL, missing_axes

        if missing_axes(CAUSAL[kind][3]):
            pytest.skip(f"needs the config axes {CAUSAL[kind][3]}")
        save_causal(kind, folder)
    free = theirs(folder, PROMPT, max_new_tokens=16, do_sample=False, eos_token_id=None, pad_token_id=0)
    eos = [free[5], 60]  # the 6th greedy token ends the plain run; the rules below change the path to it
    with_generation(folder, eos_token_id=eos, repetition_penalty=1.2, no_repeat_ngram_size=3, do_sample=False)
    expected = theirs(folder, PROMPT, max_new_tokens=16)
    assert ours(folder, PROMPT, max_new_tokens=16) == expected
    with_generation(folder, num_beams=3, length_penalty=0.8)
    assert ours(folder, PROMPT, max_new_tokens=16) == theirs(folder, PROMPT, max_new_tokens=16)


def test_info_names_the_folder_generation_settings_without_torch_work(qwen2, tmp_path, capsys):
    from cli_support import run_cli

    folder = tmp_path / "qwen2-info"
    folder.mkdir()
    for file in qwen2.iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    with_generation(folder, repetition_penalty=1.05, typical_p=0.9)
    done = run_cli(capsys, "info", "--from-hf", str(folder), "--json")
    assert done.returncode == 0, done.stderr
    generation = json.loads(done.stdout)["generation_config"]
    assert generation["source"] == "generation_config.json" and "repetition_penalty" in generation["applied"]
    assert generation["ignored"]["typical_p"] == "not applied by the lab"
