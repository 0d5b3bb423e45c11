"""Node names that fit their column whole: a table never breaks a name in the middle of a word.

A planned node's name repeats its zone (`default-m5-large-us-east-1a-1`), and the table already heads each
zone's section with it; an existing node's EC2 DNS name ends in the same suffix on every node. So a name too
long for its column first loses those, then continues on a second line after one of its separators
(`limitcpu100-c6a-` / `4xlarge-1`), and only a name that two lines cannot hold loses its middle (head and tail,
which tell nodes apart, are kept). `-o json` always has the whole name.
"""

from __future__ import annotations

import re

from karpplan.render.wrap import wrap_words

# ip-10-0-1-5.ec2.internal, ip-10-0-1-5.us-west-2.compute.internal
_EC2_DNS = re.compile(r"\.(?:ec2|[a-z]{2}(?:-gov)?-[a-z]+-\d\.compute)\.internal$")
MIN_NAME_WIDTH = 16  # the node-name column never gets less (the table measures what its other columns need)


def ec2_domain(name: str) -> str:
    """The EC2 DNS domain a node's name ends in (`.ap-southeast-2.compute.internal`), or ""."""
    found = _EC2_DNS.search(name)
    return found.group(0) if found else ""


def short_node_name(name: str, zone: str | None, budget: int, *, ascii_only: bool = False) -> str:
    """`name` if it fits in `budget` characters, else the shortest readable form that does."""
    if len(name) <= budget:
        return name
    if zone and f"-{zone}-" in name:
        name = name.replace(f"-{zone}-", "-", 1)
    name = _EC2_DNS.sub("", name)
    return short_name(name, budget, ascii_only=ascii_only)


def node_name_lines(name: str, zone: str | None, budget: int, *, ascii_only: bool = False) -> list[str]:
    """`name` as the table shows it in a column `budget` wide: whole on one line when it fits, else without its
    zone and EC2 domain, on two lines split at a separator when it needs them, else shortened in the middle."""
    if len(name) <= budget:
        return [name]
    trimmed = name.replace(f"-{zone}-", "-", 1) if zone and f"-{zone}-" in name else name
    trimmed = _EC2_DNS.sub("", trimmed)
    if len(trimmed) <= budget:
        return [trimmed]
    lines = wrap_words(trimmed, budget, ascii_only=ascii_only)
    if len(lines) <= 2 and "".join(lines) == trimmed:
        return lines
    return [short_name(trimmed, budget, ascii_only=ascii_only)]


def short_name(name: str, budget: int, *, ascii_only: bool = False) -> str:
    """`name` whole if it fits in `budget` characters, else its head and tail around an ellipsis."""
    if len(name) <= budget:
        return name
    mark = "~" if ascii_only else "…"
    tail = min(8, (budget - len(mark)) // 2)
    head = budget - len(mark) - tail
    return name[:head] + mark + name[-tail:]
