"""Our cached greedy generation vs Hugging Face `GPT2LMHeadModel.generate` on the same GPT-2 shape.

Both models are built from the gpt2-toy numbers (layers, width, heads, d_ff, vocab, positions) with
random weights; both decode greedily with a KV cache for the same number of new tokens from the same
prompt (HF's `min_new_tokens` rules out an early stop), timed alternately. Prints tokens/s of each and the
ratio at torch's default threads (issue 10's row), on the thread count the decode policy chooses for our
cached path (both models on it), and in a child process started with OMP_NUM_THREADS=1. Last line: JSON.

    python benchmarks/agreement/generate_vs_hf.py [--new-tokens 200] [--prompt-len 16] [--repeats 5] [--no-reference]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from transformers import GPT2Config, GPT2LMHeadModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "speed"))  # one_thread, run from anywhere
from one_thread import add_reference_options, machine_line, reference_argv, rerun_with_one_thread  # noqa: E402

from tui_lab import build_model, load_preset
from tui_lab.generation import generate
from tui_lab.generation.threads import decode_threads, torch_threads


def hf_twin(preset: str) -> GPT2LMHeadModel:
    """A transformers GPT-2 with the preset's numbers (random weights, dropout off)."""
    c = load_preset(preset)
    config = GPT2Config(vocab_size=c.vocab, n_positions=c.max_len, n_embd=c.d_model, n_layer=c.decoder_layers,
                        n_head=c.heads, n_inner=c.d_ff, activation_function="gelu_new", layer_norm_epsilon=c.norm_eps,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0,
                        pad_token_id=0)
    return GPT2LMHeadModel(config).eval()


def greedy_runs(ours: torch.nn.Module, theirs: GPT2LMHeadModel, prompt: torch.Tensor,
                n: int) -> tuple[Callable[[], torch.Tensor], Callable[[], torch.Tensor]]:
    """Our cached greedy decoding and `theirs.generate` (KV cache on both), each exactly `n` new tokens."""

    def run_ours() -> torch.Tensor:
        return generate(ours, prompt, n, temperature=0.0, use_cache=True)

    def run_theirs() -> torch.Tensor:
        with torch.inference_mode():  # min_new_tokens: an early stop would time fewer tokens
            return theirs.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=n,
                                   min_new_tokens=n, do_sample=False, use_cache=True)

    return run_ours, run_theirs


def paired_medians(ours: Callable[[], object], theirs: Callable[[], object], repeats: int,
                   device: torch.device) -> tuple[float, float]:
    """Median wall time of each over `repeats` runs, alternating (a shared machine's load hits both alike),
    after one untimed warm-up of each."""
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    ours(), theirs()
    times: dict[int, list[float]] = {0: [], 1: []}
    for _ in range(repeats):
        for i, action in enumerate((ours, theirs)):
            sync()
            start = time.perf_counter()
            action()
            sync()
            times[i].append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def measure(args: argparse.Namespace) -> dict:
    """{setting: {threads, ours_s, theirs_s, ratio}} at torch's default threads and at the policy's count."""
    device = torch.device(args.device)
    torch.manual_seed(0)
    ours = build_model(load_preset(args.preset, dropout=0.0), device=device).eval()
    theirs = hf_twin(args.preset).to(device)
    prompt = torch.randint(ours.config.vocab, (1, args.prompt_len), device=device)
    n = args.new_tokens
    run_ours, run_theirs = greedy_runs(ours, theirs, prompt, n)
    assert run_ours().shape == run_theirs().shape == (1, args.prompt_len + n)
    results = {}
    # The policy's count for our cached path; transformers runs on the same count, so the ratio is like for like.
    for setting, count in (("default", None), ("policy", decode_threads(ours, use_cache=True))):
        with torch_threads(count) as threads:
            ours_s, theirs_s = paired_medians(run_ours, run_theirs, args.repeats, device)
        results[setting] = {"threads": threads, "ours_s": ours_s, "theirs_s": theirs_s, "ratio": theirs_s / ours_s,
                            "ours_tokens_per_s": n / ours_s, "theirs_tokens_per_s": n / theirs_s}
    return results


def reference(argv: list[str]) -> dict:
    """Torch's default threads in a child process whose OpenMP starts with one thread."""
    return rerun_with_one_thread(__file__, argv)["default"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="gpt2-toy")
    parser.add_argument("--new-tokens", type=int, default=200)
    parser.add_argument("--prompt-len", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5)
    add_reference_options(parser)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args)))
        return
    load = os.getloadavg()
    print(machine_line(load))
    results = measure(args)
    if not args.no_reference and args.device == "cpu":
        results["omp1"] = reference(reference_argv())
    n = args.new_tokens
    print(f"{args.preset} on {args.device}: prompt {args.prompt_len}, {n} new tokens, greedy with a KV cache, "
          f"median of {args.repeats} (alternating)")
    names = {"default": "default threads", "policy": "policy's threads", "omp1": "OMP_NUM_THREADS=1"}
    print(f"  {'':<34}" + "".join(f"{names[k]:>20}" for k in results))
    print(f"  {'threads':<34}" + "".join(f"{r['threads']:>20}" for r in results.values()))
    print(f"  {'tui-lab generate tokens/s':<34}"
          + "".join(f"{r['ours_tokens_per_s']:>20.1f}" for r in results.values()))
    print(f"  {'GPT2LMHeadModel.generate tokens/s':<34}"
          + "".join(f"{r['theirs_tokens_per_s']:>20.1f}" for r in results.values()))
    print(f"  {'ratio (ours / transformers)':<34}" + "".join(f"{r['ratio']:>19.2f}x" for r in results.values()))
    print(json.dumps({"torch": torch.__version__, "preset": args.preset, "new_tokens": n, "load_before": load,
                      "load_after": os.getloadavg(), **results}))


if __name__ == "__main__":
    main()
