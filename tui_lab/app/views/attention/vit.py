"""ViT in the Attention view: an image of the built-in shapes task, and the class token's attention over
its patch grid (drawn by `widgets/patch_image.py`).

The text input holds which held-out image to show (its index). A model whose image size or channels
differ from the task's (ViT-Base) gets a random image instead: its random weights show an untrained pattern.
`capture_image` imports torch; the view calls it from a thread worker.
"""

from __future__ import annotations

from typing import Any

from tui_lab.app.views.attention.capture import capture

IMAGE_TEXT = "0"


def is_vit(config) -> bool:
    return getattr(config, "input", "tokens") == "patches"


def image_index(text: str) -> int:
    try:
        index = int(text.strip() or IMAGE_TEXT)
    except ValueError:
        raise ValueError(f"image: type the number of a held-out image (0 or more), got {text!r}") from None
    if index < 0:
        raise ValueError(f"image ({index}) must be 0 or more")
    return index


def patch_labels(config) -> list[str]:
    grid = config.image_size // config.patch_size
    return ["[CLS]"] + [f"{r},{c}" for r in range(grid) for c in range(grid)]


def capture_image(model: Any, config, index: int) -> tuple[dict, dict, list[list[float]], str, Any]:
    """(grids, entropies, grey pixels in 0..1, caption, the input (1, C, I, I)) for held-out image `index`
    (worker thread)."""
    import torch

    from tui_lab.data.images import shapes_task

    task = shapes_task()
    if (config.image_size, config.channels) == (task.image_size, task.channels):
        images, labels = task.split("val")
        index %= len(labels)
        pixels, truth = images[index:index + 1], task.classes[int(labels[index])]
    else:
        generator = torch.Generator().manual_seed(index)
        pixels = torch.rand(1, config.channels, config.image_size, config.image_size, generator=generator)
        truth = "a random image"
    device = next(model.parameters()).device
    with torch.no_grad():
        probs = model(pixels.to(device))[0].float().softmax(-1).cpu()
        grids, entropy, _ = capture(model, pixels.to(device), None)
    guess = int(probs.argmax())
    name = task.classes[guess] if config.classes == len(task.classes) else f"class {guess}"
    grey = pixels[0].mean(0)
    grey = (grey - grey.min()) / (grey.max() - grey.min()).clamp_min(1e-6)
    caption = f"image {index}: {truth} · model says {name} ({probs[guess]:.2f})"
    return grids, entropy, grey.tolist(), caption, pixels


def class_token_row(weights: list[list[list[float]]], head: int, grid: int) -> list[list[float]]:
    """The class token's attention (query 0) over the patches, as a (grid, grid) table; head -1: the mean."""
    rows = [w[0][1:] for w in weights] if head < 0 else [weights[head][0][1:]]
    row = [sum(values) / len(rows) for values in zip(*rows, strict=True)]
    return [row[r * grid:(r + 1) * grid] for r in range(grid)]
