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
    assert depth_change(b'  "level": "ERROR",') == (0, False)  # no bracket: quotes alone decide
    assert depth_change(b'  "message": "could not') == (0, True)


# cluster-autoscaler's event lines as `stern` prints them (`pod container` before each line): the first has no
# final period, the next starts with a lowercase word - yet it is the next record, not the first one's wrap
CA_STERN = ("cluster-autoscaler-6d8b9c7f5-x2x9q cluster-autoscaler I0910 18:42:3{n}.914842       1 event.go:281] "
            'Event(v1.ObjectReference{{Kind:"Pod", Namespace:"shop", Name:"web-{n}", UID:"bb{n}"}}): type: \'Normal\' '
            "reason: 'NotTriggerScaleUp' pod didn't trigger scale-up: 1 node(s) didn't match Pod's node "
            "affinity/selector, 2 max node group size reached")


def test_two_prefixed_autoscaler_events_in_a_row_are_two_records() -> None:
    log = "\n".join(CA_STERN.format(n=n) for n in (1, 2, 3))
    assert [r.lines for r in records(line.encode() for line in log.split("\n"))] == [1, 1, 1]
    explanation = explain_text(log)
    assert {i.parsed.pod for i in explanation.item_list()} == {"shop/web-1", "shop/web-2", "shop/web-3"}
    assert explanation.records == 3


def test_a_wrapped_message_still_continues_on_its_next_line() -> None:
    log = ("0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}, 2 node(s) didn't match\n"
           "node affinity/selector.")
    assert [r.lines for r in records(line.encode() for line in log.split("\n"))] == [2]
