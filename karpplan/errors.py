"""Where things came from, and what is wrong with them.

Every document and every field a plan or lint rule may point at keeps an `Origin` so that messages can
say `deploy.yaml:42`. Bad input is reported as an `InputError` holding one `InputProblem` per mistake; the
CLI prints them one per line and exits 2, never with a traceback. (The scheduling problem a plan solves is
`scheduling.problem.Problem`, another thing.)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Origin:
    """A position in an input file (1-based line; 0 when unknown)."""

    file: str
    line: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file

    def at(self, line: int | None) -> Origin:
        """The same file at another line (unknown lines keep this one)."""
        return Origin(self.file, line) if line else self


UNKNOWN = Origin("<unknown>", 0)


@dataclass(frozen=True)
class InputProblem:
    """One mistake in the user's input, where it is (`file:line: message`)."""

    origin: Origin
    message: str

    def __str__(self) -> str:
        return f"{self.origin}: {self.message}"


class InputError(Exception):
    """One or more problems with the user's input (exit code 2)."""

    def __init__(self, problems: Iterable[InputProblem] | InputProblem) -> None:
        self.problems: list[InputProblem] = [problems] if isinstance(problems, InputProblem) else list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    @classmethod
    def at(cls, origin: Origin, message: str) -> InputError:
        return cls(InputProblem(origin, message))
