"""`make bench`, part 4: the news source's article extraction against plain trafilatura, on the 181 pages of the
article-extraction benchmark (../shared/extraction-benchmark/). The pipeline runs trafilatura twice (for precision,
then for recall when the first cut the article) and parses the page once more; the target bounds what that costs:
pipeline seconds <= 3x plain trafilatura's (`include_comments=False, favor_precision=True`), with both scored by
the benchmark's metric beside the time."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path
from typing import Any

RATIO_TARGET = 3.0
BENCHMARK = Path(__file__).resolve().parents[2] / "shared" / "extraction-benchmark"


def pages(folder: Path = BENCHMARK) -> list[tuple[str, str, str]]:
    """(url, html, true body) of every page of the benchmark."""
    truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
    return [(item["url"], gzip.open(folder / "html" / f"{key}.html.gz").read().decode("utf-8", "replace"),
             item["articleBody"]) for key, item in sorted(truth.items())]


def measure(repeat: int = 1) -> dict[str, Any]:
    import trafilatura

    from timelyqa.news.extract import extract
    from timelyqa.news.quality import score

    corpus = pages()
    ways = {"pipeline": lambda html, url: extract(html, url).text,
            "trafilatura": lambda html, url: trafilatura.extract(html, url=url, include_comments=False,
                                                                 favor_precision=True)}
    figures: dict[str, Any] = {"pages": len(corpus)}
    for name, run in ways.items():
        best = float("inf")
        for _ in range(repeat):
            started = time.perf_counter()
            texts = [run(html, url) for url, html, _ in corpus]
            best = min(best, time.perf_counter() - started)
        scores = score([(truth, text) for (_, _, truth), text in zip(corpus, texts, strict=True)])
        figures |= {f"{name}_seconds": round(best, 2), f"{name}_f1": round(scores.f1, 3),
                    f"{name}_ms_per_page": round(1000 * best / len(corpus), 1)}
    figures["pipeline_over_trafilatura"] = round(figures["pipeline_seconds"] / figures["trafilatura_seconds"], 2)
    return figures


def report(f: dict[str, Any]) -> list[str]:
    """Print the table; return the targets missed."""
    print(f"\nArticle extraction on the benchmark's {f['pages']} pages")
    print(f"  {'':44}{'seconds':>9}{'ms/page':>9}{'F1':>7}")
    for name, label in (("pipeline", "timelyqa.news.extract"), ("trafilatura", "trafilatura (precision, no comments)")):
        print(f"  {label:44}{f[f'{name}_seconds']:9.2f}{f[f'{name}_ms_per_page']:9.1f}{f[f'{name}_f1']:7.3f}")
    ok = f["pipeline_over_trafilatura"] <= RATIO_TARGET
    print(f"  pipeline / trafilatura time: {f['pipeline_over_trafilatura']:.2f}x   target <= {RATIO_TARGET:.1f}x   "
          f"{'ok' if ok else 'MISSED'}")
    return [] if ok else [f"extraction {f['pipeline_over_trafilatura']:.2f}x trafilatura's time > {RATIO_TARGET}"]


if __name__ == "__main__":  # the extraction part alone
    report(measure())
