"""Presets are data: one TOML file per preset in the top-level `presets/` folder, plus the trained toys
that ship inside the package (`tui_lab/shipped/<name>/`), whose config is their checkpoint's config.json.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from tui_lab.config import AXES, OPTIONAL_FIELDS, ModelConfig, field_names, with_overrides
from tui_lab.shipped import shipped_checkpoint, shipped_config_data, shipped_names

__all__ = ["list_presets", "load_preset", "paper_claims", "preset_data", "presets_dir", "shipped_checkpoint",
           "weights_of"]


def presets_dir() -> Path:
    """Installed wheels carry the files inside the package; a source tree keeps them at the top."""
    packaged = Path(__file__).parent / "presets"
    return packaged if packaged.is_dir() else Path(__file__).parent.parent / "presets"


def list_presets() -> list[str]:
    return sorted({p.stem for p in presets_dir().glob("*.toml")} | set(shipped_names()))


def weights_of(name: str) -> str:
    """The weights preset `name` comes with: "trained" when it ships a checkpoint, else "random"."""
    return "trained" if shipped_checkpoint(name) is not None else "random"


def preset_data(name: str) -> dict[str, Any]:
    if shipped_checkpoint(name) is not None:
        # The preset's name, not the base preset's the run started from (config.json keeps that in `source`).
        return _checked(name, {**shipped_config_data(name), "name": name})
    path = presets_dir() / f"{name}.toml"
    if not path.is_file():
        raise ValueError(f"unknown preset {name!r}; known presets: {', '.join(list_presets())}")
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    data.pop("paper", None)  # what the source claims, shown beside our computed numbers
    return _checked(name, data)


def _checked(name: str, data: dict[str, Any]) -> dict[str, Any]:
    # An axis may be left out (it then keeps its default, which builds nothing extra); the sizes may not.
    missing = set(field_names()) - set(data) - {"name"} - set(AXES) - set(OPTIONAL_FIELDS)
    if missing:
        raise ValueError(f"preset {name!r} lacks fields: {', '.join(sorted(missing))}")
    return data


def load_preset(name: str, /, **overrides: Any) -> ModelConfig:
    """The preset's config with `overrides` (fields by name, or the shortcuts) applied and validated.

    `name` is positional-only so that `name=` can be an override (the config's own name) too."""
    data = preset_data(name)
    data.setdefault("name", name)
    return with_overrides(ModelConfig(**data), **overrides)


def paper_claims(name: str) -> dict[str, Any]:
    """The `[paper]` table of a preset: numbers as its source states them (e.g. the 2017 paper's "65M")."""
    path = presets_dir() / f"{name}.toml"
    if not path.is_file():
        return {}
    with path.open("rb") as fh:
        return dict(tomllib.load(fh).get("paper", {}))
