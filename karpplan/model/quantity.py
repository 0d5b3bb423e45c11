"""Kubernetes resource quantities, parsed exactly as `resource.ParseQuantity` does.

Values are kept as exact fractions, rounded up (away from zero) to nano precision at parse time, and the
accessors round up again: `milli()` is `MilliValue()` (CPU), `value()` is `Value()` (bytes, counts).
The source text is kept for display.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction

QUANTITY_REGEX = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_FORMAT = re.compile(QUANTITY_REGEX)

_DECIMAL_SUFFIX: dict[str, Fraction] = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_BINARY_SUFFIX: dict[str, Fraction] = {
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}
_MAX = Fraction(2**63 - 1)
_NANO = Fraction(1, 10**9)


class QuantityError(ValueError):
    """A quantity that Kubernetes would refuse; the message is Kubernetes' own."""


def _ceil_away(x: Fraction) -> int:
    """Round away from zero, as apimachinery's math helpers do."""
    return math.ceil(x) if x >= 0 else -math.ceil(-x)


@dataclass(frozen=True)
class Quantity:
    """An exact quantity with the text it was written as."""

    amount: Fraction
    text: str = field(compare=False)

    def milli(self) -> int:
        """`MilliValue()`: thousandths, rounded up (CPU is compared in millicores)."""
        return _ceil_away(self.amount * 1000)

    def value(self) -> int:
        """`Value()`: whole units, rounded up (memory in bytes, counts)."""
        return _ceil_away(self.amount)

    def __str__(self) -> str:
        return self.text


def scalar_text(raw: object) -> str:
    """The text of a YAML/JSON scalar as a user wrote it (YAML floats and ints included)."""
    if isinstance(raw, bool):
        raise QuantityError(f"quantities must be strings or numbers, not {str(raw).lower()}")
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, float):
        if math.isnan(raw) or math.isinf(raw):
            raise QuantityError(f"quantities must match the regular expression '{QUANTITY_REGEX}'")
        text = repr(raw)
        return text[:-2] if text.endswith(".0") else text
    if isinstance(raw, str):
        return raw.strip()
    raise QuantityError(f"quantities must be strings or numbers, not {type(raw).__name__}")


def parse_quantity(raw: object) -> Quantity:
    """Parse a quantity; raise `QuantityError` with Kubernetes' message when it is malformed."""
    text = scalar_text(raw)
    match = _FORMAT.match(text)
    if not match:
        raise QuantityError(f"quantities must match the regular expression '{QUANTITY_REGEX}'")
    number, suffix = match.group(1), match.group(2)
    sign = 1
    if number[0] in "+-":
        sign = -1 if number[0] == "-" else 1
        number = number[1:]
    if number.count(".") > 1 or number in ("", "."):
        raise QuantityError("unable to parse numeric part of quantity")
    try:
        amount = Fraction(number)
    except (ValueError, ZeroDivisionError) as exc:
        raise QuantityError("unable to parse numeric part of quantity") from exc
    factor = _suffix_factor(suffix)
    value = sign * amount * factor
    # Round up (away from zero) to nano precision, as ParseQuantity does.
    value = Fraction(_ceil_away(value / _NANO)) * _NANO
    if abs(value) > _MAX:
        value = _MAX if value > 0 else -_MAX
    return Quantity(value, text)


def _suffix_factor(suffix: str) -> Fraction:
    if suffix in _DECIMAL_SUFFIX:
        return _DECIMAL_SUFFIX[suffix]
    if suffix in _BINARY_SUFFIX:
        return _BINARY_SUFFIX[suffix]
    if suffix[:1] in ("e", "E") and len(suffix) > 1:
        exponent = suffix[1:]
        if re.fullmatch(r"[-+]?[0-9]+", exponent):
            power = int(exponent)
            if abs(power) > 30:
                raise QuantityError("unable to parse quantity's suffix")
            return Fraction(10) ** power
    raise QuantityError("unable to parse quantity's suffix")


# ------------------------------------------------------------------------------------------ formatting
def format_cpu(millis: int) -> str:
    """Canonical CPU text: whole cores when exact, else millicores ("2", "1930m")."""
    if millis % 1000 == 0:
        return str(millis // 1000)
    return f"{millis}m"


def format_bytes(amount: int) -> str:
    """The shortest exact quantity text for a byte count, binary suffixes winning ties (6903Mi, 256M, 4Gi)."""
    if amount == 0:
        return "0"
    candidates = [str(amount)]
    for suffix, factor in (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if amount % factor == 0:
            candidates.append(f"{amount // factor}{suffix}")
            break
    for suffix, dfactor in (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if amount % dfactor == 0:
            candidates.append(f"{amount // dfactor}{suffix}")
            break
    return min(candidates, key=lambda text: (len(text), not text.endswith("i")))


def format_resource(name: str, amount: int) -> str:
    """Format an integer amount in karpplan's units (CPU millicores, everything else base units)."""
    if name == "cpu":
        return format_cpu(amount)
    if name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
        return format_bytes(amount)
    return str(amount)
