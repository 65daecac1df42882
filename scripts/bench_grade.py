"""`make bench`, part 5: the grader's rows per second, the typed grade (timelyqa.rewards.compute_score, as verl calls
it) against plain exact match (the last <answer> tag, SQuAD-normalised, equal to the answer or an alias), on the same
list of (completion, ground truth) pairs in the same run. The pairs are the demo release's answers, typed by the
shared builders (timelyqa.answers) as their sources type them, each written in the forms a model gives: its display,
every alias the builders make, a unit or date form the grader converts, and another row's answer of the same type,
each in <answer> tags after a short reasoning. Both ways are also scored: how many of the right forms each takes.
Target: the typed grade keeps up with a trainer, >= GRADE_TARGET rows per second on one core."""

from __future__ import annotations

import time
from typing import Any

GRADE_TARGET = 2_000.0
THINK = "<think>Reading the question and the page once more.</think>\n"

# The demo release's answers (out/demo/release), with the type and unit their sources know, and forms a model
# gives that no builder alias spells (a converted unit, another date form, a list reordered).
DEMO: list[tuple[str, str, str | None, list[str]]] = [
    ("quantity", "1.92 m", "m", ["192 cm", "1.920 metres"]),
    ("quantity", "1.00 m", "m", ["100 cm", "1 m"]),
    ("quantity", "0.97 m", "m", ["97 cm"]),
    ("quantity", "14 °C", "°C", ["57.2 °F", "14C"]),
    ("quantity", "8 °C", "°C", ["46.4 °F"]),
    ("quantity", "18 million", "EUR", ["€18m", "18,000,000 euros"]),
    ("quantity", "240 million", "EUR", ["€240m", "0.24 billion"]),
    ("quantity", "1.2 billion", "EUR", ["€1.2bn", "1200 million"]),
    ("quantity", "£26,900", "GBP", ["26.9 thousand pounds", "£26.9k"]),
    ("quantity", "£1.2 million", "GBP", ["£1,200,000"]),
    ("quantity", "54%", "%", ["54 per cent"]),
    ("quantity", "$38.9 million", "USD", ["US$38.9 million", "$38.9M"]),
    ("number", "163,900", None, ["163 900", "163.9 thousand"]),
    ("number", "1,219,530", None, ["1 219 530"]),
    ("number", "51,200", None, ["51.2 thousand"]),
    ("number", "3,400", None, ["3.4 thousand"]),
    ("number", "10", None, ["ten"]),
    ("number", "31", None, ["thirty-one"]),
    ("date", "Thursday 5 November 2026", None, ["Nov 5, 2026", "the 5th of November 2026"]),
    ("date", "2026-11-13", None, ["Friday 13 November 2026", "13th Nov 2026"]),
    ("date", "19 July 2026", None, ["Sunday 19 July 2026"]),
    ("date", "2026-09-12", None, ["Sept. 12, 2026"]),
    ("date", "30 June 2027", None, ["Wed 30 June 2027"]),
    ("date", "Wednesday 14 October 2026", None, ["Oct 14, 2026"]),
    ("list", "Kestrel Bridge; Alder Weir; Corran Sluice", None,
     ["Alder Weir, Corran Sluice and Kestrel Bridge", "Corran Sluice; Kestrel Bridge; Alder Weir"]),
    ("list", "Alder Weir; Corran Sluice", None, ["Corran Sluice and Alder Weir"]),
    ("list", "Ravi Menon (CEO); Alan Pryce (chairman)", None, ["Alan Pryce and Ravi Menon"]),
    ("list", "Room L.012; exam 70%, coursework 30%", None, ["exam 70%, coursework 30% and Room L.012"]),
    ("entity", "Tomasz Wielki", None, ["tomasz wielki."]),
    ("entity", "Ravi Menon", None, ["Ravi Menon"]),
    ("entity", "Port Alder Film Festival", None, ["the Port Alder Film Festival"]),
    ("entity", "Riyadh Falcons FC", None, ["Riyadh Falcons F.C."]),
    ("entity", "Karim Al-Sayed", None, ["Karim Al-Sayed"]),
    ("text", "4.3.1", None, ["4.3.1"]),
    ("text", "Room L.012", None, ["room L.012"]),
    ("text", "Mondays 09:00-11:00", None, ["Mondays 09:00–11:00"]),
]


def pairs() -> list[tuple[str, dict[str, Any], bool]]:
    """(completion, verl ground_truth as the export writes it, whether the completion is right), every form."""
    from timelyqa import answers

    typed = []
    for kind, display, unit, forms in DEMO:
        items = display.split("; ") if kind == "list" else None
        built = answers.typed(kind, display, unit=unit, items=items).row()
        truth = {"target": [built["answer"], *built["answer_aliases"]], "answer_type": kind,
                 "answer_value": built["answer_value"]}
        typed.append((kind, truth, [built["answer"], *built["answer_aliases"], *forms]))
    out = []
    for n, (kind, truth, right) in enumerate(typed):
        wrong = next(t for k, t, _ in typed[n + 1:] + typed[:n] if k == kind)["target"][0]  # another row's answer
        out += [(f"{THINK}<answer>{form}</answer>", truth, True) for form in right]
        out.append((f"{THINK}<answer>{wrong}</answer>", truth, False))
    return out


def measure(repeat: int = 1, rounds: int = 20) -> dict[str, Any]:
    """Both ways over the same pairs, `rounds` times over, best of `repeat`: seconds, rows per second, right forms
    each takes, wrong forms each refuses."""
    from timelyqa.rewards import compute_score, extract_answer, normalize

    def exact(completion: str, truth: dict[str, Any]) -> float:
        return float(normalize(extract_answer(completion)) in {normalize(t) for t in truth["target"]})

    def typed(completion: str, truth: dict[str, Any]) -> float:
        return compute_score("timelyqa/demo", completion, truth)

    cases = pairs()
    figures: dict[str, Any] = {"pairs": len(cases), "rows": len(cases) * rounds,
                               "right_forms": sum(right for _, _, right in cases)}
    for name, grade in (("typed", typed), ("exact", exact)):
        scores = [grade(c, t) for c, t, _ in cases]  # warm: pint's registry is built once per trainer process
        figures[f"{name}_right_taken"] = sum(s == 1.0 for s, (_, _, right) in zip(scores, cases, strict=True) if right)
        figures[f"{name}_wrong_refused"] = sum(s == 0.0 for s, (_, _, right) in zip(scores, cases, strict=True)
                                               if not right)
        best = float("inf")
        for _ in range(repeat):
            started = time.perf_counter()
            for _ in range(rounds):
                for completion, truth, _ in cases:
                    grade(completion, truth)
            best = min(best, time.perf_counter() - started)
        figures[f"{name}_seconds"] = best
        figures[f"{name}_rows_per_s"] = round(figures["rows"] / best, 1)
    figures["typed_over_exact"] = round(figures["typed_seconds"] / figures["exact_seconds"], 2)
    return figures


def report(f: dict[str, Any]) -> list[str]:
    """Print the table; return the targets missed."""
    wrong = f["pairs"] - f["right_forms"]
    print(f"\nGrader on {f['pairs']} (completion, gold) pairs of the demo's answers, {f['rows']:,} gradings each way")
    print(f"  {'':44}{'seconds':>9}{'rows/s':>10}{'right taken':>13}{'wrong refused':>15}")
    for name, label in (("typed", "typed grade (rewards.compute_score)"), ("exact", "plain exact match (SQuAD)")):
        print(f"  {label:44}{f[f'{name}_seconds']:9.3f}{f[f'{name}_rows_per_s']:10,.0f}"
              f"{f[f'{name}_right_taken']:>8} of {f['right_forms']:<3}{f[f'{name}_wrong_refused']:>9} of {wrong}")
    ok = f["typed_rows_per_s"] >= GRADE_TARGET
    print(f"  grader: rows per second, typed grade vs plain exact match: {f['typed_rows_per_s']:,.0f} against "
          f"{f['exact_rows_per_s']:,.0f} (typed / exact time: {f['typed_over_exact']:.2f}x)   "
          f"target >= {GRADE_TARGET:,.0f} rows/s   {'ok' if ok else 'MISSED'}")
    return [] if ok else [f"grader {f['typed_rows_per_s']:,.0f} rows/s < {GRADE_TARGET:,.0f}"]


if __name__ == "__main__":  # the grader part alone
    report(measure())
