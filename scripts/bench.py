"""`make bench`: the sources' speed, in one run, with their targets; figures in out/bench.json.

1. Delta against scan, on two synthetic dumps of about 10 million truthy triples each
   (scripts/synthetic_dumps.py, cached under out/bench/). The scan is the floor: decompress both
   dumps and `orjson.loads` every entity line, nothing else. The delta is what `timelyqa wikidata`
   runs before synthesis: `read_snapshot` of both dumps (no RDF) and `compute_delta`, bucket by bucket.
   Each runs in its own process, so that its peak RSS is its own. Target: delta <= 2x scan.
   For the projection to a full dump pair (README): the delta's rate per core (entity lines of both dumps
   per CPU second), and its peak RSS against the dump bytes a bucket holds, from a second delta run with
   `--scale-buckets` times the buckets: peak = base + per_bucket_mb * (dump MB / buckets), two points, one run.
2. Verification: real L1/L2/L3 questions over a smaller synthetic T1 served by a local Oxigraph,
   checked by `verify_all` in batches and by one standalone query per question. Target: batched
   >= 10x the questions per second; both must give every question the same outcome.
3. Crawl (scripts/bench_crawl.py, figures under "crawl"): the site-tree crawl of a 2,000-page local static site
   against parsing the same pages alone in one process, and pages rendered through Chromium. Target: crawl
   pages/s >= 0.8x parse-alone pages/s; both must give every page the same clickables and content.
4. Extraction (scripts/bench_extract.py, figures under "extract"): the news source's article extraction against
   plain trafilatura on the 181 pages of ../shared/extraction-benchmark/, each scored by its metric. Target:
   pipeline seconds <= 3x trafilatura's.
6. Wikidata on a cluster (scripts/bench_wikidata.py, figures under "scale"): delta partitions per second on one and
   two Dask workers, a worker's peak memory against the dump bytes a bucket holds, the dump read in parts (MB of
   dump a second on one and two workers, the serial reader's files byte for byte), and the projected hours for a
   full dump pair on 16 and 64 cores. Goal: under two hours on 16 cores, no process over 8 GB.
7. A real site (scripts/bench_realsite.py, figures under "realsite"): the site-tree crawl of the Python 3.11
   documentation (Debian's python3.11-doc) served on 127.0.0.1 against a plain Scrapy CrawlSpider over it, to the same
   depth with the same politeness settings, taking turns. Target: ours pages/s >= 0.8x plain's; CPU a page beside it.
5. Grader (scripts/bench_grade.py, figures under "grade"): rows per second of the typed grade (rewards.compute_score,
   as verl calls it) against plain exact match, on the same (completion, gold) pairs of the demo's answers in the
   forms a model gives, with how many right forms each takes. Target: typed grade >= 2,000 rows per second.

Timings are wall-clock seconds, best of `--repeat` runs (other work on the machine only ever adds
time); CPU seconds are printed beside them. Exit 1 when a target is missed, after writing the file.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic_dumps import DEFAULT_CACHE, dump_pair  # noqa: E402

DELTA_TARGET, SPEEDUP_TARGET = 2.0, 10.0
CHUNK = 1 << 16


def scan(paths: list[Path]) -> dict[str, float]:
    """The floor: gunzip both dumps in 64 KB reads, split lines, orjson.loads each entity line."""
    import orjson

    entities = 0
    for path in paths:
        decompressor, rest = zlib.decompressobj(31), b""
        with path.open("rb") as f:
            while chunk := f.read(CHUNK):
                lines = (rest + decompressor.decompress(chunk)).split(b"\n")
                rest = lines.pop()
                for line in lines:
                    body = line.strip()
                    if body.endswith(b","):
                        body = body[:-1]
                    if body not in (b"[", b"]", b""):
                        orjson.loads(body)
                        entities += 1
    return {"entities": entities}


def delta(paths: list[Path], work: Path, buckets: int | None = None) -> dict[str, float]:
    """What the pipeline runs first: read_snapshot of T0 and T1 (rdf=False), then compute_delta."""
    from timelyqa.wikidata import pipeline
    from timelyqa.stages import StageWriter
    from timelyqa.wikidata.snapshot import SnapshotInfo
    from timelyqa.wikidata.source import SOURCE

    shutil.rmtree(work, ignore_errors=True)
    t0 = pipeline.read_snapshot(paths[0], work, "t0", rdf=False, buckets=buckets)
    t1 = pipeline.read_snapshot(paths[1], work, "t1", rdf=False, buckets=buckets)
    pipeline.compute_delta(t0, t1, work)
    ledger = StageWriter.resume(SOURCE, work.parent, work=work)  # what each stage counted and timed
    i0, i1 = SnapshotInfo.load(t0), SnapshotInfo.load(t1)
    return {"triples_t0": i0.truthy_triples, "triples_t1": i1.truthy_triples, "entities_t0": i0.entities,
            "entities_t1": i1.entities, "delta_triples": ledger.counts["delta_triples"], "buckets": i1.buckets,
            "read_t0_seconds": ledger.timings["read_t0"], "read_t1_seconds": ledger.timings["read_t1"],
            "compute_delta_seconds": ledger.timings["delta"]}


def worker(job: str, args: list[str]) -> None:
    """Run one measured job in this (fresh) process and print its figures as one JSON line."""
    paths = [Path(a) for a in args[:2]]
    import orjson  # noqa: F401  imports are not part of either measurement
    import timelyqa.wikidata.pipeline  # noqa: F401

    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0, started = usage.ru_utime + usage.ru_stime, time.perf_counter()
    figures = scan(paths) if job == "scan" else delta(paths, Path(args[2]), int(args[3]) if len(args) > 3 else None)
    seconds = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    figures |= {"seconds": seconds, "cpu_seconds": usage.ru_utime + usage.ru_stime - cpu0,
                "peak_rss_mb": usage.ru_maxrss / 1024}  # Linux reports KB
    print(json.dumps(figures))


def run_worker(job: str, *args: str) -> dict[str, float]:
    proc = subprocess.run([sys.executable, __file__, "--worker", job, *args], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        sys.exit(f"bench: the {job} run failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_delta(paths: list[Path], work: Path, repeat: int, scale: int = 4) -> dict[str, float]:
    for path in paths:  # both runs find the files in the page cache: neither pays the first disk read
        with path.open("rb") as f:
            while f.read(1 << 24):
                pass
    best_scan: dict[str, float] = {}
    best_delta: dict[str, float] = {}
    for n in range(repeat):
        s = run_worker("scan", *map(str, paths))
        d = run_worker("delta", *map(str, paths), str(work))
        print(f"  run {n + 1}: scan {s['seconds']:.1f} s, delta {d['seconds']:.1f} s "
              f"(read T0 {d['read_t0_seconds']:.1f} s, read T1 {d['read_t1_seconds']:.1f} s, "
              f"compute_delta {d['compute_delta_seconds']:.1f} s, {d['buckets']:.0f} buckets): "
              f"{d['seconds'] / s['seconds']:.2f}x", flush=True)
        best_scan = min(best_scan or s, s, key=lambda f: f["seconds"])
        best_delta = min(best_delta or d, d, key=lambda f: f["seconds"])
    # The same delta with `scale` times the buckets: how peak memory follows the dump bytes a bucket holds.
    finer = run_worker("delta", *map(str, paths), str(work), str(int(best_delta["buckets"]) * scale))
    print(f"  with {finer['buckets']:.0f} buckets: {finer['seconds']:.1f} s, peak {finer['peak_rss_mb']:.0f} MB "
          f"against {best_delta['peak_rss_mb']:.0f} MB", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    return {"triples_t0": best_delta["triples_t0"], "triples_t1": best_delta["triples_t1"],
            "entities_t0": best_delta["entities_t0"], "entities_t1": best_delta["entities_t1"],
            "delta_triples": best_delta["delta_triples"],
            "scan_seconds": round(best_scan["seconds"], 2), "scan_cpu_seconds": round(best_scan["cpu_seconds"], 2),
            "scan_peak_rss_mb": round(best_scan["peak_rss_mb"], 1),
            "delta_seconds": round(best_delta["seconds"], 2),
            "delta_cpu_seconds": round(best_delta["cpu_seconds"], 2),
            "delta_peak_rss_mb": round(best_delta["peak_rss_mb"], 1),
            "delta_read_t0_seconds": best_delta["read_t0_seconds"],
            "delta_read_t1_seconds": best_delta["read_t1_seconds"],
            "delta_compute_seconds": best_delta["compute_delta_seconds"],
            "delta_over_scan": round(best_delta["seconds"] / best_scan["seconds"], 3),
            "dump_mb_t0": round(paths[0].stat().st_size / 1e6, 1), "dump_mb_t1": round(paths[1].stat().st_size / 1e6, 1),
            **scale_figures(best_delta, finer, max(p.stat().st_size for p in paths) / 1e6)}


def scale_figures(coarse: dict[str, float], fine: dict[str, float], dump_mb: float) -> dict[str, float]:
    """What the README's projection takes: the delta's rate per core and its memory per MB of dump a bucket holds.

    The rate counts the entity lines of both dumps over the delta's CPU seconds (all threads), so it is a rate
    per core. Peak RSS is modelled as base + per_bucket_mb_rss * (dump MB / buckets): the two runs, with
    different bucket counts, are two points of that line (a slope of 0 when reading, not a bucket, sets the
    peak). A figure below zero from noise is clamped to zero."""
    entities = coarse["entities_t0"] + coarse["entities_t1"]
    share_coarse, share_fine = dump_mb / coarse["buckets"], dump_mb / fine["buckets"]
    slope = max(0.0, (coarse["peak_rss_mb"] - fine["peak_rss_mb"]) / (share_coarse - share_fine))
    base = max(0.0, min(coarse["peak_rss_mb"], fine["peak_rss_mb"]) - slope * min(share_coarse, share_fine))
    return {"delta_entities_per_cpu_second": round(entities / coarse["cpu_seconds"], 1),
            "delta_entities_per_second": round(entities / coarse["seconds"], 1),
            "delta_buckets": coarse["buckets"], "delta_fine_buckets": fine["buckets"],
            "delta_fine_peak_rss_mb": round(fine["peak_rss_mb"], 1),
            "delta_bucket_mb": round(share_coarse, 2), "delta_fine_bucket_mb": round(share_fine, 3),
            "delta_peak_rss_over_dump_mb": round(coarse["peak_rss_mb"] / dump_mb, 3),
            "delta_rss_mb_per_bucket_mb": round(slope, 3), "delta_rss_base_mb": round(base, 1)}


def report(f: dict[str, float]) -> list[str]:
    """Print the table; return the targets missed."""
    print(f"\nDelta of two synthetic Wikidata dumps: {f['triples_t0']:,} and {f['triples_t1']:,} truthy triples, "
          f"{f['entities_t0']:,} and {f['entities_t1']:,} entities, {f['dump_mb_t0']:,.0f} and "
          f"{f['dump_mb_t1']:,.0f} MB gzipped; {f['delta_triples']:,} delta triples")
    print(f"  {'':44}{'seconds':>9}{'CPU s':>9}{'peak MB':>9}")
    print(f"  {'scan (gunzip + orjson.loads, both dumps)':44}{f['scan_seconds']:9.1f}{f['scan_cpu_seconds']:9.1f}"
          f"{f['scan_peak_rss_mb']:9.0f}")
    print(f"  {'delta (read_snapshot x2 + compute_delta)':44}{f['delta_seconds']:9.1f}{f['delta_cpu_seconds']:9.1f}"
          f"{f['delta_peak_rss_mb']:9.0f}")
    print(f"  rate: {f['delta_entities_per_cpu_second']:,.0f} entity lines per CPU second "
          f"({f['delta_entities_per_second']:,.0f} per wall second)")
    print(f"  peak memory: {f['delta_peak_rss_mb']:,.0f} MB with {f['delta_buckets']:.0f} bucket(s) of "
          f"{f['delta_bucket_mb']:,.1f} MB of dump, {f['delta_fine_peak_rss_mb']:,.0f} MB with "
          f"{f['delta_fine_buckets']:.0f} of {f['delta_fine_bucket_mb']:,.2f} MB: {f['delta_rss_base_mb']:,.0f} MB + "
          f"{f['delta_rss_mb_per_bucket_mb']:.2f} MB per MB of dump in a bucket; "
          f"{f['delta_peak_rss_over_dump_mb']:.2f} MB per MB of dump at {f['delta_buckets']:.0f} bucket(s)")
    missed = []
    ok = f["delta_over_scan"] <= DELTA_TARGET
    print(f"  delta / scan: {f['delta_over_scan']:.2f}x   target <= {DELTA_TARGET:.1f}x   {'ok' if ok else 'MISSED'}")
    if not ok:
        missed.append(f"delta_over_scan {f['delta_over_scan']:.2f} > {DELTA_TARGET}")
    levels = ", ".join(f"{f[k]:,} {k.rsplit('_', 1)[1]}" for k in sorted(f) if k.startswith("verify_questions_L"))
    print(f"\nVerification of {f['verify_questions']:,} questions ({levels}) against Oxigraph holding a synthetic T1 "
          f"of {f['verify_graph_triples']:,} truthy triples")
    print(f"  verify_all ({f['verify_batch_size']:.0f} a request, {f['verify_concurrency']:.0f} in flight)"
          f"{f['verify_batched_qps']:10,.0f} questions/s  "
          f"({f['verify_batched_seconds']:.2f} s, {f['verify_batched_requests']:.0f} requests)")
    extrapolated = (f" (timed on {f['verify_single_questions']:,} of them)"
                    if f["verify_single_questions"] < f["verify_questions"] else "")
    print(f"  one query per question, in turn      {f['verify_single_qps']:10,.0f} questions/s  "
          f"({f['verify_single_seconds']:.2f} s){extrapolated}; an empty query's round trip: "
          f"{f['verify_roundtrip_ms']:.2f} ms")
    for level in sorted(k.rsplit("_", 1)[1] for k in f if k.startswith("verify_speedup_")):
        print(f"    {level}: {f[f'verify_batched_qps_{level}']:8,.0f} against {f[f'verify_single_qps_{level}']:6,.0f} "
              f"questions/s, {f[f'verify_speedup_{level}']:.1f}x")
    ok = f["verify_speedup"] >= SPEEDUP_TARGET
    print(f"  speed-up: {f['verify_speedup']:.1f}x   target >= {SPEEDUP_TARGET:.0f}x   {'ok' if ok else 'MISSED'}")
    if not ok:
        missed.append(f"verify_speedup {f['verify_speedup']:.1f} < {SPEEDUP_TARGET}")
    agree = f["verify_agreeing"] == f["verify_single_questions"]
    print(f"  same outcome both ways: {f['verify_agreeing']:,} of {f['verify_single_questions']:,}   "
          f"{'ok' if agree else 'MISSED'}; {f['verify_passed']:,} questions pass")
    if not agree:
        missed.append(f"outcomes differ for {f['verify_single_questions'] - f['verify_agreeing']:,} questions")
    return missed


def main(argv: list[str] | None = None) -> int:
    env = os.environ.get
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=int(env("BENCH_TRIPLES", 10_000_000)),
                        help="truthy triples per dump for the delta (env BENCH_TRIPLES)")
    parser.add_argument("--verify-triples", type=int, default=int(env("BENCH_VERIFY_TRIPLES", 300_000)),
                        help="truthy triples per dump of the pair the questions come from (env BENCH_VERIFY_TRIPLES)")
    parser.add_argument("--questions", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=None, help="default: the pipeline's Settings")
    parser.add_argument("--concurrency", type=int, default=None, help="default: the pipeline's Settings")
    parser.add_argument("--single-limit", type=int, default=None,
                        help="time one-query-per-question on only this many questions (rates are per question)")
    parser.add_argument("--crawl-pages", type=int, default=int(env("BENCH_CRAWL_PAGES", 2000)),
                        help="pages of the local site the crawl part crawls (env BENCH_CRAWL_PAGES)")
    parser.add_argument("--render-pages", type=int, default=int(env("BENCH_RENDER_PAGES", 80)),
                        help="pages of it crawled through Chromium (env BENCH_RENDER_PAGES; 0: none)")
    parser.add_argument("--realsite-depth", type=int, default=int(env("BENCH_REALSITE_DEPTH", 3)),
                        help="click depth of both crawls of the real documentation site (env BENCH_REALSITE_DEPTH)")
    parser.add_argument("--scale-triples", type=int, default=int(env("BENCH_SCALE_TRIPLES", 2_000_000)),
                        help="truthy triples per dump of the Dask part (env BENCH_SCALE_TRIPLES)")
    parser.add_argument("--repeat", type=int, default=int(env("BENCH_REPEAT", 1)))
    parser.add_argument("--scale-buckets", type=int, default=4,
                        help="the second delta run's buckets, as a multiple of the first's (a power of two)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where generated dumps are kept")
    parser.add_argument("--out", type=Path, default=DEFAULT_CACHE.parent / "bench.json")
    parser.add_argument("--no-fail", action="store_true", help="report missed targets but exit 0 (for tests)")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.triples < 1 or args.questions < 1 or args.crawl_pages < 1 or args.render_pages < 0:
        parser.error("--repeat, --triples, --questions and --crawl-pages must be positive, --render-pages not negative")
    if args.realsite_depth < 0:
        parser.error("--realsite-depth must not be negative")
    if args.scale_buckets < 2 or args.scale_buckets & (args.scale_buckets - 1):
        parser.error("--scale-buckets must be a power of two from 2")

    import bench_crawl  # after the worker dispatch: the workers must not pay for these imports
    import bench_extract
    import bench_grade
    import bench_realsite
    import bench_verify
    import bench_wikidata
    from timelyqa.wikidata.pipeline import Settings

    batch_size = args.batch_size or Settings().batch_size
    concurrency = args.concurrency or Settings().concurrency

    started = time.perf_counter()
    print(f"Dumps: {args.triples:,} triples each (cached under {args.cache})", flush=True)
    pair = dump_pair(args.cache, triples=args.triples, seed=args.seed)
    figures = bench_delta([pair.t0, pair.t1], args.cache / "delta-work", args.repeat, args.scale_buckets)
    vpair = dump_pair(args.cache, triples=args.verify_triples, seed=args.seed)
    work = args.cache / "verify-work"
    print(f"Questions from a {args.verify_triples:,}-triple pair, served by a local Oxigraph", flush=True)
    qs, t1_dir, graph_triples = bench_verify.questions(vpair.t0, vpair.t1, work, limit=args.questions, seed=args.seed)
    figures |= bench_verify.measure(qs, t1_dir, work, batch_size=batch_size, concurrency=concurrency,
                                    repeat=args.repeat, single_limit=args.single_limit)
    shutil.rmtree(work, ignore_errors=True)
    print(f"Crawl of a {args.crawl_pages:,}-page static site on 127.0.0.1", flush=True)
    crawled = bench_crawl.measure(args.cache / "crawl-work", pages=args.crawl_pages, render_pages=args.render_pages,
                                  repeat=args.repeat, seed=args.seed)
    print(f"A real documentation site, ours against a plain CrawlSpider, depth {args.realsite_depth}", flush=True)
    realsite = bench_realsite.measure(args.cache / "realsite-work", depth=args.realsite_depth, repeat=args.repeat)
    print("Article extraction on the extraction benchmark's pages", flush=True)
    extracted = bench_extract.measure(repeat=args.repeat)
    print("Grader: typed grade against plain exact match on the demo's answers", flush=True)
    graded = bench_grade.measure(repeat=args.repeat)
    print(f"Wikidata delta on one and two Dask workers, a {args.scale_triples:,}-triple pair", flush=True)
    scale = bench_wikidata.measure(args.cache, triples=args.scale_triples, seed=args.seed)
    figures |= {"verify_graph_triples": graph_triples, "verify_batch_size": batch_size,
                "verify_concurrency": concurrency,
                "bench_seconds": round(time.perf_counter() - started, 1)}
    missed = (report(figures) + bench_crawl.report(crawled) + bench_realsite.report(realsite)
              + bench_extract.report(extracted) + bench_grade.report(graded) + bench_wikidata.report(scale))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({**figures, "crawl": crawled, "realsite": realsite, "extract": extracted,
                                    "grade": graded, "scale": scale}, indent=2, sort_keys=True) + "\n")
    print(f"\nFigures written to {args.out}")
    if missed:
        print("Targets missed: " + "; ".join(missed))
        return 0 if args.no_fail else 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(main())
