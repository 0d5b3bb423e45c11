"""What every command shares: where it writes (`Terminal`) and the one error boundary (`run_guarded`).

Results go to stdout, logs and problems to stderr. Every known error (bad input: `InputError`, and input
too deep or too large to read) becomes exit code 2 with one `file:line: message` line per problem on
stderr and nothing on stdout, never a traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import NoReturn

import typer
from rich.console import Console

from karpplan.errors import InputError

EXIT_INPUT = 2  # bad input or usage (cli-contract.md)


class Color(StrEnum):
    auto = "auto"
    always = "always"
    never = "never"


@dataclass
class Terminal:
    """Where a command writes, set by the options given before the command (`--color`, `-v`)."""

    color: Color = Color.auto
    verbose: int = 0
    stdout: Console = field(default_factory=Console)
    stderr: Console = field(default_factory=lambda: Console(stderr=True))

    def say(self, text: str, *, style: str | None = None, soft_wrap: bool = True) -> None:
        """A plain line on stderr (no markup, highlighting or emoji codes); `soft_wrap=False` wraps it at the
        terminal's width."""
        self.stderr.print(text, markup=False, highlight=False, emoji=False, soft_wrap=soft_wrap, style=style)


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """`karpplan ... | head`: the reader left. rich exits 1 here; nothing failed, so quietly 0, as `lint` does."""
        quiet_stdout()
        raise SystemExit(0)


def make_consoles(color: Color) -> tuple[Console, Console]:
    """stdout and stderr consoles. `auto` follows the terminal and NO_COLOR; the flag wins over NO_COLOR."""
    if color is Color.always:
        return _Console(force_terminal=True, no_color=False), Console(stderr=True, force_terminal=True, no_color=False)
    if color is Color.never:
        return _Console(no_color=True, color_system=None), Console(stderr=True, no_color=True, color_system=None)
    no_color = bool(os.environ.get("NO_COLOR"))
    return _Console(no_color=no_color), Console(stderr=True, no_color=no_color)


def terminal_of(ctx: typer.Context) -> Terminal:
    """The terminal the global options set up (a default one when a command runs on its own)."""
    terminal = ctx.find_object(Terminal)
    return terminal if terminal is not None else Terminal()


def run_guarded(body: Callable[[], int], terminal: Terminal) -> NoReturn:
    """The error boundary every command runs in: exits with `body`'s code, or 2 for a known error."""
    try:
        code = body()
    except InputError as error:
        for problem in error.problems:
            terminal.say(str(problem))
        code = EXIT_INPUT
    except RecursionError:
        terminal.say("error: the input is nested too deeply to read")
        code = EXIT_INPUT
    except MemoryError:
        terminal.say("error: out of memory while reading the input")
        code = EXIT_INPUT
    except BrokenPipeError:
        # `karpplan ... | head`: the reader left. Quietly, and 0 as `plan` and `lint` exit (click would say 1).
        quiet_stdout()
        code = 0
    raise typer.Exit(code)


def quiet_stdout() -> None:
    """stdout to /dev/null, so the interpreter's last flush into a closed pipe raises nothing more."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
