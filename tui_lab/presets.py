"""Presets are data: one TOML file per preset in the top-level `presets/` folder."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from tui_lab.config import ModelConfig, field_names, with_overrides


def presets_dir() -> Path:
    """Installed wheels carry the files inside the package; a source tree keeps them at the top."""
    packaged = Path(__file__).parent / "presets"
    return packaged if packaged.is_dir() else Path(__file__).parent.parent / "presets"


def list_presets() -> list[str]:
    return sorted(p.stem for p in presets_dir().glob("*.toml"))


def preset_data(name: str) -> dict[str, Any]:
    path = presets_dir() / f"{name}.toml"
    if not path.is_file():
        raise ValueError(f"unknown preset {name!r}; known presets: {', '.join(list_presets())}")
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    data.pop("paper", None)  # what the source claims, shown beside our computed numbers
    missing = set(field_names()) - set(data) - {"name"}
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
