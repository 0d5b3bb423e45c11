"""explain's streamed output (render.write_document) is the very text of the whole document (render_text)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from karpplan.explain.render import render_table, render_text, write_document
from karpplan.explain.report import Explanation, explain_text

LINES = [
    'Failed to schedule pod, incompatible with nodepool "a\\nb", did not tolerate k=v\u2028x:NoSchedule',
    "  Warning  FailedScheduling  16s   karpenter        Failed to schedule pod, did not tolerate taint "
    "(taint=CriticalAddonsOnly:NoSchedule); all available instance types exceed limits for nodepool (NodePool=np-b)",
    "  Warning  FailedScheduling  16s   karpenter        Failed to schedule pod, did not tolerate taint "
    "(taint=CriticalAddonsOnly:NoSchedule); all available instance types exceed limits for nodepool (NodePool=np-b)",
    "0/3 nodes are available: 3 Insufficient cpu. ünïcode",
]


def explanations() -> list[Explanation]:
    empty = explain_text("nothing here\n")
    noted = explain_text("\n".join(LINES))
    noted.notes.extend(["a note", 'with "quotes"\nand a newline'])
    only_notes = explain_text("nothing\n")
    only_notes.notes.append("n")
    return [empty, explain_text("\n".join(LINES)), noted, only_notes]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_streamed_document_is_the_whole_document(fmt: str) -> None:
    for explanation in explanations():
        out = io.StringIO()
        write_document(explanation, fmt, out)
        assert out.getvalue() == render_text(explanation, fmt)


def test_unknown_format() -> None:
    with pytest.raises(ValueError):
        write_document(Explanation(), "xml", io.StringIO())


def test_the_table_prints_bracketed_names_literally() -> None:
    # What the log quotes (here a NodePool name with brackets) is printed as written, never as Rich markup.
    explanation = explain_text('Failed to schedule pod, incompatible with nodepool "np[bold]x[/bold]", '
                               "did not tolerate k=v:NoSchedule\n")
    console = Console(file=io.StringIO(), width=200, color_system=None)
    render_table(explanation, console)
    row = next(line for line in console.file.getvalue().splitlines() if "taint" in line)  # type: ignore[attr-defined]
    assert "np[bold]x[/bold]" in row
