"""Helm charts found below a directory given as input (`karpplan lint .` on a repository that holds one): the
loader reads such a chart as its Chart.yaml alone (`loader._manifest_files`), since its templates are Go
templating and not objects until `helm template` renders them. What a command says of it, once per chart: lint
an info at the chart's name, plan a warning, each with the command that renders it into the input."""

from __future__ import annotations

import os
from collections.abc import Sequence

from karpplan.errors import Origin
from karpplan.inputs.loader import CHART_FILE, Document
from karpplan.inputs.origins import line_of


def is_chart(doc: Document) -> bool:
    """A Helm chart's Chart.yaml (apiVersion v1 or v2, a name, no kind)."""
    return (os.path.basename(doc.origin.file) == CHART_FILE and not doc.kind
            and doc.body.get("apiVersion") in ("v1", "v2") and isinstance(doc.body.get("name"), str))


def chart_directory(doc: Document) -> str:
    return os.path.dirname(doc.origin.file) or "."


def chart_origin(doc: Document) -> Origin:
    """Where a chart is named: its Chart.yaml's `name:` line."""
    return doc.origin.at(line_of(doc.body, "name"))


def charts_note(documents: Sequence[Document]) -> tuple[Origin, str] | None:
    """What `plan` says once of the charts it read as their Chart.yaml alone (None when there is none)."""
    charts = [doc for doc in documents if is_chart(doc)]
    if not charts:
        return None
    where = ", ".join(chart_directory(doc) for doc in charts)
    first = chart_directory(charts[0])
    return chart_origin(charts[0]), (
        f"Helm chart{'s' if len(charts) > 1 else ''} not rendered, so not planned: {where} (templates are Go "
        f"templating, not objects); to plan what a chart installs, render it into the input: "
        f"`helm template {first} | karpplan plan - OTHER-PATHS`")
