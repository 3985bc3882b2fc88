"""Images as tokens (Dosovitskiy et al. 2021, ViT; seed 003's PatchEmbedding).

A Conv2d whose kernel and stride are the patch size cuts the image into non-overlapping patches and
projects each to d_model in one step; a learned class token goes first, and the classifier reads it.
Dimension legend: N batch, C channels, I image size, P patch size, G = I/P patches per side, E d_model.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class PatchEmbedding(nn.Module):
    def __init__(self, config) -> None:
        super().__init__()
        self.grid = config.image_size // config.patch_size
        self.proj = nn.Conv2d(config.channels, config.d_model, kernel_size=config.patch_size,
                              stride=config.patch_size)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, config.d_model))
        self.image_shape = (config.channels, config.image_size, config.image_size)

    def forward(self, pixels: Tensor) -> Tensor:
        """(N, C, I, I) -> (N, 1 + G*G, E): the class token, then the patches row by row."""
        if pixels.dim() != 4 or tuple(pixels.shape[1:]) != self.image_shape:
            raise ValueError(f"pixel_values must be (N, {', '.join(map(str, self.image_shape))}), "
                             f"got {tuple(pixels.shape)}")
        x = self.proj(pixels.to(self.proj.weight.dtype))  # (N, E, G, G)
        x = x.flatten(2).transpose(1, 2)  # (N, G*G, E)
        cls = self.cls_token.expand(x.shape[0], -1, -1)  # (N, 1, E)
        return torch.cat([cls, x], dim=1)
