"""`tui-lab generate` and `tui-lab bench generate`, driven through the CLI dispatcher."""

from __future__ import annotations

import json

import pytest
import torch

from tui_lab.cli import main
from tui_lab.data.byte_codec import ByteCodec


def run_json(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_byte_codec_round_trips_text_and_defangs_noise():
    codec = ByteCodec(256)
    assert codec.decode(codec.encode("héllo\n")) == "héllo\n"
    assert ByteCodec(64).encode("A") == [65 % 64]
    assert codec.decode([27, 91, 50, 74]) == "\ufffd[2J"  # an escape byte cannot clear the screen
    assert codec.decode([0xC3]) == "\ufffd"  # half a UTF-8 character


def test_generate_json_from_a_preset(capsys):
    out = run_json(capsys, "generate", "--preset", "gpt2-toy", "--prompt", "Hi there", "--max-new-tokens", "6",
                   "--temperature", "0", "--json")
    assert out["prompt_ids"] == list(b"Hi there")
    assert len(out["ids"]) == out["new_tokens"] == 6
    assert out["completion"] == ByteCodec(256).decode(out["ids"])
    assert out["tokenizer"] == "bytes" and out["slid"] is False
    uncached = run_json(capsys, "generate", "--preset", "gpt2-toy", "--prompt", "Hi there", "--max-new-tokens", "6",
                        "--temperature", "0", "--no-cache", "--json")
    assert uncached["ids"] == out["ids"]


def test_an_empty_prompt_starts_a_decoder_only_model_from_bos(capsys):
    out = run_json(capsys, "generate", "--preset", "gpt2-toy", "--prompt", "", "--max-new-tokens", "3", "--json")
    assert out["prompt_ids"] == [ByteCodec.bos_id] and len(out["ids"]) == 3


def test_generate_seeds_sampling_and_runs_beam_search_on_the_encoder_decoder(capsys):
    args = ["generate", "--preset", "transformer-2017-toy", "--prompt", "drei", "--max-new-tokens", "5", "--json"]
    first = run_json(capsys, *args, "--seed", "3", "--top-k", "5", "--top-p", "0.9")
    again = run_json(capsys, *args, "--seed", "3", "--top-k", "5", "--top-p", "0.9")
    assert first["ids"] == again["ids"] and len(first["ids"]) == 5
    beam = run_json(capsys, *args, "--beam-size", "3")
    assert len(beam["ids"]) == 5


def test_generate_human_output_streams_the_text(capsys):
    assert main(["generate", "--preset", "gpt2-toy", "--prompt", "abc", "--max-new-tokens", "4",
                 "--temperature", "0"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("abc")
    assert "4 tokens in" in captured.err


def test_generate_from_a_checkpoint_uses_its_tokenizer(tmp_path, capsys):
    checkpoint = pytest.importorskip("tui_lab.checkpoint")
    from tui_lab import build_model, load_preset
    from tui_lab.data.tokenizers import char_tokenizer

    tokenizer = char_tokenizer("hello world")
    model = build_model(load_preset("gpt2-toy", vocab=tokenizer.vocab_size, layers=1, d_model=32, d_ff=64))
    checkpoint.save_checkpoint(tmp_path / "ckpt", model, tokenizer)
    out = run_json(capsys, "generate", "--checkpoint", str(tmp_path / "ckpt"), "--prompt", "hello",
                   "--max-new-tokens", "5", "--temperature", "0", "--json")
    assert out["prompt_ids"] == tokenizer.encode("hello") and out["tokenizer"] == "char"
    assert out["completion"] == tokenizer.decode(out["ids"])
    assert out["unknown"] == []
    with_unknown = run_json(capsys, "generate", "--checkpoint", str(tmp_path / "ckpt"), "--prompt", "help",
                            "--max-new-tokens", "2", "--json")
    assert with_unknown["unknown"] == ["p"]  # mapped to <unk>, and said so


def test_bench_generate_json(capsys):
    out = run_json(capsys, "bench", "generate", "--preset", "transformer-2017-toy", "--new-tokens", "3", "6",
                   "--prompt-len", "4", "--repeats", "1", "--json")
    assert [r["new_tokens"] for r in out["runs"]] == [3, 6]
    assert all(r["identical"] and r["speedup"] > 0 for r in out["runs"])
    assert {"cached_s", "uncached_s", "speedup", "identical"} <= set(out["runs"][0])


def test_bench_generate_table(capsys):
    assert main(["bench", "generate", "--preset", "gpt2-toy", "--new-tokens", "2", "--repeats", "1"]) == 0
    assert "speedup" in capsys.readouterr().out


@pytest.mark.parametrize("argv, needle", [
    (["generate", "--preset", "gpt2-toy", "--prompt", "x", "--max-new-tokens", "0"], "--max-new-tokens"),
    (["generate", "--preset", "gpt2-toy", "--prompt", "x", "--temperature", "-1"], "--temperature"),
    (["generate", "--preset", "gpt2-toy", "--prompt", "x", "--top-p", "2"], "--top-p"),
    (["generate", "--preset", "gpt2-toy", "--prompt", "x", "--beam-size", "0"], "--beam-size"),
    (["generate", "--preset", "transformer-2017-toy", "--prompt", ""], "--prompt"),
    (["generate", "--preset", "no-such", "--prompt", "x"], "no-such"),
    (["generate", "--checkpoint", "no/such/folder", "--prompt", "x"], "no/such/folder"),
    (["generate", "--preset", "gpt2-toy", "--prompt", "x", "--device", "warp-drive"], "--device"),
    (["bench", "generate", "--preset", "gpt2-toy", "--new-tokens", "0"], "--new-tokens"),
    (["bench", "generate", "--preset", "gpt2-toy", "--repeats", "0"], "--repeats"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err and "Traceback" not in err


def test_cuda_request_without_cuda_is_a_clear_error(capsys):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert main(["generate", "--preset", "gpt2-toy", "--prompt", "x", "--device", "cuda"]) == 2
    assert "CUDA is not available" in capsys.readouterr().err


def test_generate_names_the_seed_it_sampled_with_and_another_draws_anew(capsys):
    """Issue 36 item 17: a sampled run says its seed (a rerun with it reproduces the text, another draws anew);
    greedy draws nothing and names no seed."""
    args = ["generate", "--preset", "gpt2-toy-english", "--prompt", "In the morning, Anna walked to",
            "--max-new-tokens", "12", "--temperature", "0.8"]
    texts = {}
    for seed in ("1", "1", "2"):
        assert main([*args, "--seed", seed]) == 0
        captured = capsys.readouterr()
        assert f"seed {seed} (--seed {int(seed) + 1} draws another)" in " ".join(captured.err.split())
        texts.setdefault(seed, set()).add(captured.out)
    assert len(texts["1"]) == 1 and texts["1"] != texts["2"]
    greedy = run_json(capsys, *args[:-2], "--temperature", "0", "--json")
    assert greedy["seed"] is None
    assert run_json(capsys, *args, "--seed", "5", "--json")["seed"] == 5
