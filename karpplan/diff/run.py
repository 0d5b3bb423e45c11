"""`karpplan diff`: the two sides read (from paths, or BASE from a git revision), planned alike, compared.

`diff_paths(BASE, HEAD)` compares two files or directories; `diff_git(REF, PATHS)` compares PATHS at REF
with the working tree (`git_tree.py`). A PATH one side does not have makes that side empty there, said in
the diff's notes; a PATH neither side has, like a missing BASE or HEAD, is bad input (exit 2).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from karpplan.diff.compare import compare
from karpplan.diff.git_tree import MANIFEST_SUFFIXES, snapshot
from karpplan.diff.model import PlanDiff
from karpplan.diff.progress import DiffProgress
from karpplan.diff.side import Side, SideInput, SideOptions, plan_side, read_side, side_time_limit
from karpplan.errors import InputError, InputProblem, Origin


def _missing(paths: Sequence[str], side: str) -> list[InputProblem]:
    return [InputProblem(Origin(p), f"{side} {p} does not exist") for p in paths if p != "-" and not Path(p).exists()]


def _plan(side: SideInput, options: SideOptions, seconds: float, progress: DiffProgress | None) -> Side:
    started = time.monotonic()
    if progress is None:
        return plan_side(side, options, seconds)
    shown = [side.relabel(p) for p in side.paths]
    with progress.side(side.name, shown, seconds) as sink:
        planned = plan_side(side, options, seconds, progress=sink)
    progress.done(side.name, planned.plan, started)
    return planned


def _compare(before: Side, after: Side, options: SideOptions, seconds: float,
             fail_on_increase: float | None) -> PlanDiff:
    return compare(before, after, engine=options.engine, fail_on_increase=fail_on_increase,
                   time_limit=(seconds, options.time_limit is None))


def _holds_manifests(path: Path) -> bool:
    """A file, or a directory with a manifest somewhere under it (git leaves a directory whose files a change
    removed behind when other files, a README or untracked ones, stay: as BASE's side, it is empty there)."""
    if path.is_dir():
        return any(f.is_file() for suffix in MANIFEST_SUFFIXES for f in path.rglob(f"*{suffix}"))
    return path.exists()


def diff_paths(base: Sequence[str], head: Sequence[str], options: SideOptions, *,
               fail_on_increase: float | None = None, progress: DiffProgress | None = None) -> PlanDiff:
    """BASE against HEAD (files or directories); InputError when either is missing or bad."""
    problems = _missing(base, "BASE") + _missing(head, "HEAD")
    if problems:
        raise InputError(problems)
    sides = read_side("base", base, options), read_side("head", head, options)
    seconds = side_time_limit(options, *sides)
    before, after = (_plan(side, options, seconds, progress) for side in sides)
    return _compare(before, after, options, seconds, fail_on_increase)


def diff_git(ref: str, paths: Sequence[str], options: SideOptions, *, fail_on_increase: float | None = None,
             progress: DiffProgress | None = None, cwd: Path | None = None) -> PlanDiff:
    """PATHS at git revision REF against the working tree; InputError outside a repository, for a REF git does
    not know, or for a PATH that neither REF nor the working tree has."""
    root = Path.cwd() if cwd is None else cwd
    with tempfile.TemporaryDirectory(prefix="karpplan-diff-") as tmp:
        snap = snapshot(ref, paths, Path(tmp), root)
        in_tree = [p for p in paths if _holds_manifests(root / p)]
        gone = [p for p in snap.absent if p not in in_tree]
        if gone:
            raise InputError([InputProblem(Origin(p), f"{p} exists neither at {ref} nor in the working tree")
                              for p in gone])
        base_notes = [f"{p} does not exist at {ref}: BASE is empty there (everything in it is added)"
                      for p in snap.absent]
        head_notes = [f"{p} {'holds no manifest' if (root / p).exists() else 'does not exist'} in the working tree: "
                      "HEAD is empty there (everything in it is removed)" for p in paths if p not in in_tree]
        base_side = read_side(f"base ({ref})", snap.paths, options, relabel=snap.relabel, notes=base_notes,
                              at_revision=snap.at_ref)
        head_side = read_side("head (working tree)", [str(root / p) if cwd is not None else p for p in in_tree],
                              options, notes=head_notes)
        seconds = side_time_limit(options, base_side, head_side)
        before = _plan(base_side, options, seconds, progress)  # BASE's files live in `tmp`: lint reads them
    after = _plan(head_side, options, seconds, progress)
    return _compare(before, after, options, seconds, fail_on_increase)
