"""Single-node consolidation judged by two processes (`consolidate/parallel.py`) gives the sequential answer:
the same actions, savings, pod destinations and kept nodes' reasons on the bench's seeded snapshot, and
verdicts handed back strictly in candidate order, stopping at the first command."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import karpplan.consolidate.parallel as parallel
from karpplan.consolidate.loop import steady_state
from karpplan.consolidate.run import ConsolidateOptions, read

REPO = Path(__file__).resolve().parent.parent


class Forks:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = os.fork

        def counted() -> int:
            self.count += 1
            return real()

        monkeypatch.setattr(os, "fork", counted)


def _report(path: Path, workers: int) -> dict[str, Any]:
    _, state = read(ConsolidateOptions(paths=(str(path),)))
    result = steady_state(state, workers=workers)
    return {"actions": [{"method": a.method, "decision": a.decision, "nodes": [n.name for n in a.nodes],
                         "replacement": a.replacement.name if a.replacement else None, "options": a.options,
                         "savings": round(a.savings, 6), "moves": dict(sorted(a.moves.items())),
                         "evicted": [p.key for p in a.evicted]} for a in result.actions],
            "kept": dict(sorted(result.verdicts.items())), "passes": result.passes}


def test_two_workers_give_the_sequential_steady_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(REPO))
    from bench.consolidate_bench import snapshot

    path, nodes, _ = snapshot(1600, 0.6, 42, tmp_path)
    assert nodes == 59
    sequential = _report(path, 1)
    forks = Forks(monkeypatch)
    both = _report(path, 2)
    assert forks.count > 0  # the passes that go on past their first candidates were judged in two processes
    assert both == sequential
    assert len(both["actions"]) == 21
    _, state = read(ConsolidateOptions(paths=(str(path),)))
    cut = steady_state(state, time_limit=0.3, workers=2)  # the deadline still stops it, never a wrong action
    assert not cut.complete
    assert [[n.name for n in a.nodes] for a in cut.actions] == [a["nodes"] for a in sequential["actions"]][
        : len(cut.actions)]


def _judge(command_at: int | None, fail_in_worker: bool = False) -> Any:
    parent = os.getpid()

    def judge(i: int) -> object:
        if fail_in_worker and os.getpid() != parent:
            raise RuntimeError("worker fault")
        return {"command": i} if i == command_at else f"refused {i}"
    return judge


@pytest.mark.parametrize("command_at", [None, 0, 1, 2, 5, 6, 11])
def test_verdicts_come_in_order_and_stop_at_the_first_command(command_at: int | None,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    forks = Forks(monkeypatch)
    todo = list(range(12))
    got = []
    results = parallel.judged(todo, _judge(command_at), workers=2, nodes=1000)
    for verdict in results:
        got.append(verdict)
        if not isinstance(verdict, str):
            break
    results.close()
    expected = [f"refused {i}" for i in todo[: command_at if command_at is not None else len(todo)]]
    if command_at is not None:
        expected.append({"command": command_at})
    assert got == expected
    assert forks.count == (1 if command_at is None or command_at >= parallel.HEAD else 0)
    with pytest.raises(ChildProcessError):  # the worker was waited for: no zombie left
        os.waitpid(-1, os.WNOHANG)


def test_a_fault_in_the_worker_is_judged_again_here(monkeypatch: pytest.MonkeyPatch) -> None:
    got = list(parallel.judged(list(range(10)), _judge(7, fail_in_worker=True), workers=2, nodes=1000))
    assert got == [f"refused {i}" for i in range(7)] + [{"command": 7}] + [f"refused {i}" for i in (8, 9)]


def test_no_fork_while_another_thread_runs_nor_for_one_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    forks = Forks(monkeypatch)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not parallel.fork_safe()
        assert len(list(parallel.judged(list(range(12)), _judge(None), workers=2, nodes=1000))) == 12
    finally:
        stop.set()
        other.join()
    assert len(list(parallel.judged(list(range(12)), _judge(None), workers=1, nodes=1000))) == 12
    assert len(list(parallel.judged(list(range(12)), _judge(None), workers=2, nodes=10))) == 12
    assert forks.count == 0


def test_what_the_worker_noted_of_a_refused_candidate_reaches_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # The steady state remembers where each failed simulation put its pods (consolidate/memory.py), the ones
    # the worker simulated too.
    forks = Forks(monkeypatch)
    noted: dict[int, str] = {}
    judge = _judge(None)

    def noting(i: int) -> object:
        noted[i] = f"trace {i} by {os.getpid()}"
        return judge(i)

    got = list(parallel.judged(list(range(12)), noting, workers=2, nodes=1000,
                               notes=(noted.__getitem__, noted.__setitem__)))
    assert got == [f"refused {i}" for i in range(12)]
    assert forks.count == 1
    assert sorted(noted) == list(range(12))
    assert {i for i, note in noted.items() if not note.endswith(f"by {os.getpid()}")} == set(range(3, 12, 2))
