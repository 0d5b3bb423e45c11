"""What a log line said, remembered: a log repeats the same few lines for many pods, differing only in their
timestamp, so a one-line record is looked up by its bytes with its timestamp cut out before it is decoded
and parsed again.

A remembered answer is the parser's own for the first line of that shape; a later line gets a copy with its
own timestamp wherever the first line's stood. Only answers that provably depend on the timestamp in just
that way are kept: the timestamp occurs once in the line, near its start, and every answer's time is
either that timestamp or none. The parser's state (the pod a `kubectl describe` is about) is part of the key.
"""

from __future__ import annotations

import re
from hashlib import blake2b
from itertools import islice

from karpplan.explain.structure import Parsed

# a log's years are 20xx: the literal start lets the regex engine skip to candidates (a timestamp it misses only
# makes the whole line the key)
_TIMESTAMP = re.compile(rb"20\d\d-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
HEAD_BYTES = 200  # where a log line's timestamp stands (after a `kubectl logs --prefix` / tailer prefix)
MAX_ENTRIES = 32_768  # ~13 MB of shapes; beyond it the older half is forgotten


class Remembered:
    """The answers for one shape of line: Parsed templates, each with whether its time is the line's."""

    __slots__ = ("answers", "signatures")

    def __init__(self, answers: list[tuple[Parsed, bool]], signatures: list[tuple[object, ...]]) -> None:
        self.answers = answers
        self.signatures = signatures


class Recall:
    def __init__(self, enabled: bool = True) -> None:
        self._known: dict[tuple[bytes, int, object], Remembered] = {}
        self._enabled = enabled
        self._parts: dict[tuple[object, ...], tuple[object, ...]] = {}

    @staticmethod
    def key(data: bytes, state: object) -> tuple[tuple[bytes, int, object], str | None]:
        """The line's shape (a 128-bit digest of its bytes with its timestamp cut out, and where that stood:
        a digest, not the bytes, so that tens of thousands of shapes stay a few MB) and the timestamp."""
        m = _TIMESTAMP.search(data, 0, HEAD_BYTES)
        if m is None:
            return (blake2b(data, digest_size=16).digest(), -1, state), None
        ts = m.group(0)
        if data.count(ts) != 1:
            # remembered as the whole line only: the same line, the same answer
            return (blake2b(data, digest_size=16).digest(), -1, state), None
        start = m.start()
        return (blake2b(data[:start] + data[m.end():], digest_size=16).digest(), start, state), ts.decode("ascii")

    def get(self, key: tuple[bytes, int, object]) -> Remembered | None:
        return self._known.get(key)

    def remember(self, key: tuple[bytes, int, object], ts: str | None, found: list[Parsed]) -> Remembered | None:
        """Keep what the parser said about a line of this shape (None when its answer does not carry over)."""
        answers: list[tuple[Parsed, bool]] = []
        for parsed in found:
            if ts is None or parsed.time is None:  # no timestamp cut out: the same line, the same answer
                answers.append((parsed, False))
            elif parsed.time == ts:
                answers.append((parsed, True))
            else:
                return None
        if not self._enabled:
            return None
        if len(self._known) >= MAX_ENTRIES:  # the older half goes: a log's current shapes stay
            for old in list(islice(self._known, MAX_ENTRIES // 2)):
                del self._known[old]
            if len(self._parts) >= MAX_ENTRIES:
                self._parts.clear()
        entry = Remembered(answers, [self._interned(p.signature()) for p in found])
        self._known[key] = entry
        return entry

    def _interned(self, signature: tuple[object, ...]) -> tuple[object, ...]:
        """`signature` with its pools' and reasons' parts shared with the equal ones of other shapes (a shape
        differs from many others only by its pod)."""
        parts = self._parts
        return tuple(parts.setdefault(part, part) if isinstance(part, tuple) else part for part in signature)

    @staticmethod
    def recalled(template: Parsed, timed: bool, ts: str | None) -> Parsed:
        """A remembered answer for a line with timestamp `ts`."""
        if not timed or ts == template.time:
            return template
        parsed: Parsed = object.__new__(Parsed)  # a copy of the frozen template, cheaper than replace
        parsed.__dict__.update(template.__dict__)
        parsed.__dict__["time"] = ts
        parsed.__dict__["message"] = template.message.replace(template.time or "", ts or "")
        return parsed
