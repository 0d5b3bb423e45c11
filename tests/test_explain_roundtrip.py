"""Property: a line the parser accepts keeps its reason kinds when it is re-emitted the ways logs reach a
user: behind a log-tailer prefix, among other lines, with CRLF endings, or (Karpenter's own lines) as the
message of a JSON log record."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from karpplan.explain.report import explain_text
from karpplan.explain.structure import Item
from tests.test_explain_real_lines import REAL_LINES

PREFIXES = ["", "[pod/karpenter-78748f59d4-hnx82/controller] ", "karpenter-78748f59d4-hnx82 controller ",
            "2024-04-03T06:40:04.552123456Z ", '2024-04-03T06:40:04Z {app="karpenter", pod="karpenter-1"} ',
            "2024-04-03T06:40:04.552Z stderr F "]
NOISE = st.lists(st.sampled_from([
    "", "I0910 18:42:33.914842       1 reflector.go:255] Listing and watching *v1.Pod",
    '{"level":"INFO","time":"2024-04-03T06:40:04.552Z","logger":"controller","message":"found provisionable pod(s)"}',
    "2022-12-05T09:58:42.908Z\tDEBUG\tcontroller.provisioning\tdiscovered kubernetes version\t{\"version\": \"1.24\"}",
]), max_size=3)
ONE_LINE = [r for r in REAL_LINES if "\n" not in r.line]


def kinds(item: Item) -> tuple[tuple[str, tuple[str, ...]], ...]:
    pools = tuple((p.name, tuple(r.kind for r in p.reasons)) for p in item.parsed.pools)
    return pools + (("", tuple(r.kind for r in item.parsed.reasons)),)


def only(text: str) -> Item:
    items = explain_text(text).item_list()
    assert len(items) == 1, [i.to_document() for i in items]
    return items[0]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(REAL_LINES), st.sampled_from(PREFIXES), NOISE, NOISE, st.booleans())
def test_reemitted_line_keeps_its_kinds(real: object, prefix: str, before: list[str], after: list[str],
                                        crlf: bool) -> None:
    assert hasattr(real, "line")
    line: str = real.line  # type: ignore[attr-defined]
    expected = kinds(only(line))
    if line.startswith("[pod/"):  # E13 came with its tailer's prefix already
        prefix = ""
    # a line a terminal paste broke in two (E10) carries the tailer's prefix on its first half only
    text = "\n".join([*before, prefix + line, *after])
    if crlf:
        text = text.replace("\n", "\r\n")
    assert kinds(only(text)) == expected


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([r for r in ONE_LINE if r.source == "karpenter" and '{"level"' not in r.line
                        and ("Could not schedule pod" in r.line or "Failed to schedule pod" in r.line)
                        and not r.line.startswith(('"', "{"))]))
def test_karpenter_message_wrapped_in_json_keeps_its_kinds(real: object) -> None:
    line: str = real.line  # type: ignore[attr-defined]
    message = next(part for part in line.split("\t") if "schedule pod" in part).split("karpenter        ")[-1]
    wrapped = json.dumps({"level": "ERROR", "logger": "controller.provisioner", "message": message,
                          "pod": "ns/pod-1"})
    assert kinds(only(wrapped)) == kinds(only(line))
