"""Help that names values the way the flags' users write them, never as Python types.

Typer (0.2x) prints each argument and option without a metavar with its annotation's Python type (`PATH
<list[str]>`, `--region <str>`). An option's value is shown by its metavar (`--catalog FILE`), else by click's
own (`TEXT`, `INTEGER`, `[table|json]`); an argument is its name alone, its help says what it takes. Typer
versions without these hooks print click's help already, and are left as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from typer import core


def _option_type(typer_own: Callable[[Any, Any], str | None]) -> Callable[[Any, Any], str | None]:
    """An option's value as help shows it: its metavar, else typer's own for choices (`<table|json|yaml>`), else
    its name in capitals (`--region REGION`); nothing for a flag."""
    def shown(self: Any, ctx: Any) -> str | None:
        if self.metavar is not None:
            return str(self.metavar)
        if getattr(self, "is_flag", False):
            return None
        descriptor = getattr(self, "type_descriptor", None)
        if descriptor is not None and getattr(descriptor, "is_choice", False):
            return typer_own(self, ctx)
        return str(self.name or "value").upper()

    shown.plain_help = True  # type: ignore[attr-defined]
    return shown


def _argument_type(self: Any, ctx: Any) -> str | None:
    return None


def plain_help_types() -> None:
    """Install the hooks (idempotent)."""
    option = getattr(core, "TyperOption", None)
    argument = getattr(core, "TyperArgument", None)
    if option is not None and hasattr(option, "display_type_rich") \
            and not getattr(option.display_type_rich, "plain_help", False):
        option.display_type_rich = _option_type(option.display_type_rich)
    if argument is not None and hasattr(argument, "display_type_rich"):
        argument.display_type_rich = _argument_type


__all__ = ["plain_help_types"]
