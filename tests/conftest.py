"""Shared helpers: build an inventory (or its problems) straight from YAML text."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from karpplan.errors import InputError
from karpplan.inputs.loader import parse_documents
from karpplan.model.build import build_inventory
from karpplan.model.inventory import Inventory

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


def inventory_from(text: str, file: str = "test.yaml") -> Inventory:
    return build_inventory(parse_documents(textwrap.dedent(text), file))


def problems_from(text: str, file: str = "test.yaml") -> list[str]:
    """The problems building `text` reports, as printed (`file:line: message`); fails if there are none."""
    with pytest.raises(InputError) as info:
        inventory_from(text, file)
    return [str(p) for p in info.value.problems]


@pytest.fixture
def build() -> Callable[..., Inventory]:
    return inventory_from


@pytest.fixture
def problems() -> Callable[..., list[str]]:
    return problems_from


def pod_manifest(spec: str, *, name: str = "p", labels: str = "{app: p}", extra_metadata: str = "") -> str:
    """A bare Pod whose spec is `spec` (YAML, any indentation)."""
    body = textwrap.indent(textwrap.dedent(spec).strip("\n"), "  ")
    meta = textwrap.indent(textwrap.dedent(extra_metadata).strip("\n"), "  ") + "\n" if extra_metadata else ""
    return f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  labels: {labels}\n{meta}spec:\n{body}\n"
