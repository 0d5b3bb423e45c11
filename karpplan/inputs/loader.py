"""Read Kubernetes manifests from files, directories and stdin into `Document`s that know where they came from.

Accepted input: multi-document YAML (CRLF too), JSON, `kind: List` and any `*List` with `items` (each item
becomes a document of its own with its own line), Helm's `# Source: chart/templates/x.yaml` comments,
empty documents (skipped). So `helm template ... | karpplan plan -` and
`kubectl get nodes,pods -A -o yaml | karpplan plan -` both work.

Every problem (missing or unreadable file, file over the size limit, invalid YAML, alias bomb, a document
that is not a mapping...) becomes one `InputProblem` with `file:line`; all of them are collected and raised
together as one `InputError`.

YAML is built straight from the parser's event stream (libyaml's when available), not through PyYAML's
composer: libyaml's composer recurses in C and crashes the interpreter on a few hundred thousand nesting
levels, and building nodes first costs twice the time. Building from events never recurses, refuses
nesting deeper than `MAX_DEPTH` as soon as it is seen, and counts what aliases would expand to without
expanding them, so a billion-laughs document is refused after a few hundred bytes. The cyclic garbage
collector is paused while a file is read: the data is acyclic and millions of fresh containers would
otherwise trigger full collections over and over.
"""

from __future__ import annotations

import bisect
import gc
import json
import os
import re
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import yaml

from karpplan.errors import InputError, InputProblem, Origin
from karpplan.inputs.origins import LineDict, LineList, SourceFloat

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
MAX_DEPTH = 1000
MAX_ALIAS_EXPANSION = 1_000_000
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN_NAME = "<stdin>"

_BaseLoader: type[yaml.SafeLoader] | type[yaml.CSafeLoader]
try:
    _BaseLoader = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _BaseLoader = yaml.SafeLoader

_HELM_SOURCE = re.compile(r"^#\s*Source:\s*(\S.*?)\s*$", re.MULTILINE)
# Plain decimal floats whose text can stand for the value (no YAML 1.1 underscores, sexagesimal, .inf).
_PLAIN_FLOAT = re.compile(r"^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")


@dataclass(frozen=True, eq=False)
class Document:
    """One Kubernetes object as read: its body, where it starts, and Helm's `# Source:` if any."""

    body: LineDict
    origin: Origin
    source: str | None = None

    def _text(self, value: object) -> str:
        return value if isinstance(value, str) else ""

    @property
    def kind(self) -> str:
        return self._text(self.body.get("kind"))

    @property
    def api_version(self) -> str:
        return self._text(self.body.get("apiVersion"))

    @property
    def group(self) -> str:
        """The API group (`apps`, `karpenter.sh`; "" for the core group)."""
        version = self.api_version
        return version.split("/", 1)[0] if "/" in version else ""

    @property
    def metadata(self) -> LineDict:
        meta = self.body.get("metadata")
        return meta if isinstance(meta, LineDict) else LineDict()

    @property
    def name(self) -> str:
        return self._text(self.metadata.get("name"))

    @property
    def namespace(self) -> str:
        return self._text(self.metadata.get("namespace")) or "default"

    def __str__(self) -> str:
        return f"{self.kind or '(no kind)'}/{self.name or '(no name)'} at {self.origin}"


class _LoadProblem(Exception):
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
_TIMESTAMP, _MERGE_TAG = _TAG + "timestamp", _TAG + "merge"
_IMPLICIT: dict[str, list[tuple[str, re.Pattern[str]]]] = _EventSource.yaml_implicit_resolvers
_SAFE = yaml.constructor.SafeConstructor()
_MERGE = object()  # the `<<` merge key


def _key_text(key: object) -> str:
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
            return tag
    return _STR


def _scalar(event: yaml.ScalarEvent) -> object:
    """A scalar as Kubernetes' YAML reader would see it."""
    value: str = event.value
    tag = event.tag
    if tag is None or tag == "!":
        if tag is None and event.implicit[0]:
            tag = _resolve_plain(value)
        else:
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
            self.key = _MERGE if value is _MERGE else _key_text(value)
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

    def build(self) -> LineDict | LineList:
        if not self.is_map:
            built = LineList(self.items, line=self.line)
            built.item_lines = self.lines
            return built
        mapping = LineDict(line=self.line)
        # Merged keys first, earlier merges winning; then the mapping's own keys override them.
        for merged in reversed(self.merges):
            for key, value in merged.items():
                mapping[key] = value
                mapping.key_lines[key] = merged.key_lines.get(key, 0)
        for (key, value), line in zip(self.items, self.lines, strict=True):
            mapping[key] = value
            mapping.key_lines[key] = line
        return mapping


def _parse_yaml(text: str) -> Iterator[tuple[int, int, object]]:
    """(start line, end line, data) per YAML document (data None for empty documents).

    Built straight from the parser's events: nothing recurses, nesting deeper than MAX_DEPTH is refused
    as soon as it is seen, and so are aliases expanding to more than MAX_ALIAS_EXPANSION nodes (sizes of
    anchored nodes are counted, never expanded).
    """
    source = _EventSource(text)
    try:
        stack: list[_Collection] = []
        anchors: dict[str, tuple[object, int]] = {}
        open_anchors: set[str] = set()
        alias_extra = 0
        root: object = None
        start = end = 0
        while True:
            event = source.get_event()
            kind = type(event)
            line = event.start_mark.line + 1
            if kind is yaml.ScalarEvent or kind is yaml.AliasEvent:
                if kind is yaml.ScalarEvent:
                    try:
                        value = _scalar(event)
                    except (ValueError, TypeError, KeyError) as exc:
                        raise _LoadProblem(line, f"invalid YAML: {exc}") from exc
                    size = 1
                    if event.anchor is not None:
                        anchors[event.anchor] = (value, 1)
                else:
                    name = event.anchor
                    if name in open_anchors:
                        raise _LoadProblem(line, f"alias *{name} refers to a node that contains it")
                    if name not in anchors:
                        raise _LoadProblem(line, f"invalid YAML: found undefined alias {name!r}")
                    value, size = anchors[name]
                    alias_extra += size - 1
                    if alias_extra > MAX_ALIAS_EXPANSION:
                        raise _LoadProblem(
                            line,
                            f"YAML aliases expand to more than {MAX_ALIAS_EXPANSION:,} nodes; refusing an alias bomb",
                        )
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                if len(stack) >= MAX_DEPTH:
                    raise _LoadProblem(line, f"nested more than {MAX_DEPTH} levels deep")
                if event.tag not in (None, "!", _TAG + "map", _TAG + "seq", _TAG + "omap"):
                    raise _LoadProblem(line, f"invalid YAML: could not determine a constructor for the tag {event.tag!r}")
                if not stack:
                    start = line
                if event.anchor is not None:
                    open_anchors.add(event.anchor)
                stack.append(_Collection(kind is yaml.MappingStartEvent, line, event.anchor))
                continue
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                done = stack.pop()
                value, size, line = done.build(), done.size, done.line
                if done.anchor is not None:
                    open_anchors.discard(done.anchor)
                    anchors[done.anchor] = (value, size)
            elif kind is yaml.DocumentStartEvent:
                anchors.clear()
                alias_extra = 0
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
                    raise _LoadProblem(line, f"invalid YAML: {exc}") from exc
            else:
                root, end = value, event.end_mark.line + 1
                if kind is not yaml.MappingEndEvent and kind is not yaml.SequenceEndEvent:
                    start = line  # a collection's start was noted when it opened
    finally:
        source.dispose()


def _source_comments(text: str) -> tuple[list[int], list[str]]:
    lines: list[int] = []
    sources: list[str] = []
    for match in _HELM_SOURCE.finditer(text):
        lines.append(text.count("\n", 0, match.start()) + 1)
        sources.append(match.group(1))
    return lines, sources


def _yaml_problem(exc: yaml.YAMLError, text: str) -> _LoadProblem:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        detail = exc.problem or exc.context or "invalid YAML"
        if exc.problem == "exceeded maximum nesting depth":
            # PyYAML >= 6.0.3 stops deep flow collections in its scanner, before our own depth check sees them.
            return _LoadProblem(line, f"nested more than {MAX_DEPTH} levels deep")
        if exc.context and exc.problem:
            detail = f"{exc.problem} ({exc.context})"
        return _LoadProblem(line, f"invalid YAML: {detail}")
    if isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, exc.position) + 1
        return _LoadProblem(line, f"invalid YAML: unacceptable character #x{exc.character:04x}")
    return _LoadProblem(0, f"invalid YAML: {exc}")


def _without_gc(documents: Iterator[tuple[int, int, object]]) -> Iterator[tuple[int, int, object]]:
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
            out[_key_text(key)] = _from_json(item)
        return out
    if isinstance(value, list):
        items = LineList(_from_json(item) for item in value)
        items.item_lines = [0] * len(items)
        return items
    return value


_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}\n]')


def _json_depth_problem(text: str) -> _LoadProblem | None:
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
                return _LoadProblem(line, f"nested more than {MAX_DEPTH} levels deep")
        elif token in "]}":
            depth -= 1
        else:
            line += token.count("\n")
    return None


def _parse_json(text: str) -> object:
    too_deep = _json_depth_problem(text)
    if too_deep is not None:
        raise too_deep
    try:
        return _from_json(json.loads(text, parse_float=lambda s: SourceFloat(float(s), s)))
    except json.JSONDecodeError as exc:
        raise _LoadProblem(exc.lineno, f"invalid JSON: {exc.msg}") from exc
    except RecursionError as exc:  # nesting within MAX_DEPTH can still exceed a small interpreter stack
        raise _LoadProblem(1, f"nested too deeply to read (the limit is {MAX_DEPTH} levels)") from exc


# ------------------------------------------------------------------------------------------ documents
def _describe(value: object) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__


def _is_list_kind(body: LineDict) -> bool:
    kind = body.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and "items" in body


def _documents_of(
    data: object, origin: Origin, source: str | None, problems: list[InputProblem]
) -> Iterator[Document]:
    if data is None:
        return
    if not isinstance(data, LineDict):
        problems.append(
            InputProblem(origin, f"document is {_describe(data)}, not a mapping (a Kubernetes object with kind)")
        )
        return
    if not _is_list_kind(data):
        yield Document(data, origin, source)
        return
    items = data.get("items")
    if items is None:
        return
    items_origin = origin.at(data.key_lines.get("items"))
    if not isinstance(items, LineList):
        problems.append(InputProblem(items_origin, f"items: must be a list, not {_describe(items)}"))
        return
    # A typed list (PodList) may omit kind/apiVersion on its items: they are implied by the list.
    list_kind = str(data.get("kind"))
    item_kind = list_kind[: -len("List")] if list_kind != "List" else None
    for index, item in enumerate(items):
        item_origin = origin.at(items.item_lines[index] if index < len(items.item_lines) else 0)
        if not isinstance(item, LineDict):
            if item is not None:
                problems.append(
                    InputProblem(item_origin, f"items[{index}]: is {_describe(item)}, not a mapping (a Kubernetes object)")
                )
            continue
        if item_kind and "kind" not in item:
            item["kind"] = item_kind
            if "apiVersion" not in item and isinstance(data.get("apiVersion"), str):
                item["apiVersion"] = data["apiVersion"]
        yield from _documents_of(item, item_origin, source, problems)


def parse_documents(text: str, file: str, *, json_fallback: bool | None = None) -> list[Document]:
    """Parse one file's text. Raises InputError with every problem found in it."""
    problems: list[InputProblem] = []
    documents: list[Document] = []
    if json_fallback is None:
        json_fallback = file.lower().endswith(".json")
    try:
        source_lines, sources = _source_comments(text)
        previous_end = 0
        for start, end, data in _without_gc(_parse_yaml(text)):
            source: str | None = None
            # The last `# Source:` comment between the previous document and this one names its template.
            at = bisect.bisect_left(source_lines, start) - 1
            if at >= 0 and source_lines[at] > previous_end:
                source = sources[at]
            previous_end = end
            documents.extend(_documents_of(data, Origin(file, start), source, problems))
    except (yaml.YAMLError, _LoadProblem) as exc:
        problem = exc if isinstance(exc, _LoadProblem) else _yaml_problem(exc, text)
        looks_like_json = text.lstrip()[:1] in ("{", "[")
        if isinstance(exc, yaml.YAMLError) and (json_fallback or looks_like_json):
            # Some valid JSON is not valid YAML 1.1 (tabs between tokens, for one).
            try:
                recovered = _parse_json(text)
            except _LoadProblem as json_exc:
                if json_fallback:
                    problem = json_exc
            else:
                problems.clear()
                documents = list(_documents_of(recovered, Origin(file, 1), None, problems))
                if problems:
                    raise InputError(problems) from None
                return documents
        problems.append(InputProblem(Origin(file, problem.line), problem.message))
    except RecursionError:
        problems.append(InputProblem(Origin(file, 0), f"nested too deeply (more than {MAX_DEPTH} levels)"))
    if problems:
        raise InputError(problems)
    return documents


# ------------------------------------------------------------------------------------------ files
def _decode(data: bytes, file: str) -> str:
    # PowerShell's `kubectl get -o yaml > file` writes UTF-16 with a byte-order mark.
    encoding = "utf-16" if data.startswith((b"\xff\xfe", b"\xfe\xff")) else "utf-8-sig"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError.at(Origin(file, line), f"not valid {encoding.upper()[:6]} text") from exc
    # Universal newlines, as text-mode reading would give (CRLF and lone CR).
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _manifest_files(directory: Path) -> list[Path]:
    """Manifest files below a directory, hidden files and folders skipped.

    Sorted by path components, which is the order `kubectl apply -R` (Go's filepath.Walk) visits them.
    """
    found: list[Path] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.extend(
            Path(root) / name
            for name in files
            if not name.startswith(".") and name.lower().endswith(MANIFEST_SUFFIXES)
        )
    return sorted(found, key=lambda path: path.relative_to(directory).parts)


def _read_file(path: Path, label: str, max_bytes: int) -> str:
    origin = Origin(label, 0)
    try:
        info = path.stat()
    except FileNotFoundError as exc:
        raise InputError.at(origin, "no such file or directory") from exc
    except OSError as exc:
        raise InputError.at(origin, f"cannot read: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(info.st_mode):
        raise InputError.at(origin, "not a regular file")
    if info.st_size > max_bytes:
        raise InputError.at(
            origin, f"file is {info.st_size:,} bytes, over the {max_bytes:,}-byte limit (see --max-file-size)"
        )
    try:
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputError.at(origin, f"cannot read: {exc.strerror or exc}") from exc
    if len(data) > max_bytes:  # grew while we looked
        raise InputError.at(origin, f"file is over the {max_bytes:,}-byte limit (see --max-file-size)")
    return _decode(data, label)


def _read_stdin(stream: TextIO, max_bytes: int) -> str:
    origin = Origin(STDIN_NAME, 0)
    buffer = getattr(stream, "buffer", None)
    try:
        if buffer is not None:
            data = buffer.read(max_bytes + 1)
            if len(data) > max_bytes:
                raise InputError.at(origin, f"input is over the {max_bytes:,}-byte limit (see --max-file-size)")
            return _decode(data, STDIN_NAME)
        text = stream.read(max_bytes + 1)
    except OSError as exc:
        raise InputError.at(origin, f"cannot read: {exc.strerror or exc}") from exc
    if len(text) > max_bytes:
        raise InputError.at(origin, f"input is over the {max_bytes:,}-byte limit (see --max-file-size)")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _expand_paths(paths: Sequence[str], problems: list[InputProblem]) -> list[tuple[str, Path | None]]:
    """(label, path) per file to read, `None` path for stdin; directories expanded."""
    out: list[tuple[str, Path | None]] = []
    seen_stdin = False
    for raw in paths:
        if raw == "-":
            if seen_stdin:
                problems.append(InputProblem(Origin(STDIN_NAME, 0), "'-' (stdin) is given more than once"))
            else:
                out.append((STDIN_NAME, None))
            seen_stdin = True
            continue
        path = Path(raw)
        if path.is_dir():
            found = [(str(f), f) for f in _manifest_files(path)]
            if not found:
                problems.append(InputProblem(Origin(raw, 0), "directory holds no *.yaml, *.yml or *.json files"))
            out.extend(found)
        else:
            out.append((raw, path))
    return out


def read_documents(
    paths: Sequence[str], *, max_bytes: int = DEFAULT_MAX_BYTES, stdin: TextIO | None = None
) -> tuple[list[Document], list[InputProblem]]:
    """Every document that could be read, and the problems with the rest (never raises InputError)."""
    problems: list[InputProblem] = []
    documents: list[Document] = []
    for label, path in _expand_paths(paths, problems):
        try:
            if path is None:
                text = _read_stdin(stdin if stdin is not None else sys.stdin, max_bytes)
                documents.extend(parse_documents(text, label, json_fallback=False))
            else:
                documents.extend(parse_documents(_read_file(path, label, max_bytes), label))
        except InputError as exc:
            problems.extend(exc.problems)
        except MemoryError:
            problems.append(InputProblem(Origin(label, 0), "out of memory while reading this file"))
    return documents, problems


def load_documents(
    paths: Sequence[str], *, max_bytes: int = DEFAULT_MAX_BYTES, stdin: TextIO | None = None
) -> list[Document]:
    """Every document in `paths` (files, directories, `-` for stdin), in order.

    Raises InputError listing every problem in every file.
    """
    documents, problems = read_documents(paths, max_bytes=max_bytes, stdin=stdin)
    if problems:
        raise InputError(problems)
    return documents
