"""Training-step throughput: our gpt2-family model vs Hugging Face's GPT2LMHeadModel, same numbers.

Both models are built from one config (default: the gpt2-toy preset), get the same batches and the same
optimizer (AdamW, lr 3e-4), and are timed step by step in alternation so machine noise hits both alike.
Prints both throughputs and their ratio; the last line is one JSON object.

    python benchmarks/agreement/train_vs_hf.py [--preset gpt2-toy] [--batch 8] [--seq-len 128] [--steps 30]
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


def step_timer(model, loss_fn, batches, losses: list[float] | None = None):
    """A function that runs training step i and returns its seconds (CUDA synchronised at both ends);
    each step's loss is appended to `losses` when given."""
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model.train()
    device = next(model.parameters()).device
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)

    def step(i: int) -> float:
        x, y = batches[i % len(batches)]
        sync()
        start = time.perf_counter()
        loss = loss_fn(model, x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        sync()
        elapsed = time.perf_counter() - start
        if losses is not None:
            losses.append(loss.item())  # after the clock: reading it back would synchronise inside the step
        return elapsed

    return step


def random_batches(config, batch: int, seq_len: int, device: str = "cpu", count: int = 4) -> list:
    """`count` (inputs, targets) pairs of random ids, drawn on the CPU (the same on every device)."""
    return [(torch.randint(0, config.vocab, (batch, seq_len)).to(device),
             torch.randint(0, config.vocab, (batch, seq_len)).to(device)) for _ in range(count)]


def alternate(steps: dict, total: int, warmup: int) -> dict[str, list[float]]:
    """Run each named step function `total` times, alternating which goes first; the times after `warmup`."""
    names = list(steps)
    times: dict[str, list[float]] = {name: [] for name in names}
    for i in range(total):
        for name in names if i % 2 == 0 else names[::-1]:
            elapsed = steps[name](i)
            if i >= warmup:
                times[name].append(elapsed)
    return times


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
    batches = random_batches(config, args.batch, args.seq_len)
    ours = step_timer(build_model(config), ours_loss, batches)
    theirs = step_timer(hf_model(config), hf_loss, batches)
    times = alternate({"ours": ours, "hf": theirs}, args.warmup + args.steps, args.warmup)
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
