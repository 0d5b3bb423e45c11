"""Usage errors in plain words: what a library's validator says, without its prefixes and jargon.

typer checks option values with pydantic and passes its wording on ("Value error, 'foo' is not one of ...",
"Input should be a valid number, unable to parse string as a number"). The command line shows the same
facts as a person would say them.
"""

from __future__ import annotations

import re

_PREFIXES = re.compile(r"\b(?:Value error|Assertion failed), ")
_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Input should be a valid number(?:, unable to parse string as a number)?"), "expects a number"),
    (re.compile(r"Input should be a valid integer(?:, unable to parse string as an integer)?"),
     "expects a whole number"),
    (re.compile(r"Input should be a valid boolean(?:, unable to interpret input)?"), "expects true or false"),
    (re.compile(r"Input should be greater than or equal to (\S+)"), r"must be \1 or more"),
    (re.compile(r"Input should be less than or equal to (\S+)"), r"must be \1 or less"),
    (re.compile(r"Input should be greater than (\S+)"), r"must be more than \1"),
    (re.compile(r"Input should be less than (\S+)"), r"must be less than \1"),
    (re.compile(r"Input should be "), "must be "),
)


def plain(message: str) -> str:
    """`message` without validator prefixes, in plain words."""
    text = _PREFIXES.sub("", message)
    for pattern, replacement in _PHRASES:
        text = pattern.sub(replacement, text)
    return text
