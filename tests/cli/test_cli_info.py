import json
import subprocess
import sys

import pytest


def tui_lab(*args):
    return subprocess.run([sys.executable, "-m", "tui_lab.cli", *args], capture_output=True, text=True)


def test_info_json_counts_gpt2_small():
    out = tui_lab("info", "--preset", "gpt2-small", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["total_params"] == 124_439_808
    assert data["breakdown"]["embeddings"] == 38_597_376 + 786_432


def test_info_applies_shortcuts_and_set():
    out = tui_lab("info", "--preset", "transformer-2017-base", "--layers", "1", "--d-model", "64", "--heads", "2",
                  "--d-ff", "128", "--vocab", "100", "--set", "positions=rope", "--json")
    data = json.loads(out.stdout)
    assert data["config"]["encoder_layers"] == 1 and data["config"]["positions"] == "rope"
    assert data["total_params"] == 100 * 64 + 64 * (4 * 64 + 4) * 3 + (2 * 64 * 128 + 128 + 64) * 2 + 5 * 128


def test_info_human_output_shows_the_count_and_the_trace():
    out = tui_lab("info", "--preset", "transformer-2017-base", "--seq-len", "7")
    assert "63,082,496" in out.stdout and "65M" in out.stdout
    assert "(1, 7, 512)" in out.stdout


def test_an_encoders_memory_names_no_kv_cache_and_a_decoders_does():
    encoder = tui_lab("info", "--preset", "bert-toy").stdout
    assert "no KV cache" in " ".join(encoder.split()) and "B/token" not in encoder
    assert "B/token" in " ".join(tui_lab("info", "--preset", "gpt2-toy").stdout.split())


def test_bad_input_is_one_line_and_exit_2():
    cases = [
        (["--preset", "nope"], "known presets"),
        (["--d-model", "100", "--heads", "3"], "d_model (100) must be divisible by heads (3)"),
        (["--layers", "0"], "layers (0) must be a positive integer"),
        (["--heads", "x"], "--heads"),
        (["--set", "colour=blue"], "unknown field 'colour'"),
        (["--set", "dropout=lots"], "dropout must be a number"),
        (["--preset", "vit-toy", "--seq-len", "40"], "--seq-len (40) must be 17 for input 'patches'"),
    ]
    for args, message in cases:
        out = tui_lab("info", *args)
        assert out.returncode == 2, args
        assert out.stderr.count("\n") == 1 and message in out.stderr, out.stderr
        assert "Traceback" not in out.stderr


@pytest.mark.parametrize("fmt", [[], ["--json"]])
def test_a_closed_pipe_is_not_a_traceback(fmt):
    proc = subprocess.Popen([sys.executable, "-m", "tui_lab.cli", "info", "--preset", "gpt2-small", *fmt],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # like `| head` that has already exited when the output comes
    err = proc.stderr.read().decode()
    assert proc.wait() != 0
    assert "Traceback" not in err and "BrokenPipeError" not in err
