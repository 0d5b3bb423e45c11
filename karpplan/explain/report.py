"""The Explanation document: read a log as a stream, collapse repeated records, word each item.

Memory is bounded by the number of distinct (pod, message) pairs (at most `MAX_ITEMS`; beyond that new
ones are counted in `summary.dropped`), never by the size of the log.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, BinaryIO

from karpplan.explain.describe_pod import DESCRIBE_START, node_taints_sentence
from karpplan.explain.parse import RecordParser, trigger_lines, worth_parsing
from karpplan.explain.recall import Recall
from karpplan.explain.stream import Hit, Plain, Record, block_records, blocks, records
from karpplan.explain.structure import Item, Parsed, PoolReasons, Reason
from karpplan.explain.wording import item_plain

API_VERSION = "karpplan.io/v1alpha1"
MAX_ITEMS = 100_000
MAX_UNRECOGNISED_LISTED = 50  # the first ones are listed (line and text); all are counted
MAX_UNRECOGNISED_TEXT = 300


@dataclass
class Explanation:
    lines: int = 0
    explained: int = 0
    records: int = 0
    dropped: int = 0
    context: int = 0  # `kubectl describe` structure read for context (Name:, Namespace:, the Events header rows)
    items: dict[tuple[object, ...], Item] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    node_taints: list[str] = field(default_factory=list)  # the Taints a pasted `kubectl describe node` shows
    unrecognised_lines: list[tuple[int, str]] = field(default_factory=list)  # (line, text), the first ones
    unrecognised_ends: dict[int, int] = field(default_factory=dict)  # a listed record of many lines: first -> last
    # one shared object per distinct reason / pool: thousands of items repeat a handful of them
    _shared: dict[object, Any] = field(default_factory=dict, repr=False, compare=False)
    # id of a parsed pools / reasons tuple -> (that tuple, its shared copy), while reading (not pickled to the parent)
    _same: dict[int, tuple[Any, Any]] = field(default_factory=dict, repr=False, compare=False)

    def _share(self, parsed: Parsed) -> Parsed:
        """`parsed` with its reasons and pools replaced by equal objects already held, when there are."""
        def reason(r: Reason) -> Reason:
            shared: Reason = self._shared.setdefault(repr(r), r)
            return shared

        def pool(p: PoolReasons) -> PoolReasons:
            reasons = tuple(reason(r) for r in p.reasons)
            key = ("pool", p.name, p.kind, repr(p.daemonset_overhead), tuple(map(id, reasons)))
            shared: PoolReasons | None = self._shared.get(key)
            if shared is None:
                shared = self._shared[key] = replace(p, reasons=reasons)
            return shared

        # records of one message share its pools and reasons tuples (parse remembers messages): share each once
        same = self._same
        pools = same.get(id(parsed.pools))
        if pools is None or pools[0] is not parsed.pools:
            pools = same[id(parsed.pools)] = (parsed.pools, tuple(pool(p) for p in parsed.pools))
        reasons = same.get(id(parsed.reasons))
        if reasons is None or reasons[0] is not parsed.reasons:
            reasons = same[id(parsed.reasons)] = (parsed.reasons, tuple(reason(r) for r in parsed.reasons))
        shared: Parsed = object.__new__(Parsed)  # dataclasses.replace, cheaper
        shared.__dict__.update(parsed.__dict__)
        shared.__dict__["pools"] = pools[1]
        shared.__dict__["reasons"] = reasons[1]
        return shared

    @property
    def unrecognised(self) -> int:
        return self.lines - self.explained - self.context

    def item_list(self) -> list[Item]:
        return sorted(self.items.values(), key=lambda i: i.line)

    def again(self, signature: tuple[object, ...], line: int, time: str | None, nodes: tuple[str, ...] = ()) -> bool:
        """Count one more record of the item with this signature, if there is one (what `add` does for it)."""
        item = self.items.get(signature)
        if item is None:
            return False
        item.count += 1
        item.last_line = line
        item.last_time = time
        if nodes:
            item.note_nodes(nodes)
        return True

    def add(self, parsed: Parsed, record: Record, signature: tuple[object, ...] | None = None) -> None:
        key = parsed.signature() if signature is None else signature
        item = self.items.get(key)
        if item is not None:
            item.count += 1
            item.last_line = record.line
            item.last_time = parsed.time
            if parsed.nodes:
                item.note_nodes(parsed.nodes)
            return
        if len(self.items) >= MAX_ITEMS:
            self.dropped += 1
            return
        item = self.items[key] = Item(self._share(parsed), record.line, last_line=record.line, last_time=parsed.time)
        if parsed.nodes:
            item.note_nodes(parsed.nodes)

    def merge(self, other: Explanation, line_offset: int) -> None:
        """Another part of the same log (read in parallel), whose line numbers start after `line_offset`."""
        self.lines += other.lines
        self.explained += other.explained
        self.records += other.records
        self.dropped += other.dropped
        self.context += other.context
        self.node_taints += [t for t in other.node_taints if t not in self.node_taints]
        room = MAX_UNRECOGNISED_LISTED - len(self.unrecognised_lines)
        self.unrecognised_lines.extend((line + line_offset, text) for line, text in other.unrecognised_lines[:max(room, 0)])
        self.unrecognised_ends.update((a + line_offset, b + line_offset) for a, b in other.unrecognised_ends.items())
        for key, item in sorted(other.items.items(), key=lambda kv: kv[1].line):
            item.line += line_offset
            item.last_line += line_offset
            mine = self.items.get(key)
            if mine is not None:
                mine.count += item.count
                mine.last_line = item.last_line
                mine.last_time = item.last_time
                mine.note_nodes(tuple(item.nodes))
            elif len(self.items) < MAX_ITEMS:
                item.parsed = self._share(item.parsed)
                self.items[key] = item
            else:
                self.dropped += item.count

    def finish(self) -> None:
        for item in self.items.values():
            item.plain = item_plain(item)
            if self.node_taints and (said := node_taints_sentence(self.node_taints, item.parsed.described,
                                                                   item.all_reasons_tuple())):
                seen = item.plain.rfind(" (Seen ")  # before the count that closes the paragraph
                item.plain = (item.plain[:seen] + " " + said + item.plain[seen:] if seen > 0
                              else item.plain + " " + said)

    def summary(self) -> dict[str, Any]:
        pods = {i.parsed.pod for i in self.items.values() if i.parsed.pod}
        summary: dict[str, Any] = {"lines": self.lines, "explained": self.explained,
                                   "unrecognised": self.unrecognised, "records": self.records,
                                   "items": len(self.items), "pods": len(pods)}
        if self.context:
            summary["context"] = self.context
        if self.dropped:
            summary["dropped"] = self.dropped
        return summary

    def header(self) -> dict[str, Any]:
        """The document without its items (render.write_document streams those one by one)."""
        return {"apiVersion": API_VERSION, "kind": "Explanation", "summary": self.summary()}

    def unrecognised_document(self) -> list[dict[str, Any]]:
        return [{"line": line, **({"lastLine": self.unrecognised_ends[line]} if line in self.unrecognised_ends else {}),
                 "text": text} for line, text in self.unrecognised_lines]

    def unrecognised_spans(self) -> list[str]:
        """The listed unrecognised records as their lines: `4`, or `1-9` for a record of many lines (a
        pretty-printed JSON document), so that they add up to the summary's count."""
        ends = self.unrecognised_ends
        return [f"{line}-{ends[line]}" if line in ends else str(line) for line, _ in self.unrecognised_lines]

    def note_unrecognised(self, line: int, data: bytes, span: int = 1) -> None:
        if len(self.unrecognised_lines) < MAX_UNRECOGNISED_LISTED and data.strip():
            text = data[:MAX_UNRECOGNISED_TEXT * 4].decode("utf-8", "replace").strip()
            self.unrecognised_lines.append((line, text[:MAX_UNRECOGNISED_TEXT]))
            if span > 1:
                self.unrecognised_ends[line] = line + span - 1

    def not_explained(self, line: int, span: int, data: bytes) -> None:
        """A record parsed to nothing: context (kubectl's framing lines) or unrecognised."""
        if _context_line(data):
            self.context += span
        else:
            self.note_unrecognised(line, data, span)

    def count_plain(self, run: Plain) -> None:
        """A run of lines no trigger word is in: unrecognised (the first ones listed)."""
        self.lines += run.lines
        for k in range(run.lines):
            if len(self.unrecognised_lines) >= MAX_UNRECOGNISED_LISTED:
                break
            self.note_unrecognised(run.line + k, run.block[run.start + k])

    def to_document(self) -> dict[str, Any]:
        doc = self.header()
        doc["items"] = [i.to_document() for i in self.item_list()]
        doc["unrecognised"] = self.unrecognised_document()
        if self.notes:
            doc["notes"] = list(self.notes)
        return doc


def explain_records(recs: Iterable[Record | Hit | Plain], explanation: Explanation | None = None, *,
                    remember: bool = True) -> Explanation:
    """Explain records in order (and count `Plain` runs); `remember=False` parses every record afresh (the
    plain path the tests hold the remembered one to)."""
    out = explanation if explanation is not None else Explanation()
    parser = RecordParser(out.node_taints)  # the Taints a described node shows go straight to the document
    recall = Recall(enabled=remember)
    key_of, recalled, held = recall.key, recall.get, out.items.get
    for rec in recs:
        if isinstance(rec, Plain):
            _describe_plain(out, rec, parser) if parser.describe.active else out.count_plain(rec)
            continue
        if isinstance(rec, Hit):
            data, line, span = rec.data, rec.line, 1
        else:
            data, line, span = rec.data, rec.line, rec.lines
            if span == 1 and not worth_parsing(data) and not parser.describe.active:
                out.lines += 1
                out.note_unrecognised(line, data)  # (listed while there is room)
                continue
        out.lines += span
        if _describe_field(out, parser, data, span):  # a field of the `kubectl describe pod` being read
            continue
        # a record of a shape seen before (only its timestamp differs) says what that one said
        state = parser.state
        key, ts = key_of(data, state)
        entry = recalled(key)
        if entry is not None and entry.answers:  # items seen again are counted; only new ones need a Parsed
            out.records += 1
            out.explained += span
            for known, timed, time, nodes, template in entry.counts:
                item = held(known)
                if item is None:
                    out.add(Recall.recalled(template, timed, ts), Record(line, span, data), known)
                    continue
                item.count += 1
                item.last_line = line
                item.last_time = ts if timed else time
                if nodes:
                    item.note_nodes(nodes)
            continue
        record = Record(line, span, data)
        if entry is None:
            found = parser.parse(record.text)
            signatures: Sequence[tuple[object, ...] | None] = [None] * len(found)
            if parser.state == state:  # a record that changes the parser's state is read every time
                entry = recall.remember(key, ts, found)
                if entry is not None:
                    signatures = entry.signatures
        else:
            found = []
        if not found:
            out.not_explained(line, span, data)
            continue
        out.records += 1
        out.explained += span
        for parsed, signature in zip(found, signatures, strict=True):
            out.add(parsed, record, signature)
    out._same.clear()
    return out


# `kubectl describe`'s structure around the Events rows (describe.go: "Events:", then a header row and its rule,
# or "Events:  <none>"), `kubectl get events`'s header row, and a condition's timestamps in `kubectl get -o yaml`
# (the line before a NodeClaim's or a pod's condition message); quoted (`> `) or in a k9s box too
_CONTEXT = re.compile(rb"(?:[\s>]|\xe2\x94[\x82\x83])*(?:(?:- )?(?:lastTransitionTime|lastProbeTime):\s*\S+\s*$|Name:|Namespace:|Events:\s*(?:<none>\s*)?$|Type\s+Reason\s+Age\s+From\s+Message(?:\s|\xe2\x94[\x82\x83])*$|"
                      rb"-{4}\s+-{6}\s+-{3,}\s+-{4}\s+-{7}(?:\s|\xe2\x94[\x82\x83])*$|(?:NAMESPACE\s+)?LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+"
                      rb"(?:SUBOBJECT\s+)?(?:SOURCE\s+)?MESSAGE\b)")


def _context_line(data: bytes) -> bool:
    """`kubectl describe` / `kubectl get events` lines that hold no event but frame them: the pod's name and namespace
    (the parser reads them for context) and the Events section's header rows. Counted as context, not unrecognised."""
    return _CONTEXT.match(data) is not None


def _describe_field(out: Explanation, parser: RecordParser, data: bytes, span: int) -> bool:
    """Whether a record is a field of a `kubectl describe` (counted as context; the parser keeps what it says)."""
    if not (parser.describe.active or DESCRIBE_START.match(data)) or not parser.describe_line(data.decode("utf-8", "replace")):
        return False
    out.context += span
    return True


def _describe_plain(out: Explanation, run: Plain, parser: RecordParser) -> None:
    """A run of lines with no trigger word inside a `kubectl describe`: its fields are context, the rest as usual."""
    for k in range(run.lines):
        data = run.block[run.start + k]
        out.lines += 1
        if parser.describe.active and parser.describe_line(data.decode("utf-8", "replace")):
            out.context += 1
        else:
            out.note_unrecognised(run.line + k, data)


def explain_blocks(stream: BinaryIO, limit: int | None = None,
                   progress: Callable[[int], None] | None = None) -> Explanation:
    """Explain a log (up to `limit` bytes of it) read a block at a time, in bounded memory (not finished)."""
    return explain_records(block_records(blocks(stream, limit, progress), trigger_lines))


def explain_stream(stream: BinaryIO, progress: Callable[[int], None] | None = None) -> Explanation:
    """Explain a whole log read a block at a time (bounded memory)."""
    out = explain_blocks(stream, progress=progress)
    out.finish()
    return out


def explain_text(text: str) -> Explanation:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    out = explain_records(records(line.encode() for line in lines))
    out.finish()
    return out
