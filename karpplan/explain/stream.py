"""The line reader: physical lines in, logical records out, in bounded memory.

- Pretty-printed JSON spread over many lines is joined (brace depth, strings respected), the log-tailer
  prefix of its first line (`[pod/x/controller] `, stern's `pod container `) stripped from the others;
  a record is never longer than `MAX_RECORD_LINES` lines / `MAX_RECORD_BYTES` bytes.
- A Karpenter error that a paste broke after `;` continues on the next line when that line starts a
  new clause (`incompatible with nodepool ...`).
- Everything else is one record per line. Lines are bytes until a record needs text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MAX_RECORD_LINES = 100_000
MAX_RECORD_BYTES = 8 << 20

_CLAUSE_START = re.compile(
    rb'^\s*"?\s*(?:incompatible with |compatible with nodepool |did not tolerate |incompatible requirements|'
    rb"no instance type |unsatisfiable topology constraint |all available instance types exceed |"
    rb"node limits have been exhausted |label \")")
_OPENING = re.compile(rb"^(?P<prefix>.*?)(?P<open>[{\[])\s*$")


@dataclass(frozen=True)
class Record:
    line: int  # first physical line, 1-based
    lines: int  # physical lines it spans
    data: bytes

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


def depth_change(data: bytes, in_string: bool = False) -> tuple[int, bool]:
    """Net `{[` minus `}]` outside JSON strings, and whether the line ends inside a string."""
    depth = 0
    escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x7B, 0x5B):
            depth += 1
        elif byte in (0x7D, 0x5D):
            depth -= 1
    return depth, in_string


def _opening_prefix(line: bytes) -> bytes | None:
    """The text before a pretty-printed JSON document's opening brace, or None when the line opens none."""
    if line.rstrip()[-1:] not in (b"{", b"["):
        return None
    m = _OPENING.match(line)
    if m is None:
        return None
    prefix = m.group("prefix")
    # `{` alone, or after a tailer prefix; not a `key: {` inside plain text or a one-line JSON value
    if prefix.strip() and (prefix.rstrip().endswith((b":", b",", b'"')) or b'{"' in prefix):
        return None
    depth, _ = depth_change(line[len(prefix):])
    return prefix if depth > 0 else None


def records(lines: Iterable[bytes]) -> Iterator[Record]:
    """Logical records from physical lines (with or without their line endings)."""
    pending: Record | None = None
    number = 0
    it = iter(lines)
    for raw in it:
        number += 1
        line = raw.rstrip(b"\r\n")
        if pending is not None:
            tail = pending.data.rstrip()
            if tail.endswith((b";", b';"')) and _CLAUSE_START.match(line):
                pending = Record(pending.line, pending.lines + 1, pending.data + b"\n" + line)
                continue
            yield pending
            pending = None
        prefix = _opening_prefix(line)
        if prefix is None:
            pending = Record(number, 1, line)
            continue
        first = number
        parts = [line[len(prefix):]]
        size = len(parts[0])
        depth, in_string = depth_change(parts[0])
        for raw2 in it:
            number += 1
            nxt = raw2.rstrip(b"\r\n")
            if prefix and nxt.startswith(prefix):
                nxt = nxt[len(prefix):]
            parts.append(nxt)
            size += len(nxt)
            change, in_string = depth_change(nxt, in_string)
            depth += change
            if depth <= 0:
                break
            if len(parts) >= MAX_RECORD_LINES or size >= MAX_RECORD_BYTES:
                break
        pending = Record(first, len(parts), b"\n".join(parts))
    if pending is not None:
        yield pending
