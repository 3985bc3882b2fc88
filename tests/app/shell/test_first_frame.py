"""The first frame: the preset's count, no torch, no view composed yet; the views and the model follow.

benchmarks/interface/launch_time.py times it in tmux against a bare Textual app; these tests pin what makes it fast.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from app_support import SIZE, app_for, screen_text, wait_for, wait_ready

from tui_lab.analysis import count_params
from tui_lab.app.app import VIEWS
from tui_lab.presets import load_preset

# Run in a fresh interpreter: the test process may have imported torch already.
COUNT = f"{count_params(load_preset('gpt2-toy')).total:,}"
PROBE = """
import asyncio, json, sys
sys.path.insert(0, {tests!r})
from app_support import SIZE, app_for, screen_text, wait_ready
from textual.app import App

seen = {{}}
LATER = ("tui_lab.app.views", "tui_lab.hf", "textual_plotext", "plotext")  # imported after the first frame
display = App._display

def probe(self, screen, renderable):  # every frame passes here (headless: not written); keep the first
    if renderable is not None and not self._batch_count and "screen" not in seen:
        seen.update(torch="torch" in sys.modules, screen=screen_text(self), views=[v.id for v in self.views()],
                    later=[m for m in sys.modules if m.startswith(LATER)])
    display(self, screen, renderable)

App._display = probe

async def main():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        seen.update(after=[v.id for v in app.views()], torch_after="torch" in sys.modules)

asyncio.run(main())
print(json.dumps(seen))
"""


def test_first_frame_shows_the_count_before_torch_and_before_any_view():
    code = PROBE.format(tests=str(Path(__file__).resolve().parents[2] / "support"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert f"{COUNT} parameters" in seen["screen"]
    assert "1 Architecture" in seen["screen"] and "6 Speed" in seen["screen"]
    assert seen["torch"] is False
    assert seen["views"] == []  # composing the Architecture view first cost 3x a bare app's whole start
    assert seen["later"] == []
    assert seen["after"] == [f"view-{spec.id}" for spec in VIEWS] and seen["torch_after"] is True


async def test_views_mount_after_the_first_frame_and_work():
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert not app.query("#first-frame")  # the count line gave way to the Architecture view
        assert screen_text(app).count(f"{COUNT} parameters") == 1 and app.query_one("#f-d_model").value == "128"
        await pilot.press("f2")  # a view mounted after the first frame, driven with the live model
        attention = app.view("attention")
        attention.set_inputs("hello there")
        await wait_for(pilot, lambda: attention.grids)
        assert app.query_one("#views").active == "attention"
