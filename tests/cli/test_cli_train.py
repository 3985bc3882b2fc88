import json
import re

import pytest
from train_helpers import TEXT

from tui_lab.cli import main

TINY = ["--preset", "gpt2-toy", "--layers", "1", "--d-model", "32", "--heads", "2", "--d-ff", "64",
        "--batch-size", "4", "--seq-len", "16", "--device", "cpu"]


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "prose.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.strip().splitlines()]


def test_json_lines_end_with_done(capsys, text_file):
    assert main(["train", *TINY, "--data", str(text_file), "--steps", "3", "--set", "eval_every=2", "--json"]) == 0
    lines = json_lines(capsys.readouterr().out)
    assert lines[0]["event"] == "start" and "vocab set to" in lines[0]["notes"][0]
    assert [d["step"] for d in lines if d["event"] == "step"] == [1, 2, 3]
    done = lines[-1]
    assert set(done) == {"event", "step", "train_loss", "val_loss", "tokens_per_s", "mfu"} and done["event"] == "done"
    assert done["step"] == 3 and done["val_loss"] > 0 and done["tokens_per_s"] > 0
    last_step = [d for d in lines if d["event"] == "step"][-1]
    assert done["tokens_per_s"] == last_step["tokens_per_s"] and done["mfu"] == last_step["mfu"]  # one window


def test_seq2seq_done_has_exact_match_and_resume_continues(capsys, tmp_path):
    out = tmp_path / "run"
    args = ["train", "--task", "copy", "--layers", "1", "--d-model", "32", "--heads", "2", "--d-ff", "64",
            "--batch-size", "8", "--set", "eval_examples=10", "--device", "cpu", "--json"]
    assert main([*args, "--steps", "2", "--out", str(out)]) == 0
    first = json_lines(capsys.readouterr().out)
    assert first[-1]["event"] == "done" and "exact_match" in first[-1]
    assert any(d["event"] == "checkpoint" for d in first) and first[-1]["checkpoint"] == str(out)
    assert main(["train", "--resume", str(out), "--steps", "4", "--json"]) == 0
    second = json_lines(capsys.readouterr().out)
    assert [d["step"] for d in second if d["event"] == "step"] == [3, 4]
    assert second[-1]["step"] == 4 and "exact_match" in second[-1]


def test_human_output_has_a_progress_summary(capsys, text_file):
    assert main(["train", *TINY, "--data", str(text_file), "--steps", "2"]) == 0
    out = capsys.readouterr().out
    assert "done at step 2" in out and "tokens/s" in out


def test_the_progress_bar_and_the_done_line_show_the_same_tokens_per_s(capsys, text_file):
    assert main(["train", *TINY, "--data", str(text_file), "--steps", "4"]) == 0
    out = capsys.readouterr().out
    bar = re.findall(r"([\d,]+) tok/s", out)  # the bar's last render (rich prints it once, off a terminal)
    done = re.search(r"done at step 4: .*, ([\d,]+) tokens/s, MFU [\d.]+%", out)
    assert bar and done and bar[-1] == done.group(1), out


def test_a_run_without_out_says_it_was_not_saved_and_how_to_keep_it(capsys, text_file):
    assert main(["train", *TINY, "--data", str(text_file), "--steps", "2"]) == 0
    last = capsys.readouterr().out.strip().splitlines()
    said = [line for line in last if line.startswith("not saved")]
    assert len(said) == 1 and "--out DIR" in said[0]
    assert main(["train", *TINY, "--data", str(text_file), "--steps", "2", "--json"]) == 0
    assert "checkpoint" not in json_lines(capsys.readouterr().out)[-1]  # JSON: no folder named, none written


def test_a_run_with_out_says_where_it_went_and_how_to_go_on(capsys, text_file, tmp_path):
    out = tmp_path / "kept"
    assert main(["train", *TINY, "--data", str(text_file), "--steps", "2", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    said = [line for line in lines if line.startswith("saved to")]
    assert len(said) == 1 and str(out) in said[0] and f"--resume {out} --steps N" in said[0]
    assert not any(line.startswith("not saved") for line in lines) and (out / "model.safetensors").is_file()


@pytest.mark.parametrize("extra, message", [
    (["--data", "MISSING"], "does not exist"),
    (["--data", "EMPTY"], "empty"),
    (["--task", "sorting"], "task"),
    (["--steps", "0"], "steps"),
    (["--steps", "-3"], "steps"),
    (["--resume", "NOTCKPT"], "not a checkpoint"),
    (["--set", "nonsense=1"], "nonsense"),
    (["--lr", "0"], "lr"),
    (["--out", "NOTCKPT", "--steps", "1"], "not a checkpoint"),  # refused before training, not after it
    (["--out", "EMPTY", "--steps", "1"], "is a file"),
])
def test_bad_input_is_exit_2_and_one_line(capsys, tmp_path, extra, message):
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "notckpt").mkdir()
    (tmp_path / "notckpt" / "x.txt").write_text("x")
    paths = {"MISSING": str(tmp_path / "missing.txt"), "EMPTY": str(tmp_path / "empty.txt"),
             "NOTCKPT": str(tmp_path / "notckpt")}
    extra = [paths.get(a, a) for a in extra]
    assert main(["train", "--device", "cpu", "--json", *extra]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and message in err and "Traceback" not in err
    assert captured.out == ""
