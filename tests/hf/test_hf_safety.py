"""A checkpoint is untrusted input: no pickle code runs, and every bad folder is one clear ValueError."""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shlex
from pathlib import Path

import pytest
import torch
from hf_fixtures import save_hf_gpt2
from safetensors.torch import load_file, save_file

from tui_lab.cli import main
from tui_lab.hf import hf_gpt2_config, load_hf_gpt2

pytest.importorskip("transformers")
TINY = dict(n_embd=16, n_head=2, n_layer=2, n_positions=16)


class Payload:
    """Unpickling this calls os.system, which writes the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {shlex.quote(str(self.marker))}",)


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("good")
    save_hf_gpt2(path, **TINY)
    return path


def _copy(good: Path, tmp_path: Path, skip: tuple[str, ...] = ()) -> Path:
    folder = tmp_path / "ckpt"
    folder.mkdir()
    for file in good.iterdir():
        if file.name not in skip:
            (folder / file.name).write_bytes(file.read_bytes())
    return folder


def _refused(path: Path, match: str) -> str:
    with pytest.raises(ValueError, match=match) as info:
        load_hf_gpt2(path)
    message = str(info.value)
    assert "\n" not in message  # one line, for the CLI and the app's notification
    return message


def test_the_payload_really_runs_code_under_plain_pickle(tmp_path):
    """The control: without weights_only, this file would have written the marker."""
    marker = tmp_path / "ran"
    pickle.loads(pickle.dumps({"w": Payload(marker)}))
    assert marker.exists()


@pytest.mark.parametrize("container", ["torch.save", "pickle protocol 2", "pickle protocol 5"])
def test_code_running_pickle_is_refused_and_never_runs(good, tmp_path, container):
    folder = _copy(good, tmp_path, skip=("model.safetensors",))
    marker = tmp_path / "pwned"
    weights = {"n_layer": 2, "evil": Payload(marker)}
    if container == "torch.save":
        torch.save(weights, folder / "pytorch_model.bin")
    else:
        (folder / "pytorch_model.bin").write_bytes(pickle.dumps(weights, protocol=int(container[-1])))
    message = _refused(folder, "pytorch_model.bin: refused")
    if container != "pickle protocol 5":  # torch stops protocol 5 at its framing, before reaching the call
        assert "system" in message  # names what the pickle asked for
    assert not marker.exists()
    assert main(["info", "--from-hf", str(folder)]) == 0  # reading config.json alone is harmless


def test_the_cli_reports_a_refused_pickle_in_one_line(good, tmp_path, capsys):
    generate_cli = pytest.importorskip("tui_lab.cli.generate")
    parser = argparse.ArgumentParser()
    generate_cli.add_arguments(parser)
    if not any("--from-hf" in action.option_strings for action in parser._actions):
        pytest.skip("tui-lab generate has no --from-hf yet")
    folder = _copy(good, tmp_path, skip=("model.safetensors",))
    marker = tmp_path / "pwned"
    torch.save({"evil": Payload(marker)}, folder / "pytorch_model.bin")
    assert main(["generate", "--from-hf", str(folder), "--prompt", "hi", "--max-new-tokens", "2"]) == 2
    err = capsys.readouterr().err
    assert "refused" in err and len(err.strip().splitlines()) == 1
    assert not marker.exists()


def test_safetensors_is_preferred_over_a_bin(good, tmp_path):
    folder = _copy(good, tmp_path)
    marker = tmp_path / "pwned"
    torch.save({"evil": Payload(marker)}, folder / "pytorch_model.bin")
    load_hf_gpt2(folder)  # model.safetensors is there, so the pickle is never opened
    assert not marker.exists()


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_damaged_safetensors(good, tmp_path, damage):
    folder = _copy(good, tmp_path)
    path = folder / "model.safetensors"
    data = path.read_bytes()
    path.write_bytes({"garbage": os.urandom(300), "truncated": data[: len(data) - 100], "empty": b""}[damage])
    _refused(folder, "model.safetensors")


def test_truncated_bin(good, tmp_path):
    folder = _copy(good, tmp_path, skip=("model.safetensors",))
    torch.save(load_file(good / "model.safetensors"), folder / "pytorch_model.bin")
    data = (folder / "pytorch_model.bin").read_bytes()
    (folder / "pytorch_model.bin").write_bytes(data[: len(data) // 2])
    _refused(folder, "pytorch_model.bin: cannot read it")


def _edit_tensors(good: Path, tmp_path: Path, edit) -> Path:
    folder = _copy(good, tmp_path)
    tensors = load_file(good / "model.safetensors")
    edit(tensors)
    save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
    return folder


def test_missing_tensor_is_named(good, tmp_path):
    folder = _edit_tensors(good, tmp_path, lambda t: t.pop("transformer.h.1.mlp.c_fc.weight"))
    _refused(folder, r"lacks tensor h\.1\.mlp\.c_fc\.weight")


def test_unexpected_tensor_is_named(good, tmp_path):
    folder = _edit_tensors(good, tmp_path, lambda t: t.update({"transformer.h.0.attn.q_attn.weight": torch.ones(1)}))
    _refused(folder, r"unexpected tensor transformer\.h\.0\.attn\.q_attn\.weight")


def test_shape_mismatch_is_named(good, tmp_path):
    folder = _copy(good, tmp_path)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "n_inner": 40}))
    _refused(folder, r"transformer\.h\.0\.mlp\.c_fc\.weight has shape \[16, 64\]; config.json implies \[16, 40\]")


def test_shard_index_cannot_point_outside_the_folder(good, tmp_path):
    folder = _copy(good, tmp_path, skip=("model.safetensors",))
    (tmp_path / "elsewhere.safetensors").write_bytes((good / "model.safetensors").read_bytes())
    index = {"weight_map": {"transformer.wte.weight": "../elsewhere.safetensors"}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    _refused(folder, "plain file name")


BAD_CONFIGS = {
    "n_embd not divisible": ({"n_embd": 30, "n_head": 4}, r"n_embd \(30\) must be divisible by n_head \(4\)"),
    "negative layers": ({"n_layer": -2}, "n_layer must be a positive integer"),
    "zero n_inner": ({"n_inner": 0}, "n_inner must be a positive integer"),
    "string size": ({"n_head": "2"}, "n_head must be a positive integer"),
    "bad epsilon": ({"layer_norm_epsilon": -1}, "layer_norm_epsilon must be a number > 0"),
    "unknown activation": ({"activation_function": "swish"}, "activation_function 'swish' is not supported"),
    "not gpt2": ({"model_type": "llama"}, "model_type is 'llama'"),
    "cross-attention": ({"add_cross_attention": True}, "add_cross_attention"),
    "unscaled attention": ({"scale_attn_weights": False}, "scale_attn_weights"),
}


@pytest.mark.parametrize("name", BAD_CONFIGS)
def test_impossible_config_is_one_line(good, tmp_path, name):
    changes, match = BAD_CONFIGS[name]
    folder = _copy(good, tmp_path)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **changes}))
    with pytest.raises(ValueError, match=match):
        hf_gpt2_config(folder)
    _refused(folder, match)


def test_not_a_checkpoint(good, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    _refused(empty, "not a GPT-2 checkpoint folder: no config.json")
    _refused(tmp_path / "nowhere", "does not exist")
    (empty / "config.json").write_text("{not json")
    _refused(empty, "config.json: not valid JSON")


def test_missing_weights_or_tokenizer(good, tmp_path):
    folder = _copy(good, tmp_path, skip=("model.safetensors",))
    (folder / "tf_model.h5").write_bytes(b"\x89HDF")
    _refused(folder, "has no weights: it holds only tf_model.h5")
    (tmp_path / "b").mkdir()
    folder = _copy(good, tmp_path / "b", skip=("merges.txt",))
    _refused(folder, "has no tokenizer")
    (folder / "merges.txt").write_text("#version: 0.2\nnot-a-merge-pair-line x y z\n")
    _refused(folder, "merges.txt: cannot read the tokenizer")


def test_cli_exit_code_2_without_traceback(tmp_path, capsys):
    assert main(["info", "--from-hf", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tui-lab: error:") and "Traceback" not in err
