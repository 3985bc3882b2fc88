"""Image classification for a ViT (`input = "patches"`): batches of the built-in shapes task.

The loss is the cross-entropy of one label per image; evaluation adds held-out accuracy beside the
majority-class baseline. Tokens of a step are images x (patches + the class token), what the model reads.
"""

from __future__ import annotations

import torch

from tui_lab.data.images import ImageTask, shapes_task
from tui_lab.train.config import IMAGE_DEFAULTS  # noqa: F401 - its defaults live with the others, torch-free
from tui_lab.train.sources import Batch


class ImageSource:
    is_seq2seq = False
    family = "encoder-only"
    objective = "image classification"
    tokenizer = None

    def __init__(self, task: ImageTask | None = None) -> None:
        self.task = task or shapes_task()

    def check(self, config) -> None:
        """The model must read this task's images and name its classes (one line naming the field)."""
        t = self.task
        for name, want in (("image_size", t.image_size), ("channels", t.channels), ("classes", len(t.classes))):
            if getattr(config, name) != want:
                raise ValueError(f"{name} ({getattr(config, name)}) must be {want} for the built-in shapes task")

    def batch(self, split: str, batch_size: int, generator: torch.Generator) -> Batch:
        images, labels = self.task.batch(split, batch_size, generator)
        return Batch(images, labels)  # (N, C, I, I), (N,)

    def context(self) -> int:
        return 0  # set per model: patches + class token (see `counted`)

    def counted(self, batch: Batch, config) -> int:
        return batch.inputs.shape[0] * config.max_len

    @torch.no_grad()
    def metrics(self, model, device, batches: int, batch_size: int, seed: int) -> dict[str, float]:
        """Accuracy on every held-out image, and the share of the most frequent class (chance)."""
        images, labels = self.task.split("val")
        hits = 0
        for start in range(0, len(labels), 500):
            logits = model(images[start:start + 500].to(device))  # (500, classes)
            hits += int((logits.argmax(-1).cpu() == labels[start:start + 500]).sum())
        majority = torch.bincount(labels).max().item() / len(labels)
        return {"accuracy": hits / len(labels), "baseline_accuracy": majority}

    def sample(self, model, device, step: int, seed: int) -> tuple[str, str, str | None]:
        images, labels = self.task.split("val")
        index = step % len(labels)
        guess = int(model(images[index:index + 1].to(device)).argmax(-1))
        names = self.task.classes
        return f"held-out image {index}", names[guess], names[int(labels[index])]
