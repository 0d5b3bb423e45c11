"""YAML and JSON text to plain data that remembers lines: the parsers under `inputs/loader.py`.

YAML is built straight from the parser's event stream (libyaml's when available), not through PyYAML's
composer: libyaml's composer recurses in C and crashes the interpreter on a few hundred thousand nesting
levels, and building nodes first costs twice the time. Building from events never recurses, refuses
nesting deeper than `MAX_DEPTH` as soon as it is seen, and counts what aliases would expand to without
expanding them, so a billion-laughs document is refused after a few hundred bytes. JSON (valid JSON that is
not valid YAML 1.1) goes through `json`, after a scan for nesting depth that does not recurse either.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator
from typing import Any

import yaml

from karpplan.inputs.origins import LineDict, LineList, SourceFloat

MAX_DEPTH = 1000
MAX_ALIAS_EXPANSION = 1_000_000

_BaseLoader: type[yaml.SafeLoader] | type[yaml.CSafeLoader]
try:
    _BaseLoader = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _BaseLoader = yaml.SafeLoader

_HELM_SOURCE = re.compile(r"^#\s*Source:\s*(\S.*?)\s*$", re.MULTILINE)
# Plain decimal floats whose text can stand for the value (no YAML 1.1 underscores, sexagesimal, .inf).
_PLAIN_FLOAT = re.compile(r"^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")


class LoadProblem(Exception):
    """A problem that ends reading one file (raised inside the loader, turned into an `InputProblem`)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


# ------------------------------------------------------------------------------------------ YAML construction
class _EventSource(_BaseLoader):  # type: ignore[valid-type,misc]
    """libyaml's (or PyYAML's) parser; only its event stream is used."""


_TAG = "tag:yaml.org,2002:"
_STR, _NULL, _BOOL, _INT, _FLOAT = _TAG + "str", _TAG + "null", _TAG + "bool", _TAG + "int", _TAG + "float"
_TIMESTAMP, _MERGE_TAG, _VALUE = _TAG + "timestamp", _TAG + "merge", _TAG + "value"
_IMPLICIT: dict[str, list[tuple[str, re.Pattern[str]]]] = _EventSource.yaml_implicit_resolvers
_SAFE = yaml.constructor.SafeConstructor()
_MERGE = object()  # the `<<` merge key


def key_text(key: object) -> str:
    """Mapping keys as strings, the way sigs.k8s.io/yaml converts non-string YAML keys for JSON."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, int | float):
        return repr(key) if isinstance(key, SourceFloat) else str(key)
    raise ValueError("mapping keys must be scalars (strings)")


def _resolve_plain(value: str) -> str:
    """The implicit tag of a plain scalar (YAML 1.1 rules, as PyYAML resolves them)."""
    for tag, pattern in _IMPLICIT.get(value[:1], ()):
        if pattern.match(value):
            # A plain `=` is YAML 1.1's `!!value` key type to PyYAML, which has no constructor for it; Kubernetes'
            # reader keeps it as the string "=" (kube-prometheus CRDs list `enum: ['!=', =, =~, '!~']`).
            return _STR if tag == _VALUE else tag
    return _STR


def _scalar(event: yaml.ScalarEvent) -> object:
    """A scalar as Kubernetes' YAML reader would see it."""
    value: str = event.value
    tag = event.tag
    if tag is None or tag.startswith("!"):
        if tag is None and event.implicit[0]:
            tag = _resolve_plain(value)
        else:
            # A local tag (CloudFormation's `!Ref x`, `!Sub ...`) is no type Kubernetes' reader (go-yaml v2) knows:
            # it keeps the text, as it does a quoted scalar's.
            return value
    if tag in (_STR, _TIMESTAMP):
        # Timestamps are resolved only into time fields in Kubernetes; everywhere karpplan looks they are text.
        return value
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return _SAFE.bool_values[value.lower()]
    if tag in (_INT, _FLOAT):
        if ":" in value:  # YAML 1.1 sexagesimal (`12:30` would read as 750): Kubernetes keeps the text
            return value
        node = yaml.ScalarNode(tag, value)
        if tag == _INT:
            return int(_SAFE.construct_yaml_int(node))
        number = float(_SAFE.construct_yaml_float(node))
        return SourceFloat(number, value) if _PLAIN_FLOAT.match(value) else number
    if tag == _MERGE_TAG:
        return _MERGE
    raise ValueError(f"could not determine a constructor for the tag {tag!r}")


class _Collection:
    """A mapping or sequence being read: its items so far and what it expands to."""

    __slots__ = ("is_map", "line", "anchor", "items", "lines", "merges", "key", "key_line", "size")

    def __init__(self, is_map: bool, line: int, anchor: str | None) -> None:
        self.is_map = is_map
        self.line = line
        self.anchor = anchor
        self.items: list[Any] = []
        self.lines: list[int] = []
        self.merges: list[LineDict] = []
        self.key: object = None
        self.key_line = 0
        self.size = 1

    def add(self, value: object, line: int, size: int) -> None:
        self.size += size
        if not self.is_map:
            self.items.append(value)
            self.lines.append(line)
        elif self.key is None:
            if isinstance(value, LineDict | LineList):
                raise ValueError("mapping keys must be scalars (strings)")
            self.key = _MERGE if value is _MERGE else key_text(value)
            self.key_line = line
        else:
            if self.key is _MERGE:
                self._merge(value)
            else:
                self.items.append((self.key, value))
                self.lines.append(self.key_line)
            self.key = None

    def _merge(self, value: object) -> None:
        merged = value if isinstance(value, LineList) else [value]
        for item in merged:
            if not isinstance(item, LineDict):
                raise ValueError("a merge key (<<) needs a mapping or a list of mappings")
            self.merges.append(item)

    def build(self, top_level: bool = False) -> LineDict | LineList:
        if not self.is_map:
            built = LineList(self.items, line=self.line)
            built.item_lines = self.lines
            return built
        if self.merges:
            own = {key for key, _ in self.items}
            if len(own) != len(self.items):
                self._refuse_duplicate(top_level)
        mapping = LineDict(line=self.line)
        # Merged keys first, earlier merges winning; then the mapping's own keys override them.
        for merged in reversed(self.merges):
            for key, value in merged.items():
                mapping[key] = value
                mapping.key_lines[key] = merged.key_lines.get(key, 0)
        for (key, value), line in zip(self.items, self.lines, strict=True):
            mapping[key] = value
            mapping.key_lines[key] = line
        if not self.merges and len(mapping) != len(self.items):
            self._refuse_duplicate(top_level)
        return mapping

    def _refuse_duplicate(self, top_level: bool) -> None:
        """A key given twice in one mapping: Kubernetes' strict decoder refuses it ("already set in map")
        where a plain YAML reader would silently keep the last value. Two documents concatenated without
        `---` between them read as one mapping whose apiVersion and kind come twice."""
        first: dict[object, int] = {}
        for (key, _), line in zip(self.items, self.lines, strict=True):
            if key not in first:
                first[key] = line
                continue
            hint = ""
            if top_level and key in ("apiVersion", "kind"):
                hint = "; a missing '---' between two documents?"
            raise LoadProblem(line, f"duplicate key {json.dumps(key)} (first at line {first[key]}){hint}")


class _Anchors:
    """The anchors of one YAML document as its events are read: each anchored node with its size (nodes it
    expands to), the anchors still open (a collection being read), and how far aliases have expanded."""

    __slots__ = ("nodes", "open", "alias_extra")

    def __init__(self) -> None:
        self.nodes: dict[str, tuple[object, int]] = {}
        self.open: set[str] = set()
        self.alias_extra = 0

    def new_document(self) -> None:
        self.nodes.clear()
        self.alias_extra = 0

    def alias(self, name: str, line: int) -> tuple[object, int]:
        """The anchored node `*name` stands for, with its size; refuses a node inside itself, an unknown
        anchor and expansion past MAX_ALIAS_EXPANSION (the alias bomb)."""
        if name in self.open:
            raise LoadProblem(line, f"alias *{name} refers to a node that contains it")
        if name not in self.nodes:
            raise LoadProblem(line, f"invalid YAML: found undefined alias {name!r}")
        value, size = self.nodes[name]
        self.alias_extra += size - 1
        if self.alias_extra > MAX_ALIAS_EXPANSION:
            raise LoadProblem(
                line, f"YAML aliases expand to more than {MAX_ALIAS_EXPANSION:,} nodes; refusing an alias bomb"
            )
        return value, size


def _scalar_node(event: Any, line: int, anchors: _Anchors) -> object:
    try:
        value = _scalar(event)
    except (ValueError, TypeError, KeyError) as exc:
        raise LoadProblem(line, f"invalid YAML: {exc}") from exc
    if event.anchor is not None:
        anchors.nodes[event.anchor] = (value, 1)
    return value


def _open(event: Any, line: int, stack: list[_Collection], anchors: _Anchors) -> None:
    """A mapping or sequence starts: refused nested past MAX_DEPTH or with a tag YAML's safe loader refuses."""
    if len(stack) >= MAX_DEPTH:
        raise LoadProblem(line, f"nested more than {MAX_DEPTH} levels deep")
    # A local tag (`!GetAtt [a, b]`, `!If [...]`: CloudFormation) is ignored, as go-yaml v2 ignores it.
    if event.tag not in (None, _TAG + "map", _TAG + "seq", _TAG + "omap") and not event.tag.startswith("!"):
        raise LoadProblem(line, f"invalid YAML: could not determine a constructor for the tag {event.tag!r}")
    if event.anchor is not None:
        anchors.open.add(event.anchor)
    stack.append(_Collection(type(event) is yaml.MappingStartEvent, line, event.anchor))


def _close(stack: list[_Collection], anchors: _Anchors) -> tuple[object, int, int]:
    """The collection that ends, built: (value, size, line it started on)."""
    done = stack.pop()
    value = done.build(top_level=not stack)
    if done.anchor is not None:
        anchors.open.discard(done.anchor)
        anchors.nodes[done.anchor] = (value, done.size)
    return value, done.size, done.line


def parse_yaml(text: str) -> Iterator[tuple[int, int, object]]:
    """(start line, end line, data) per YAML document (data None for empty documents).

    Built straight from the parser's events: nothing recurses, nesting deeper than MAX_DEPTH is refused
    as soon as it is seen, and so are aliases expanding to more than MAX_ALIAS_EXPANSION nodes (sizes of
    anchored nodes are counted, never expanded).
    """
    source = _EventSource(text)
    stack: list[_Collection] = []
    anchors = _Anchors()
    root: object = None
    start = end = 0
    try:
        while True:
            event = source.get_event()
            kind = type(event)
            line = event.start_mark.line + 1
            if kind is yaml.ScalarEvent:
                value, size = _scalar_node(event, line, anchors), 1
            elif kind is yaml.AliasEvent:
                value, size = anchors.alias(event.anchor, line)
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                if not stack:
                    start = line
                _open(event, line, stack, anchors)
                continue
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                value, size, line = _close(stack, anchors)
            elif kind is yaml.DocumentStartEvent:
                anchors.new_document()
                root, start = None, event.end_mark.line + 1
                continue
            elif kind is yaml.DocumentEndEvent:
                yield start, end, root
                continue
            elif kind is yaml.StreamEndEvent:
                return
            else:
                continue
            if stack:
                try:
                    stack[-1].add(value, line, size)
                except ValueError as exc:
                    raise LoadProblem(line, f"invalid YAML: {exc}") from exc
            else:
                root, end = value, event.end_mark.line + 1
                if kind is not yaml.MappingEndEvent and kind is not yaml.SequenceEndEvent:
                    start = line  # a collection's start was noted when it opened
    finally:
        source.dispose()


def source_comments(text: str) -> tuple[list[int], list[str]]:
    lines: list[int] = []
    sources: list[str] = []
    for match in _HELM_SOURCE.finditer(text):
        lines.append(text.count("\n", 0, match.start()) + 1)
        sources.append(match.group(1))
    return lines, sources


def yaml_problem(exc: yaml.YAMLError, text: str) -> LoadProblem:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        detail = exc.problem or exc.context or "invalid YAML"
        if exc.problem == "exceeded maximum nesting depth":
            # PyYAML >= 6.0.3 stops deep flow collections in its scanner, before our own depth check sees them.
            return LoadProblem(line, f"nested more than {MAX_DEPTH} levels deep")
        if exc.context and exc.problem:
            detail = f"{exc.problem} ({exc.context})"
        return LoadProblem(line, f"invalid YAML: {detail}")
    if isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, exc.position) + 1
        return LoadProblem(line, f"invalid YAML: unacceptable character #x{exc.character:04x}")
    return LoadProblem(0, f"invalid YAML: {exc}")


def without_gc(documents: Iterator[tuple[int, int, object]]) -> Iterator[tuple[int, int, object]]:
    """Run the document generator with the cyclic garbage collector paused (restored between documents)."""
    while True:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            item = next(documents, None)
        finally:
            if was_enabled:
                gc.enable()
        if item is None:
            return
        yield item


def _from_json(value: object) -> object:
    """JSON values as the YAML loader would have built them (no line numbers are known)."""
    if isinstance(value, dict):
        out = LineDict()
        for key, item in value.items():
            out[key_text(key)] = _from_json(item)
        return out
    if isinstance(value, list):
        items = LineList(_from_json(item) for item in value)
        items.item_lines = [0] * len(items)
        return items
    return value


_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}\n]')


def _json_depth_problem(text: str) -> LoadProblem | None:
    """Nesting deeper than MAX_DEPTH, found by a scan that does not recurse (json.loads would)."""
    depth = 0
    line = 1
    for match in _JSON_TOKENS.finditer(text):
        token = match.group()
        if token == "\n":
            line += 1
        elif token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return LoadProblem(line, f"nested more than {MAX_DEPTH} levels deep")
        elif token in "]}":
            depth -= 1
        else:
            line += token.count("\n")
    return None


def parse_json(text: str) -> object:
    too_deep = _json_depth_problem(text)
    if too_deep is not None:
        raise too_deep
    try:
        return _from_json(json.loads(text, parse_float=lambda s: SourceFloat(float(s), s)))
    except json.JSONDecodeError as exc:
        raise LoadProblem(exc.lineno, f"invalid JSON: {exc.msg}") from exc
    except RecursionError as exc:  # nesting within MAX_DEPTH can still exceed a small interpreter stack
        raise LoadProblem(1, f"nested too deeply to read (the limit is {MAX_DEPTH} levels)") from exc
