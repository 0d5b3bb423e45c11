"""The explain sweeps' shared harness (test_explain_real_sweep*.py): a message pasted in a public issue thread, the
words its answer must contain for the cause the thread established, and the misdiagnosis it must not."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from karpplan.explain.enrich import CatalogFor, enrich
from karpplan.explain.report import explain_text


class Paste(NamedTuple):
    url: str
    text: str
    kinds: set[str]
    says: tuple[str, ...]
    never: tuple[str, ...]


def check_paste(paste: Paste, load: CatalogFor) -> None:
    """The answer, read whole (every item the paste gives, as its reader would): the reason kinds, the cause's
    words, none of the misdiagnosis."""
    explanation = explain_text(paste.text)
    enrich(explanation, load)
    items = explanation.item_list()
    assert items, paste.url
    kinds = {r.kind for item in items for r in item.all_reasons()}
    assert paste.kinds <= kinds, (paste.url, kinds)
    told = "\n".join(item.plain for item in items)
    for words in paste.says:
        assert words in told, (paste.url, words, told)
    for words in paste.never:
        assert words.lower() not in told.lower(), (paste.url, words, told)


def check_new_threads(pastes: Iterable[Paste], here: str) -> None:
    """Each thread once, and none another explain test file (`here` is the sweep's own) cites."""
    urls = [p.url for p in pastes]
    assert len(set(urls)) == len(urls)
    path = Path(here)
    others = "".join(f.read_text(encoding="utf-8") for f in path.parent.glob("test_explain*.py") if f != path)
    assert not [u for u in urls if f"'{u}'" in others]
