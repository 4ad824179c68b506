"""Configuration: `[tool.devfix]` in pyproject.toml, overridden by command-line options."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib


class ConfigError(Exception):
    """A user error in configuration: reported in one line, exit code 2."""


DEVICE_STYLES = ("conditional", "accelerator")
DATASET_PLACEMENTS = ("pinned", "device")


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()  # empty: every rule enabled by default
    extend_select: tuple[str, ...] = ()  # add opt-in rules to the default set
    ignore: tuple[str, ...] = ()
    unsafe_fixes: bool = False
    device_style: str = "conditional"
    dataset_placement: str = "pinned"
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (gitignore-style pattern, codes)
    source: Path | None = None  # the pyproject.toml this came from
    root: Path = field(default_factory=Path.cwd)

    def with_overrides(self, **overrides: Any) -> Config:
        changes = {key: value for key, value in overrides.items() if value is not None}
        return replace(self, **changes)


_KEYS = {
    "select": "select",
    "extend-select": "extend_select",
    "ignore": "ignore",
    "unsafe-fixes": "unsafe_fixes",
    "device-style": "device_style",
    "dataset-placement": "dataset_placement",
    "exclude": "exclude",
    "extend-exclude": "extend_exclude",
    "per-file-ignores": "per_file_ignores",
}


def shown(path: Path) -> str:
    """A configuration file as messages name it: relative to the working directory when it is
    below it, so the message reads like the paths the user typed."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if relative.startswith("..") else relative


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.devfix] table, from `start` upwards.

    A pyproject.toml on the way that is not valid TOML is an error (ConfigError, naming the
    file and the line), not a file to pass over: its `[tool.devfix]` table may be the one the
    user meant, and checking with other settings in silence would mislead."""
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else [start.parent, *start.parent.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as error:
                raise ConfigError(f"{shown(candidate)}: cannot read: {error}") from None
            except tomllib.TOMLDecodeError as error:
                raise ConfigError(f"{shown(candidate)}: invalid TOML: {error}") from None
            if "devfix" in data.get("tool", {}):
                return candidate
    return None


def load_config(path: Path | None) -> Config:
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{shown(path)}: no such configuration file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{shown(path)}: cannot read: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{shown(path)}: invalid TOML: {error}") from None
    table = data.get("tool", {}).get("devfix", {})
    return validate(table, path)


def validate(table: dict[str, Any], path: Path) -> Config:
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KEYS:
            raise ConfigError(
                f"{shown(path)}: unknown option '{key}' in [tool.devfix] (known: {', '.join(sorted(_KEYS))})"
            )
        attribute = _KEYS[key]
        if attribute == "unsafe_fixes":
            if not isinstance(value, bool):
                raise ConfigError(f"{shown(path)}: '{key}' must be true or false")
        elif attribute in ("device_style", "dataset_placement"):
            allowed = DEVICE_STYLES if attribute == "device_style" else DATASET_PLACEMENTS
            if value not in allowed:
                raise ConfigError(f"{shown(path)}: '{key}' must be one of {', '.join(allowed)}, not {value!r}")
        elif attribute == "per_file_ignores":
            if not isinstance(value, dict) or not all(
                isinstance(codes, list) and all(isinstance(c, str) for c in codes) for codes in value.values()
            ):
                raise ConfigError(
                    f"{shown(path)}: '{key}' must be a table of patterns and lists of rules, "
                    f'like {{"tests/*" = ["DEV002"]}}'
                )
            value = tuple((pattern, tuple(codes)) for pattern, codes in value.items())
        else:
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise ConfigError(f"{shown(path)}: '{key}' must be a list of strings")
            value = tuple(value)
        values[attribute] = value
    return Config(**values, source=path, root=path.parent)
