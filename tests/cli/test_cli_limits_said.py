"""What a command caps or what it will cost is said, never done in silence (issue 37): `ablate --batch` past the
held-out windows there are says how many it measured; a large beam search says its cost before it starts."""

from __future__ import annotations

import json

from cli_support import run_cli

TEXT = "The old king walked to the river and sat down by the water. " * 30


def test_ablate_says_when_the_held_out_split_has_fewer_windows_than_asked(capsys, tmp_path):
    text = tmp_path / "prose.txt"
    text.write_text(TEXT, encoding="utf-8")
    done = run_cli(capsys, "ablate", "--preset", "gpt2-toy-english", "--data", str(text), "--seq-len", "8",
                   "--batch", "1000000", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    rows = data["windows"]  # the batch measured ("rows" are the table's row labels: issue 40 item 2)
    assert 1 <= rows < 1000000
    note = f"--batch 1000000: the held-out split holds only {rows} windows of 8 tokens; measured on those {rows}"
    assert data["note"] == note and done.stderr == f"tui-lab: note: {note}\n"
    done = run_cli(capsys, "ablate", "--preset", "gpt2-toy-english", "--data", str(text), "--seq-len", "8",
                   "--batch", str(rows), "--json")
    assert "note" not in json.loads(done.stdout) and done.stderr == ""  # all it asked for: nothing to say


def test_a_costly_beam_search_says_its_cost_before_the_first_token(capsys):
    """The issue's `generate --beam-size 1024` (64 steps of 1024 beams: 40 s and 664 MB on the probe's machine)
    said nothing first. The note comes from the model and the beam: the beams' KV cache, copied at every step."""
    from tui_lab.analysis.budget import beam_search_budget
    from tui_lab.analysis.cost import kv_cache_bytes
    from tui_lab.analysis.format import fmt_bytes
    from tui_lab.cli.generate import check_budget
    from tui_lab.generation.settings import GenerationSettings
    from tui_lab.loading import load_model

    loaded = load_model("preset", "gpt2-toy-english")
    check_budget(loaded, 3, GenerationSettings(max_new_tokens=64, beam_size=1024), yes=False)
    note = capsys.readouterr().err
    cache = kv_cache_bytes(loaded.config, 3 + 64, 1024)
    budget, _ = beam_search_budget(loaded.config, 3, 64, 1024)
    assert note == (f"tui-lab: note: --max-new-tokens 64 with --beam-size 1024: up to 64 decoding steps over 1024 "
                    f"beams; their KV cache takes about {fmt_bytes(cache)} and is copied at every step "
                    f"({fmt_bytes(cache * 64)} in all); {budget.line()} beyond the weights\n")
    assert cache > 200 * 2**20 and budget.bytes > cache  # the beams' cache is most of it
    check_budget(loaded, 3, GenerationSettings(max_new_tokens=64, beam_size=4), yes=False)
    assert capsys.readouterr().err == ""  # a small beam costs nothing worth a line
