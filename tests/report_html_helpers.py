"""Reading the HTML report back as a person's browser shows it: element text, rows, totals (stdlib only)."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list[Element | str] = field(default_factory=list)

    def text(self) -> str:
        parts = [c if isinstance(c, str) else c.text() for c in self.children]
        return " ".join(" ".join(parts).split())

    def walk(self) -> list[Element]:
        out = [self]
        for child in self.children:
            if isinstance(child, Element):
                out.extend(child.walk())
        return out

    def find_all(self, tag: str | None = None, **attrs: str) -> list[Element]:
        return [e for e in self.walk() if (tag is None or e.tag == tag)
                and all(e.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())]

    def with_attr(self, name: str) -> list[Element]:
        return [e for e in self.walk() if name in e.attrs]


VOID = {"meta", "br", "img", "input", "link", "hr", "rect", "path", "circle", "line"}


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Element(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        for index in range(len(self.stack) - 1, 0, -1):
            if self.stack[index].tag == tag:
                del self.stack[index:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> Element:
    builder = _Builder()
    builder.feed(html)
    builder.close()
    return builder.root


def totals(root: Element) -> dict[str, str]:
    """`data-total` key -> the value shown (without its small print)."""
    out = {}
    for dd in root.with_attr("data-total"):
        own = [c for c in dd.children if isinstance(c, str)]
        out[dd.attrs["data-total"]] = " ".join("".join(own).split()) or dd.text()
    return out


def node_rows(root: Element) -> dict[str, Element]:
    return {row.attrs["data-node"]: row for row in root.with_attr("data-node")}


def outline(root: Element) -> list[str]:
    """What a reader scans: headings, totals, table captions and rows, paragraphs, one line each."""
    lines = []
    for element in root.walk():
        if element.tag in ("h1", "h2", "h3", "caption", "p", "tr", "li") or "data-total" in element.attrs:
            if element.tag == "li" and any(isinstance(c, Element) and c.tag == "ul" for c in element.children):
                continue
            text = element.text()
            if text:
                lines.append(f"{element.tag}: {text}")
    return lines
