"""Typed, line-aware reading of manifest fields for the inventory builder.

A `Field` is one place in a document: its value, its Kubernetes field path (`spec.template.spec.
containers[0].resources`) and its line. Accessors return plain Python values and, when the value has the
wrong shape, record an `InputProblem` (`deploy.yaml:42: spec.replicas: Invalid value: "abc": must be an
integer`) and return a neutral default, so one pass reports every mistake in a file. Messages follow
apimachinery's `field.Error` format: `<path>: <Type>[: <value>][: <detail>]`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from karpplan.errors import InputProblem, Origin
from karpplan.inputs.origins import LineDict, LineList, SourceFloat
from karpplan.model.quantity import Quantity, QuantityError, parse_quantity

# ------------------------------------------------------------------------------------------ name syntax
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

LABEL_VALUE_MESSAGE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
    "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def label_value_errors(value: str) -> list[str]:
    """apimachinery's `IsValidLabelValue` messages (empty when the value is valid)."""
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if not _LABEL_VALUE.match(value):
        errors.append(LABEL_VALUE_MESSAGE)
    return errors


def is_qualified_name(key: str) -> bool:
    """`IsQualifiedName`: an optional DNS-subdomain prefix and `/`, then a 1-63 character name."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(_QUALIFIED_NAME.match(name))


# ------------------------------------------------------------------------------------------ formatting
def show(value: object) -> str:
    """A value as `field.Error` prints it: strings quoted, numbers bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, SourceFloat):
        return repr(value)
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "{...}"
    if isinstance(value, list):
        if all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in value):
            text = json.dumps([v if isinstance(v, str) else repr(v) for v in value], ensure_ascii=False)
            return text if len(text) <= 80 else "[...]"
        return "[...]"
    return json.dumps(str(value), ensure_ascii=False)


def supported(values: Iterable[str]) -> str:
    return ", ".join(json.dumps(v) for v in values)


def kind_of(value: object) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return type(value).__name__


# ------------------------------------------------------------------------------------------ fields
def child_path(path: str, key: str) -> str:
    """The field path of `key` under `path` (`spec` + `replicas` -> `spec.replicas`)."""
    return f"{path}.{key}" if path else key


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a document: value, path and line, plus where to put problems."""

    sink: list[InputProblem]
    base: Origin
    path: str
    value: Any
    line: int = 0

    @classmethod
    def root(cls, body: LineDict, origin: Origin, sink: list[InputProblem]) -> Field:
        return cls(sink, origin, "", body, origin.line)

    # ----------------------------------------------------------------------------------- navigation
    @property
    def origin(self) -> Origin:
        return self.base.at(self.line)

    @property
    def present(self) -> bool:
        """Set and not null (YAML `key:` and `key: null` read as absent, as in Kubernetes)."""
        return self.value is not None

    def __getitem__(self, key: str) -> Field:
        value = self.value
        if isinstance(value, dict):
            line = value.key_lines.get(key, 0) if isinstance(value, LineDict) else 0
            return Field(self.sink, self.base, child_path(self.path, key), value.get(key), line or self.line)
        return Field(self.sink, self.base, child_path(self.path, key), None, self.line)

    def at_path(self, path: str) -> Field:
        """A dotted descendant (`spec.template.spec`)."""
        field = self
        for part in path.split("."):
            field = field[part]
        return field

    def renamed(self, path: str) -> Field:
        return Field(self.sink, self.base, path, self.value, self.line)

    # ----------------------------------------------------------------------------------- problems
    def error(self, message: str, *, path: str | None = None) -> None:
        where = self.path if path is None else path
        self.sink.append(InputProblem(self.origin, f"{where}: {message}" if where else message))

    def invalid(self, detail: str, value: object = None) -> None:
        shown = show(self.value if value is None else value)
        self.error(f"Invalid value: {shown}: {detail}")

    def required(self, detail: str) -> None:
        self.error(f"Required value: {detail}")

    def forbidden(self, detail: str) -> None:
        self.error(f"Forbidden: {detail}")

    def unsupported(self, values: Sequence[str], value: object = None) -> None:
        shown = show(self.value if value is None else value)
        self.error(f"Unsupported value: {shown}: supported values: {supported(values)}")

    def wrong_type(self, expected: str) -> None:
        self.error(f"Invalid value: {show(self.value)}: must be {expected}, not {kind_of(self.value)}")

    # ----------------------------------------------------------------------------------- shapes
    def is_mapping(self) -> bool:
        """True for a mapping; records a problem for any other non-null value."""
        if isinstance(self.value, dict):
            return True
        if self.value is not None:
            self.wrong_type("a mapping")
        return False

    def entries(self, *, bracket_keys: bool = False) -> list[tuple[str, Field]]:
        """(key, field) per entry of a mapping (path `x.key`, or `x[key]` for resource lists)."""
        if not self.is_mapping():
            return []
        value = self.value
        out = []
        for key, item in value.items():
            line = value.key_lines.get(key, 0) if isinstance(value, LineDict) else 0
            path = f"{self.path}[{key}]" if bracket_keys else child_path(self.path, key)
            out.append((key, Field(self.sink, self.base, path, item, line or self.line)))
        return out

    def elements(self) -> list[Field]:
        """One field per list item (path `x[i]`)."""
        value = self.value
        if value is None:
            return []
        if not isinstance(value, list):
            self.wrong_type("a list")
            return []
        lines = value.item_lines if isinstance(value, LineList) else []
        out = []
        for index, item in enumerate(value):
            line = lines[index] if index < len(lines) else 0
            # A mapping item is best pointed at by its first key's line (the `- key:` line).
            out.append(Field(self.sink, self.base, f"{self.path}[{index}]", item, line or self.line))
        return out

    def mappings(self) -> list[Field]:
        """List items that must each be a mapping (problems recorded for others)."""
        return [item for item in self.elements() if item.is_mapping()]

    # ----------------------------------------------------------------------------------- scalars
    def string(self, default: str = "") -> str:
        value = self.value
        if value is None:
            return default
        if isinstance(value, str):
            return value
        self.wrong_type("a string")
        return default

    def optional_string(self) -> str | None:
        return None if self.value is None else self.string()

    def integer(self, default: int = 0) -> int:
        value = self.optional_integer()
        return default if value is None else value

    def optional_integer(self) -> int | None:
        value = self.value
        if value is None:
            return None
        if isinstance(value, bool):
            self.invalid("must be an integer")
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        self.invalid("must be an integer")
        return None

    def boolean(self, default: bool = False) -> bool:
        value = self.value
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        self.invalid("must be a boolean (true or false)")
        return default

    def quantity(self) -> Quantity | None:
        if self.value is None:
            return None
        try:
            return parse_quantity(self.value)
        except QuantityError as exc:
            self.invalid(str(exc))
            return None

    # ----------------------------------------------------------------------------------- collections
    def resource_quantities(self) -> dict[str, tuple[Quantity, Field]]:
        """A Kubernetes `ResourceList`: quantities by name, negative ones refused (and left out)."""
        out: dict[str, tuple[Quantity, Field]] = {}
        for name, item in self.entries(bracket_keys=True):
            quantity = item.quantity()
            if quantity is None:
                continue
            if quantity.amount < 0:
                item.invalid("must be greater than or equal to 0")
                continue
            out[name] = (quantity, item)
        return out

    def string_map(self) -> dict[str, str]:
        """A `map[string]string` (labels, annotations, nodeSelector). Null values read as ""."""
        out: dict[str, str] = {}
        for key, item in self.entries():
            if item.value is None:
                out[key] = ""
            elif isinstance(item.value, str):
                out[key] = item.value
            else:
                item.invalid(f"must be a string, not {kind_of(item.value)} (quote it)")
        return out

    def string_list(self) -> list[str]:
        out = []
        for item in self.elements():
            if isinstance(item.value, str):
                out.append(item.value)
            else:
                item.invalid(f"must be a string, not {kind_of(item.value)} (quote it)")
        return out
