"""When a disruption budget's `schedule` is active (`Budget.IsActive`, karpenter pkg/apis/v1/nodepool.go).

Karpenter parses `TZ=UTC <schedule>` with robfig/cron's `ParseStandard` (five fields: minute, hour, day of
month, month, day of week; or `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`,
`@hourly`), walks back `duration` from now and asks for the schedule's next hit after that point: the budget
is active when that hit is not after now, i.e. when the schedule hits in `(now - duration, now]`. Times are
UTC. As robfig/cron: names (`jan`, `mon`) in any case, lists, ranges, steps (`a/n` runs to the field's end),
`?` as `*`; day of month and day of week are both required to match when either is `*`, else either may
(`dayMatches`); a schedule that never hits within five years (`Next` gives up and returns the zero time, which
is "not after now") counts as active. A schedule robfig/cron refuses raises `CronError` with its message:
Karpenter fails closed, allowing no disruption.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_BOUNDS = {"minute": (0, 59), "hour": (0, 23), "dom": (1, 31), "month": (1, 12), "dow": (0, 6)}
_MONTHS = {n: i for i, n in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                       "nov", "dec"), start=1)}
_DAYS = {n: i for i, n in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_NAMES = {"month": _MONTHS, "dow": _DAYS}
DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
               "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
_GO_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
SEARCH_YEARS = 5  # robfig/cron's `Next` gives up after this many years


class CronError(ValueError):
    """A schedule robfig/cron would not parse (its message)."""


@dataclass(frozen=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool  # the day of month or the day of week was `*` (both must then match)

    def day_matches(self, day: datetime) -> bool:
        if day.month not in self.months:
            return False
        dom = day.day in self.days
        dow = (day.isoweekday() % 7) in self.weekdays
        return (dom and dow) if self.any_day else (dom or dow)

    def hits_between(self, after: datetime, until: datetime) -> bool:
        """Some minute the schedule names lies in (after, until]."""
        day = after.replace(hour=0, minute=0, second=0, microsecond=0)
        while day <= until:
            if self.day_matches(day):
                for hour in sorted(self.hours):
                    for minute in sorted(self.minutes):
                        hit = day.replace(hour=hour, minute=minute)
                        if after < hit <= until:
                            return True
            day += timedelta(days=1)
        return False


def _value(text: str, field: str) -> int:
    names = _NAMES.get(field)
    if names is not None and text.lower() in names:
        return names[text.lower()]
    if not text.isdigit():
        raise CronError(f"failed to parse int from {text}: strconv.Atoi: parsing {text!r}: invalid syntax"
                        .replace("'", '"'))
    return int(text)


def _range(expr: str, field: str) -> tuple[set[int], bool]:
    """One comma-separated part of a field: its values, and whether it was `*` / `?` with no step over 1."""
    low, high = _BOUNDS[field]
    range_and_step = expr.split("/")
    low_high = range_and_step[0].split("-")
    star = low_high[0] in ("*", "?")
    if star:
        start, end = low, high
    else:
        start = _value(low_high[0], field)
        if len(low_high) == 1:
            end = start
        elif len(low_high) == 2:
            end = _value(low_high[1], field)
        else:
            raise CronError(f"too many hyphens: {expr}")
    step = 1
    if len(range_and_step) == 2:
        if not range_and_step[1].isdigit():
            raise CronError(f"failed to parse int from {range_and_step[1]}")
        step = int(range_and_step[1])
        if len(low_high) == 1:  # "N/step" means "N-max/step"
            end = high
        if step > 1:
            star = False
    elif len(range_and_step) > 2:
        raise CronError(f"too many slashes: {expr}")
    if start < low:
        raise CronError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise CronError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return set(range(start, end + 1, step)), star


def _field(text: str, field: str) -> tuple[frozenset[int], bool]:
    values: set[int] = set()
    star = False
    for part in text.split(","):
        got, is_star = _range(part, field)
        values |= got
        star = star or is_star
    return frozenset(values), star


def parse_schedule(text: str) -> Schedule:
    """The schedule as robfig/cron's `ParseStandard` reads it; CronError when it refuses it."""
    spec = text.strip()
    if spec.startswith("@"):
        if spec.lower() not in DESCRIPTORS:
            raise CronError(f"unrecognized descriptor: {spec}")
        spec = DESCRIPTORS[spec.lower()]
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    minutes, _ = _field(fields[0], "minute")
    hours, _ = _field(fields[1], "hour")
    days, dom_star = _field(fields[2], "dom")
    months, _ = _field(fields[3], "month")
    weekdays, dow_star = _field(fields[4], "dow")
    return Schedule(minutes, hours, days, months, weekdays, dom_star or dow_star)


def go_duration(text: str) -> timedelta | None:
    """A Go duration (`1h30m`, `20h`, `90m`, `0s`); None when it is not one."""
    raw = text.strip()
    if raw in ("0", ""):
        return timedelta(0) if raw == "0" else None
    pos, seconds = 0, 0.0
    for m in _GO_DURATION.finditer(raw):
        if m.start() != pos:
            return None
        seconds += float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
        pos = m.end()
    return timedelta(seconds=seconds) if pos == len(raw) else None


def is_active(schedule: str | None, duration: str | None, now: datetime) -> bool:
    """`Budget.IsActive` at `now`; CronError for a schedule (or duration) Karpenter could not use."""
    if schedule is None and duration is None:
        return True
    parsed = parse_schedule(schedule or "")
    span = go_duration(duration) if duration is not None else timedelta(0)
    if span is None:
        raise CronError(f"invalid duration {duration!r}")
    now = now.astimezone(UTC)
    checkpoint = now - span
    if parsed.hits_between(checkpoint, now):
        return True
    # robfig/cron's Next returns the zero time when nothing hits within five years: "not after now", active
    return not parsed.hits_between(checkpoint, checkpoint + timedelta(days=366 * SEARCH_YEARS))
