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
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO, NamedTuple

MAX_RECORD_LINES = 100_000
MAX_RECORD_BYTES = 8 << 20

_CLAUSE_START = re.compile(
    rb'^\s*"?\s*(?:incompatible with |compatible with nodepool |did not tolerate |incompatible requirements|'
    rb"no instance type |unsatisfiable topology constraint |all available instance types exceed |"
    rb"node limits have been exhausted |label \")")
_OPENING = re.compile(rb"^(?P<prefix>.*?)(?P<open>[{\[])\s*$")
# A terminal or a paste wraps long messages: a line that starts none of the records a log holds continues the
# message before it, when that message is one explain reads and is visibly unfinished.
_RECORD_START = re.compile(
    rb'^\s*(?:\{\s*"(?:level|time|ts|msg|message|log|severity|@timestamp|timestamp|kind|apiVersion|error|items|'
    rb'caller|logger|L|T|M)"|\{\s*$|\[|\d{4}-\d\d-\d\d|[IWEF]\d{4} |\d+[smhd]\s|<unknown>|(?:Normal|Warning)\s|Type\s|Name:|'
    rb"Namespace:|Events:|-{3}|#|(?:DEBUG|INFO|WARN|ERROR)\b|(?:[a-z0-9][-a-z0-9.]*\s+)?\S+\s+(?:Normal|Warning)\s)")
_CONTINUES = re.compile(rb"^\s*(?:and requirements|requirements=|resources=|\{\\?\"|\(no instance type|daemonset "
                        rb"overhead|key [\w./-]+,|\d+ (?:node|Insufficient|Too many))")
_LOWER_WORD = re.compile(rb"^\s*(?:[a-z][\w./-]*(?:\s|$)|[\])}])")
_TRIGGERS = (b"schedule pod", b"nodes are available", b"scale-up", b"incompatible", b"Fargate", b"no instance type")
MAX_WRAPPED_LINES = 20
MIN_PREFIX = 6  # shorter first words (`and`, `key`) may well begin a continuation
BLOCK_BYTES = 1 << 20


def block_lines(stream: BinaryIO, limit: int | None = None,
                progress: Callable[[int], None] | None = None) -> Iterator[bytes]:
    """The physical lines of a binary stream (without their `\\n`), up to `limit` bytes, read a block of whole
    lines at a time (one split per block, not one read per line); `progress` hears the bytes read after each."""
    carry = b""
    done = 0
    while True:
        n = BLOCK_BYTES if limit is None else min(BLOCK_BYTES, limit - done)
        chunk = stream.read(n) if n > 0 else b""
        if not chunk:
            break
        done += len(chunk)
        cut = chunk.rfind(b"\n") + 1
        if cut == 0:  # no line ends in this block
            carry += chunk
            continue
        lines = (carry + chunk[:cut] if carry else chunk[:cut]).split(b"\n")
        carry = chunk[cut:]
        lines.pop()  # after the last line end
        if progress is not None:
            progress(done)
        yield from lines
    if progress is not None:
        progress(done)
    if carry:
        yield carry


class Record(NamedTuple):
    """A logical record (a tuple: a million of them are made per 200 MB of log, a frozen dataclass costs more)."""

    line: int  # first physical line, 1-based
    lines: int  # physical lines it spans
    data: bytes

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(rb"[{}\[\]]")


def depth_change(data: bytes, in_string: bool = False) -> tuple[int, bool]:
    """Net `{[` minus `}]` outside JSON strings, and whether the line ends inside a string."""
    if not in_string and _BRACKET.search(data) is None and b"\\" not in data:
        return 0, data.count(b'"') % 2 == 1  # no bracket, no escape: quotes alone open and close strings
    if not in_string:
        # Whole strings taken out left to right; when no quote is left, none was left open and the brackets
        # that remain are the ones outside strings (else the byte loop below decides).
        bare = _JSON_STRING.sub(b"", data) if b'"' in data else data
        if b'"' not in bare:
            return bare.count(b"{") + bare.count(b"[") - bare.count(b"}") - bare.count(b"]"), False
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


def _same_head(data: bytes, line: bytes) -> bool:
    """Whether `line` starts with the word `data` starts with: a log tailer's prefix (stern's `pod container`,
    a file name), which starts each record and never a wrapped message's continuation."""
    head = data.split(None, 1)[:1]
    return bool(head) and len(head[0]) >= MIN_PREFIX and line.split(None, 1)[:1] == head


def _wrapped(pending: Record, line: bytes) -> bool:
    """Whether `line` continues `pending`: a message explain reads, left unfinished, and a line that starts no
    record of its own (checked in that order of cost; most lines of a log start a record)."""
    if pending.lines >= MAX_WRAPPED_LINES or _RECORD_START.match(line) or not line.strip():
        return False
    data = pending.data
    if not any(t in data for t in _TRIGGERS):
        return False
    if _same_head(data, line):
        return False
    if b'{"' in data[:64] or data.lstrip().startswith(b"{"):  # a JSON record: only an unclosed one continues
        depth, in_string = depth_change(data)
        return depth > 0 or in_string
    tail = data.rstrip()
    if tail.endswith((b",", b"=", b":", b" and")):
        return True
    if _CONTINUES.match(line) is not None:
        return True
    return not tail.endswith((b".", b'"', b"}", b")")) and _LOWER_WORD.match(line) is not None


def records(lines: Iterable[bytes]) -> Iterator[Record]:
    """Logical records from physical lines (with or without their line endings)."""
    pending: Record | None = None
    number = 0
    it = iter(lines)
    starts_record = _RECORD_START.match  # most lines start a record: tested here before _wrapped is called
    for raw in it:
        number += 1
        line = raw.rstrip(b"\r\n")
        if pending is not None:
            data = pending.data
            end = data[-2:]  # (the record's end, blanks aside: most records end in none, and the copy is saved)
            if (end[-1:] == b";" or end == b';"' or end[-1:].isspace() and data.rstrip().endswith((b";", b';"'))) \
                    and _CLAUSE_START.match(line):
                pending = Record(pending.line, pending.lines + 1, pending.data + b"\n" + line)
                continue
            if starts_record(line) is None and _wrapped(pending, line):
                pending = Record(pending.line, pending.lines + 1, pending.data + b" " + line.strip())
                continue
            yield pending
            pending = None
        last = line[-1:]  # _opening_prefix's first test, inline: most lines open nothing
        if last.isspace():
            last = line.rstrip()[-1:]
        prefix = _opening_prefix(line) if last == b"{" or last == b"[" else None
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
