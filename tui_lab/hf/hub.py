"""Real weights on demand: what a person typed for `--from-hf` -> a local folder, downloading only when asked.

    folder = resolve("gpt2")                          # a folder, a cache root or a cached id: no network
    plan = plan_download("gpt2")                      # one request: which files, how many bytes
    folder = fetch(plan, on_progress, should_stop)    # only what the lab reads, into the HF cache

Consent first: an uncached id is refused before any request unless `download=True`, and the size is
known (the plan) before a byte of weights moves. huggingface_hub does the transfers (it honours
HF_ENDPOINT, tokens for gated repos and the cache layout `transformers` reads); we choose the files,
their order and when to stop; config.json comes first and a model the lab cannot open (its model_type)
is refused before the weights move. Its module constants are read at import, so the environment
(HF_HOME / HF_HUB_CACHE, HF_ENDPOINT, HF_HUB_OFFLINE) is read here at call time and passed explicitly.

Nothing half-loaded: huggingface_hub writes each file under a temporary name and renames it into the
cache only when complete; we fetch the file that makes a snapshot look complete to `find_checkpoint`
(the weights, or their shard index) last, and write refs/<revision> after it. A download stopped at
any point leaves a snapshot `cached_snapshot` does not accept, and the next `fetch` skips the
finished files. Stopping takes effect after the chunk in flight (bytes move over plain HTTP, see
`hub_transfer.plain_http`); while huggingface_hub retries a vanished server (about 25 s) it waits for those retries.
Importing this module imports neither torch nor huggingface_hub. Beside it: `hub_transfer` (progress, the
stop, plain HTTP) and `hub_errors` (the Hub's failures in one line).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tui_lab.hf.folder import cache_root, cached_snapshot, find_checkpoint, hub_cache, is_repo_id
from tui_lab.hf.hub_errors import hub_errors
from tui_lab.hf.hub_plan import DownloadPlan, RemoteFile
from tui_lab.hf.hub_transfer import DownloadCancelled, Progress, Tracker, plain_http

DEFAULT_TIMEOUT = 10.0  # seconds to connect and to wait for each answer; named in the message when it runs out
FIRST = ("config.json", "generation_config.json", "tokenizer.json", "vocab.json", "merges.txt",
         "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja")
# (single file, shard index, shard extension) in the order folder.WEIGHTS prefers them; a pickle is last.
SAFETENSORS = ("model.safetensors", "model.safetensors.index.json", "safetensors")
PICKLE = ("pytorch_model.bin", "pytorch_model.bin.index.json", "bin")


def resolve(spec: str | Path, *, download: bool = False, allow_pickle: bool = False,
            on_plan: Callable[[DownloadPlan], None] | None = None,
            on_progress: Callable[[Progress], None] | None = None,
            should_stop: Callable[[], bool] | None = None, timeout: float = DEFAULT_TIMEOUT) -> Path:
    """The local folder for what a person typed; fetches an uncached model id only with `download=True`."""
    folder = locate(spec)
    if folder is not None:
        return folder
    repo_id = str(spec)
    if not download:
        raise ValueError(not_cached_message(repo_id))
    plan = plan_download(repo_id, allow_pickle=allow_pickle, timeout=timeout)
    if on_plan is not None:
        on_plan(plan)  # the CLI prints plan.summary() before the bytes move
    return fetch(plan, on_progress, should_stop, timeout)


def locate(spec: str | Path) -> Path | None:
    """A folder, a cache root or a cached id -> its folder, never touching the network; None for an uncached id.

    A path that exists (or that cannot be a model id) goes to `find_checkpoint`, whose ValueError says what is wrong.
    """
    path = Path(spec).expanduser()
    if path.exists() or not is_repo_id(str(spec)):
        return find_checkpoint(path).folder
    return cached_snapshot(str(spec))


def not_cached_message(repo_id: str) -> str:
    if cache_root(repo_id) is not None:  # snapshots without weights: a download that stopped
        return (f"--from-hf {repo_id}: only part of it is in the local cache ({hub_cache()}), an earlier download "
                "stopped; add --download to finish it")
    return (f"--from-hf {repo_id}: not in the local cache ({hub_cache()}); add --download to fetch it from the "
            "Hugging Face Hub")


def plan_download(repo_id: str, *, allow_pickle: bool = False, revision: str = "main",
                  timeout: float = DEFAULT_TIMEOUT) -> DownloadPlan:
    """List the repo (one request to the Hub) and choose the files the lab needs; ValueError in one line."""
    if not is_repo_id(repo_id):
        raise ValueError(f"--from-hf {repo_id!r}: not a model id (like gpt2 or openai-community/gpt2)")
    refuse_offline(repo_id)
    from huggingface_hub import HfApi

    endpoint = hub_endpoint()
    with hub_errors(repo_id, endpoint, timeout):
        info = HfApi(endpoint=endpoint).model_info(repo_id, revision=revision, files_metadata=True, timeout=timeout)
    if not info.sha:
        raise ValueError(f"--from-hf {repo_id}: {endpoint} did not say which commit it serves")
    sizes = {s.rfilename: (s.lfs.size if s.lfs else s.size) or 0 for s in info.siblings or ()}
    names, pickle = select_files(repo_id, sizes, allow_pickle)
    cache = hub_cache()
    snapshot = cache / f"models--{repo_id.replace('/', '--')}" / "snapshots" / info.sha
    files = tuple(RemoteFile(name, sizes[name], (snapshot / name).is_file()) for name in names)
    left_out = tuple(sorted(set(sizes) - set(names)))
    return DownloadPlan(repo_id, revision, info.sha, files, left_out, pickle, endpoint, cache)


def select_files(repo_id: str, names: dict[str, int] | set[str], allow_pickle: bool) -> tuple[list[str], bool]:
    """The files to fetch, in order (the weights last), and whether they are a pickle; ValueError otherwise."""
    names = set(names)
    if "config.json" not in names:
        raise ValueError(f"--from-hf {repo_id}: the repo has no config.json, so it is not a model the lab can open")
    weights, pickle = _weights(names, *SAFETENSORS), False
    if weights is None:
        weights, pickle = _weights(names, *PICKLE), True
        if weights is None:
            found = sorted(n for n in names if "/" not in n and n.endswith((".h5", ".msgpack", ".onnx", ".gguf")))
            held = f"it holds {', '.join(found)}" if found else "it holds no weights at its top level"
            raise ValueError(f"--from-hf {repo_id}: no model.safetensors or pytorch_model.bin on the Hub ({held})")
        if not allow_pickle:
            raise ValueError(f"--from-hf {repo_id}: its weights exist only as {weights[-1]}, a pickle; add "
                             "--allow-pickle to fetch them (they are still read with weights_only, which runs no code)")
    return [*(n for n in FIRST if n in names), *weights], pickle


def _weights(names: set[str], single: str, index: str, ext: str) -> list[str] | None:
    if single in names:
        return [single]
    if index not in names:
        return None
    shard = re.compile(rf"{re.escape(single.rsplit('.', 1)[0])}-\d+-of-\d+\.{ext}")
    return [*sorted(n for n in names if shard.fullmatch(n)), index]  # the index last: it marks the set complete


def fetch(plan: DownloadPlan, on_progress: Callable[[Progress], None] | None = None,
          should_stop: Callable[[], bool] | None = None, timeout: float = DEFAULT_TIMEOUT) -> Path:
    """Download the plan's files into the cache, in order; the snapshot folder, complete.

    Raises DownloadCancelled when `should_stop()` turns true (checked before each file and after each
    chunk), ValueError in one line when the Hub cannot be reached or refuses.
    """
    refuse_offline(plan.repo_id)
    from huggingface_hub import hf_hub_download

    tracker = Tracker(plan, on_progress, should_stop)
    bar = tracker.bar_class()
    with plain_http():
        for file in plan.files:
            tracker.begin(file)
            with hub_errors(plan.repo_id, plan.endpoint, timeout):
                hf_hub_download(plan.repo_id, file.name, revision=plan.commit, cache_dir=plan.cache,
                                endpoint=plan.endpoint, etag_timeout=timeout, tqdm_class=bar)
            tracker.end(file)
            if file.name == "config.json":
                _check_config(plan)  # a model the lab cannot open is refused before its weights move
    _write_ref(plan)
    return find_checkpoint(plan.folder).folder


def _check_config(plan: DownloadPlan) -> None:
    """The fetched config.json must describe a model the lab can open (`tui_lab.hf.families`)."""
    from tui_lab.hf.config import read_config_json
    from tui_lab.hf.families import hf_model_config

    try:
        hf_model_config(read_config_json(plan.folder / "config.json"), plan.repo_id)
    except ValueError as err:
        raise ValueError(f"--from-hf {plan.repo_id}: {err}; nothing more was fetched") from None



@contextmanager
def hub_logs_to(handler: logging.Handler) -> Iterator[None]:
    """huggingface_hub's log records go to `handler` alone while the block runs.

    Its import installs a handler holding the terminal's stderr, which would print over a full-screen app
    (the app passes a handler to its own log). Imported here, inside the block's thread, so the app's first
    frame never waits for huggingface_hub.
    """
    import huggingface_hub.utils.logging  # noqa: F401 - its import installs the stderr handler replaced here

    logger = logging.getLogger("huggingface_hub")
    saved = logger.handlers[:], logger.propagate
    logger.handlers, logger.propagate = [handler], False
    try:
        yield
    finally:
        logger.handlers, logger.propagate = saved


def hub_endpoint() -> str:
    """HF_ENDPOINT as set now; empty counts as unset (huggingface_hub would send requests to '://')."""
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT or "https://huggingface.co").rstrip("/")


def offline() -> bool:
    """HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) as huggingface_hub reads it, but read now, not at its import."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.upper() in {"1", "ON", "YES", "TRUE"}


def refuse_offline(repo_id: str) -> None:
    """ValueError in one line when HF_HUB_OFFLINE forbids fetching `repo_id` (the app's launch asks before starting)."""
    if offline():
        raise ValueError(f"--from-hf {repo_id}: not in the local cache ({hub_cache()}) and HF_HUB_OFFLINE is set, "
                         "so nothing is downloaded; unset it to fetch the model")


def _write_ref(plan: DownloadPlan) -> None:
    """refs/<revision> -> commit, written last and atomically: the cache now names a complete snapshot."""
    if plan.revision == plan.commit:
        return
    ref = plan.folder.parent.parent / "refs" / plan.revision
    ref.parent.mkdir(parents=True, exist_ok=True)
    tmp = ref.with_name(f".{ref.name}.{os.getpid()}.tmp")
    tmp.write_text(plan.commit, encoding="utf-8")
    os.replace(tmp, ref)


__all__ = ["DEFAULT_TIMEOUT", "DownloadCancelled", "DownloadPlan", "Progress", "RemoteFile", "fetch", "hub_endpoint",
           "hub_logs_to", "locate", "not_cached_message", "offline", "plan_download", "refuse_offline", "resolve",
           "select_files"]
