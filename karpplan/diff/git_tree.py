"""`diff --git REF PATH...`: the manifests at PATH as they were at git revision REF, without a checkout.

The files under each PATH at REF (`git ls-tree`) are written, with their contents from one
`git cat-file --batch`, to a temporary directory laid out as the repository; the diff reads them there and
reports them under the names the user gave (`Snapshot.relabel`). A PATH that REF does not have (a directory
added since) makes that part of the BASE side empty, and the diff says so. Not being in a repository, a REF
git does not know and a PATH outside the repository are bad input (exit 2).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from karpplan.errors import InputError, Origin

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
GIT_TIMEOUT = 120.0


def _git(args: Sequence[str], cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, timeout=GIT_TIMEOUT,
                              check=False)
    except FileNotFoundError as exc:
        raise InputError.at(Origin("--git"), "git is not installed (or not on PATH)") from exc


def _error(result: subprocess.CompletedProcess[bytes]) -> str:
    lines = result.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else f"git exited with {result.returncode}"


@dataclass(frozen=True)
class Snapshot:
    """The paths to read for the BASE side, and how to name what is read there as the user named it."""

    ref: str
    paths: tuple[str, ...]  # under `root`, one per PATH that REF has
    absent: tuple[str, ...]  # PATHs (as given) that REF does not have
    labels: tuple[tuple[str, str], ...]  # (prefix under root, the PATH as the user wrote it)

    def relabel(self, text: str) -> str:
        """`text` with the snapshot's temporary paths written as the user's paths."""
        for prefix, label in self.labels:
            if prefix in text:
                text = text.replace(prefix, label)
        return text

    def at_ref(self, text: str) -> str:
        """`text` with the snapshot's temporary paths written as git names a file at the revision (`REF:PATH`),
        for messages that must say the file is REF's, not the working tree's."""
        for prefix, label in self.labels:
            if prefix in text:
                text = text.replace(prefix, f"{self.ref}:{label}")
        return text


def repository_root(cwd: Path) -> Path:
    result = _git(["rev-parse", "--show-toplevel"], cwd)
    if result.returncode != 0:
        raise InputError.at(Origin("--git"), f"{cwd} is not inside a git repository ({_error(result)})")
    return Path(result.stdout.decode().strip()).resolve()


def _repository_of(paths: Sequence[str], cwd: Path) -> Path:
    """The repository holding the first PATH (as `git -C`: run from anywhere, `diff --git HEAD ../repo/deploy`
    reads ../repo's history); its nearest directory in the working tree when PATH itself is gone there."""
    start = (cwd / paths[0]).resolve() if paths else cwd
    while not start.is_dir() and start != start.parent:
        start = start.parent
    return repository_root(start)


def resolve_ref(ref: str, root: Path) -> str:
    """REF as a commit id; InputError when git does not know it."""
    result = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], root)
    if result.returncode != 0 or not result.stdout.strip():
        raise InputError.at(Origin("--git"), f"git does not know the revision {ref!r} (fetch it, or name a branch, "
                                             "tag or commit this repository has)")
    return result.stdout.decode().strip()


def _in_repository(path: str, root: Path, cwd: Path) -> str:
    """PATH as a path inside the repository (posix, '' for its root); InputError when it lies outside."""
    full = (cwd / path).resolve()
    try:
        inside = full.relative_to(root)
    except ValueError:
        raise InputError.at(Origin(path), f"{path} is outside the git repository at {root}") from None
    return inside.as_posix() if str(inside) != "." else ""


def _files_at(commit: str, inside: str, root: Path) -> list[str]:
    args = ["ls-tree", "-r", "-z", "--name-only", "--full-tree", commit]
    result = _git([*args, "--", inside] if inside else args, root)
    if result.returncode != 0:
        raise InputError.at(Origin("--git"), f"git ls-tree failed: {_error(result)}")
    names = [n for n in result.stdout.decode(errors="surrogateescape").split("\0") if n]
    # A PATH naming one file is read whatever its suffix (as `plan FILE` is); a directory's manifests only.
    return [n for n in names if n == inside or n.lower().endswith(MANIFEST_SUFFIXES)]


def _write_blobs(commit: str, names: Sequence[str], root: Path, into: Path) -> None:
    """The files' contents at `commit`, through one `git cat-file --batch`, written under `into`."""
    request = "".join(f"{commit}:{name}\n" for name in names).encode(errors="surrogateescape")
    result = _git(["cat-file", "--batch"], root, stdin=request)
    if result.returncode != 0:
        raise InputError.at(Origin("--git"), f"git cat-file failed: {_error(result)}")
    data, offset = result.stdout, 0
    for name in names:
        end = data.index(b"\n", offset)
        header = data[offset:end].split()
        offset = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data[offset:offset + size])
        offset += size + 1


def snapshot(ref: str, paths: Sequence[str], into: Path, cwd: Path | None = None) -> Snapshot:
    """PATH... at REF, written under the (empty, temporary) directory `into`."""
    cwd = Path.cwd() if cwd is None else cwd
    root = _repository_of(paths, cwd)
    commit = resolve_ref(ref, root)
    present: list[str] = []
    absent: list[str] = []
    labels: list[tuple[str, str]] = []
    for path in paths:
        inside = _in_repository(path, root, cwd)
        names = _files_at(commit, inside, root)
        if not names:
            absent.append(path)
            continue
        _write_blobs(commit, names, root, into)
        local = str(into / inside) if inside else str(into)
        present.append(local)
        label = path.rstrip(os.sep) or path
        # Files under a directory PATH are named as the loader names the working tree's (`.` adds nothing).
        labels.append((local + os.sep, "" if label == "." else label + os.sep))
        labels.append((local, label))
    # Longest prefixes first, so that a PATH inside another is named by itself.
    labels.sort(key=lambda pair: -len(pair[0]))
    return Snapshot(ref, tuple(present), tuple(absent), tuple(labels))
