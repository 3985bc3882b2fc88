"""Real weights on demand: refused without --download, fetched from a stand-in Hub with it, then cached.

No test reaches the internet: the Hub is `hub_server.StandInHub` on 127.0.0.1, found through HF_ENDPOINT,
and every test has its own HF_HOME / HF_HUB_CACHE.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import hub_fixtures
import pytest
import torch
from hub_fixtures import NOT_NEEDED, TINY, hf_constants

from tui_lab.analysis.format import fmt_bytes
from tui_lab.generation import generate
from tui_lab.hf import load_hf_gpt2
from tui_lab.hf.folder import is_repo_id
from tui_lab.hf.hub import DownloadCancelled, fetch, hub_logs_to, locate, plan_download, resolve, select_files

cache, hub, sources = hub_fixtures.cache, hub_fixtures.hub, hub_fixtures.sources  # the fixtures (cache: autouse)

transformers = pytest.importorskip("transformers")
NEEDED = ["config.json", "generation_config.json", "vocab.json", "merges.txt", "model.safetensors"]








def _one_line(info: pytest.ExceptionInfo) -> str:
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def _greedy_matches_transformers(folder: Path) -> None:
    model, tokenizer = load_hf_gpt2(folder)
    reference = transformers.GPT2LMHeadModel.from_pretrained(folder).eval()
    prompt = torch.tensor([tokenizer.encode("The quick brown")])
    ours = generate(model, prompt, 12, temperature=0.0)
    theirs = reference.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=12, do_sample=False,
                                eos_token_id=None, pad_token_id=tokenizer.eos_id)
    assert ours.tolist() == theirs.tolist()


# -- without --download -------------------------------------------------------------------------------

@pytest.mark.parametrize("repo_id", ["tiny-gpt2", "openai-community/gpt2"])
def test_uncached_id_is_refused_without_download_and_no_request_is_made(hub, cache, repo_id):
    with pytest.raises(ValueError, match="not in the local cache .*; add --download to fetch it") as info:
        resolve(repo_id)
    assert str(cache) in _one_line(info)
    assert hub.requests == []
    assert not cache.exists() or not any(cache.iterdir())


def test_a_path_that_is_no_model_id_is_a_folder_error(hub, tmp_path):
    for spec in (tmp_path / "nowhere", "./nowhere", "a/b/c"):
        with pytest.raises(ValueError, match="does not exist"):
            resolve(spec, download=True)
    assert hub.requests == []


def test_a_local_folder_resolves_to_itself(hub, sources):
    assert resolve(sources["safetensors"], download=True) == sources["safetensors"]
    assert hub.requests == []


# -- with --download ----------------------------------------------------------------------------------

def test_download_fetches_only_what_the_lab_reads_and_generates_like_transformers(hub, sources, cache):
    plans, progress = [], []
    folder = resolve("tiny-gpt2", download=True, on_plan=plans.append, on_progress=progress.append)
    (plan,) = plans
    assert [f.name for f in plan.files] == NEEDED  # weights last
    assert set(plan.left_out) == set(NOT_NEEDED)
    assert plan.total_bytes == sum((sources["safetensors"] / n).stat().st_size for n in NEEDED)
    assert "\n" not in plan.summary() and "5 files" in plan.summary()
    assert hub.requests[0] == ("GET", "/api/models/tiny-gpt2/revision/main")
    assert hub.fetched() == NEEDED  # nothing left out was downloaded
    assert folder == cache / "models--tiny-gpt2" / "snapshots" / plan.commit == plan.folder
    assert (cache / "models--tiny-gpt2" / "refs" / "main").read_text() == plan.commit
    for name in NEEDED:
        assert (folder / name).read_bytes() == (sources["safetensors"] / name).read_bytes()
    done = [p.done for p in progress]
    assert done == sorted(done) and done[-1] == progress[-1].total == plan.total_bytes
    assert progress[-1].files_done == len(NEEDED) and progress[-1].fraction == 1.0
    assert progress[-1].line().startswith("model.safetensors: ") and "(100%), 5 of 5 files done" in progress[-1].line()
    assert plan.rows()[-1] == ("model.safetensors", fmt_bytes(plan.files[-1].size))
    _greedy_matches_transformers(folder)


def test_cached_model_loads_with_the_stand_in_stopped(hub, monkeypatch):
    folder = resolve("tiny-gpt2", download=True)
    hub.stop()
    seen = len(hub.requests)
    assert resolve("tiny-gpt2") == folder == locate("tiny-gpt2")
    assert resolve("tiny-gpt2", download=True) == folder  # cached: --download asks nothing of the Hub
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert resolve("tiny-gpt2", download=True) == folder
    model, _ = load_hf_gpt2("tiny-gpt2")  # the loader finds the id through the same cache lookup
    assert model.config.decoder_layers == TINY["n_layer"]
    assert len(hub.requests) == seen


# -- offline, unreachable, unknown ---------------------------------------------------------------------

def test_offline_with_an_empty_cache_is_refused_in_one_line(hub, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ValueError, match="HF_HUB_OFFLINE is set") as info:
        resolve("tiny-gpt2", download=True)
    _one_line(info)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", True)  # set before huggingface_hub was imported
    with pytest.raises(ValueError, match="HF_HUB_OFFLINE is set") as info:
        resolve("tiny-gpt2", download=True)
    _one_line(info)
    assert hub.requests == []


def test_an_unreachable_hub_is_refused_in_one_line(hub):
    hub.stop()  # the port is closed: connection refused
    with pytest.raises(ValueError, match=r"cannot reach http://127\.0\.0\.1:\d+ .*refused") as info:
        resolve("tiny-gpt2", download=True)
    _one_line(info)


def test_a_silent_hub_times_out_visibly(monkeypatch):
    with socket.socket() as silent:  # accepts connections (the kernel's backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{silent.getsockname()[1]}")
        start = time.monotonic()
        with pytest.raises(ValueError, match=r"did not answer within 0\.5 s") as info:
            resolve("tiny-gpt2", download=True, timeout=0.5)
        assert time.monotonic() - start < 5
    _one_line(info)


def test_an_unknown_repo_is_named(hub):
    with pytest.raises(ValueError, match=r"--from-hf nobody/nothing: no such model on http://127") as info:
        resolve("nobody/nothing", download=True)
    _one_line(info)


def test_a_model_the_lab_cannot_open_is_refused_before_its_weights_move(hub, sources, tmp_path):
    foreign = tmp_path / "bart"
    shutil.copytree(sources["safetensors"], foreign)
    config = json.loads((foreign / "config.json").read_text())
    (foreign / "config.json").write_text(json.dumps({**config, "model_type": "bart"}))
    hub.add_repo("lab/bart", foreign)
    with pytest.raises(ValueError, match="lab/bart: config.json: model_type is 'bart'.*nothing more was fetched") \
            as info:
        resolve("lab/bart", download=True)
    _one_line(info)
    assert hub.fetched() == ["config.json"] and locate("lab/bart") is None


def test_huggingface_hub_logs_go_where_the_app_says_not_to_stderr(capfd):
    import logging

    records = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    import huggingface_hub.utils.logging  # noqa: F401 - installs huggingface_hub's stderr handler

    root = logging.getLogger("huggingface_hub")
    before = root.handlers[:], root.propagate
    assert any(isinstance(h, logging.StreamHandler) for h in before[0])  # what would print over the app
    with hub_logs_to(Keep()):
        logging.getLogger("huggingface_hub.file_download").warning("retrying")
    assert records == ["retrying"] and capfd.readouterr().err == ""
    assert (root.handlers, root.propagate) == before  # huggingface_hub's own handler is back


# -- pickles ------------------------------------------------------------------------------------------

def test_a_pickle_only_repo_needs_allow_pickle(hub, sources, cache):
    with pytest.raises(ValueError, match="only as pytorch_model.bin, a pickle; add --allow-pickle") as info:
        resolve("lab/pickle-only", download=True)
    _one_line(info)
    assert hub.fetched() == []  # listed, nothing fetched
    folder = resolve("lab/pickle-only", download=True, allow_pickle=True)
    assert hub.fetched() == ["config.json", "generation_config.json", "vocab.json", "merges.txt", "pytorch_model.bin"]
    assert folder.parent.parent == cache / "models--lab--pickle-only"
    _greedy_matches_transformers(folder)


# -- cancelling ---------------------------------------------------------------------------------------

def test_a_cancelled_download_leaves_nothing_a_load_accepts_and_a_retry_completes(hub, cache, monkeypatch):
    monkeypatch.setattr(hf_constants, "DOWNLOAD_CHUNK_SIZE", 4096)  # many chunks, so we stop inside the weights
    plan = plan_download("tiny-gpt2")
    weights = plan.files[-1]
    before_weights = plan.total_bytes - weights.size
    stop = {"now": False}

    def on_progress(p) -> None:
        stop["now"] = p.file == weights.name and p.done - before_weights > weights.size // 2

    with pytest.raises(DownloadCancelled, match="download cancelled at .* nothing partial was kept") as info:
        fetch(plan, on_progress=on_progress, should_stop=lambda: stop["now"])
    _one_line(info)
    root = cache / "models--tiny-gpt2"
    assert sorted(p.name for p in plan.folder.iterdir()) == sorted(NEEDED[:-1])  # no weights in the snapshot
    assert not list(root.rglob("*.incomplete")) and not (root / "refs" / "main").exists()
    assert len(list((root / "blobs").iterdir())) == len(NEEDED) - 1  # the half-fetched weights were discarded
    with pytest.raises(ValueError, match="only part of it is in the local cache .* add --download to finish it"):
        resolve("tiny-gpt2")
    with pytest.raises(ValueError, match="only part of it is in the local cache"):  # the loader asks the same lookup
        load_hf_gpt2("tiny-gpt2")

    fetched_before = len(hub.fetched())
    retry = plan_download("tiny-gpt2")
    assert [f.cached for f in retry.files] == [True] * (len(NEEDED) - 1) + [False]
    assert retry.to_fetch_bytes == weights.size and "still to fetch" in retry.summary()
    folder = resolve("tiny-gpt2", download=True)
    assert hub.fetched()[fetched_before:] == [weights.name]  # the finished files were not fetched again
    _greedy_matches_transformers(folder)


@pytest.mark.parametrize("xet_disabled_before", [False, True])
def test_bytes_move_over_plain_http_where_a_stop_takes_effect(hub, monkeypatch, xet_disabled_before):
    """hf_xet swallows exceptions from its progress callback; fetch keeps huggingface_hub off it while it runs."""
    monkeypatch.setattr(hf_constants, "HF_HUB_DISABLE_XET", xet_disabled_before)
    during = set()
    resolve("tiny-gpt2", download=True, on_progress=lambda p: during.add(hf_constants.HF_HUB_DISABLE_XET))
    assert during == {True}
    assert hf_constants.HF_HUB_DISABLE_XET is xet_disabled_before


def test_cancelling_before_the_first_file_fetches_nothing(hub, cache):
    with pytest.raises(DownloadCancelled):
        resolve("tiny-gpt2", download=True, should_stop=lambda: True)
    assert hub.fetched() == []
    assert locate("tiny-gpt2") is None


# -- choosing files (no server) -----------------------------------------------------------------------

SHARDS = {"config.json", "model-00002-of-00002.safetensors", "model.safetensors.index.json", "vocab.json",
          "model-00001-of-00002.safetensors", "pytorch_model.bin", "tf_model.h5", "merges.txt"}


def test_shards_come_before_their_index_and_safetensors_beat_a_pickle():
    files, pickle = select_files("x", SHARDS, allow_pickle=True)
    assert files == ["config.json", "vocab.json", "merges.txt", "model-00001-of-00002.safetensors",
                     "model-00002-of-00002.safetensors", "model.safetensors.index.json"]
    assert not pickle


@pytest.mark.parametrize("names, match", [
    ({"model.safetensors", "vocab.json"}, "has no config.json"),
    ({"config.json", "tf_model.h5", "flax_model.msgpack"}, r"no model.safetensors or pytorch_model.bin on the Hub "
                                                           r"\(it holds flax_model.msgpack, tf_model.h5\)"),
    ({"config.json", "pytorch_model.bin.index.json", "pytorch_model-00001-of-00001.bin"},
     "only as pytorch_model.bin.index.json, a pickle; add --allow-pickle"),
])
def test_repos_the_lab_cannot_use_are_refused_before_fetching(names, match):
    with pytest.raises(ValueError, match=match):
        select_files("x", names, allow_pickle=False)


@pytest.mark.parametrize("text, ok", [("gpt2", True), ("openai-community/gpt2", True), ("Qwen/Qwen2.5-0.5B", True),
                                      ("a/b/c", False), ("./gpt2", False), ("~/gpt2", False), ("/tmp/x", False),
                                      ("a--b", False), ("a..b", False), ("-gpt2", False), ("", False)])
def test_what_reads_as_a_model_id(text, ok):
    assert is_repo_id(text) is ok


def test_importing_the_hub_module_imports_neither_torch_nor_huggingface_hub():
    code = "import sys, tui_lab.hf.hub; print(sorted({'torch', 'huggingface_hub'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
