"""Read Kubernetes manifests from files, directories and stdin into `Document`s that know where they came from.

Accepted input: multi-document YAML (CRLF too), JSON, `kind: List` and any `*List` with `items` (each item
becomes a document of its own with its own line), Helm's `# Source: chart/templates/x.yaml` comments,
empty documents (skipped). So `helm template ... | karpplan plan -` and
`kubectl get nodes,pods -A -o yaml | karpplan plan -` both work.

Every problem (missing or unreadable file, file over the size limit, invalid YAML, alias bomb, a document
that is not a mapping...) becomes one `InputProblem` with `file:line` (but a list of data in a file found by
reading a directory, a repository's fixtures, is skipped as a mapping without kind is); all of them are collected and raised
together as one `InputError`.

YAML and JSON parsing (no recursion, depth and alias-bomb guards) is in `inputs/parsers.py`. The cyclic
garbage collector is paused while a file is read.
"""

from __future__ import annotations

import bisect
import os
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import yaml

from karpplan.errors import InputError, InputProblem, Origin
from karpplan.inputs.origins import LineDict, LineList
from karpplan.inputs.parsers import (
    MAX_DEPTH,
    LoadProblem,
    parse_json,
    parse_yaml,
    source_comments,
    without_gc,
    yaml_problem,
)
from karpplan.inputs.placeholders import helm_template_problem

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN_NAME = "<stdin>"


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


def _data_list(data: object) -> bool:
    """A top-level list none of whose items is written as an object (no `kind`): a data file (a load generator's
    people.json, kubescape-exceptions.json, a kustomize replacements list), not manifests written as a list."""
    return isinstance(data, list) and not any(isinstance(item, dict) and "kind" in item for item in data)


def _documents_of(
    data: object, origin: Origin, source: str | None, problems: list[InputProblem], walked: bool = False
) -> Iterator[Document]:
    if data is None:
        return
    if walked and _data_list(data):
        # Found by reading a directory (`karpplan lint .` on a repository): skipped as not a Kubernetes object,
        # as a mapping without kind is; named on the command line, it is refused.
        yield Document(LineDict(line=origin.line), origin, source)
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


def parse_documents(text: str, file: str, *, json_fallback: bool | None = None,
                    walked: bool = False) -> list[Document]:
    """Parse one file's text. Raises InputError with every problem found in it. `walked`: the file was found by
    reading a directory, so a top-level list of data is skipped, not refused (`_documents_of`)."""
    problems: list[InputProblem] = []
    documents: list[Document] = []
    if json_fallback is None:
        json_fallback = file.lower().endswith(".json")
    try:
        source_lines, sources = source_comments(text)
        previous_end = 0
        for start, end, data in without_gc(parse_yaml(text)):
            source: str | None = None
            # The last `# Source:` comment between the previous document and this one names its template.
            at = bisect.bisect_left(source_lines, start) - 1
            if at >= 0 and source_lines[at] > previous_end:
                source = sources[at]
            previous_end = end
            documents.extend(_documents_of(data, Origin(file, start), source, problems, walked))
    except (yaml.YAMLError, LoadProblem) as exc:
        problem = exc if isinstance(exc, LoadProblem) else yaml_problem(exc, text)
        looks_like_json = text.lstrip()[:1] in ("{", "[")
        if isinstance(exc, yaml.YAMLError) and (json_fallback or looks_like_json):
            # Some valid JSON is not valid YAML 1.1 (tabs between tokens, for one).
            try:
                recovered = parse_json(text)
            except LoadProblem as json_exc:
                if json_fallback:
                    problem = json_exc
            else:
                problems.clear()
                documents = list(_documents_of(recovered, Origin(file, 1), None, problems, walked))
                if problems:
                    raise InputError(problems) from None
                return documents
        helm = helm_template_problem(text, file, problem.line)
        problems.append(InputProblem(Origin(file, helm[0]), helm[1]) if helm else
                        InputProblem(Origin(file, problem.line), problem.message))
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


CHART_FILE = "Chart.yaml"


def _manifest_files(directory: Path) -> list[Path]:
    """Manifest files below a directory, hidden files and folders skipped.

    A Helm chart below the directory (a folder holding Chart.yaml: a repository's `karpplan lint .`) is read as
    its Chart.yaml alone, which says it was not rendered (`inputs/charts.py`): its templates are Go templating,
    not objects, and its values.yaml no object. The directory given being the chart itself, it is read whole
    (its templates are what was asked for, and each says how to render it).
    Sorted by path components, which is the order `kubectl apply -R` (Go's filepath.Walk) visits them.
    """
    found: list[Path] = []
    for root, dirs, files in os.walk(directory):
        if CHART_FILE in files and Path(root) != directory:
            dirs[:] = []
            found.append(Path(root) / CHART_FILE)
            continue
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


def _expand_paths(paths: Sequence[str], problems: list[InputProblem]) -> list[tuple[str, Path | None, bool]]:
    """(label, path, found by reading a directory) per file to read, `None` path for stdin; directories expanded. A file named twice (itself and
    by its directory, `karpplan lint pool.yaml .`) is read once, where first named: its objects are not "defined
    twice"."""
    out: list[tuple[str, Path | None, bool]] = []
    seen_stdin = False
    seen: set[str] = set()
    for raw in paths:
        if raw == "-":
            if seen_stdin:
                problems.append(InputProblem(Origin(STDIN_NAME, 0), "'-' (stdin) is given more than once"))
            else:
                out.append((STDIN_NAME, None, False))
            seen_stdin = True
            continue
        path = Path(raw)
        walked = path.is_dir()
        if walked:
            found = [(str(f), f) for f in _manifest_files(path)]
            if not found:
                problems.append(InputProblem(Origin(raw, 0), "directory holds no *.yaml, *.yml or *.json files"))
        else:
            found = [(raw, path)]
        for label, file in found:
            key = os.path.realpath(file)
            if key not in seen:
                seen.add(key)
                out.append((label, file, walked))
    return out


def read_documents(
    paths: Sequence[str], *, max_bytes: int = DEFAULT_MAX_BYTES, stdin: TextIO | None = None,
    texts: dict[str, str] | None = None,
) -> tuple[list[Document], list[InputProblem]]:
    """Every document that could be read, and the problems with the rest (never raises InputError).

    With `texts`, each file's text as parsed (newlines made `\n`) is kept there by its label (`<stdin>` for
    `-`), so what reads the documents later (lint's columns) need not read a file again: stdin cannot be."""
    problems: list[InputProblem] = []
    documents: list[Document] = []
    for label, path, walked in _expand_paths(paths, problems):
        try:
            if path is None:
                text = _read_stdin(stdin if stdin is not None else sys.stdin, max_bytes)
            else:
                text = _read_file(path, label, max_bytes)
            if texts is not None:
                texts[label] = text
            documents.extend(parse_documents(text, label, json_fallback=False if path is None else None,
                                             walked=walked))
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
