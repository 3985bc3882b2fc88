"""Chat templates are bounded, not only sandboxed (issue 37, item 4): a template that asks for too much text, too
many loops or a range too long ends in one line within seconds, its memory capped, and the lab goes on.
Before: `{{ "x" * 10**10 }}` reached 21.3 GB, nested `range(100000)` loops ran past 90 s, `range(10**9)` ended in
a raw OverflowError traceback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_support import run_cli
from hf_family_fixtures import save_instruct

from tui_lab.hf.chat import ChatTemplate
from tui_lab.hf.chat_sandbox import MEMORY_BYTES

BOMBS = {
    "repeat": ('{{ "x" * 10**10 }}', r"a repetition would make 10,000,000,000 items; the cap is 4,000,000"),
    "loops": ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
              r"it ran past (3 s of CPU|its bounds|10 s)"),  # CPU cap, or the wall clock on a busy machine
    "range": ("{{ range(10**9) | length }}", r"OverflowError: Range too big"),
    "method": ('{{ "x".ljust(10**10) }}', r"it asked for more than 512 MiB of memory"),
    "doubling": ('{% set s = namespace(v="xxxxxxxx") %}{% for i in range(40) %}{% set s.v = s.v ~ s.v %}'
                 "{% endfor %}{{ s.v | length }}", r"it asked for more than 512 MiB of memory|the rendered text"),
    "power": ("{{ 10 ** (10 ** 10) }}", r"a power would pass 100,000 bits"),
    "sum": ('{% set s = namespace(v="x" * 3000000) %}{{ s.v + s.v }}', r"a sum would make 6,000,000 items"),
}


@pytest.mark.parametrize("name", list(BOMBS))
def test_a_template_bomb_ends_in_one_line_within_seconds(name):
    source, reason = BOMBS[name]
    start = time.monotonic()
    with pytest.raises(ValueError) as caught:
        ChatTemplate(source, "chat_template.jinja").render([{"role": "user", "content": "hi"}])
    message = str(caught.value)
    assert time.monotonic() - start < 15  # 3 s of CPU at most, plus the child's start on a busy machine
    assert message.startswith("chat_template.jinja: the chat template failed (") and "\n" not in message
    assert re.search(reason, message), message


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads the peak memory from Linux's /proc")
def test_memory_bombs_stay_under_the_cap():
    """Rendered from a fresh process, so that its children are the sandbox's alone: none held more than the cap,
    and the process that asked stayed small (its own peak, VmHWM: ru_maxrss would carry pytest's over the fork)."""
    code = (f"import json, resource\nfrom tui_lab.hf.chat import ChatTemplate\n"
            f"for source in {[BOMBS[name][0] for name in ('repeat', 'method', 'doubling')]!r}:\n"
            f"    try:\n        ChatTemplate(source, 'chat_template.jinja').render([])\n"
            f"    except ValueError:\n        pass\n"
            f"peak = [line for line in open('/proc/self/status') if line.startswith('VmHWM')][0].split()[1]\n"
            f"print(json.dumps([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, int(peak) * 1024]))")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    children, itself = json.loads(done.stdout)
    assert children <= MEMORY_BYTES + (32 << 20) and itself < 512 << 20  # itself: the lab and torch imported


def test_generate_chat_with_a_bomb_is_one_line_and_exit_2(tmp_path, capsys):
    save_instruct(tmp_path)
    (tmp_path / "chat_template.jinja").write_text(BOMBS["repeat"][0])
    done = run_cli(capsys, "generate", "--from-hf", str(tmp_path), "--chat", "--prompt", "hi", "--json")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("tui-lab: error: chat_template.jinja: the chat template failed (a repetition")
    assert len(done.stderr.splitlines()) == 1


def test_an_ordinary_template_still_renders_as_before():
    template = ChatTemplate("{{ bos_token }}{% for m in messages %}{{ m.role ~ ': ' ~ m.content * 2 }}{% endfor %}"
                            "{% for i in range(3) %}{{ i }}{% endfor %}", "chat_template.jinja", {"bos_token": "<s>"})
    assert template.render([{"role": "user", "content": "ab"}]) == "<s>user: abab012"
