"""Column generation on the aggregated master, every pricing pass certifying a bound by Farley's argument
(see the package docstring). Time is the work clock's (`effort.py`), so the bound is the same on every run."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import partial

import numpy as np

from karpplan.engines.effort import WorkClock
from karpplan.engines.patterns.buckets import Bucket
from karpplan.engines.patterns.driver import GAP, ColumnGeneration
from karpplan.engines.patterns.instance import TOL, FloatArray, Instance
from karpplan.engines.patterns.lp_pricing import LpPricer
from karpplan.engines.patterns.master import Master, dual_guess
from karpplan.engines.patterns.tables import Stage, backtrack

BATCH = 8  # tables built per iteration once some have room for a column (the most promising first)
LIMIT = 60  # columns offered to the master per iteration
START = 150  # columns at the fluid duals that make the first master
SMOOTH = 0.6  # weight of the fluid duals in the prices, to the power of the iteration
TAIL = 3  # iterations over which the master must improve by GAP, or tables of their own are tried
REFINED = 6  # shapes that get tables of their own per pass
PASSES = 8  # passes over the tables of their own when certifying the last duals
EXACT = 24  # shapes solved by CP-SAT, at most, to certify the last duals
EXACT_TAIL = 6  # shapes solved by CP-SAT, at most, when the tables find no more columns (the tail)
EXACT_LOOP = 3  # ... in the tail without CP-SAT first (the LP's own plan for `lp_rounding`)
SETTLED = 1e-3  # smoothing weight under which the master's own duals are priced (the tail)
RESERVE = 0.15  # share of the time limit kept for certifying the last duals
LP_SHAPES = 16  # shapes priced by their LP relaxation per iteration, the highest bounds first (`lp_pricing.py`)


class Generation(ColumnGeneration):
    """Column generation on the aggregated master; every pricing pass certifies a bound."""

    master: Master

    def __init__(self, inst: Instance, clock: WorkClock, deadline: float,
                 progress: Callable[[str], None] | None, exact_tail: bool = True) -> None:
        super().__init__(inst, clock, deadline, RESERVE, progress)
        # The tail priced by CP-SAT first (`tail`); off, tables of their own first (`old_tail`), as before session
        # 18: the master then ends on the columns `lp_rounding` was tuned on (see the design notes).
        self.exact_tail = exact_tail
        n = len(inst.demand)
        # Rows: classes that differ only by their cap sets share a row; every cap set has its own row.
        keys: dict[bytes, int] = {}
        rows_of = []
        for c in range(n):
            key = inst.req[c].tobytes() + inst.allowed[:, c].tobytes() + inst.old_allowed[:, c].tobytes()
            rows_of.append([keys.setdefault(key, len(keys))])
        for i, (members, _, _) in enumerate(inst.caps):
            for c in members:
                rows_of[int(c)].append(len(keys) + i)
        self.master = Master(inst, rows_of, len(keys) + len(inst.caps), clock)
        self.pass_seconds = 0.0
        self.last_pi: FloatArray | None = None
        self.certified = -math.inf
        self.best_dual: FloatArray | None = None
        self.guess = np.zeros(n)
        self.sigma = np.zeros(len(inst.dims))
        self.lp_pricer = LpPricer(inst, self.pricer, clock)
        self.add_single_class_columns()

    def scale(self, pi: FloatArray) -> FloatArray:
        """A typical value per unit of every dimension (the scale of the multipliers)."""
        inst = self.inst
        used = inst.demand @ inst.req
        worth = float(inst.demand @ pi)
        return np.where(used > 0, worth / np.maximum(used, 1e-300), 0.0)

    def bounds(self, pi: FloatArray, mu: FloatArray | None, keep: bool, steer: bool, columns: bool
               ) -> tuple[FloatArray, FloatArray, list[list[Stage]]]:
        """Upper bounds on the shapes' pricing problems at pi, and the tables built. Every shape starts
        from the cheap screening bound; a bucket gets a table when a shape of it may yield a column
        (columns=True) or may raise the certified theta above what the tables already built show."""
        inst, pricer = self.inst, self.pricer
        ub_new, ub_old = pricer.screen(pi, self.sigma)
        tables: list[list[Stage]] = [[] for _ in pricer.buckets]
        scale = self.scale(pi)
        cost_old = -np.minimum(mu, 0.0) if mu is not None else np.zeros(len(inst.old_count))
        promise = []
        for bi, b in enumerate(pricer.buckets):
            if b.existing:
                promise.append((math.inf, bi))
            else:
                promise.append((float(np.max(ub_new[b.shapes] / inst.price[b.shapes])), bi))
        promise.sort(reverse=True)
        running = 0.0
        built = 0
        found = False
        for head, bi in promise:
            b = pricer.buckets[bi]
            if b.existing:
                if columns and not (ub_old[b.shapes] > cost_old[b.shapes] + TOL).any():
                    continue
            elif head <= (1 + 1e-9 if columns else running * (1 + 1e-12)):
                if columns:
                    continue
                break
            if columns and built >= BATCH and found:
                break  # enough tables with room for a column this time: the others wait
            f, stages = pricer.table(b, pi, keep=keep or steer)
            built += 1
            values = pricer.read(b, f)
            if b.existing:
                ub_old[b.shapes] = np.minimum(ub_old[b.shapes], values)
                found = found or bool((ub_old[b.shapes] > cost_old[b.shapes] + TOL).any())
            else:
                ub_new[b.shapes] = np.minimum(ub_new[b.shapes], values)
                running = max(running, float(np.max(ub_new[b.shapes] / inst.price[b.shapes])))
                found = found or running > 1 + 1e-9
            tables[bi] = stages
            if steer:
                pricer.steer(b, stages, scale)
        return ub_new, ub_old, tables

    def certify(self, pi: FloatArray, ub_new: FloatArray, ub_old: FloatArray) -> tuple[float, float]:
        """(bound, theta): pi / theta is a dual solution of the configuration LP (see the package docstring)."""
        inst = self.inst
        theta = float(np.max(ub_new / inst.price)) if len(inst.price) else 0.0
        theta *= 1 + 1e-9
        total = float(pi @ inst.demand) - float(inst.old_count @ np.maximum(ub_old, 0.0))
        if theta <= 0:
            return (0.0 if total <= 0 else -math.inf), theta
        if total / theta > self.certified:
            # The dual solution behind the best bound (the zone-indexed LP starts from it).
            self.certified, self.best_dual = total / theta, pi / theta
        return total / theta, theta

    def columns(self, pi: FloatArray, pi_m: FloatArray, mu: FloatArray, ub_new: FloatArray, ub_old: FloatArray,
                tables: list[list[Stage]], limit: int, any_gain: bool = False) -> int:
        """Patterns of the shapes whose bound at pi leaves most room (the best of every bucket at least),
        added when the master's duals (pi_m, mu) value them above their cost (or always, with any_gain)."""
        inst, pricer = self.inst, self.pricer
        picks: list[tuple[float, int, int]] = []
        for bi, b in enumerate(pricer.buckets):
            if not tables[bi]:
                continue
            cost = -np.minimum(mu[b.shapes], 0.0) if b.existing else inst.price[b.shapes]
            ub = ub_old[b.shapes] if b.existing else ub_new[b.shapes]
            ratio = (ub - cost) / np.maximum(cost, 1e-9)
            order = np.argsort(-ratio)
            for rank, i in enumerate(order[:limit].tolist()):
                if ratio[i] <= 1e-9 and not any_gain:
                    break
                picks.append((float(ratio[i]) if rank else math.inf, bi, i))
        picks.sort(reverse=True)
        added = 0
        for _, bi, i in picks[:limit]:
            b = pricer.buckets[bi]
            k = int(b.shapes[i])
            free = inst.old_free if b.existing else inst.free
            allowed = inst.old_allowed if b.existing else inst.allowed
            x = backtrack(tables[bi], int(b.row_of[i]), tuple(int(v) for v in b.cells[i]))
            col = pricer.column(x, free[k], allowed[k], b.existing, pi)
            gain = sum(pi_m[c] * n for c, n in col.items())
            limit_k = -min(float(mu[k]), 0.0) if b.existing else float(inst.price[k])
            if (any_gain or gain > limit_k * (1 + 1e-9) + TOL) and self.master.add(k, b.existing, col):
                added += 1
        return added

    def start(self) -> None:
        """Multipliers from the fluid prices, then the tables' patterns at the fluid duals (a good first
        master) and their certified bound."""
        inst = self.inst
        guess, sigma = dual_guess(inst)
        self.guess, self.sigma = guess, sigma
        for b in self.pricer.buckets:
            b.lam[:] = np.where(b.held, 0.0, sigma)[None, :]
        screened = self.pricer.screen(guess, sigma)
        self.best = max(self.best, self.certify(guess, *screened)[0])
        # Every class alone, as many pods as fit, on the shape where its pods cost least.
        u = self.pricer.u_new
        if u is not None and len(inst.price):
            per_pod = np.where(u > 0, inst.price[:, None] / np.maximum(u, 1.0), np.inf)
            for c, k in enumerate(np.argmin(per_pod, axis=0).tolist()):
                if u[k, c] > 0:
                    self.master.add(k, False, {c: int(u[k, c])})
        if self.now() >= self.deadline:
            return
        t0 = self.now()
        ub_new, ub_old, tables = self.bounds(guess, None, keep=True, steer=False, columns=False)
        self.best = max(self.best, self.certify(guess, ub_new, ub_old)[0])
        self.columns(guess, guess, np.zeros(len(inst.old_count)), ub_new, ub_old, tables, START, any_gain=True)
        self.pass_seconds = self.now() - t0

    def run(self, fluid: float | None) -> None:
        """Column generation until the certified bound meets the master, nothing improves the master, the
        master cannot beat the fluid bound, or the time kept for certifying is reached."""
        self.start()
        history: list[float] = []
        while self.now() + 2 * self.pass_seconds < self.stop:
            stepped = self.master_step(fluid)
            if stepped is None:
                return
            value, pi_m, mu = stepped
            history.append(value)
            tailing = len(history) > TAIL and history[-TAIL - 1] - value <= GAP * abs(value)
            # Early on, price between the master's duals and the fluid duals (Wentges smoothing).
            alpha = SMOOTH ** self.iterations
            settled = self.exact_tail and alpha < SETTLED
            pi = pi_m if settled else alpha * self.guess + (1 - alpha) * pi_m
            self.last_pi = pi_m
            t0 = self.now()
            ub_new, ub_old, tables = self.bounds(pi, mu, keep=True, steer=False, columns=True)
            added = self.columns(pi, pi_m, mu, ub_new, ub_old, tables, LIMIT)
            added += self.greedy(pi, pi_m, ub_new, tables)
            if self.exact_tail:  # (the LP whose plan is rounded keeps the columns it was tuned on)
                added += self.relaxed(pi, pi_m, ub_new, LP_SHAPES)
            bound, theta = self.certify(pi, ub_new, ub_old)
            self.best = max(self.best, bound)
            self.pass_seconds = max(0.5 * self.pass_seconds, self.now() - t0)
            self.say(f"pattern LP {self.iterations}: master {value:.4f}, bound {bound:.4f} (best {self.best:.4f}, "
                     f"theta {theta:.4f}), {added} columns")
            if (not added or tailing) and alpha < SETTLED:
                history.clear()
                added = self.tail(pi_m, ub_new, ub_old, theta) if self.exact_tail else self.old_tail(pi_m, ub_new, theta)
                if not added:
                    return

    def tail(self, pi_m: FloatArray, ub_new: FloatArray, ub_old: FloatArray, theta: float) -> int:
        """The shared tables found nothing (or nothing that moves the master) at the master's own duals pi_m.
        CP-SAT on the EXACT_TAIL shapes whose bounds leave most room finds the best pattern of each and proves
        its value: the patterns (and those it found on its way) move the master, and the proven bounds certify
        pi_m again, almost exactly, the best certificate over all iterations being kept, so the bound no longer
        hangs on where the last duals land. Then tables of their own, if CP-SAT found no column in time.
        Returns the columns added."""
        added = self.exact_pricing(pi_m, ub_new, EXACT_TAIL, self.stop, offer=partial(self.offer, pi=pi_m, pi_m=pi_m),
                                   every=True)
        self.best = max(self.best, self.certify(pi_m, ub_new, ub_old)[0])
        solo: list[Bucket] = []
        chosen: set[int] = set()
        for _ in range(2):
            if added:
                break
            added += self.refine(pi_m, ub_new, theta, solo, chosen, pi_m)
        self.say(f"pattern LP: CP-SAT, then tables of their own for {len(chosen)} shapes, {added} columns")
        return added

    def old_tail(self, pi_m: FloatArray, ub_new: FloatArray, theta: float) -> int:
        """The tail without CP-SAT first: tables of their own for the shapes whose bound still leaves room,
        then CP-SAT on EXACT_LOOP shapes if they found nothing. Returns the columns added."""
        added = 0
        solo: list[Bucket] = []
        chosen: set[int] = set()
        for _ in range(2):
            added += self.refine(pi_m, ub_new, theta, solo, chosen, pi_m)
            if added:
                break
        if not added:
            added = self.exact_pricing(pi_m, ub_new, EXACT_LOOP, self.stop,
                                       offer=partial(self.offer, pi=pi_m, pi_m=pi_m))
        self.say(f"pattern LP: tables of their own / CP-SAT for {len(chosen)} shapes, {added} columns")
        return added

    def greedy(self, pi: FloatArray, pi_m: FloatArray, ub_new: FloatArray, tables: list[list[Stage]]) -> int:
        """Greedy patterns (best value per room first) for the new shapes whose bound leaves room but whose
        tables were not built this time: cheap columns while the duals are far from settled."""
        inst = self.inst
        skip: set[int] = set()
        for b, stages in zip(self.pricer.buckets, tables, strict=True):
            if stages and not b.existing:
                skip.update(b.shapes.tolist())
        ratio = ub_new / inst.price
        added = 0
        for k in np.argsort(-ratio)[:LIMIT].tolist():
            if ratio[k] <= 1 + 1e-9:
                break
            if k not in skip:
                added += self.offer(k, {}, pi, pi_m)
        return added

    def refine(self, pi: FloatArray, ub_new: FloatArray, theta: float, solo: list[Bucket], chosen: set[int],
               pi_m: FloatArray | None = None) -> int:
        """One pass over tables of their own for the shapes that decide theta (the REFINED highest ratios
        not chosen yet join `solo`): bounds into ub_new, multipliers steered; with pi_m, the tables' patterns
        are offered to the master. Returns the columns added."""
        inst, pricer = self.inst, self.pricer
        ratio = ub_new / inst.price
        floor = max(ratio.max() * (1 - 0.5 * (theta - 1)), 1.0 if pi_m is not None else 0.0)
        top = [int(k) for k in np.argsort(-ratio)[:REFINED] if int(k) not in chosen and ratio[k] >= floor]
        if top:
            t_best = pricer.best_t[0] if pricer.best_t else np.ones(len(inst.price))
            solo += pricer.solo(top, False, np.array([t_best[k] * self.sigma for k in top]))
            chosen.update(top)
        scale = self.scale(pi)
        added = 0
        for b in solo:
            f, stages = pricer.table(b, pi, keep=True)
            ub_new[b.shapes] = np.minimum(ub_new[b.shapes], pricer.read(b, f))
            if pi_m is not None:
                for i, k in enumerate(b.shapes.tolist()):
                    x = backtrack(stages, int(b.row_of[i]), tuple(int(v) for v in b.cells[i]))
                    added += self.offer(k, x, pi, pi_m)
            pricer.steer(b, stages, scale)
        return added

    def offer(self, k: int, x: Mapping[int, int], pi: FloatArray, pi_m: FloatArray) -> int:
        """Repair x into a pattern of new shape k and add it if the master's duals value it above its price."""
        inst = self.inst
        col = self.pricer.column(x, inst.free[k], inst.allowed[k], False, pi)
        gain = sum(pi_m[c] * n for c, n in col.items())
        return int(gain > inst.price[k] * (1 + 1e-9) + TOL and self.master.add(k, False, col))

    def relaxed(self, pi: FloatArray, pi_m: FloatArray | None, ub_new: FloatArray, limit: int) -> int:
        """The LP relaxations of the `limit` new shapes whose bounds at pi are highest (`lp_pricing.py`): their
        certified bounds into ub_new and, with pi_m, their rounded patterns offered to the master. Returns the
        columns added."""
        inst = self.inst
        ratio = ub_new / inst.price
        added = 0
        for k in np.argsort(-ratio, kind="stable")[:limit].tolist():
            if (pi_m is not None and ratio[k] <= 1 + 1e-9) or self.now() >= self.deadline:
                break
            priced = self.lp_pricer.price(k, pi)
            if priced is None:
                break
            ub, rounded = priced
            ub_new[k] = min(ub_new[k], ub)
            if pi_m is not None:
                for x in rounded:
                    added += self.offer(k, x, pi, pi_m)
        return added

    def finish(self) -> None:
        """Certify the last duals: every table the bound needs, then tables of their own for the shapes that
        decide theta, their multipliers moving between passes while the bound rises, then CP-SAT."""
        pi = self.last_pi
        if pi is None or self.now() >= self.deadline:
            return
        ub_new, ub_old, _ = self.bounds(pi, None, keep=False, steer=False, columns=False)
        if self.exact_tail:
            self.relaxed(pi, None, ub_new, LP_SHAPES)
        bound, theta = self.certify(pi, ub_new, ub_old)
        self.best = max(self.best, bound)
        solo: list[Bucket] = []
        chosen: set[int] = set()
        stale = 0
        for _ in range(PASSES):
            if self.best >= self.value * (1 - GAP) or self.now() + self.pass_seconds >= self.deadline:
                break
            t0 = self.now()
            self.refine(pi, ub_new, theta, solo, chosen)
            self.pass_seconds = max(self.pass_seconds, self.now() - t0)
            before = self.best
            bound, theta = self.certify(pi, ub_new, ub_old)
            self.best = max(self.best, bound)
            stale = stale + 1 if self.best <= before + GAP * abs(self.best) else 0
            if stale >= 2:
                break
        if self.best < self.value * (1 - GAP):
            self.exact_pricing(pi, ub_new, EXACT, self.deadline)
            bound, theta = self.certify(pi, ub_new, ub_old)
            self.best = max(self.best, bound)
        self.say(f"pattern LP: certified {self.best:.4f} (theta {theta:.4f}) against a master of {self.value:.4f}")
