"""`--from-hf gpt2` with the hub out of reach, read from the rendered screen (issue 36 item 14): the error is a
notification, and the header names the shipped toy that stays live, on every view, at 80x24 and 160x48."""

from __future__ import annotations

import hub_fixtures
import pytest
from app_support import app_for, screen_lines, wait_for, wait_ready

cache = hub_fixtures.cache  # autouse: a fresh cache, no token, nothing leaves this machine

CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, the connection is refused at once


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_header_names_the_live_toy_after_an_unreachable_hub(size, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", CLOSED)
    app = app_for("--from-hf", "gpt2", "--download")
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: any("cannot reach" in str(n.message) for n in app._notifications), 60)
        await pilot.pause(0.3)
        for key in ("f2", "f5", "f1"):
            await pilot.press(key)
            await pilot.pause(0.2)
            header = screen_lines(app)[0]
            assert "shipped toy: gpt2-toy-english" in header, header
            assert header.index("shipped toy") < header.find("cannot reach") or "cannot reach" not in header
