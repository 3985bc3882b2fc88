"""What sits on top of the last layer: the language-model head, BERT's masked-LM head, a classifier.

Dimension legend: N batch, L length, E d_model, V vocab, C classes.
The output projection over the vocabulary (`lm_head`) stays on the Transformer so that tying it to the
token table is one assignment; these modules are what comes before it (mlm) or instead of it (classifier).
"""

from __future__ import annotations

from torch import Tensor, nn

from tui_lab.model.blocks import make_norm
from tui_lab.model.feed_forward import ACTIVATIONS


class MLMTransform(nn.Module):
    """BERT's `cls.predictions.transform`: dense E->E, the model's activation, then a norm (Devlin et al. 2019)."""

    def __init__(self, config) -> None:
        super().__init__()
        self.dense = nn.Linear(config.d_model, config.d_model, bias=config.bias)
        self.act = ACTIVATIONS[config.activation]
        self.norm = make_norm(config)

    def forward(self, x: Tensor) -> Tensor:  # (N, L, E) -> (N, L, E)
        return self.norm(self.act(self.dense(x)))


class Classifier(nn.Module):
    """One label per sequence: ViT's head on the class token, or seed 003's mean over real tokens."""

    def __init__(self, config) -> None:
        super().__init__()
        self.pool = "first" if config.input == "patches" else "mean"
        self.out = nn.Linear(config.d_model, config.classes)  # a bias always, as seed 003 and ViT

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:  # (N, L, E) -> (N, C)
        return self.out(pool(x, mask, self.pool))


def pool(x: Tensor, mask: Tensor | None, how: str) -> Tensor:
    """(N, L, E) -> (N, E): the class token (position 0), or the mean over positions where mask is True."""
    if how == "first":
        return x[:, 0]
    if mask is None:
        return x.mean(dim=1)
    weights = mask.to(x.dtype).unsqueeze(-1)  # (N, L, 1); padding counts for nothing
    return (x * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)


def make_head(config) -> nn.Module | None:
    """The module between the last layer and the logits: BERT's transform, a classifier, or nothing."""
    if config.head == "mlm":
        return MLMTransform(config)
    if config.head == "classifier":
        return Classifier(config)
    return None
