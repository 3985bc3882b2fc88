"""The Hub's failures in one line: huggingface_hub's and httpx's many-line errors -> a ValueError naming the cause.

`tui_lab.hf.hub` wraps each request in `hub_errors`; the messages start with "--from-hf <id>:", as every
line of that module does. Importing this module imports neither huggingface_hub nor httpx.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def hub_errors(repo_id: str, endpoint: str, timeout: float) -> Iterator[None]:
    """huggingface_hub's and httpx's many-line errors -> one ValueError line naming the cause."""
    import httpx2
    from huggingface_hub.errors import HFValidationError

    try:
        yield
    except (OSError, httpx2.HTTPError, HFValidationError) as err:
        raise ValueError(f"--from-hf {repo_id}: {_reason(err, endpoint, timeout)}") from None


def _reason(err: BaseException, endpoint: str, timeout: float) -> str:
    import httpx2
    from huggingface_hub import errors

    for cause in _chain(err):
        if isinstance(cause, errors.OfflineModeIsEnabled):
            return "HF_HUB_OFFLINE is set, so nothing is downloaded; unset it to fetch the model"
        if isinstance(cause, errors.GatedRepoError):
            return f"the model is gated on {endpoint}: accept its terms there, then set HF_TOKEN"
        if isinstance(cause, errors.RepositoryNotFoundError):
            return f"no such model on {endpoint} (a private one needs HF_TOKEN)"
        if isinstance(cause, errors.RevisionNotFoundError):
            return f"{endpoint} has no such revision of it"
        if isinstance(cause, httpx2.TimeoutException):
            return (f"{endpoint} did not answer within {timeout:g} s; check the network, or set HF_HUB_OFFLINE=1 "
                    "to use only models already in the cache")
        if isinstance(cause, httpx2.TransportError):
            return f"cannot reach {_host(cause, endpoint)} ({_first_line(cause)}); check the network or HF_ENDPOINT"
        if isinstance(cause, errors.HfHubHTTPError) and cause.response is not None:
            return f"{endpoint} answered HTTP {cause.response.status_code}"
    return f"download failed ({type(err).__name__}: {_first_line(err)})"


def _host(err: BaseException, endpoint: str) -> str:
    """The server the failed request went to (a CDN, a mirror), else the endpoint."""
    try:
        url = err.request.url  # httpx raises RuntimeError when the error carries no request
        return f"{url.scheme}://{url.netloc.decode()}"
    except (AttributeError, RuntimeError):
        return endpoint


def _chain(err: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        yield err
        err = err.__cause__ or err.__context__


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
