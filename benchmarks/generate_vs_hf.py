"""Our cached greedy generation vs Hugging Face `GPT2LMHeadModel.generate` on the same GPT-2 shape.

Both models are built from the gpt2-toy numbers (layers, width, heads, d_ff, vocab, positions) with
random weights; both decode greedily with a KV cache for the same number of new tokens from the same
prompt (HF's `min_new_tokens` rules out an early stop). Prints tokens/s of each and the ratio.

    python benchmarks/generate_vs_hf.py [--new-tokens 200] [--prompt-len 16] [--repeats 5] [--device cpu] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
from transformers import GPT2Config, GPT2LMHeadModel

from tui_lab import build_model, load_preset
from tui_lab.generation import generate


def hf_twin(preset: str) -> GPT2LMHeadModel:
    """A transformers GPT-2 with the preset's numbers (random weights, dropout off)."""
    c = load_preset(preset)
    config = GPT2Config(vocab_size=c.vocab, n_positions=c.max_len, n_embd=c.d_model, n_layer=c.decoder_layers,
                        n_head=c.heads, n_inner=c.d_ff, activation_function="gelu_new", layer_norm_epsilon=c.norm_eps,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0,
                        pad_token_id=0)
    return GPT2LMHeadModel(config).eval()


def median_seconds(action: Callable[[], torch.Tensor], repeats: int, device: torch.device) -> float:
    """Median wall time of `action` over `repeats` runs after one untimed warm-up."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    action()
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        action()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="gpt2-toy")
    parser.add_argument("--new-tokens", type=int, default=200)
    parser.add_argument("--prompt-len", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads (default 1, steady on a shared machine; 0: torch's default)")
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU thread(s)")
    device = torch.device(args.device)
    torch.manual_seed(0)
    ours = build_model(load_preset(args.preset, dropout=0.0), device=device).eval()
    theirs = hf_twin(args.preset).to(device)
    prompt = torch.randint(ours.config.vocab, (1, args.prompt_len), device=device)
    n = args.new_tokens

    def run_ours() -> torch.Tensor:
        return generate(ours, prompt, n, temperature=0.0, use_cache=True)

    def run_theirs() -> torch.Tensor:
        with torch.inference_mode():
            return theirs.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=n,
                                   min_new_tokens=n, do_sample=False, use_cache=True)

    assert run_ours().shape == run_theirs().shape == (1, args.prompt_len + n)
    ours_s = median_seconds(run_ours, args.repeats, device)
    theirs_s = median_seconds(run_theirs, args.repeats, device)
    print(f"{args.preset} on {device}: prompt {args.prompt_len}, {n} new tokens, median of {args.repeats}")
    print(f"tui-lab generate (cached):       {n / ours_s:8.1f} tokens/s  ({ours_s * 1e3:.1f} ms)")
    print(f"transformers GPT2LMHeadModel:    {n / theirs_s:8.1f} tokens/s  ({theirs_s * 1e3:.1f} ms)")
    print(f"ratio (ours / transformers):     {theirs_s / ours_s:8.2f}x")


if __name__ == "__main__":
    main()
