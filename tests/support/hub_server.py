"""A stand-in Hugging Face Hub on 127.0.0.1: the part of the HTTP API huggingface_hub uses to list and fetch files.

Routes, as huggingface_hub 2.x calls them (hf_api.model_info, file_download.get_hf_file_metadata / http_get):
    GET  /api/models/{repo}[/revision/{rev}]?blobs=True  -> {"id", "sha", "siblings": [{rfilename, size, blobId, lfs}]}
    HEAD /{repo}/resolve/{rev}/{file}                    -> X-Repo-Commit, ETag (X-Linked-Etag for LFS), Content-Length
    GET  /{repo}/resolve/{rev}/{file}                    -> the bytes (Range: bytes=N- gives 206)
Errors carry X-Error-Code (RepoNotFound, RevisionNotFound, EntryNotFound), which huggingface_hub maps to its
exceptions. Every request is recorded, so a test can assert that none reached the server.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

LFS_SUFFIXES = (".safetensors", ".bin", ".h5", ".msgpack", ".onnx")  # stored in LFS on the real Hub
RESOLVE = re.compile(r"^/(?P<repo>[^/]+(?:/[^/]+)?)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")
INFO = re.compile(r"^/api/models/(?P<repo>[^/]+(?:/[^/]+)?)(?:/revision/(?P<rev>[^/]+))?$")


@dataclass
class Repo:
    files: dict[str, bytes]
    sha: str


@dataclass
class StandInHub:
    repos: dict[str, Repo] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path)
    server: ThreadingHTTPServer | None = None

    def add_repo(self, repo_id: str, folder: Path, extra: dict[str, bytes] | None = None) -> Repo:
        """Serve every file of `folder` (plus `extra`) as `repo_id` at one commit."""
        files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()} | (extra or {})
        sha = hashlib.sha1(b"".join(name.encode() + data for name, data in sorted(files.items()))).hexdigest()
        self.repos[repo_id] = Repo(files, sha)
        return self.repos[repo_id]

    @property
    def url(self) -> str:
        assert self.server is not None, "start() the stand-in first"
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> StandInHub:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True, name="stand-in-hub").start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def fetched(self) -> list[str]:
        """File names whose bytes were sent (GET on /resolve/), in order."""
        return [RESOLVE.match(path)["file"] for method, path in self.requests
                if method == "GET" and RESOLVE.match(path)]


def _handler(hub: StandInHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._route(body=True)

        def do_HEAD(self) -> None:
            self._route(body=False)

        def log_message(self, *args) -> None:
            """Quiet: the test reads `hub.requests`."""

        def _route(self, body: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.requests.append((self.command, path))
            if (match := INFO.match(path)) and body:
                self._info(match["repo"], match["rev"] or "main")
            elif match := RESOLVE.match(path):
                self._file(match["repo"], match["rev"], match["file"], body)
            else:
                self._error(404, "EntryNotFound" if path.startswith("/api/") else None, body)

        def _repo(self, repo_id: str, rev: str, body: bool) -> Repo | None:
            repo = hub.repos.get(repo_id)
            if repo is None:
                self._error(401, "RepoNotFound", body)  # the Hub answers 401 for unknown and private repos alike
            elif rev not in ("main", repo.sha):
                self._error(404, "RevisionNotFound", body)
            else:
                return repo
            return None

        def _info(self, repo_id: str, rev: str) -> None:
            if (repo := self._repo(repo_id, rev, True)) is None:
                return
            siblings = [_sibling(name, data) for name, data in repo.files.items()]
            payload = json.dumps({"id": repo_id, "modelId": repo_id, "sha": repo.sha, "private": False,
                                  "siblings": siblings}).encode()
            self._send(200, {"Content-Type": "application/json"}, payload, True)

        def _file(self, repo_id: str, rev: str, name: str, body: bool) -> None:
            if (repo := self._repo(repo_id, rev, body)) is None:
                return
            if name not in repo.files:
                self._error(404, "EntryNotFound", body, {"X-Repo-Commit": repo.sha})
                return
            data = repo.files[name]
            headers = {"X-Repo-Commit": repo.sha, "ETag": f'"{_etag(name, data)}"', "Accept-Ranges": "bytes"}
            if name.endswith(LFS_SUFFIXES):
                headers |= {"X-Linked-Etag": f'"{_etag(name, data)}"', "X-Linked-Size": str(len(data))}
            start = _range_start(self.headers.get("Range"))
            if start and body:
                headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
                self._send(206, headers, data[start:], body)
            else:
                self._send(200, headers, data, body)

        def _error(self, status: int, code: str | None, body: bool, extra: dict | None = None) -> None:
            headers = {"X-Error-Code": code, "X-Error-Message": code} if code else {}
            self._send(status, headers | (extra or {}), b'{"error": "not found"}', body)

        def _send(self, status: int, headers: dict[str, str], data: bytes, body: bool) -> None:
            self.send_response(status)
            for key, value in {**headers, "Content-Length": str(len(data))}.items():
                self.send_header(key, value)
            self.end_headers()
            if body:
                self.wfile.write(data)

    return Handler


def _sibling(name: str, data: bytes) -> dict:
    entry = {"rfilename": name, "size": len(data), "blobId": hashlib.sha1(data).hexdigest()}
    if name.endswith(LFS_SUFFIXES):
        entry["lfs"] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "pointerSize": 134}
    return entry


def _etag(name: str, data: bytes) -> str:
    """The Hub's: the sha256 for LFS files, the git blob id for the rest."""
    if name.endswith(LFS_SUFFIXES):
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _range_start(header: str | None) -> int:
    match = re.fullmatch(r"bytes=(\d+)-", header or "")
    return int(match[1]) if match else 0
