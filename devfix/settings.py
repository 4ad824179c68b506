"""The configuration of each file, as ruff resolves it in a monorepo.

Each file gets the `[tool.devfix]` table of the nearest `pyproject.toml` above it (or
`--config FILE` for every file), with the command line's options on top. So `devfix check b a`
and `devfix check a b` check each file with the same settings, and a sub-project's own table
applies to its files only. Exclude patterns are anchored where they were written: a
configuration's at the folder of its `pyproject.toml` (`extend-exclude = ["legacy/"]` there
means that folder's `legacy/`, whatever path the command line names), `--exclude` at the
working directory.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from devfix.config import Config, ConfigError, find_pyproject, load_config, shown
from devfix.rules import enabled_rules, selected_codes


@dataclass(frozen=True)
class Overrides:
    """What the command line says, applied over each file's configuration."""

    select: tuple[str, ...] = ()  # replaces the configuration's `select`
    extend_select: tuple[str, ...] = ()  # replaces its `extend-select`
    ignore: tuple[str, ...] = ()  # added to its `ignore`
    unsafe_fixes: bool | None = None
    device_style: str | None = None
    dataset_placement: str | None = None
    exclude: tuple[str, ...] = ()  # gitignore-style, anchored at the working directory

    def apply(self, config: Config) -> Config:
        return config.with_overrides(
            select=self.select or None,
            extend_select=self.extend_select or None,
            ignore=(config.ignore + self.ignore) or None,
            unsafe_fixes=self.unsafe_fixes,
            device_style=self.device_style,
            dataset_placement=self.dataset_placement,
        )


def check_selectors(selectors: Sequence[str], where: str | None = None) -> None:
    """Every selector names a rule; raises ConfigError (naming the file `where`) otherwise."""
    for selector in selectors:
        try:
            selected_codes(selector)
        except KeyError:
            prefix = f"{where}: " if where else ""
            raise ConfigError(f"{prefix}unknown rule selector '{selector}'; `devfix rules` lists them") from None


@dataclass
class Settings:
    """Resolves and caches the configuration of each folder (ConfigError for a bad file)."""

    overrides: Overrides = field(default_factory=Overrides)
    config_path: Path | None = None  # `--config`: one file for every path
    cwd: Path = field(default_factory=lambda: Path.cwd().resolve())
    _by_folder: dict[Path, Config] = field(default_factory=dict)
    _by_given: dict[Path, Config] = field(default_factory=dict)
    _loaded: dict[Path | None, Config] = field(default_factory=dict)
    _specs: dict[tuple[str, ...], pathspec.GitIgnoreSpec] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_selectors((*self.overrides.select, *self.overrides.extend_select, *self.overrides.ignore))
        if self.config_path is not None:
            self._load(self.config_path)  # a missing or invalid --config is an error even if no file is found

    def source(self, path: Path) -> Path | None:
        """The configuration file that applies to `path` (None: defaults)."""
        return self.for_path(path).source

    def for_path(self, path: Path) -> Config:
        """The configuration of the file or folder `path`: that of the folder holding it, its
        `per-file-ignores` matching `path` added to `ignore`."""
        absolute = Path(os.path.abspath(path))
        config = self.for_folder(absolute.parent)
        extra = tuple(
            code
            for pattern, codes in config.per_file_ignores
            if self._matches((pattern,), absolute, config.root, False)
            for code in codes
        )
        return config.with_overrides(ignore=config.ignore + extra) if extra else config

    def for_folder(self, folder: Path) -> Config:
        """Asked for every file and folder of the walk: memoised by the folder as given too,
        so that a folder is resolved (a system call per component) once."""
        found = self._by_given.get(folder)
        if found is None:
            resolved = folder.resolve()
            found = self._by_folder.get(resolved)
            if found is None:
                source = self.config_path if self.config_path is not None else find_pyproject(resolved)
                found = self._by_folder[resolved] = self._load(source)
            self._by_given[folder] = found
        return found

    def _load(self, source: Path | None) -> Config:
        key = source.resolve() if source is not None else None
        if key not in self._loaded:
            if source is None:
                config = Config(root=self.cwd)
            else:
                config = load_config(source)
                check_selectors(
                    (
                        *config.select,
                        *config.extend_select,
                        *config.ignore,
                        *(code for _, codes in config.per_file_ignores for code in codes),
                    ),
                    shown(source),
                )
                config = config.with_overrides(root=source.resolve().parent)
            self._loaded[key] = self.overrides.apply(config)
        return self._loaded[key]

    def excluded(self, path: Path, is_dir: bool) -> bool:
        """Whether an exclude pattern matches `path`: its configuration's, from the folder of
        that configuration's file, or the command line's, from the working directory."""
        absolute = Path(os.path.abspath(path))
        config = self.for_path(absolute)
        return self._matches(config.exclude + config.extend_exclude, absolute, config.root, is_dir) or self._matches(
            self.overrides.exclude, absolute, self.cwd, is_dir
        )

    def excluded_with_parents(self, path: Path) -> bool:
        """`path` or a folder above it is excluded (for a file the walk never saw)."""
        absolute = Path(os.path.abspath(path))
        return self.excluded(absolute, False) or any(
            self.excluded(folder, True) for folder in absolute.parents if folder != Path(folder.anchor)
        )

    def _matches(self, patterns: tuple[str, ...], path: Path, base: Path, is_dir: bool) -> bool:
        if not patterns:
            return False
        if patterns not in self._specs:
            self._specs[patterns] = pathspec.GitIgnoreSpec.from_lines(patterns)
        spec = self._specs[patterns]
        try:
            relative = path.relative_to(base.resolve()).as_posix()
        except ValueError:
            try:
                relative = path.resolve().relative_to(base.resolve()).as_posix()
            except ValueError:
                relative = path.name  # outside the configuration's folder: only unanchored patterns can match
        return spec.match_file(relative + ("/" if is_dir else ""))


def describe(settings: Settings, path: Path) -> str:
    """`devfix show-settings PATH`: the configuration that applies to `path`, resolved."""
    config = settings.for_folder(path) if path.is_dir() else settings.for_path(path)
    rules = enabled_rules(config.select, config.extend_select, config.ignore)
    lines = [
        f"Settings for {path}",
        f"configuration = {_quote(str(config.source)) if config.source else '(none: defaults)'}",
        f"root = {_quote(str(config.root))}",
        f"select = {_list(config.select)}",
        f"extend-select = {_list(config.extend_select)}",
        f"ignore = {_list(config.ignore)}",
        f"unsafe-fixes = {'true' if config.unsafe_fixes else 'false'}",
        f"device-style = {_quote(config.device_style)}",
        f"dataset-placement = {_quote(config.dataset_placement)}",
        f"exclude = {_list(config.exclude)}",
        f"extend-exclude = {_list(config.extend_exclude)}",
        "per-file-ignores = {"
        + ", ".join(f"{_quote(pattern)} = {_list(codes)}" for pattern, codes in config.per_file_ignores)
        + "}",
        f"command-line exclude = {_list(settings.overrides.exclude)}",
        f"excluded = {'true' if settings.excluded(path, path.is_dir()) else 'false'}",
        f"rules = {_list(tuple(rule.code for rule in rules))}",
    ]
    return "\n".join(lines)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _list(items: Sequence[str]) -> str:
    return "[" + ", ".join(_quote(item) for item in items) + "]"
