"""The evaluation clock: date expressions (today-1, last-monday, workday) taken in a recipe's zone; URL templates."""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
DAY = "day"
"""The placeholder each_day fills with each of its days."""
MAX_DAYS = 366
"""The most days one each_day may fetch: a year, so a typo (today-3650) cannot start thousands of requests."""

_OFFSET = re.compile(r"^today([+-])(\d{1,4})$")
_WEEKDAY = re.compile(r"^(last|next)-([a-z]+)$")
VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""A variable's name: an identifier, so it can never be mistaken for a date expression (those have a '-')."""


def parse_at(text: str) -> datetime:
    """An evaluation clock from an ISO date-time with its offset; a naive time is refused (whose midnight would it
    be?), so the machine's local time never creeps in."""
    try:
        at = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"clock {text!r}: not an ISO date-time (e.g. 2026-11-16T09:00:00+00:00)") from None
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError(f"clock {text!r}: give its offset or Z (e.g. 2026-11-16T09:00:00Z); a time without one is "
                         "ambiguous")
    return at


@cache
def _zones() -> frozenset[str]:
    # 'localtime' names the machine's own zone on some systems: exactly the clock a recipe must never use
    return frozenset(available_timezones()) - {"localtime", "posixrules", "Factory"}


def zone(name: str) -> ZoneInfo:
    """The IANA zone of that name ("UTC" included); ValueError naming it otherwise (paths and 'localtime' too)."""
    if name not in _zones():
        raise ValueError(f"{name!r} is not an IANA time zone (e.g. Europe/London, America/Los_Angeles, UTC)")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{name!r} is not an IANA time zone (e.g. Europe/London, America/Los_Angeles, UTC)") from None


def today_in(at: datetime, timezone: str) -> date:
    """The clock's date in the zone: the same instant is a different day in Auckland and in Los Angeles."""
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError(f"clock {at.isoformat()}: a time without an offset is ambiguous")
    return at.astimezone(zone(timezone)).date()


def _weekday(name: str) -> int | None:
    for index, full in enumerate(WEEKDAYS):
        if name == full or name == full[:3]:
            return index
    return None


def resolve_date(expr: str, today: date) -> date:
    """The day a date expression names at `today`; ValueError naming the expression when it is not one."""
    if expr == "today":
        return today
    if expr == "yesterday":
        return today - timedelta(days=1)
    if expr == "workday":  # today, or the Friday before on a weekend: the last day an office published
        return today - timedelta(days=max(0, today.weekday() - 4))
    if m := _OFFSET.match(expr):
        days = int(m.group(2))
        return today + timedelta(days=days if m.group(1) == "+" else -days)
    if (m := _WEEKDAY.match(expr)) and (target := _weekday(m.group(2))) is not None:
        if m.group(1) == "last":  # strictly before today: last-monday on a Monday is a week ago
            return today - timedelta(days=(today.weekday() - target - 1) % 7 + 1)
        return today + timedelta(days=(target - today.weekday() - 1) % 7 + 1)
    raise ValueError(f"{expr!r} is not a date expression (today, yesterday, today-N, today+N, last-<weekday>, "
                     "next-<weekday>, workday)")


def is_date_expression(expr: str) -> bool:
    try:
        resolve_date(expr, date(2000, 1, 1))
    except ValueError:
        return False
    return True


def placeholders(template: str) -> list[tuple[str, str | None]]:
    """Each {name} or {name:format} in the template, in order; ValueError on a brace that opens no placeholder."""
    found: list[tuple[str, str | None]] = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:  # "Single '}' encountered", an unclosed '{'
        raise ValueError(f"{template!r}: {exc} (write a literal brace as {{{{ or }}}})") from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name or conversion or "{" in (spec or ""):
            whole = "{" + name + ("!" + conversion if conversion else "") + (":" + spec if spec else "") + "}"
            raise ValueError(f"{whole!r} is not a placeholder: write {{name}} or {{date:format}}")
        found.append((name, spec or None))
    return found


def is_dated(template: str) -> bool:
    """True when the URL names a date; else the page shows only the present, and only a clock near now can use it."""
    return any(name == DAY or is_date_expression(name) for name, _ in placeholders(template))


def render(template: str, *, today: date, variables: Mapping[str, str], day: date | None = None
           ) -> tuple[str, dict[str, str]]:
    """The URL for this clock, and the dates it used (ISO, by expression: part of the answer's evidence)."""
    parts: list[str] = []
    dates: dict[str, str] = {}
    for literal, name, spec, _ in string.Formatter().parse(template):
        parts.append(literal)
        if name is None:
            continue
        placeholders("{" + name + (":" + spec if spec else "") + "}")  # the same refusals as at load
        when: date | None = None
        if name == DAY:
            if day is None:
                raise ValueError(f"{template!r}: {{day}} is only filled inside each_day")
            when = day
        elif is_date_expression(name):
            when = resolve_date(name, today)
        if when is not None:
            dates[name] = when.isoformat()
            parts.append(when.strftime(spec) if spec else when.isoformat())
        elif name in variables:
            if spec:
                raise ValueError(f"{{{name}:{spec}}}: a format applies to dates only, and {name!r} is a variable")
            parts.append(variables[name])
        else:
            raise ValueError(f"{{{name}}} is neither a date expression nor a variable given (vars: or --var "
                             f"{name}=VALUE)")
    return "".join(parts), dates


def each_days(start: str, end: str, today: date) -> list[date]:
    """Every day from start to end, both included, in order."""
    first, last = resolve_date(start, today), resolve_date(end, today)
    if first > last:
        raise ValueError(f"each_day from {start} ({first}) comes after to {end} ({last}) at {today}")
    count = (last - first).days + 1
    if count > MAX_DAYS:
        raise ValueError(f"each_day from {start} to {end} spans {count} days, more than {MAX_DAYS}")
    return [first + timedelta(days=i) for i in range(count)]
