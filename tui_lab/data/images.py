"""A small image task our code draws: ten shapes on 16x16 grey images, for the ViT toy.

Each image holds one shape (lines, crosses, squares, rings, disks) at a jittered centre and size, with a
jittered brightness and Gaussian noise, so a classifier must look at the shape rather than at one pixel.
The train and held-out sets come from different seeds and are never mixed. Pure torch, deterministic.
Dimension legend: N images, C channels (1), I image size (16).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import torch
from torch import Tensor

SHAPES = ("horizontal line", "vertical line", "diagonal \\", "diagonal /", "plus", "cross x",
          "square outline", "filled square", "ring", "disk")
IMAGE_SIZE, CHANNELS = 16, 1
TRAIN_IMAGES, VAL_IMAGES = 12_000, 2_000
SEEDS = {"train": 1, "val": 2}


WIDTH = 0.75  # half a stroke, in pixels


def _inside(dx: Tensor, dy: Tensor, r: Tensor) -> Tensor:
    return (dx.abs() <= r) & (dy.abs() <= r)


def _box(dx: Tensor, dy: Tensor) -> Tensor:
    return torch.maximum(dx.abs(), dy.abs())


def _dist(dx: Tensor, dy: Tensor) -> Tensor:
    return (dx**2 + dy**2).sqrt()


# One drawing per class, (N, I, I) offsets from the centre and (N, 1, 1) sizes -> (N, I, I) bool.
_DRAW = [
    lambda dx, dy, r: (dy.abs() < WIDTH) & _inside(dx, dy, r),
    lambda dx, dy, r: (dx.abs() < WIDTH) & _inside(dx, dy, r),
    lambda dx, dy, r: ((dx - dy).abs() < WIDTH) & _inside(dx, dy, r),
    lambda dx, dy, r: ((dx + dy).abs() < WIDTH) & _inside(dx, dy, r),
    lambda dx, dy, r: ((dy.abs() < WIDTH) | (dx.abs() < WIDTH)) & _inside(dx, dy, r),
    lambda dx, dy, r: (((dx - dy).abs() < WIDTH) | ((dx + dy).abs() < WIDTH)) & _inside(dx, dy, r),
    lambda dx, dy, r: (_box(dx, dy) - r).abs() < WIDTH,
    lambda dx, dy, r: _box(dx, dy) <= r,
    lambda dx, dy, r: (_dist(dx, dy) - r).abs() < WIDTH,
    lambda dx, dy, r: _dist(dx, dy) <= r,
]


def draw(labels: Tensor, generator: torch.Generator) -> Tensor:
    """(N,) class ids -> (N, 1, I, I) images in about [-1, 1]: the shape, jittered, on noise."""
    n = labels.shape[0]
    grid = torch.arange(IMAGE_SIZE, dtype=torch.float32)
    cx, cy = (torch.rand(2, n, 1, 1, generator=generator) * 6 + 5).unbind(0)  # centres 5..11
    r = torch.randint(3, 6, (n, 1, 1), generator=generator).float()  # sizes 3..5
    dx, dy = grid[None, None, :] - cx, grid[None, :, None] - cy  # (N, I, I) each
    shape = torch.zeros(n, IMAGE_SIZE, IMAGE_SIZE)
    for label, drawing in enumerate(_DRAW):
        rows = labels == label
        shape[rows] = drawing(dx[rows], dy[rows], r[rows]).float()
    bright = torch.rand(n, 1, 1, generator=generator) * 0.5 + 0.75
    noise = torch.randn(n, IMAGE_SIZE, IMAGE_SIZE, generator=generator) * 0.25
    return (shape * bright * 2 - 1 + noise).unsqueeze(1)


@dataclass
class ImageTask:
    """Images (N, 1, I, I) and labels (N,) for training and for held-out evaluation."""

    train_images: Tensor
    train_labels: Tensor
    val_images: Tensor
    val_labels: Tensor
    classes: tuple[str, ...] = SHAPES
    image_size: int = IMAGE_SIZE
    channels: int = CHANNELS

    def split(self, name: str) -> tuple[Tensor, Tensor]:
        if name not in SEEDS:
            raise ValueError(f"split: must be one of {', '.join(SEEDS)}, got {name!r}")
        return (self.train_images, self.train_labels) if name == "train" else (self.val_images, self.val_labels)

    def batch(self, split: str, batch_size: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        images, labels = self.split(split)
        index = torch.randint(len(labels), (batch_size,), generator=generator)
        return images[index], labels[index]


def _make(count: int, seed: int) -> tuple[Tensor, Tensor]:
    generator = torch.Generator().manual_seed(seed)
    labels = torch.arange(count) % len(SHAPES)  # balanced classes
    labels = labels[torch.randperm(count, generator=generator)]
    return draw(labels, generator), labels


@lru_cache(maxsize=1)
def shapes_task() -> ImageTask:
    """The built-in shapes task (drawn once per process, well under a second)."""
    return ImageTask(*_make(TRAIN_IMAGES, SEEDS["train"]), *_make(VAL_IMAGES, SEEDS["val"]))
