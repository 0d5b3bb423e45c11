"""The line reader: physical lines in, logical records out, in bounded memory.

- Pretty-printed JSON spread over many lines is joined (brace depth, strings respected), the log-tailer
  prefix of its first line (`[pod/x/controller] `, stern's `pod container `) stripped from the others;
  a record is never longer than `MAX_RECORD_LINES` lines / `MAX_RECORD_BYTES` bytes.
- A Karpenter error that a paste broke after `;` continues on the next line when that line starts a
  new clause (`incompatible with nodepool ...`).
- Everything else is one record per line. Lines are bytes until a record needs text.

A log is read a block of lines at a time (`blocks`, `block_records`): the lines no trigger word is in come out
as `Plain` runs (counted, never looked at one by one) and a trigger line that stands alone as a `Hit`; only the
lines that may join a neighbour (loose ends, JSON documents, possible wraps) go through `LineReader`, which is
what `records` runs on every line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import compress, repeat
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
    rb"Namespace:|Events:|-{3}|#|(?:DEBUG|INFO|WARN|ERROR)\b|(?:[a-z0-9][-a-z0-9.]*\s+)?\S+\s+(?:Normal|Warning)\s|"
    rb"pod (?:didn't )?trigger(?:ed)? scale-up|\d+/\d+ nodes are available)")  # a message of its own, pasted bare
_CONTINUES = re.compile(rb"^\s*(?:fit failure on node \(|and requirements|requirements=|resources=|\{\\?\"|\(no instance type|daemonset "
                        rb"overhead|key [\w./-]+,|\d+ (?:node|Insufficient|Too many)|preemption: \d+/\d+ nodes)")
# `incompatible with provisioner "x"` with its reason on the next line: the clause's comma became the line break
_POOL_HEAD_END = re.compile(rb'incompatible with (?:provisioner|nodepool) "[^"]*"\s*$')
_POOL_REASON = re.compile(rb"^\s*(?:did not tolerate |incompatible requirements|no instance type |daemonset overhead|"
                          rb"all available instance types |unsatisfiable topology )")
# k9s draws its box around a wrapped row: `│ ... last wor │` then `│ d ... │`; one blank pads each side of a border
_BOX_WRAP = re.compile(rb"(?<=\S)(?P<pad>[ \t]*)\xe2\x94[\x82\x83][ \t]*$")
_BOX_ROW = re.compile(rb"^[ \t]*\xe2\x94[\x82\x83](?P<pad>[ \t]*)(?=\S)")
_LOWER_WORD = re.compile(rb"^\s*(?:[a-z][\w./-]*(?:\s|$)|[\])}])")
_TRIGGERS = (b"schedule pod", b"nodes are available", b"fit in any node", b"predicate ", b"scale-up", b"incompatible", b"Fargate",
             b"no instance type", b"is invalid: ", b"fit failure on node (", b"AzureCredential",
             b"marked as unschedulable", b"Multi-Attach error")
# a JSON record's opening brace, after a tailer's prefix (not a value's: `daemonset overhead={"cpu":...}`)
_JSON_OPEN = re.compile(rb'(?:^|[\s:])\{"')
_POOL_CLAUSE = re.compile(rb"^\s*(?:in)?compatible with (?:nodepool|provisioner)")
MAX_WRAPPED_LINES = 20
# a JSON record printed a field a line with its opening brace on the first field's line (`{"level":"ERROR",`): each
# next line is one of its members (`"time":"...",`) or its closing brace, joined whatever the record says
_JSON_MEMBER = re.compile(rb'^\s*(?:"[^"\n]{1,80}"\s*:|\}\s*,?\s*$)')
MAX_MEMBER_LINES = 500
MIN_PREFIX = 6  # shorter first words (`and`, `key`) may well begin a continuation
BLOCK_BYTES = 1 << 20


def blocks(stream: BinaryIO, limit: int | None = None,
           progress: Callable[[int], None] | None = None) -> Iterator[list[bytes]]:
    """The physical lines of a binary stream (without their `\\n`), up to `limit` bytes, a block of whole lines at
    a time (one read and one split per block, not one per line); `progress` hears the bytes read after each."""
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
        yield lines
    if progress is not None:
        progress(done)
    if carry:
        yield [carry]


_QUOTE = re.compile(rb"^(?:>[ \t]?)+")  # a GitHub / e-mail quote's marks, nested ones too: `> > `


def block_lines(stream: BinaryIO, limit: int | None = None,
                progress: Callable[[int], None] | None = None) -> Iterator[bytes]:
    """`blocks`, line by line."""
    for lines in blocks(stream, limit, progress):
        yield from lines


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
    if b"\\" not in data:  # no escape: each quote opens or closes a string
        if _BRACKET.search(data) is None:
            return 0, in_string != (data.count(b'"') % 2 == 1)
        outside = b"".join(data.split(b'"')[in_string::2])
        return (outside.count(b"{") + outside.count(b"[") - outside.count(b"}") - outside.count(b"]"),
                in_string != (data.count(b'"') % 2 == 1))
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
    if _RECORD_START.match(line) or not line.strip():
        return False
    data = pending.data
    if data[:2] == b'{"' and pending.lines < MAX_MEMBER_LINES and _JSON_MEMBER.match(line):
        depth, in_string = depth_change(data)
        if depth > 0 and not in_string:
            return True
    if pending.lines >= MAX_WRAPPED_LINES:
        return False
    if not any(t in data for t in _TRIGGERS):
        return False
    if _same_head(data, line):
        return False
    if _JSON_OPEN.search(data, 0, 64) or data.lstrip().startswith(b"{"):  # a JSON record: only an unclosed one continues
        depth, in_string = depth_change(data)
        return depth > 0 or in_string
    tail = data.rstrip()
    if tail.endswith((b",", b"=", b":", b" and")):
        return True
    if tail.endswith(b'"') and _POOL_REASON.match(line) and _POOL_HEAD_END.search(tail):
        return True
    if _CONTINUES.match(line) is not None:
        return True
    if tail.count(b"(") > tail.count(b")") and line.lstrip()[:1].islower() and not _POOL_CLAUSE.match(line):
        return True  # `(based on` / `hinting). Ignoring in scale up.`; a pool's clause on its own line starts anew
    return not tail.endswith((b".", b'"', b"}", b")")) and _LOWER_WORD.match(line) is not None


# The words of the messages explain reads: a terminal that wraps at a fixed width cuts one of them in two
# (`incomp` / `atible with provisioner`), and the halves join without the space a wrap between words needs.
_GRAMMAR_WORDS = frozenset(
    b"incompatible provisioner provisioners nodepool nodepools requirements requirement tolerate satisfied resources "
    b"instance topology constraint constraints daemonset overhead available kubernetes schedule unschedulable "
    b"affinity selector preemption insufficient persistent volume volumes untolerated exceed limits "
    b"capacity-type instance-type instance-category instance-family instance-generation topology.kubernetes.io/zone "
    b"karpenter.sh/nodepool karpenter.sh/provisioner-name kubernetes.io/arch kubernetes.io/os".split())
_TAIL_WORD = re.compile(rb"([\w./-]+)$")
_HEAD_WORD = re.compile(rb"^([\w./-]+)")


def _joint(data: bytes, line: bytes) -> bytes:
    """What joins a wrapped line to the text before it: nothing when the wrap cut a grammar word in two, else a
    space."""
    if data.endswith(b'"') and _POOL_REASON.match(line) and _POOL_HEAD_END.search(data):
        return b", "
    if data.endswith(b"=") and line.lstrip().startswith(b"{"):  # `daemonset overhead=` / `{"cpu":...}`: one value
        return b""
    tail, head = _TAIL_WORD.search(data), _HEAD_WORD.match(line.lstrip())
    if tail is None or head is None or data[-1:].isspace():
        return b" "
    a, b = tail.group(1).lower(), head.group(1).lower()
    whole = (a + b).rstrip(b",;:.")
    return b"" if whole in _GRAMMAR_WORDS and a not in _GRAMMAR_WORDS and b.rstrip(b",;:.") not in _GRAMMAR_WORDS \
        else b" "


class LineReader:
    """Physical lines fed one at a time, logical records out: `feed` returns the record a line completes (the one
    before it, when the line starts a new one), `close` the last one."""

    __slots__ = ("number", "pending", "open", "_prefix", "_first", "_parts", "_size", "_depth", "_in_string")

    def __init__(self) -> None:
        self.number = 0  # physical lines fed
        self.pending: Record | None = None  # the record the last line belongs to, while it may still grow
        self.open = False  # inside a pretty-printed JSON document
        self._prefix = b""
        self._first = 0
        self._parts: list[bytes] = []
        self._size = 0
        self._depth = 0
        self._in_string = False

    @property
    def settled(self) -> bool:
        """Whether the next line's fate depends on no more than the last line: no JSON document is open and the
        pending record (if any) is that one line."""
        return not self.open and (self.pending is None or self.pending.lines == 1)

    def feed(self, raw: bytes) -> Record | None:
        if self.open:
            self.json_lines((raw,), 0)
            return None
        self.number += 1
        line = raw.rstrip(b"\r\n")
        done = pending = self.pending
        if pending is not None:
            data = pending.data
            # a quoted paste (`> ` before each line): the next line is judged, and joined, without its marks (the
            # parser reads the record's first line without them too); a line that starts a record keeps them
            inner = _QUOTE.sub(b"", line) if line[:1] == b">" and data[:1] == b">" else line
            end = data[-2:]  # (the record's end, blanks aside: most records end in none, and the copy is saved)
            if (end[-1:] == b";" or end == b';"' or end[-1:].isspace() and data.rstrip().endswith((b";", b';"'))) \
                    and _CLAUSE_START.match(inner):
                self.pending = Record(pending.line, pending.lines + 1, data + b"\n" + inner)
                return None
            if b"\xe2\x94" in data[-32:] and (row := _BOX_ROW.match(inner)) is not None and (
                    box := _BOX_WRAP.search(data, max(0, len(data) - 32))) is not None and any(
                    tr in data for tr in _TRIGGERS) and _RECORD_START.match(
                    inner[row.end():]) is None:  # k9s wrapped a row at its box: `... resul │` / `│ t. ...`
                cut = box.group("pad") == b" " and row.group("pad") == b" "  # one pad each side: mid-word
                self.pending = Record(pending.line, pending.lines + 1,
                                      data[:box.start()] + (b"" if cut else b" ") + inner[row.end():].rstrip())
                return None
            if _RECORD_START.match(inner) is None and _wrapped(pending, inner):
                self.pending = Record(pending.line, pending.lines + 1, data + _joint(data, inner) + inner.strip())
                return None
        last = line[-1:]  # _opening_prefix's first test, inline: most lines open nothing
        if last.isspace():
            last = line.rstrip()[-1:]
        prefix = _opening_prefix(line) if last == b"{" or last == b"[" else None
        if prefix is None:
            self.pending = Record(self.number, 1, line)
            return done
        self.pending = None
        self.open = True
        self._prefix = prefix
        self._first = self.number
        first = line[len(prefix):]
        self._parts = [first]
        self._size = len(first)
        self._depth, self._in_string = depth_change(first)
        return done

    def json_lines(self, lines: Sequence[bytes], i: int) -> int:
        """Read `lines[i:]` into the open JSON document until it closes (or the lines end); where it stopped."""
        prefix = self._prefix
        parts = self._parts
        size, depth, in_string = self._size, self._depth, self._in_string
        start = i
        n = len(lines)
        closed = False
        while i < n:
            line = lines[i].rstrip(b"\r\n")
            i += 1
            if prefix and line.startswith(prefix):
                line = line[len(prefix):]
            parts.append(line)
            size += len(line)
            change, in_string = depth_change(line, in_string)
            depth += change
            if depth <= 0 or len(parts) >= MAX_RECORD_LINES or size >= MAX_RECORD_BYTES:
                closed = True
                break
        self.number += i - start
        self._size, self._depth, self._in_string = size, depth, in_string
        if closed:
            self._close_json()
        return i

    def _close_json(self) -> None:
        self.pending = Record(self._first, len(self._parts), b"\n".join(self._parts))
        self.open = False
        self._parts = []

    def close(self) -> Record | None:
        """The last record (a JSON document the lines ended inside included)."""
        if self.open:
            self._close_json()
        last, self.pending = self.pending, None
        return last


def records(lines: Iterable[bytes]) -> Iterator[Record]:
    """Logical records from physical lines (with or without their line endings)."""
    reader = LineReader()
    feed = reader.feed
    for raw in lines:
        record = feed(raw)
        if record is not None:
            yield record
    last = reader.close()
    if last is not None:
        yield last


class Plain(NamedTuple):
    """A run of one-line records that hold no trigger word: counted, never decoded (`block[start:start + lines]`)."""

    line: int  # the first one's line, 1-based
    lines: int  # how many
    block: list[bytes]
    start: int


class Hit(NamedTuple):
    """A one-line record known to hold a trigger word (a `Record` of one line, tested already)."""

    line: int
    data: bytes


# A line that may join the line before it or the lines after it ends in one of these (a clause cut after `;`,
# trailing blanks, a pretty-printed JSON document's opening bracket).
_LOOSE_ENDS = (b";", b';"', b"{", b"[", b" ", b"\t", b"\r", b"\x0b", b"\x0c")


def _marked(lines: list[bytes], hit: list[int]) -> tuple[list[int], set[int]]:
    """The lines of a block that are not plain (ascending, then `len(lines)`), and among them those `LineReader`
    must read itself: the first and the last line, a line with a loose end and the line after it, and a line
    with a trigger word followed by one that starts no record (which may continue its message). The other
    marked lines are one-line records with a trigger word; the unmarked ones, one-line records without."""
    n = len(lines)
    loose = list(compress(range(n), map(bytes.endswith, lines, repeat(_LOOSE_ENDS))))
    # and a JSON record's first line that leaves it open after a member (`{"level":"ERROR",`): its members follow
    loose.extend(i for i in compress(range(n), map(bytes.endswith, lines, repeat(b","))) if lines[i][:2] == b'{"')
    reader = {0, n - 1, *loose}
    reader.update(i + 1 for i in loose)
    after = [i + 1 for i in hit if i + 1 < n]
    for i, start in zip(after, map(_RECORD_START.match, map(lines.__getitem__, after)), strict=True):
        if start is None:
            reader.update((i - 1, i))
    reader.discard(n)
    reader.discard(-1)
    marked = sorted(reader.union(hit))
    marked.append(n)
    return marked, reader


def block_records(blocks: Iterable[list[bytes]],
                  trigger_lines: Callable[[list[bytes]], list[int]]) -> Iterator[Record | Hit | Plain]:
    """`records` over blocks of physical lines, most of them never looked at one by one: runs of lines with no
    trigger word come as `Plain` runs, a line with one that stands alone as a `Hit`; only the lines `_marked`
    leaves to `LineReader` (and the lines of a JSON document or a joined message) are read as `records` reads
    them. `trigger_lines` names the lines of a block a trigger word is in (ascending)."""
    reader = LineReader()
    feed = reader.feed
    for lines in blocks:
        n = len(lines)
        base = reader.number  # lines before this block
        marked, needs_reader = _marked(lines, trigger_lines(lines))
        i = 0
        for j in marked:
            if j < i:  # read with a JSON document
                continue
            while i < j and not reader.settled:  # after a JSON document or a joined record: line by line
                if reader.open:
                    i = reader.json_lines(lines, i)
                    continue
                record = feed(lines[i])
                i += 1
                if record is not None:
                    yield record
            if i > j:
                continue
            if i < j:
                if reader.pending is not None:
                    yield reader.pending
                    reader.pending = None
                yield Plain(base + i + 1, j - i, lines, i)
            if j == n:
                break
            pending = reader.pending
            if j in needs_reader or reader.open or pending is not None and pending.lines > 1:
                reader.number = base + j
                record = feed(lines[j])
                if record is not None:
                    yield record
                i = j + 1
                if reader.open:
                    i = reader.json_lines(lines, i)
            else:
                if pending is not None:
                    yield pending
                    reader.pending = None
                yield Hit(base + j + 1, lines[j])
                i = j + 1
        reader.number = base + n
    last = reader.close()
    if last is not None:
        yield last
