"""The loader: paths, formats, line numbers, Helm sources, and refusals with `file:line`."""

from __future__ import annotations

import io
import json
import time
import tracemalloc
from pathlib import Path

import pytest

from karpplan.errors import InputError, Origin
from karpplan.inputs.loader import (
    MAX_DEPTH,
    Document,
    load_documents,
    parse_documents,
    read_documents,
)
from karpplan.inputs.origins import LineDict, LineList, line_of, origin_of

POD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers: [{{name: a}}]\n"


def problems_of(text: str, file: str = "in.yaml") -> list[str]:
    with pytest.raises(InputError) as info:
        parse_documents(text, file)
    return [str(p) for p in info.value.problems]


def names(docs: list[Document]) -> list[str]:
    return [d.name for d in docs]


# ------------------------------------------------------------------------------------------ formats
def test_multi_document_yaml_with_empty_documents_and_lines() -> None:
    text = "---\n" + POD.format(name="a") + "---\n---\n# only a comment\n---\n" + POD.format(name="b")
    docs = parse_documents(text, "m.yaml")
    assert names(docs) == ["a", "b"]
    assert [str(d.origin) for d in docs] == ["m.yaml:2", "m.yaml:12"]
    assert docs[0].kind == "Pod" and docs[0].api_version == "v1" and docs[0].namespace == "default"


def test_every_mapping_and_list_knows_its_lines() -> None:
    text = "kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n    image: x\n  - name: b\n"
    doc = parse_documents(text, "p.yaml")[0]
    spec = doc.body["spec"]
    containers = spec["containers"]
    assert isinstance(spec, LineDict) and isinstance(containers, LineList)
    assert line_of(spec, "containers") == 5
    assert line_of(containers, 1) == 8
    assert line_of(containers[0], "image") == 7
    assert origin_of(doc, containers[1], "name") == Origin("p.yaml", 8)
    assert origin_of("other.yaml", {}, "missing") == Origin("other.yaml", 0)
    assert origin_of(doc, containers, 99) == Origin("p.yaml", 6)  # the list starts at its first item


def test_crlf_line_endings_read_like_lf(tmp_path: Path) -> None:
    path = tmp_path / "crlf.yaml"
    path.write_bytes((POD.format(name="a") + "---\n" + POD.format(name="b")).replace("\n", "\r\n").encode())
    docs = load_documents([str(path)])
    assert names(docs) == ["a", "b"]
    assert docs[1].origin.line == 8


def test_utf16_with_bom_is_read(tmp_path: Path) -> None:
    path = tmp_path / "ps.yaml"
    path.write_bytes(POD.format(name="win").encode("utf-16"))
    assert names(load_documents([str(path)])) == ["win"]


def test_json_documents() -> None:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "j"}, "spec": {"containers": []}}
    docs = parse_documents(json.dumps(body, indent=2), "p.json")
    assert names(docs) == ["j"]
    assert line_of(docs[0].body, "spec") == 7


def test_json_that_yaml_refuses_still_loads() -> None:
    docs = parse_documents('{"kind": "Pod",\n\t"metadata": {"name": "tab"}, "x": "\\/"}', "p.json")
    assert names(docs) == ["tab"]


def test_kind_list_items_become_documents_with_their_own_lines() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n"
        "- apiVersion: v1\n  kind: Pod\n  metadata: {name: p1, namespace: web}\n"
    )
    docs = parse_documents(text, "dump.yaml")
    assert [(d.kind, d.name, d.namespace, d.origin.line) for d in docs] == [
        ("Node", "n1", "default", 4),
        ("Pod", "p1", "web", 7),
    ]


def test_typed_lists_imply_their_items_kind() -> None:
    text = "apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: a}\n- metadata: {name: b}\n"
    docs = parse_documents(text, "pods.yaml")
    assert [(d.kind, d.api_version, d.name) for d in docs] == [("Pod", "v1", "a"), ("Pod", "v1", "b")]


def test_helm_source_comments_are_kept() -> None:
    text = (
        "---\n# Source: shop/templates/web.yaml\n" + POD.format(name="web")
        + "---\n" + POD.format(name="plain")
        + "---\n# Source: shop/templates/api.yaml\n" + POD.format(name="api")
    )
    docs = parse_documents(text, "-")
    assert [(d.name, d.source) for d in docs] == [
        ("web", "shop/templates/web.yaml"),
        ("plain", None),
        ("api", "shop/templates/api.yaml"),
    ]


def test_scalars_keep_what_kubernetes_would_read() -> None:
    text = "kind: X\nmetadata: {name: x}\na: 0.10\nb: 12:30\nc: 2024-01-01\nd: 1_000\ne: 1.5e+3\non: 1\n"
    body = parse_documents(text, "s.yaml")[0].body
    assert repr(body["a"]) == "0.10" and body["a"] == 0.1
    assert body["b"] == "12:30"  # YAML 1.1 sexagesimal stays text
    assert body["c"] == "2024-01-01"
    assert body["d"] == 1000
    assert repr(body["e"]) == "1.5e+3"
    assert body["true"] == 1  # a YAML 1.1 boolean key becomes "true", as sigs.k8s.io/yaml does


def test_merge_keys_resolve() -> None:
    text = "base: &b {cpu: 1}\nkind: X\nmetadata: {name: m}\nres:\n  <<: *b\n  memory: 2\n"
    assert parse_documents(text, "m.yaml")[0].body["res"] == {"cpu": 1, "memory": 2}


# ------------------------------------------------------------------------------------------ paths
def test_directories_are_read_recursively_sorted_skipping_hidden(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / "b" / "z.yml").write_text(POD.format(name="z"))
    (tmp_path / "a.yaml").write_text(POD.format(name="a"))
    (tmp_path / "c.json").write_text(json.dumps({"kind": "Pod", "metadata": {"name": "c"}}))
    (tmp_path / "notes.txt").write_text("not a manifest")
    (tmp_path / ".hidden.yaml").write_text(POD.format(name="hidden"))
    (tmp_path / ".git" / "x.yaml").write_text(POD.format(name="git"))
    assert names(load_documents([str(tmp_path)])) == ["a", "z", "c"]  # a.yaml, b/z.yml, c.json


def test_several_paths_and_stdin_are_read_together(tmp_path: Path) -> None:
    path = tmp_path / "one.yaml"
    path.write_text(POD.format(name="file"))
    docs = load_documents([str(path), "-"], stdin=io.StringIO(POD.format(name="piped")))
    assert names(docs) == ["file", "piped"]
    assert docs[1].origin == Origin("<stdin>", 1)


def test_every_problem_in_every_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("a: [\n")
    (tmp_path / "list.yaml").write_text("- 1\n")
    with pytest.raises(InputError) as info:
        load_documents([str(tmp_path / "missing.yaml"), str(tmp_path / "bad.yaml"), str(tmp_path / "list.yaml")])
    messages = [str(p) for p in info.value.problems]
    assert messages[0] == f"{tmp_path}/missing.yaml: no such file or directory"
    assert messages[1].startswith(f"{tmp_path}/bad.yaml:2: invalid YAML: ")
    assert messages[2].startswith(f"{tmp_path}/list.yaml:1: document is a list, not a mapping")


def test_empty_directory_is_a_problem(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="holds no"):
        load_documents([str(tmp_path)])


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "secret.yaml"
    path.write_text(POD.format(name="s"))

    def refuse(self: Path, *args: object, **kwargs: object) -> object:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "open", refuse)
    with pytest.raises(InputError) as info:
        load_documents([str(path)])
    assert str(info.value) == f"{path}: cannot read: Permission denied"


def test_size_limit_is_checked_before_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(POD.format(name="big") + "# padding\n" * 100)
    opened: list[Path] = []
    original_open = Path.open

    def spy(self: Path, *args: object, **kwargs: object) -> object:
        opened.append(self)
        return original_open(self, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", spy)
    with pytest.raises(InputError, match=r"over the 100-byte limit"):
        load_documents([str(path)], max_bytes=100)
    assert opened == []
    assert names(load_documents([str(path)], max_bytes=10_000)) == ["big"]


def test_stdin_size_limit() -> None:
    with pytest.raises(InputError, match="over the 50-byte limit"):
        load_documents(["-"], max_bytes=50, stdin=io.StringIO(POD.format(name="x")))


def test_stdin_only_once() -> None:
    with pytest.raises(InputError, match="more than once"):
        load_documents(["-", "-"], stdin=io.StringIO(POD.format(name="x")))


# ------------------------------------------------------------------------------------------ refusals
def test_invalid_yaml_reports_the_line_yaml_gives() -> None:
    assert problems_of("kind: Pod\nmetadata:\n  name: a\n b: c\n") == [
        "in.yaml:4: invalid YAML: did not find expected key (while parsing a block mapping)"
    ]


def test_non_mapping_documents_are_refused() -> None:
    assert problems_of("just text\n") == [
        "in.yaml:1: document is a string, not a mapping (a Kubernetes object with kind)"
    ]
    assert problems_of("---\n" + POD.format(name="ok") + "---\n- a\n- b\n") == [
        "in.yaml:9: document is a list, not a mapping (a Kubernetes object with kind)"
    ]


def test_list_items_must_be_mappings() -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: a}\n- just-a-string\n- [1]\n"
    assert problems_of(text) == [
        "in.yaml:6: items[1]: is a string, not a mapping (a Kubernetes object)",
        "in.yaml:7: items[2]: is a list, not a mapping (a Kubernetes object)",
    ]
    assert problems_of("kind: List\nitems: 5\n") == ["in.yaml:2: items: must be a list, not a number"]


BILLION_LAUGHS = "\n".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *(
            f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]"
            for i in range(8)
        ),
    ]
)


def test_alias_bomb_fails_fast_with_little_memory() -> None:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(InputError, match="aliases expand to more than 1,000,000 nodes") as info:
            parse_documents(BILLION_LAUGHS, "bomb.yaml")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 2
    assert peak < 20 * 1024 * 1024
    assert str(info.value.problems[0].origin).startswith("bomb.yaml:")


def test_modest_alias_use_is_fine() -> None:
    text = "x: &r {cpu: 1}\nkind: X\nmetadata: {name: a}\nl: [" + ",".join(["*r"] * 1000) + "]\n"
    assert len(parse_documents(text, "a.yaml")[0].body["l"]) == 1000


def test_recursive_alias_is_refused() -> None:
    assert problems_of("a: &a [*a]\n") == ["in.yaml:1: alias *a refers to a node that contains it"]


@pytest.mark.parametrize("text", ["[" * 200_000 + "]" * 200_000, "- " * 100_000 + "x", "a: " + "{b: " * 5000])
def test_deep_nesting_is_refused_without_crashing(text: str) -> None:
    (problem,) = problems_of(text)
    assert problem.startswith("in.yaml:1: ")
    assert f"more than {MAX_DEPTH} levels" in problem or "invalid YAML" in problem


def test_unknown_tags_are_invalid_yaml() -> None:
    (problem,) = problems_of("kind: X\nvalue: !!python/object:os.system x\n")
    assert problem.startswith("in.yaml:2: invalid YAML: could not determine a constructor")


TRICKY_YAML = """\
defaults: &defaults {cpu: 100m, memory: 64Mi}
base: &base
  a: 1
  b: [x, y]
other: &other {b: overridden, c: 3}
merged:
  <<: [*base, *other]
  a: own
single: {<<: *defaults, cpu: 1}
block: |
  line one
  line two
folded: >-
  folded
  text
quoted: ["1", '2', "true", 'null']
plain: [1, 2.5, -3, 0x1F, 0o17, true, no, ~, null, .inf, 1e3, 1.5e+3]
empty_map: {}
empty_list: []
nested: [[1, [2, [3]]], {a: {b: {c: d}}}]
? complex
: value
"key with: colon": v
"""


def _plain(value: object) -> object:
    """Data without the loader's line-carrying types, for comparison with PyYAML."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return float(value)
    return value


SHARED_CASES = Path(__file__).resolve().parents[2] / "shared" / "cases"
REAL_MANIFESTS = sorted(Path(__file__).resolve().parents[1].joinpath("fixtures").rglob("*.yaml")) + sorted(
    SHARED_CASES.rglob("manifests.yaml")
)


@pytest.mark.parametrize("path", REAL_MANIFESTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_data_matches_pyyaml_on_real_manifests(path: Path) -> None:
    import yaml

    text = path.read_text()
    expected: list[object] = []
    for data in yaml.safe_load_all(text):
        if isinstance(data, dict) and str(data.get("kind", "")).endswith("List"):
            expected.extend(data["items"])
        elif data is not None:
            expected.append(data)
    assert [_plain(d.body) for d in parse_documents(text, str(path))] == expected


def test_data_matches_pyyaml_on_tricky_yaml() -> None:
    import yaml

    (doc,) = parse_documents(TRICKY_YAML, "t.yaml")
    assert _plain(doc.body) == yaml.safe_load(TRICKY_YAML)
    assert doc.body["merged"] == {"a": "own", "b": ["x", "y"], "c": 3}  # earlier merges win, own keys override
    assert line_of(doc.body["merged"], "a") == 8


def test_duplicate_keys_are_refused_as_kubernetes_strict_decoding_does() -> None:
    # Kubernetes' strict decoder: `"cpu" already set in map`. A plain YAML reader keeps the last value silently.
    nested = POD.format(name="x") + "  nodeSelector:\n    zone: a\n    zone: b\n"
    assert problems_of(nested) == ['in.yaml:9: duplicate key "zone" (first at line 8)']
    # A duplicated metadata deep in a document is not the missing-separator case.
    assert problems_of("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nmetadata: {name: b}\n") == [
        'in.yaml:4: duplicate key "metadata" (first at line 3)'
    ]
    # Two objects concatenated without `---`: the hint names the likely cause.
    assert problems_of(POD.format(name="a") + POD.format(name="b")) == [
        "in.yaml:7: duplicate key \"apiVersion\" (first at line 1); a missing '---' between two documents?"
    ]
    # `kind` below the top level (an ownerReference, a nodeClassRef) gets no such hint.
    assert problems_of("apiVersion: v1\nkind: Pod\nspec:\n  ref: {kind: A, kind: B}\n") == [
        'in.yaml:4: duplicate key "kind" (first at line 4)'
    ]


def test_duplicate_keys_are_refused_next_to_merge_keys_too() -> None:
    text = "base: &b {a: 1}\nm:\n  <<: *b\n  c: 2\n  c: 3\n"
    assert problems_of(text) == ['in.yaml:5: duplicate key "c" (first at line 4)']
    # A merged key the mapping overrides is not a duplicate.
    (doc,) = parse_documents("kind: X\nbase: &b {a: 1}\nm:\n  <<: *b\n  a: 2\n", "in.yaml")
    assert doc.body["m"] == {"a": 2}


def test_a_file_named_itself_and_by_its_directory_is_read_once(tmp_path: Path) -> None:
    # `karpplan lint pool.yaml blueprints/static-nodepool/` with pool.yaml inside it: kubectl apply -f applies the
    # same object twice, no conflict; reading it twice made every object in it "defined twice" (exit 2)
    pool = tmp_path / "pool.yaml"
    pool.write_text("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu-static}\n")
    (tmp_path / "other.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    documents, problems = read_documents([str(pool), str(tmp_path), str(pool)])
    assert problems == []
    assert sorted((d.kind, d.origin.file) for d in documents) == [("ConfigMap", str(tmp_path / "other.yaml")),
                                                                  ("NodePool", str(pool))]
