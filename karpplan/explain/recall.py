"""What a log line said, remembered: a log repeats the same few lines for many pods, differing only in their
timestamp, so a one-line record is looked up by its bytes with its timestamp cut out before it is decoded
and parsed again.

A remembered answer is the parser's own for the first line of that shape; a later line gets a copy with its
own timestamp wherever the first line's stood. Only answers that provably depend on the timestamp in just
that way are kept: the timestamp occurs once in the line, near its start, and every answer's time is
either that timestamp or none. The parser's state (the pod a `kubectl describe` is about) is part of the key.

A shape is keyed by the 64-bit hash of its bytes and their length (kept instead of the bytes, so that tens of
thousands of shapes stay a few MB; Python's bytes hash, which the dict would compute anyway, costs a fifth of a
cryptographic digest). Two shapes of one length that share a hash would share an answer: among the at most
MAX_ENTRIES shapes held, a new one does so with a chance under 2^-48 (SipHash, keyed anew in each process).
"""

from __future__ import annotations

import re
from itertools import islice

from karpplan.explain.structure import Parsed

# a log's years are 20xx: the literal start lets the regex engine skip to candidates (a timestamp it misses only
# makes the whole line the key)
_TIMESTAMP = re.compile(rb"20\d\d-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
HEAD_BYTES = 200  # where a log line's timestamp stands (after a `kubectl logs --prefix` / tailer prefix)
MAX_ENTRIES = 32_768  # ~13 MB of shapes; beyond it the older half is forgotten


Key = tuple[int, int, int, object]


class Remembered:
    """The answers for one shape of line: Parsed templates, each with whether its time is the line's; and for
    each, what counting one more record of it takes (its item's signature, whether its time is the line's, its
    own time, the nodes it names, the template)."""

    __slots__ = ("answers", "signatures", "counts")

    def __init__(self, answers: list[tuple[Parsed, bool]], signatures: list[tuple[object, ...]]) -> None:
        self.answers = answers
        self.signatures = signatures
        self.counts = [(signature, timed, template.time, template.nodes, template)
                       for (template, timed), signature in zip(answers, signatures, strict=True)]


class Recall:
    def __init__(self, enabled: bool = True) -> None:
        self._known: dict[Key, Remembered] = {}
        self._enabled = enabled
        self._parts: dict[tuple[object, ...], tuple[object, ...]] = {}

    @staticmethod
    def key(data: bytes, state: object) -> tuple[Key, str | None]:
        """The line's shape (its bytes with its timestamp cut out, and where that stood) and the timestamp."""
        m = _TIMESTAMP.search(data, 0, HEAD_BYTES)
        if m is not None:
            start, end = m.span()
            ts = data[start:end]
            if data.count(ts) == 1:
                cut = data[:start] + data[end:]
                return (hash(cut), len(cut), start, state), ts.decode("ascii")
        # no timestamp, or one that occurs again: remembered as the whole line only (the same line, the same answer)
        return (hash(data), len(data), -1, state), None

    def get(self, key: Key) -> Remembered | None:
        return self._known.get(key)

    def remember(self, key: Key, ts: str | None, found: list[Parsed]) -> Remembered | None:
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
