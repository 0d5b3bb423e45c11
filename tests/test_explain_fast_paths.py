"""explain's fast paths say exactly what the plain paths say: the block reader, the one-search trigger test
(native and pure Python), the per-message memo of classify, the per-line-shape recall of whole records and the
item JSON writer, run over every log and message the explain tests
hold and every explain case log (a user sees the same document, to the byte, only sooner)."""

from __future__ import annotations

import ast
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from karpplan.explain import parse, recall, report, stream
from karpplan.explain.parse import TRIGGER_WORDS, worth_parsing
from karpplan.explain.render import json_text, write_document
from karpplan.explain.report import Explanation, explain_records, explain_stream, explain_text
from karpplan.explain.stream import Record, block_lines, records
from karpplan.render.documents import render_document

TESTS = Path(__file__).parent
CASES = TESTS.parent.parent / "shared" / "cases"


def _test_strings() -> list[str]:
    """Every string literal (or implicitly joined run of them) in the explain tests that holds a trigger word."""
    found: list[str] = []
    for path in sorted(TESTS.glob("test_explain_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and any(w.decode() in node.value for w in TRIGGER_WORDS)):
                found.append(node.value)
    return found


def _corpus() -> list[str]:
    texts = _test_strings()
    texts += [p.read_text() for p in sorted(CASES.glob("explain*/*/log.txt"))]
    return texts


CORPUS = _corpus()
CORPUS_TEXT = "\n".join(CORPUS)


def _uncached(recs: Iterator[Record]) -> Iterator[Record]:
    for record in recs:
        parse._classified.cache_clear()  # explain_records parses each record as it comes
        yield record


def _reference(text: str) -> Explanation:
    """The plain path: one line at a time, nothing remembered from one record to the next."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    out = explain_records(_uncached(records(line.encode() for line in lines)), remember=False)
    out.finish()
    return out


def _document(explanation: Explanation) -> str:
    buf = io.StringIO()
    write_document(explanation, "json", buf)
    return buf.getvalue()


def test_the_corpus_is_the_explain_material() -> None:
    assert len(CORPUS) > 60
    if CASES.is_dir():
        assert len(list(CASES.glob("explain*/*/log.txt"))) >= 20


def test_the_one_search_trigger_test_is_the_substring_test() -> None:
    lines = [line.encode() for line in CORPUS_TEXT.split("\n")]
    lines += [b"", b"Name: x", b"ame: x", b"schedule po", b"nodes are availabl", b"scale-u", b"Fargat"]
    for line in lines:
        assert worth_parsing(line) == any(w in line for w in TRIGGER_WORDS), line
        assert parse.any_trigger_word(line) == any(w in line for w in TRIGGER_WORDS), line  # without the wheel


def test_explain_reads_the_same_without_the_native_prefilter(monkeypatch: pytest.MonkeyPatch) -> None:
    native = explain_text(CORPUS_TEXT)
    streamed = _document(explain_stream(io.BytesIO(CORPUS_TEXT.encode())))
    monkeypatch.setattr(report, "worth_parsing", parse.any_trigger_word)
    monkeypatch.setattr(report, "trigger_lines", parse.any_trigger_lines)
    assert _document(explain_text(CORPUS_TEXT)) == _document(native)
    assert _document(explain_stream(io.BytesIO(CORPUS_TEXT.encode()))) == streamed == _document(native)


def test_the_block_trigger_search_finds_the_lines_the_line_test_finds() -> None:
    lines = [line.encode() for line in CORPUS_TEXT.split("\n")]
    lines += [b"", b"Name: x", b"ame: x", b"schedule po", b"nodes are availabl", b"Fargat", b"Fargate Fargate"]
    expected = [i for i, line in enumerate(lines) if any(w in line for w in TRIGGER_WORDS)]
    assert parse.trigger_lines(lines) == parse.any_trigger_lines(lines) == expected
    assert parse.trigger_lines([]) == [] and parse.trigger_lines([b""]) == []


# lines that join their neighbours or open documents: a clause cut after `;`, a wrap, trailing blanks, a JSON
# document (pretty-printed, behind a tailer prefix), a describe header; and noise that joins nothing
_AWKWARD = [
    'Could not schedule pod, incompatible with nodepool "a", did not tolerate x=y:NoSchedule;',
    'incompatible with nodepool "b", no instance type satisfied resources {"cpu":"9"} and requirements',
    "karpenter.sh/capacity-type In [spot]",
    "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}, 2 node(s) didn't match",
    "node affinity/selector.",
    "{", '  "level": "ERROR",', '  "message": "could not schedule pod",',
    '  "Pod": {"name": "p", "namespace": "n"},', '  "error": "no instance type has enough resources, '
    'resources={\\"cpu\\":\\"14\\"}"', "}",
    "[pod/k/controller] {", '[pod/k/controller]   "message": "could not schedule pod",',
    '[pod/k/controller]   "error": "incompatible with nodepool \\"x\\", did not tolerate a=b:NoSchedule"',
    "[pod/k/controller] }",
    "Name:         web-1", "Namespace:    shop", "Containers:", "  app:", "    Requests:", "      cpu:  100m",
    "QoS Class:    Burstable", "Tolerations:  dedicated=infra:NoSchedule", "              c:NoExecute op=Exists for 300s",
    "Node-Selectors:  <none>", "Taints:             dedicated=infra:NoSchedule", "Events:",
    "  Warning  FailedScheduling  16s   default-scheduler  0/3 nodes are available: 3 Insufficient cpu.  ",
    "2024-04-03T06:00:01Z INFO ordinary line", "plain words without a trigger", "", "   ", "trailing;",
    'label "team" joins the line before', "[",
    "2024-04-03T06:00:02Z INFO nothing to see {", "]",
]


_CORPUS_LINES = CORPUS_TEXT.split("\n")


@settings(max_examples=200, deadline=None)
@given(runs=st.lists(st.tuples(st.booleans(), st.integers(min_value=0, max_value=10**6),
                               st.integers(min_value=1, max_value=6)), min_size=1, max_size=30),
       block=st.integers(min_value=1, max_value=400), crlf=st.booleans())
def test_any_mix_of_lines_reads_the_same_on_the_block_path(runs: list[tuple[bool, int, int]], block: int,
                                                           crlf: bool) -> None:
    """Whatever lines follow which (and wherever the blocks are cut), the block path's runs of plain lines and
    lone trigger lines give the document the line-by-line path gives. The log is made of runs of consecutive
    awkward lines and of consecutive corpus lines."""
    lines: list[str] = []
    for awkward, start, length in runs:
        source = _AWKWARD if awkward else _CORPUS_LINES
        lines += [source[(start + k) % len(source)] for k in range(length)]
    text = ("\r\n" if crlf else "\n").join(lines)
    stream.BLOCK_BYTES, saved = block, stream.BLOCK_BYTES
    try:
        fast = explain_stream(io.BytesIO(text.encode()))
    finally:
        stream.BLOCK_BYTES = saved
    plain = explain_records(records(block_lines(io.BytesIO(text.encode()))))
    plain.finish()
    assert _document(fast) == _document(plain)
    assert fast.unrecognised_lines == plain.unrecognised_lines


_STAMP = re.compile(r"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}):(\d{2})")


def _retimed(text: str, shift: int) -> str:
    """`text` with every timestamp's seconds moved, differently on each line (what a log's repeats look like)."""
    def line(n: int, s: str) -> str:
        return _STAMP.sub(lambda m: f"{m.group(1)}:{(int(m.group(2)) + shift + n) % 60:02d}", s)
    return "\n".join(line(n, s) for n, s in enumerate(text.split("\n")))


@pytest.mark.parametrize("room", [recall.MAX_ENTRIES, 4])
def test_each_log_reads_the_same_when_its_lines_come_again_at_other_times(room: int,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The recall answers a line by an earlier line of the same shape (only its timestamp differs): each
    item keeps its own first and last time and line, its count, and the same wording as a fresh parse (also
    when it has room for only a few shapes and forgets the older ones)."""
    monkeypatch.setattr(recall, "MAX_ENTRIES", room)
    for text in CORPUS:
        twice = text + "\n" + _retimed(text, 7) + "\n" + _retimed(text, 31)
        remembered = explain_text(twice)
        assert _document(remembered) == _document(_reference(twice)), text[:200]


def test_a_repeated_line_gets_its_own_time_from_the_recall() -> None:
    line = ('{"level":"ERROR","time":"2024-04-03T06:00:0%d.000Z","logger":"controller","message":"could not schedule '
            'pod","Pod":{"name":"web-1","namespace":"shop"},"error":"incompatible with nodepool \\"default\\", did not '
            'tolerate dedicated=infra:NoSchedule"}')
    out = explain_text("\n".join(line % i for i in (1, 2, 3)))
    [item] = out.item_list()
    assert (item.count, item.parsed.time, item.last_time, item.last_line) == (
        3, "2024-04-03T06:00:01.000Z", "2024-04-03T06:00:03.000Z", 3)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("block", [7, 64, 1 << 20])
def test_block_reader_reads_the_lines_a_file_iteration_reads(newline: str, block: int,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "BLOCK_BYTES", block)
    for tail in ("", newline, newline + newline, "last line without an end"):
        data = (CORPUS_TEXT.replace("\n", newline) + tail).encode()
        expected = [line.rstrip(b"\r\n") for line in io.BytesIO(data)]
        got = [line.rstrip(b"\r\n") for line in block_lines(io.BytesIO(data))]
        assert got == expected
        limit = len(data) // 3
        part = [line.rstrip(b"\r\n") for line in block_lines(io.BytesIO(data), limit=limit)]
        assert part == [line.rstrip(b"\r\n") for line in io.BytesIO(data[:limit])]


@pytest.mark.parametrize("block", [50, 1 << 20])
def test_the_whole_corpus_reads_the_same_on_the_fast_and_the_plain_path(block: int,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "BLOCK_BYTES", block)
    seen: list[int] = []
    fast = explain_stream(io.BytesIO(CORPUS_TEXT.encode()), seen.append)
    plain = explain_text(CORPUS_TEXT)
    assert _document(fast) == _document(plain)
    assert fast.items and fast.unrecognised_lines and seen[-1] == len(CORPUS_TEXT.encode())


def test_each_log_and_message_reads_the_same_with_and_without_the_memo() -> None:
    for text in CORPUS:
        parse._classified.cache_clear()
        warm = explain_text(text + "\n" + text)  # the second copy is read from the memo
        cold = _reference(text + "\n" + text)
        assert _document(warm) == _document(cold), text[:200]


def test_a_remembered_message_keeps_each_records_own_pod_and_time() -> None:
    message = ("Could not schedule pod, incompatible with nodepool \"default\", did not tolerate "
               "dedicated=core:NoExecute")
    parse._classified.cache_clear()
    first = parse.classify(message, pod="ns/a", time="t1")
    second = parse.classify(message, pod="ns/b", time="t2")
    none = parse.classify(message)
    assert first is not None and second is not None and none is not None
    assert (first.pod, first.time, second.pod, second.time, none.pod, none.time) == ("ns/a", "t1", "ns/b", "t2",
                                                                                      None, None)
    assert first.reasons == second.reasons and first.pools == second.pools


def test_item_json_is_what_the_standard_encoder_writes() -> None:
    explanation = explain_text(CORPUS_TEXT)
    assert explanation.items
    for item in explanation.item_list():
        doc = item.to_document()
        for level in (0, 2):
            expected = render_document(doc, "json")[:-1].replace("\n", "\n" + "  " * level)
            assert json_text(doc, level) == expected
    odd = {"a": (1, 2.5, float("nan"), float("inf")), "b": MappingProxyType({"x": []}), "c": {}, "d": [],
           "e": "\u00fcber \"quoted\" \\ \n\t\u2028", "f": True, "g": False, "h": None, 3: -7}
    assert json_text(odd) == render_document(odd, "json")[:-1]
    assert json.loads(json_text(odd))["a"][2] is None


def test_a_repeated_describe_row_belongs_to_the_pod_described_above_it() -> None:
    """The recall keys a line with the parser's state: the same Events row under another `Name:` is another pod's."""
    row = "  Warning  FailedScheduling  16s   default-scheduler  0/3 nodes are available: 3 Insufficient cpu."
    log = "\n".join(["Name:         web-1", "Namespace:    shop", "Events:", row, "Name:         web-2",
                     "Namespace:    shop", "Events:", row, "Name:         web-1", "Namespace:    shop", row])
    assert [(i.parsed.pod, i.count) for i in explain_text(log).item_list()] == [("shop/web-1", 2), ("shop/web-2", 1)]
