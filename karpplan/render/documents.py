"""Versioned documents (`apiVersion: karpplan.io/v1alpha1`) as JSON or YAML text.

Every machine-readable output goes through `render_document`, so `plan`, `lint` and `explain` print the
same shapes: keys in the order the document builds them (the contract's order, not alphabetical), JSON
indented by two, YAML in block style without anchors or aliases (a reader diffing two plans must see
every value where it belongs, not a `*id001`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from karpplan.costs import Costs
from karpplan.plan import Plan

DOCUMENT_FORMATS = ("json", "yaml")


class _PlainDumper(yaml.SafeDumper):
    """SafeDumper that never writes anchors/aliases, even when one object appears twice."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


# PyYAML writes these Unicode line breaks raw inside single quotes under allow_unicode, and reads them back
# as spaces; double quotes make it escape them (\N, \L, \P) so the string survives.
_UNICODE_LINE_BREAKS = ("\x85", "\u2028", "\u2029")


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = '"' if any(c in data for c in _UNICODE_LINE_BREAKS) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_PlainDumper.add_representer(str, _represent_str)


def _plain(value: Any) -> Any:
    """Builtin containers only: Mappings become dicts, tuples and other sequences lists.

    Documents may hold read-only mappings (`MappingProxyType`, `Resources`) or tuples; yaml.safe_dump
    refuses those and JSON would differ between the two formats, so both serialise the same plain tree.
    """
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, Sequence):
        return [_plain(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        # JSON has no NaN/Infinity; an unknown number is written as null rather than as invalid JSON.
        return None
    return value


def render_document(document: Mapping[str, Any], fmt: str) -> str:
    """`document` as `json` or `yaml` text ending in a newline; ValueError for any other format."""
    plain = _plain(document)
    if fmt == "json":
        return json.dumps(plain, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if fmt == "yaml":
        text: str = yaml.dump(
            plain,
            Dumper=_PlainDumper,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=1000,  # long reasons stay on one line so line-oriented tools can grep them
        )
        return text
    raise ValueError(f"unknown document format {fmt!r}; expected one of {', '.join(DOCUMENT_FORMATS)}")


def plan_document(plan: Plan, costs: Costs | None = None) -> dict[str, Any]:
    """The Plan document, with `costs` (cost per workload, namespace and NodePool) after its contract's keys."""
    document = plan.to_document()
    if costs is not None:
        document["costs"] = costs.to_document()
    return document


def render_json(plan: Plan) -> str:
    """The Plan document of cli-contract.md as JSON."""
    return render_document(plan.to_document(), "json")


def render_yaml(plan: Plan) -> str:
    """The Plan document of cli-contract.md as YAML."""
    return render_document(plan.to_document(), "yaml")


__all__ = ["DOCUMENT_FORMATS", "plan_document", "render_document", "render_json", "render_yaml"]
