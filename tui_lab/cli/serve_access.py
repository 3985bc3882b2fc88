"""Who may reach the lab's web server, and with what: the Host and Origin rules, the session tokens only the server
issues, and the terminal size a page may ask for: checks of a request, no serving (serve_server.py applies them to
each request).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import os
import re
import secrets
from pathlib import Path
from urllib.parse import urlsplit

from textual_serve.server import to_int

TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")
# The largest terminal a page may ask for: a 30000x30000 resize grew an app 0.6 -> 4.7 GB (issue 37); 500x200 is
# wider than a 4K screen at the smallest font xterm.js draws legibly, and grows an app by ~30 MB.
MAX_WIDTH, MAX_HEIGHT = 500, 200


def origin_of(url: str) -> str:
    """scheme://host:port of a URL, lower case, the port always written (so :80 and no port compare equal)."""
    parts = urlsplit(url.strip())
    scheme = (parts.scheme or "http").lower()
    host = (parts.hostname or "").lower()
    port = parts.port or (443 if scheme in ("https", "wss") else 80)
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port}"


def allowed_origins(port: int, public_url: str, extra: list[str]) -> frozenset[str]:
    loopback = [f"http://{name}:{port}" for name in ("127.0.0.1", "localhost", "[::1]")]
    return frozenset(origin_of(url) for url in (*loopback, public_url, *extra))


def terminal_size(width: object, height: object) -> tuple[int, int]:
    """The size a page asked for, clamped to 1..MAX_WIDTH x 1..MAX_HEIGHT (80x24 where it is not a number)."""
    return (max(1, min(to_int(str(width), 80), MAX_WIDTH)), max(1, min(to_int(str(height), 24), MAX_HEIGHT)))


class Tokens:
    """Session tokens only this server issues: a random part and its HMAC under a key kept in the root (0600), so a
    reload finds its session after a restart and a token a client made up is refused."""

    def __init__(self, root: Path) -> None:
        key_file = root / ".session-key"
        try:
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            self.key = key_file.read_bytes()
        else:
            self.key = secrets.token_bytes(32)
            with os.fdopen(fd, "wb") as out:
                out.write(self.key)

    def _mac(self, nonce: str) -> str:
        digest = hmac.new(self.key, nonce.encode(), hashlib.sha256).digest()[:12]
        return base64.urlsafe_b64encode(digest).decode()

    def issue(self) -> str:
        nonce = secrets.token_urlsafe(12)  # 16 characters
        return nonce + self._mac(nonce)

    def valid(self, token: str) -> bool:
        return len(token) == 32 and hmac.compare_digest(token[16:], self._mac(token[:16]))


def is_loopback(address: str | None) -> bool:
    try:
        return address is not None and ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


def with_port(host: str, scheme: str) -> str:
    """A Host header with its port written out (a browser leaves out :80 and :443)."""
    parts = urlsplit(f"//{host}")
    name = (parts.hostname or "").lower()
    name = f"[{name}]" if ":" in name else name
    try:
        port = parts.port
    except ValueError:
        return ""
    return f"{name}:{port or (443 if scheme == 'https' else 80)}"
