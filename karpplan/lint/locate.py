"""Where a field is: the line of a Kubernetes field path in a loaded document, and its column in the text.

Paths are the API server's (`spec.template.spec.tolerations[0].operator`, `nodeSelector[kubernetes.io/arch]`);
keys holding dots (`kubernetes.io/arch`) are matched against the mapping's own keys, longest first.
"""

from __future__ import annotations

import re

from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict, LineList

_INDEX = re.compile(r"^\[(\d+)\]")


def _step(node: object, rest: str) -> tuple[object, int, str, str] | None:
    """(child, child's line, the key or "" for list items, the remaining path) or None when absent."""
    if isinstance(node, LineList):
        match = _INDEX.match(rest)
        if match is None:
            return None
        index = int(match.group(1))
        if index >= len(node):
            return None
        line = node.item_lines[index] if index < len(node.item_lines) else 0
        return node[index], line, "", rest[match.end():].removeprefix(".")
    if not isinstance(node, LineDict):
        return None
    bracketed = rest.startswith("[")
    text = rest[1:] if bracketed else rest
    best: str | None = None
    for key in node:
        if text.startswith(key) and (len(best) if best else -1) < len(key):
            tail = text[len(key):]
            if bracketed and tail.startswith("]") or not bracketed and (not tail or tail[0] in ".["):
                best = key
    if best is None:
        return None
    tail = text[len(best) + (1 if bracketed else 0):]
    return node[best], node.key_lines.get(best, 0), best, tail.removeprefix(".")


def locate(doc: Document, path: str) -> tuple[int, str]:
    """(line, last key found) of the deepest part of `path` present in the document (its start if none)."""
    node: object = doc.body
    line, key = doc.origin.line, ""
    rest = path
    while rest:
        step = _step(node, rest)
        if step is None:
            break
        node, found_line, found_key, rest = step
        if found_line:
            line, key = found_line, found_key
        elif not found_key:
            key = ""
    return line, key


def column(lines: list[str], line: int, key: str) -> int:
    """1-based column of `key` (or of the list item's first character) on `line`; 1 when not found."""
    if not 0 < line <= len(lines):
        return 1
    text = lines[line - 1]
    if key:
        for candidate in (f'"{key}"', f"'{key}'", key):
            at = text.find(candidate)
            if at >= 0:
                return at + 1
    stripped = text.lstrip()
    if stripped.startswith("- "):
        return len(text) - len(stripped) + 3
    return len(text) - len(stripped) + 1 if stripped else 1


def key_of(path: str) -> str:
    """The last key of a field path (`maxSkew` of `...[0].maxSkew`; `kubernetes.io/arch` of `x[kubernetes.io/arch]`)."""
    if path.endswith("]"):
        inner = path[path.rfind("[") + 1:-1]
        return "" if inner.isdigit() else inner
    return path.rsplit(".", 1)[-1] if "." in path else path


def value_at(node: object, dotted: str) -> object:
    """What a dotted path of map keys and list indices (`spec.template.spec`, `spec.nodeSets[1].podTemplate.spec`)
    reaches in a document body, or None."""
    for part in dotted.split("."):
        key, *indices = part.split("[")
        node = node.get(key) if isinstance(node, dict) else None
        for index in indices:
            position = index.rstrip("]")
            node = node[int(position)] if isinstance(node, list) and position.isdigit() and int(position) < len(node) \
                else None
    return node


def path_segment(key: str) -> str:
    """A map key as a field path segment: `.name`, or `[kubernetes.io/arch]` for keys with dots or slashes."""
    return f"[{key}]" if "." in key or "/" in key else f".{key}"


def _depth(path: str) -> int:
    """How many keys and indices deep a path is (dots inside bracketed keys do not count)."""
    inside: list[str] = re.findall(r"\[([^\]]*)\]", path)
    return path.count(".") + path.count("[") - sum(key.count(".") for key in inside)


def path_at(doc: Document, line: int) -> str:
    """The field path of the outermost key or list item written on `line` (the other direction of `locate`);
    empty when the line is the document's start or holds no field."""
    if line == doc.origin.line:
        return ""
    best = ""
    depth = 1 << 30
    stack: list[tuple[object, str]] = [(doc.body, "")]
    while stack:
        node, prefix = stack.pop()
        if isinstance(node, LineDict):
            for key, value in node.items():
                path = prefix + path_segment(str(key))
                if node.key_lines.get(key, 0) == line and _depth(path) < depth:
                    best, depth = path, _depth(path)
                stack.append((value, path))
        elif isinstance(node, LineList):
            for index, value in enumerate(node):
                path = f"{prefix}[{index}]"
                if index < len(node.item_lines) and node.item_lines[index] == line and _depth(path) < depth:
                    best, depth = path, _depth(path)
                stack.append((value, path))
    return best.removeprefix(".")
