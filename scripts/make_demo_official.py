"""Write the demo official sites in data/demo/official/: pages whose values are functions of the date, recipes that
answer questions about them, and the bundle that serves them and names the clocks the demo checks them at.

The same invented world as the other demos (Valmora, Port Alder), as official sites, all on 127.0.0.1:47313:

- `/gauges/kestrel-bridge/YYYY-MM-DD.html`: the Valmora Environment Agency's readings of the River Aldern at
  Kestrel Bridge, four a day, in a table (`td.level`, metres); `latest.html` shows only the present;
- `/forecast/YYYY/MM/DD.html`: the Valmora Met Office's forecast for Port Alder, "High: 14 °C" in a paragraph;
- `/rates/YYYYMMDD.html`: the Bank of Valmora's reference rate of the crown to the euro, published on workdays;
- `/rail/departures-DD-MM-YYYY.html`: Port Alder Rail's late departures of the day, written into the page by a
  script from inline data (read through Chromium: the recipe says `render: auto`);
- `/warnings/YYYY-MM-DD.html`: flood warnings in force, a list; from 2026-11-13 the agency moved them to another
  layout, so their recipe fails every check from that day and is broken by the last clock.

Run it again after editing the world: the output is deterministic, and files the world no longer has are removed.
"""

from __future__ import annotations

import math
import shutil
import sys
from datetime import date, timedelta
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "data" / "demo" / "official"
PORT = 47313
FIRST, LAST = date(2026, 10, 20), date(2026, 11, 20)
CLOCKS = [f"2026-11-{d:02d}T09:00:00+00:00" for d in range(10, 17)]
LAYOUT_CHANGE = date(2026, 11, 13)
HOURS = (0, 6, 12, 18)
STATIONS = ("Kestrel Bridge", "Mill Ford", "Alder Weir", "Harrow Lock", "Corran Sluice")


def level(day: date, hour: int) -> float:
    """The River Aldern at Kestrel Bridge, metres: a slow swell with a daily wave."""
    n = day.toordinal()
    return round(1.4 + 0.9 * math.sin(n / 4.3) + 0.25 * math.sin((n * 24 + hour) / 5.0), 2)


def high(day: date) -> int:
    n = day.toordinal()
    return 6 + (n * 7) % 9


def rate(day: date) -> float:
    n = day.toordinal()
    return round(1.1642 + 0.0123 * math.sin(n / 9.7) + 0.0031 * math.cos(n / 1.9), 4)


def late(day: date) -> list[str]:
    n = day.toordinal()
    trains = ["07:12 to Valmora Central", "08:40 to Mill Ford", "12:05 to Harrow", "17:31 to Valmora Central",
              "18:02 to Corran", "21:47 to Mill Ford"]
    return [t for i, t in enumerate(trains) if (n * 7 + i * 3) % 5 < 2]


def warnings(day: date) -> list[str]:
    n = day.toordinal()
    return [s for i, s in enumerate(STATIONS) if (n + 3 * i) % 4 == 0 or (n * i) % 7 == 1]


def page(title: str, body: str, head: str = "") -> str:
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>{head}</head>\n"
            f"<body><header><nav><a href=\"/\">Valmora public services</a></nav></header>\n<main>\n{body}\n</main>\n"
            "<footer><p>Open data under the Valmora Open Government Licence.</p></footer></body></html>\n")


def gauge(day: date) -> str:
    rows = "\n".join(f"<tr><td class=\"time\">{h:02d}:00</td><td class=\"level\">{level(day, h):.2f}</td></tr>"
                     for h in HOURS)
    return page(f"River Aldern at Kestrel Bridge: readings {day.isoformat()}",
                f"<h1>River Aldern at Kestrel Bridge</h1>\n<p>Readings for {day:%A %d %B %Y}, metres above gauge "
                f"datum.</p>\n<table class=\"readings\"><thead><tr><th>Time</th><th>Level (m)</th></tr></thead>\n"
                f"<tbody>\n{rows}\n</tbody></table>")


def forecast(day: date) -> str:
    return page(f"Port Alder forecast for {day:%d %B %Y}",
                f"<h1>Port Alder</h1>\n<section class=\"forecast\"><h2>{day:%A %d %B}</h2>\n"
                f"<p class=\"temps\">High: {high(day)} °C · Low: {high(day) - 7} °C</p>\n"
                "<p>Bright spells, becoming cloudier later.</p></section>")


def rates(day: date) -> str:
    return page(f"Reference rates {day.isoformat()}",
                f"<h1>Bank of Valmora reference rates</h1>\n<p>Published {day:%d %B %Y}, 14:15 local time.</p>\n"
                "<dl class=\"rates\">\n"
                f"<dt>EUR</dt><dd data-currency=\"EUR\">{rate(day):.4f}</dd>\n"
                f"<dt>GBP</dt><dd data-currency=\"GBP\">{rate(day) * 0.86:.4f}</dd>\n</dl>")


def departures(day: date) -> str:
    data = ", ".join(f'"{t}"' for t in late(day))
    script = ("<script>\nconst late = [" + data + "];\nconst list = document.getElementById('late');\n"
              "for (const t of late) { const li = document.createElement('li'); li.className = 'late';"
              " li.textContent = t; list.appendChild(li); }\n"
              "document.getElementById('count').textContent = String(late.length);\n</script>")
    return page(f"Port Alder Rail: departures {day:%d-%m-%Y}",
                f"<h1>Port Alder departures, {day:%d %B %Y}</h1>\n<p>Late departures: <span id=\"count\"></span></p>\n"
                f"<ul id=\"late\"></ul>\n{script}")


def flood(day: date) -> str:
    items = "\n".join(f"<li class=\"station\">{s}</li>" for s in warnings(day)) or "<li class=\"none\">None</li>"
    if day >= LAYOUT_CHANGE:  # the agency's new layout: a table in place of the list
        items = "\n".join(f"<tr><td class=\"warning-station\">{s}</td></tr>" for s in warnings(day))
        return page(f"Flood warnings {day.isoformat()}", f"<h1>Flood warnings in force</h1>\n<table>{items}</table>")
    return page(f"Flood warnings {day.isoformat()}",
                f"<h1>Flood warnings in force</h1>\n<ul class=\"warnings\">\n{items}\n</ul>")


RECIPES = {
    "kestrel-peak-7d.yaml": """\
recipe: 1
id: kestrel-peak-7d
question: What was the highest level of the River Aldern at the Kestrel Bridge gauge over the past 7 days, excluding today?
level: L1
timezone: Europe/London
added: 2026-08-03
each_day: {from: today-7, to: today-1}
fetch:
  url: "{site}/gauges/kestrel-bridge/{day}.html"
  render: never
extract:
  css: "table.readings td.level"
  type: number
combine: max
round: 2
unit: m
valid: {min: 0, max: 15}
""",
    "kestrel-peak-7d-l2.yaml": """\
recipe: 1
id: kestrel-peak-7d-l2
question: What was the highest level over the past 7 days, excluding today, at the river gauge beside the bridge that Valmora's 1912 tramway crossed?
level: L2
base: kestrel-peak-7d
hops: ["the river gauge beside the bridge that Valmora's 1912 tramway crossed"]
timezone: Europe/London
added: 2026-08-03
each_day: {from: today-7, to: today-1}
fetch:
  url: "{site}/gauges/kestrel-bridge/{day}.html"
  render: never
extract:
  css: "table.readings td.level"
  type: number
combine: max
round: 2
unit: m
valid: {min: 0, max: 15}
""",
    "port-alder-high-today.yaml": """\
recipe: 1
id: port-alder-high-today
question: What is today's forecast high temperature for Port Alder, in degrees Celsius?
level: L1
timezone: Europe/London
added: 2026-09-07
fetch:
  url: "{site}/forecast/{today:%Y/%m/%d}.html"
extract:
  css: "section.forecast p.temps"
  regex: "High: (-?\\\\d+)"
  type: integer
unit: "°C"
valid: {min: -40, max: 50}
""",
    "crown-euro-rate.yaml": """\
recipe: 1
id: crown-euro-rate
question: What is the Bank of Valmora's latest reference rate of the crown to the euro (on a weekend, Friday's)?
level: L1
timezone: Europe/London
added: 2026-10-12
fetch:
  url: "{site}/rates/{workday:%Y%m%d}.html"
extract:
  xpath: "//dd[@data-currency='EUR']"
  type: number
round: 4
valid: {min: 0.5, max: 2}
""",
    "port-alder-late-yesterday.yaml": """\
recipe: 1
id: port-alder-late-yesterday
question: How many Port Alder Rail departures left late yesterday?
level: L1
timezone: Europe/London
added: 2026-11-02
fetch:
  url: "{site}/rail/departures-{yesterday:%d-%m-%Y}.html"
  render: auto
extract:
  css: "#count"
  type: integer
valid: {min: 0, max: 500}
""",
    "aldern-flood-warnings.yaml": """\
recipe: 1
id: aldern-flood-warnings
question: At which River Aldern stations were flood warnings in force yesterday?
level: L1
timezone: Europe/London
added: 2026-07-06
fetch:
  url: "{site}/warnings/{yesterday}.html"
extract:
  css: "ul.warnings li"
  type: list
combine: join
""",
    "kestrel-level-now.yaml": """\
recipe: 1
id: kestrel-level-now
question: What is the level of the River Aldern at the Kestrel Bridge gauge right now?
level: L1
timezone: Europe/London
added: 2026-10-05
fetch:
  url: "{site}/gauges/kestrel-bridge/latest.html"
extract:
  css: "table.readings td.level"
  type: number
combine: last
unit: m
valid: {min: 0, max: 15}
""",
}

BUNDLE = f"""\
# The demo's official sites: `site/` served on 127.0.0.1:{PORT} for the run, the recipes in `recipes/` checked at
# each clock below (a week of daily checks, fixed so that the demo gives the same rows on every run).
# Written by scripts/make_demo_official.py.
site: site
recipes: recipes
port: {PORT}
vars:
  site: "http://127.0.0.1:{PORT}"
clocks:
""" + "".join(f'  - "{c}"\n' for c in CLOCKS)


def files() -> dict[str, str]:
    out = {"bundle.yaml": BUNDLE, **{f"recipes/{name}": text for name, text in RECIPES.items()}}
    out["site/index.html"] = page("Valmora public services", "<h1>Valmora public services</h1>\n<ul>"
                                  "<li><a href=\"/gauges/kestrel-bridge/latest.html\">River Aldern</a></li></ul>")
    out["site/robots.txt"] = "User-agent: *\nDisallow: /internal/\n"
    day = FIRST
    while day <= LAST:
        out[f"site/gauges/kestrel-bridge/{day.isoformat()}.html"] = gauge(day)
        out[f"site/forecast/{day:%Y/%m/%d}.html"] = forecast(day)
        if day.weekday() < 5:
            out[f"site/rates/{day:%Y%m%d}.html"] = rates(day)
        out[f"site/rail/departures-{day:%d-%m-%Y}.html"] = departures(day)
        out[f"site/warnings/{day.isoformat()}.html"] = flood(day)
        day += timedelta(days=1)
    out["site/gauges/kestrel-bridge/latest.html"] = gauge(LAST).replace(f"readings {LAST.isoformat()}", "latest")
    return out


def main(parent: Path = OUT.parent) -> None:
    out = parent / OUT.name
    if out.exists():
        shutil.rmtree(out)
    for name, text in files().items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT.parent)  # another folder, to compare with the committed one
