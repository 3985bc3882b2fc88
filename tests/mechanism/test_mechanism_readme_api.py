"""The README's Python example ("From Python: TransformerLens's calls") runs as written, and prints what its
comments say."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
HEADING = "### From Python: TransformerLens's calls"


def readme_example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index(HEADING):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # it saves a cache file
    code = readme_example()
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - the README's own code
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "['␣Tom', '␣walked', '␣to', '␣the']"
    assert printed[1].startswith("{'0_pre': '␣the'") and printed[1].endswith("'final_post': '␣hill'}")
    assert printed[2] == "L1H1"
    assert (tmp_path / "prompt.safetensors").is_file() and "blocks.0.attn.hook_z" in namespace["cache"]
