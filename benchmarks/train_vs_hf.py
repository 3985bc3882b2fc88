"""Training-step throughput: our gpt2-family model vs Hugging Face's GPT2LMHeadModel, same numbers.

Both models are built from one config (default: the gpt2-toy preset), get the same batches and the same
optimizer (AdamW, lr 3e-4), and are timed step by step in alternation so machine noise hits both alike.
Prints both throughputs and their ratio; the last line is one JSON object.

    python benchmarks/train_vs_hf.py [--preset gpt2-toy] [--batch 8] [--seq-len 128] [--steps 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel

from tui_lab import build_model, load_preset


def hf_model(config) -> GPT2LMHeadModel:
    hf = GPT2Config(vocab_size=config.vocab, n_positions=config.max_len, n_embd=config.d_model,
                    n_layer=config.decoder_layers, n_head=config.heads, n_inner=config.d_ff,
                    activation_function="gelu_new", resid_pdrop=config.dropout, embd_pdrop=config.dropout,
                    attn_pdrop=config.dropout, layer_norm_epsilon=config.norm_eps,
                    bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(hf)


def step_timer(model, loss_fn, batches):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model.train()

    def step(i: int) -> float:
        x, y = batches[i % len(batches)]
        start = time.perf_counter()
        loss = loss_fn(model, x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return time.perf_counter() - start

    return step


def ours_loss(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))


def hf_loss(model, x, y):
    logits = model(input_ids=x).logits
    return F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="gpt2-toy")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    config = load_preset(args.preset)
    batches = [(torch.randint(0, config.vocab, (args.batch, args.seq_len)),
                torch.randint(0, config.vocab, (args.batch, args.seq_len))) for _ in range(4)]
    ours = step_timer(build_model(config), ours_loss, batches)
    theirs = step_timer(hf_model(config), hf_loss, batches)
    times: dict[str, list[float]] = {"ours": [], "hf": []}
    for i in range(args.warmup + args.steps):
        for name, step in (("ours", ours), ("hf", theirs)) if i % 2 == 0 else (("hf", theirs), ("ours", ours)):
            elapsed = step(i)
            if i >= args.warmup:
                times[name].append(elapsed)
    tokens = args.batch * args.seq_len
    tps = {name: tokens / statistics.median(t) for name, t in times.items()}
    ratio = tps["ours"] / tps["hf"]
    print(f"config {args.preset}: batch {args.batch} x seq {args.seq_len}, {torch.get_num_threads()} threads")
    for label, name in (("tui-lab        ", "ours"), ("GPT2LMHeadModel", "hf")):
        print(f"{label}  {tps[name]:10.0f} tokens/s (median step {statistics.median(times[name]) * 1e3:.1f} ms)")
    print(f"ratio ours/hf    {ratio:10.2f}x")
    print(json.dumps({"ours_tokens_per_s": round(tps["ours"]), "hf_tokens_per_s": round(tps["hf"]),
                      "ratio": round(ratio, 3)}))


if __name__ == "__main__":
    main()
