"""Which rules run: `--select`/`--ignore`, a `.karpplan.yaml` (`lint: {select, ignore}`) found upward from
the current directory, and the `karpplan.io/lint-ignore` annotation on an object."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from karpplan.errors import InputError, Origin
from karpplan.inputs.loader import Document
from karpplan.lint.core import Rule
from karpplan.lint.ignores import annotated_names, silences, split_names
from karpplan.lint.registry import RULES, resolve

CONFIG_NAME = ".karpplan.yaml"


class UnknownRule(ValueError):
    """A rule name or code that is not in the registry (a usage error)."""


def rules_named(names: Iterable[str], where: str) -> list[Rule]:
    out = []
    for name in names:
        rule = resolve(name)
        if rule is None:
            known = ", ".join(r.name for r in RULES)
            raise UnknownRule(f"{where}: unknown rule {name!r} (rules: {known})")
        out.append(rule)
    return out


@dataclass(frozen=True)
class FileConfig:
    path: Path | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


def find_config(start: Path | None = None) -> FileConfig:
    """The nearest `.karpplan.yaml` at or above `start` (the current directory); empty when none."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return _read_config(candidate)
    return FileConfig()


def _names(value: object, path: Path, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(split_names([value]))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(split_names(value))
    raise InputError.at(Origin(str(path), 0), f"lint.{key}: must be a list of rule names")


def _read_config(path: Path) -> FileConfig:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError.at(Origin(str(path), 0), f"cannot read: {exc}") from exc
    lint = data.get("lint") if isinstance(data, dict) else None
    if lint is None:
        return FileConfig(path)
    if not isinstance(lint, dict):
        raise InputError.at(Origin(str(path), 0), "lint: must be a mapping with select and ignore")
    return FileConfig(path, _names(lint.get("select"), path, "select"), _names(lint.get("ignore"), path, "ignore"))


def active_rules(select: Sequence[str], ignore: Sequence[str], config: FileConfig) -> list[Rule]:
    """Flags win over the file for select; ignores from both apply."""
    where = str(config.path) if config.path else CONFIG_NAME
    chosen_names = split_names(select) or list(config.select)
    chosen = rules_named(chosen_names, "--select" if select else where) if chosen_names else list(RULES)
    dropped = {r.name for r in rules_named(split_names(ignore), "--ignore")}
    dropped |= {r.name for r in rules_named(config.ignore, where)}
    return [r for r in RULES if r in chosen and r.name not in dropped]


def ignored_by_annotation(doc: Document) -> frozenset[str]:
    """Rule names the object's `karpplan.io/lint-ignore` annotation names (`all` for every rule)."""
    if not annotated_names(doc):
        return frozenset()
    return frozenset(r.name for r in RULES if silences(doc, r))
