"""explain's line reader: arbitrary prefixes, splits and noise never crash it and never lose a recognised item."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from karpplan.explain.report import explain_text
from karpplan.explain.stream import depth_change, records

LINE = ('{"level":"ERROR","time":"2024-05-28T20:49:25.812Z","logger":"controller.provisioner","message":"Could not '
        'schedule pod, all available instance types exceed limits for nodepool: \\"default\\"","commit":"17dd42b",'
        '"pod":"podname/model-d4dnm"}')
PREFIX = st.text(alphabet=st.characters(blacklist_characters="{}[]\"\n\r\\", blacklist_categories=("Cs",)),
                 max_size=30).filter(lambda p: not p.strip().endswith(":"))


@settings(max_examples=60, deadline=None)
@given(prefix=PREFIX, noise=st.lists(st.text(max_size=80), max_size=6))
def test_prefixed_line_among_noise_is_found(prefix: str, noise: list[str]) -> None:
    lines = [n.replace("\n", " ").replace("\r", " ") for n in noise] + [prefix + LINE]
    explanation = explain_text("\n".join(lines))
    pods = {i.parsed.pod for i in explanation.item_list()}
    assert "podname/model-d4dnm" in pods
    assert explanation.lines == len(lines)


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=400), cut=st.integers(min_value=0, max_value=400))
def test_arbitrary_bytes_never_crash(data: bytes, cut: int) -> None:
    chunks = data.split(b"\n")
    recs = list(records(chunks))
    assert sum(r.lines for r in recs) == len(chunks)
    explain_text(data[:cut].decode("utf-8", "replace") + "\n" + LINE)


@settings(max_examples=40, deadline=None)
@given(split=st.integers(min_value=1, max_value=len(LINE) - 1))
def test_truncated_line_never_crashes_and_split_line_counts(split: int) -> None:
    explanation = explain_text(LINE[:split] + "\n" + LINE[split:])
    assert explanation.lines == 2
    assert explanation.explained <= 2


def test_depth_change_respects_strings() -> None:
    assert depth_change(b'{"a": "}{[", "b": [1, 2') == (2, False)
    assert depth_change(b'"unterminated {') == (0, True)
