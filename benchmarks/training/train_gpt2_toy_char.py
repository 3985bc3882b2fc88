"""gpt2-toy, character level, 400 steps: validation loss in nats per character on English prose.

Target (issue 3): val loss < 2.5 after 400 steps. Runs on the built-in corpus and, when found, on real
English text from this machine: the LICENSE and README files that installed Python packages ship.

    python benchmarks/training/train_gpt2_toy_char.py [--steps 400] [--threads 2] [--data FILE]
"""

from __future__ import annotations

import argparse
import os
import site
import tempfile
import time
from pathlib import Path


def real_english(limit: int = 600_000) -> str | None:
    """LICENSE texts and README descriptions (METADATA bodies) of installed packages, concatenated."""
    texts, total = [], 0
    for root in site.getsitepackages():
        paths = sorted(Path(root).glob("*.dist-info/METADATA")) + sorted(Path(root).glob("*.dist-info/**/LICENSE*"))
        for path in paths:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if path.name == "METADATA":
                text = text.partition("\n\n")[2]  # the long description, after the headers
            texts.append(text)
            total += len(text)
            if total > limit:
                return "\n\n".join(texts)
    return "\n\n".join(texts) if total > 50_000 else None


def train(data: str | None, steps: int) -> None:
    from tui_lab import load_preset
    from tui_lab.train import Trainer, train_config_for

    config = train_config_for(None, steps=steps, data=data, tokenizer="char", eval_every=100, sample_every=0)
    evals = []
    trainer = Trainer(load_preset("gpt2-toy"), config, on_event=lambda e: evals.append(e) if e.kind == "eval" else 0)
    start = time.perf_counter()
    done = trainer.run()
    curve = ", ".join(f"{e.step}: {e.val_loss:.3f}" for e in evals)
    print(f"{data or 'built-in corpus'}: vocab {trainer.model_config.vocab}, val loss {done.val_loss:.3f} nats/char "
          f"after {done.step} steps ({curve}); {time.perf_counter() - start:.1f} s, "
          f"{done.tokens_per_s:,.0f} tokens/s, load {os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data", help="a text file; default: the built-in corpus and local package texts")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    if args.data:
        train(args.data, args.steps)
        return
    train(None, args.steps)
    text = real_english()
    if text is not None:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "package-texts.txt"
            path.write_text(text, encoding="utf-8")
            print(f"real English: {len(text):,} characters of package LICENSE/README files")
            train(str(path), args.steps)


if __name__ == "__main__":
    main()
