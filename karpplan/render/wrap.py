"""Text wrapped for a narrow column at word and separator boundaries, never in the middle of a name's word.

rich folds a word longer than its column wherever the column ends (`argocd-applicationse` / `t-controller`).
Here lines break at spaces (a no-break space, `GLUE`, holds two words together: `web x2`, `+3 more`); a word
longer than the column breaks after a `/` (namespace from name), and a part still too long after a `-`, `.`,
`_` or `:` too; only a run of letters longer than the whole column is cut, with `…` (`~` on ASCII consoles)
where it was cut.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

GLUE = "\u00a0"
_SLASH_PIECES = re.compile(r"[^/]+/*|/+")
_SEPARATOR_PIECES = re.compile(r"[^-/._:]+[-/._:]*|[-/._:]+")


def _parts(word: str, width: int) -> list[list[str]]:
    """`word` cut after each `/`; a part longer than `width` cut further, after each separator."""
    return [[part] if len(part) <= width else _SEPARATOR_PIECES.findall(part) for part in _SLASH_PIECES.findall(word)]


def _elide(piece: str, width: int, mark: str) -> str:
    return piece if len(piece) <= width else piece[: max(1, width - len(mark))] + mark


def wrap_words(text: str, width: int, *, ascii_only: bool = False) -> list[str]:
    """`text` as lines of at most `width` characters (see the module docstring)."""
    width = max(1, width)
    mark = "~" if ascii_only else "…"
    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        if not word:
            continue
        joined = f"{current} {word}" if current else word
        if len(joined) <= width:
            current = joined
            continue
        if current:
            lines.append(current)
            current = ""
        if len(word) <= width:
            current = word
            continue
        for part in _parts(word, width):
            if current and len(current) + len("".join(part)) > width and current.endswith("/"):
                lines.append(current)  # the namespace on its line, the name whole on the next when it fits
                current = ""
            for piece in part:
                piece = _elide(piece, width, mark)
                if len(current) + len(piece) <= width:
                    current += piece
                else:
                    lines.append(current)
                    current = piece
    if current:
        lines.append(current)
    return [line.replace(GLUE, " ") for line in lines]


TABLE_GAP = 2  # characters between two columns of a table with collapsed padding and no edge padding


def first_column_width(table: Table, rows: Sequence[Sequence[Text | str]], width: int, *, minimum: int = 16) -> int:
    """What a table's first (foldable) column can hold on a console `width` wide once every other column has the
    width its header and these rows' cells need (capped by its `max_width`). rich squeezes the foldable column
    to what is left; text wrapped to a wider guess is folded again mid-word (`opensearch-logs-dat` / `a`)."""
    widths = []
    for index, column in enumerate(table.columns[1:], start=1):
        cells = [row[index] for row in rows if index < len(row)]
        need = max([Text(str(column.header)).cell_len,
                    *(max((Text(line).cell_len for line in str(cell).split("\n")), default=0) for cell in cells)])
        widths.append(min(need, column.max_width) if column.max_width else need)
    return max(minimum, width - TABLE_GAP * (len(table.columns) - 1) - sum(widths))
