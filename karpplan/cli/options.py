"""Option declarations several commands share (same flags, same help): one definition each."""

from __future__ import annotations

from typing import Any

import typer


def catalog_option(help_text: str) -> Any:
    """`--catalog FILE`: an InstanceCatalog replacing the embedded one (each command words its help)."""
    return typer.Option("--catalog", help=help_text, dir_okay=False)


def region_option() -> Any:
    """`--region R`: the region of the embedded catalog."""
    return typer.Option("--region", help="Region of the embedded catalog.")


def output_option() -> Any:
    """`-o/--output FORMAT`: the output format (the choices are the command's enum)."""
    return typer.Option("-o", "--output", help="Output format.")


def fargate_profile_option() -> Any:
    """`--fargate-profile SELECTOR` (repeatable): a Fargate profile added to those of the manifests."""
    return typer.Option(
        "--fargate-profile", metavar="SELECTOR",
        help="A Fargate profile selector 'namespace=<pattern>[,<label>=<value>...]' (repeatable).",
    )
