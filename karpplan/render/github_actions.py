"""GitHub Actions' workflow commands (`::error file=…::message`) and the job summary, for lint and diff alike."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence


def escape_data(text: str) -> str:
    """A command's message, escaped as the runner reads it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value, escaped as the runner reads it."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(level: str, message: str, properties: Sequence[tuple[str, str | int]]) -> str:
    """`::level name=value,...::message` (level: error, warning or notice)."""
    props = ",".join(f"{name}={escape_property(str(value))}" for name, value in properties)
    return f"::{level} {props}::{escape_data(message)}"


def append_step_summary(markdown: str, environ: Mapping[str, str] | None = None) -> None:
    """Append `markdown` to the job summary ($GITHUB_STEP_SUMMARY) when the runner set it."""
    path = (os.environ if environ is None else environ).get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(markdown)
    except OSError as error:  # a variable passed into a container without its file: the commands still count
        print(f"karpplan: warning: cannot append the job summary to $GITHUB_STEP_SUMMARY ({path}): "
              f"{error.strerror or error}; the workflow commands are on stdout", file=sys.stderr)
