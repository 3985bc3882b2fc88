"""Opening a Hugging Face model as the live model: at once when it is on disk, after a confirmed
download (widgets/download_modal.py) when it is not. The previous live model stays until the new one is
installed; every failure is one line, as a notification and in the status line.
"""

from __future__ import annotations

from typing import Any

from tui_lab.app.modals.download import DownloadModal, DownloadOutcome
from tui_lab.app.modals.hub_id import HubIdModal, HubRequest
from tui_lab.app.origin import origin_subtitle
from tui_lab.errors import one_line
from tui_lab.hf.folder import is_repo_id
from tui_lab.hf.hub import locate
from tui_lab.served import ServedPolicy


def open_from_hub(app: Any, spec: str, *, download: bool = False, allow_pickle: bool = False) -> None:
    """Load `spec` (a folder, a cache root or a model id) as the live model, asking before any download.

    `download` (the launch's --download) skips the question, not the file list or the progress bar. In a served
    session (`tui_lab.served`) a folder is a name inside the session's own folder, and an uncached id downloads
    only as the operator allowed (serve --download, --allow-download-any, --allow-pickle): the page cannot widen it.
    """
    policy = ServedPolicy.from_env()
    try:
        spec = _served_spec(policy, spec) if policy is not None else spec
        folder = locate(spec)  # local only: no network
        if folder is None and policy is not None:
            policy.check_download(spec, allow_pickle)
        elif folder is not None and policy is not None:
            policy.check_weights(folder, spec)  # cached or in the session's folder: the banner's promise holds
    except ValueError as err:
        _failed(app, one_line(err))
        return
    if folder is not None:
        app.live.start_load_hf(app, spec)
        return
    if app.live.model is None and not app.live.building:  # at launch: something to look at while it downloads
        app.rebuild_model(app.live.config, f"preset {app.live.config.name}")
    app.push_screen(DownloadModal(spec, allow_pickle=allow_pickle, start=download),
                    callback=lambda outcome: _downloaded(app, outcome))


def _served_spec(policy: ServedPolicy, spec: str) -> str:
    """The operator's own --from-hf as given; a model id stays an id (the server's cache is shared, read-only);
    anything else is a folder in the session's own folder."""
    if spec == policy.from_hf or (is_repo_id(spec) and not (policy.home / spec).exists()):
        return spec
    return str(policy.path(spec, "model folder"))


def ask_for_hub_model(app: Any) -> None:
    """The palette's "Open a Hugging Face model...": an id in a modal, then the same path as --from-hf."""

    def chosen(request: HubRequest | None) -> None:
        if request is not None:
            open_from_hub(app, request.spec, allow_pickle=request.allow_pickle)

    app.push_screen(HubIdModal(allow_pickle=app.hf_options.get("allow_pickle", False)),
                    callback=chosen)


def _downloaded(app: Any, outcome: DownloadOutcome) -> None:
    if outcome.folder is not None:
        app.notify(f"{outcome.repo_id} downloaded; loading it (the current model stays live until then)")
        app.live.start_load_hf(app, outcome.repo_id)  # by id: the status names the model, not a snapshot hash
    elif outcome.cancelled:
        app.notify(f"{outcome.error}; the live model is unchanged", title="download cancelled", severity="warning")
        app.sub_title = f"live: {origin_subtitle(app.live)} · download cancelled"
    else:
        _failed(app, outcome.error or f"{outcome.repo_id}: download failed")


def _failed(app: Any, error: str) -> None:
    """The error in a notification; the header names the model that stays live first, then the error, which
    its room may cut (issue 36 item 14: it kept "--from-hf gpt2: cannot reach ..." and never said the shipped
    toy was live). A model still building names itself when it is installed (`on_model_ready`)."""
    app.notify(error, title="Hugging Face", severity="error", timeout=8)
    live = origin_subtitle(app.live) if app.live.model is not None else app.live.status
    app.sub_title = f"live: {live} · {error}"
