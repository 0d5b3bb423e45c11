"""Usage errors and help read alike on every command: one form for a bad flag or argument (click's
`Usage: ... / Error: Invalid value for '<option>': ...`, exit 2, nothing on stdout), a limit of no time refused
wherever `--time-limit` is taken, and metavars that name the value (`--max-file-size SIZE`, `--select RULES`),
never the option's own name in capitals."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from karpplan.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = str(ROOT / "fixtures" / "quickstart")
COMMANDS = ("plan", "inventory", "lint", "diff", "consolidate", "explain", "catalog")


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def assert_usage_error(result: Any, command: str, option: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert f"Usage: karpplan {command}" in result.stderr or f"Usage: root {command}" in result.stderr
    assert f"Error: Invalid value for '{option}': " in result.stderr, result.stderr
    assert not re.search(r"^error:", result.stderr, re.M)


@pytest.mark.parametrize("command", ["plan", "diff", "consolidate"])
@pytest.mark.parametrize("limit", ["0", "-1", "0.0"])
def test_a_time_limit_of_no_time_is_a_usage_error_on_every_command(command: str, limit: str) -> None:
    paths = [QUICKSTART, QUICKSTART] if command == "diff" else [QUICKSTART]
    result = invoke(command, *paths, "--time-limit", limit)
    assert_usage_error(result, command, "--time-limit")
    assert "must be more than 0 seconds, or auto" in result.stderr


@pytest.mark.parametrize(("args", "option"), [
    (("lint",), "PATH"),
    (("lint", QUICKSTART, "--select", "no-such-rule"), "--select"),
    (("lint", QUICKSTART, "--ignore", "no-such-rule"), "--ignore"),
    (("lint", "--explain-rule", "no-such-rule"), "--explain-rule"),
    (("diff", QUICKSTART), "BASE HEAD"),
    (("catalog", "-o", "xml"), "-o' / '--output"),
    (("catalog", "--cpu", "two"), "--cpu"),
    (("catalog", "--request", "gpu"), "--request"),
    (("catalog", "--nodepool", "x"), "--nodepool"),
    (("plan", QUICKSTART, "--max-file-size", "0"), "--max-file-size"),
    (("lint", QUICKSTART, "--max-file-size", "lots"), "--max-file-size"),
    (("consolidate", QUICKSTART, "--max-file-size", "0"), "--max-file-size"),
    (("plan", QUICKSTART, "-n", "Not_A_Namespace"), "--namespace"),
    (("lint", QUICKSTART, "--namespace", "-x"), "--namespace"),
    (("explain", "a.log", "b.log"), "LOG"),
])
def test_usage_errors_have_one_form_on_every_command(args: tuple[str, ...], option: str) -> None:
    assert_usage_error(invoke(*args), args[0], option)


def _options(help_text: str) -> list[tuple[str, str]]:
    """(option, metavar) for every option line of a help text that shows a value."""
    return re.findall(r"^\s+(?:-\w, )?(--[\w-]+) (\S+)", help_text, re.M)


@pytest.mark.parametrize("command", COMMANDS)
def test_metavars_name_the_value_not_the_option(command: str) -> None:
    text = invoke(command, "--help").stdout
    for option, metavar in _options(text):
        own = option.lstrip("-").upper().replace("-", "_")
        assert metavar != own or own in ("REGION", "NAME"), f"{command} {option} {metavar}"
    if "--max-file-size" in text:
        assert ("--max-file-size", "SIZE") in _options(text)


def test_catalog_help_lists_its_output_choices_and_says_what_zones_do_for_it() -> None:
    text = " ".join(invoke("catalog", "--help").stdout.split())
    assert "-o, --output <table|json|yaml|catalog>" in text
    assert "only offerings in these zones are listed" in text
    assert "zone spreads" not in text
