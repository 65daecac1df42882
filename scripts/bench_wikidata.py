"""`make bench`, Wikidata beyond one machine: delta partitions per second on one and two Dask workers, peak
memory per worker against the dump bytes a bucket holds, and the hours a full dump pair is projected to take on
16 and 64 cores (figures `scale_*` in out/bench.json).

One synthetic dump pair (scripts/synthetic_dumps.py) is read into `--buckets` buckets of subjects, and again into
4x as many. The bucket deltas (timelyqa.wikidata.pipeline.delta_bucket, what the flow maps as tasks) run on a
Dask LocalCluster of one worker process, then of two, each cluster fresh so that a worker's peak RSS is its own;
the k-way merge of the buckets runs once, alone. T0 is read again in parts (timelyqa.wikidata.reader*, what the
flow maps as tasks): hashed, indexed by rapidgzip on every core, its READ_PARTS parts read on one worker, then on
two, and joined; the files must be the serial reader's, byte for byte. The projection:

    hours(N) = [ max(D/h, 2D/(z1 x N x e_z)) + 2E/(q1 x N x e_r) + X/(j x N) + E/f  +  X/(p1 x N x eff)  +  R/m ] / 3600
                 `---------------------- the read in parts ----------------------'

D the MB of one full dump (130 GiB gzipped), h the MB/s of hashing it as stored (both dumps at once, a core each;
the plan hashes the bytes its index pass reads, in that one pass, so the two overlap), z1 the MB/s of rapidgzip's
index pass on one thread and e_z its two-thread efficiency (both dumps' passes on all N cores), E the entity lines
of one full dump (115 million), q1 the entity lines a second one worker reads in parts, e_r the two-worker
efficiency of the parts (rate with two / twice the rate with one), j the triples a second one process joins bucket
by bucket (the buckets of both dumps spread over the N cores), f the entities a second of the join's last step
(entities, rejects, info: one process a dump, both at once), X the truthy triples of both full dumps (E x triples
per entity), p1 the triples per second one worker's bucket deltas get through, eff their two-worker efficiency, N
the cores (one worker process of one thread each), R the delta rows at full size (the bench's delta share of X) and
m the merge's rows per second.
`scale_full_hours_N_serial_read` has E / r_read instead of the read in parts (r_read: the serial reader's entity
lines a second, one process a dump, T0 and T1 read at once).
Memory: a worker's peak = base + slope x (dump MB in a bucket), fitted on the two bucket counts, at 256 buckets.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from synthetic_dumps import DEFAULT_CACHE, dump_pair  # noqa: E402

FULL_ENTITIES_PER_DUMP = 115e6
"""Entity lines of one full Wikidata JSON dump (January 2024)."""
FULL_DUMP_MB = 130 * 1024
"""Compressed bytes of one full dump, MB (about 130 GiB)."""
FULL_BUCKETS = 256
GOAL_HOURS, GOAL_PROCESS_GB = 2.0, 8.0
CORES = (16, 64)


def _bucket(t0: str, t1: str, parts: str, b: int, n: int) -> dict[str, float]:
    """One bucket's delta in a worker: its CPU seconds, and the worker's peak RSS so far (MB)."""
    from timelyqa.wikidata import pipeline

    started = time.process_time()
    pipeline.delta_bucket(Path(t0), Path(t1), Path(parts), b, n)
    return {"cpu": time.process_time() - started,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def run_buckets(t0: Path, t1: Path, work: Path, n: int, workers: int) -> dict[str, float]:
    """Every bucket's delta on a fresh LocalCluster of `workers` single-threaded processes."""
    from distributed import Client, LocalCluster

    from timelyqa.wikidata import pipeline

    parts, n = pipeline.delta_buckets(t0, t1, work)
    with _one_core_polars(), LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                          dashboard_address=None) as cluster, Client(cluster) as client:
        client.submit(lambda: None).result()  # the workers are up before the clock starts
        started = time.perf_counter()
        done = client.gather(client.map(_bucket, [str(t0)] * n, [str(t1)] * n, [str(parts)] * n, range(n),
                                        [n] * n, pure=False))
        seconds = time.perf_counter() - started
    return {"seconds": seconds, "partitions": n, "cpu": sum(d["cpu"] for d in done),
            "worker_peak_mb": max(d["rss_mb"] for d in done)}


READ_PARTS = 4
"""Parts the bench's dump is read in: two a worker with two workers."""


def _read_part(plan: str, i: int) -> dict[str, Any]:
    """One part of a dump read in a worker: what it read, its CPU seconds, the worker's peak RSS so far (MB)."""
    from timelyqa.wikidata.reader import ReadPlan, read_part

    started = time.process_time()
    result = read_part(ReadPlan.model_validate_json(plan), i)
    return {"result": result.model_dump(), "cpu": time.process_time() - started,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


@contextmanager
def _one_core_polars() -> Iterator[None]:
    """One core a worker: polars would otherwise spread one worker's work over every core, and one worker would
    stand for the whole machine. The worker processes read the setting when they import polars."""
    before = os.environ.get("POLARS_MAX_THREADS")
    os.environ["POLARS_MAX_THREADS"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("POLARS_MAX_THREADS", None)
        else:
            os.environ["POLARS_MAX_THREADS"] = before


def run_reader(dump: Path, work: Path, buckets: int, workers: int, parts: int = READ_PARTS) -> dict[str, float]:
    """A dump read in `parts` parts on a fresh LocalCluster of `workers` single-threaded processes: the plan (one
    pass over the stored bytes: rapidgzip's index on every core, the hash fed from the same reads), the parts, the
    join, each timed."""
    from distributed import Client, LocalCluster

    from timelyqa.wikidata.reader import INDEX, PARTS_DIR, PartResult
    from timelyqa.wikidata.reader_run import finish_join, plan_read, prepare_join, write_bucket

    started = time.perf_counter()
    todo = plan_read(dump, work, "t0", rdf=False, buckets=buckets, parts=parts)
    planned = time.perf_counter()
    if todo.serial:
        raise RuntimeError(todo.serial)
    with _one_core_polars(), LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                          dashboard_address=None) as cluster, Client(cluster) as client:
        client.submit(lambda: None).result()  # the workers are up before the clock starts
        read_started = time.perf_counter()
        done = client.gather(client.map(_read_part, [todo.model_dump_json()] * parts, range(parts), pure=False))
        read_seconds = time.perf_counter() - read_started
    index_mb = (work / "t0" / PARTS_DIR / INDEX).stat().st_size / 1e6
    results = [PartResult.model_validate(d["result"]) for d in done]
    joined = time.perf_counter()
    joining = prepare_join(todo, results)
    if joining is None:
        raise RuntimeError(f"{dump}: an entity repeats across parts")
    buckets_started = time.perf_counter()
    for b in range(todo.buckets):
        write_bucket(todo, results, joining, b)
    buckets_seconds = time.perf_counter() - buckets_started
    info = finish_join(todo, work, "t0", results, joining)
    join_seconds = time.perf_counter() - joined
    return {"plan_seconds": planned - started,
            "parts_seconds": read_seconds, "join_seconds": join_seconds, "join_buckets_seconds": buckets_seconds,
            "decompressed_mb": todo.size / 1e6, "entities": sum(d["result"]["entities"] for d in done),
            "folder": str(info), "worker_peak_mb": max(d["rss_mb"] for d in done), "index_mb": index_mb}


def same_files(a: Path, b: Path) -> bool:
    """The two snapshot folders hold the same files, byte for byte (info.json but its seconds)."""
    def files(folder: Path) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                out[str(f.relative_to(folder))] = (
                    {k: v for k, v in json.loads(f.read_text()).items() if k != "seconds"} if f.name == "info.json"
                    else f.read_bytes())
        return out
    return files(a) == files(b)


def index_seconds(dump: Path, threads: int) -> float:
    """rapidgzip's pass that indexes a dump (the plan's), on `threads` threads."""
    import io

    import rapidgzip

    started = time.perf_counter()
    with rapidgzip.open(str(dump), parallelization=threads) as f:
        while f.read(16 << 20):
            pass
        f.export_index(io.BytesIO())
    return time.perf_counter() - started


def measure_reader(dump: Path, serial: Path, work: Path, buckets: int) -> dict[str, float]:
    """The reader in parts on one and two workers: MB of dump a second, and whether it wrote the serial files;
    the index pass on one and two threads."""
    from timelyqa.wikidata.reader import _sha256

    dump_mb = dump.stat().st_size / 1e6
    z1, z2 = dump_mb / index_seconds(dump, 1), dump_mb / index_seconds(dump, 2)
    started = time.perf_counter()
    _sha256(dump)  # the hash alone, as the plan's second pass took it before the one pass
    f: dict[str, float] = {"scale_reader_index_mb_per_second_1t": round(z1, 1),
                           "scale_reader_index_mb_per_second_2t": round(z2, 1),
                           "scale_reader_hash_mb_per_second": round(dump_mb / (time.perf_counter() - started), 1)}
    for w in (1, 2):
        folder = work / f"read{w}"
        r = run_reader(dump, folder, buckets, w)
        total = r["plan_seconds"] + r["parts_seconds"] + r["join_seconds"]
        f |= {f"scale_reader_mb_per_second_{w}w": round(dump_mb / total, 2),
              f"scale_reader_parts_entities_per_second_{w}w": round(r["entities"] / r["parts_seconds"], 1),
              f"scale_reader_worker_peak_mb_{w}w": round(r["worker_peak_mb"], 1)}
        if w == 1:
            f |= {"scale_reader_plan_mb_per_second": round(dump_mb / max(r["plan_seconds"], 1e-3), 1),
                  "scale_reader_decompressed_mb": round(r["decompressed_mb"], 1),
                  "scale_reader_index_mb": round(r["index_mb"], 3), "_join_seconds": r["join_seconds"],
                  "_join_buckets_seconds": r["join_buckets_seconds"]}
        f[f"scale_reader_same_files_{w}w"] = float(same_files(serial, Path(r["folder"])))
        shutil.rmtree(folder, ignore_errors=True)
    return f | measure_command_read(dump, serial, work / "command", buckets)


def measure_command_read(dump: Path, serial: Path, work: Path, buckets: int) -> dict[str, float]:
    """`timelyqa wikidata`'s read (reader_run.read_parts: a process pool of two, no Dask), MB of dump a second."""
    from timelyqa.wikidata.reader_run import read_parts

    started = time.perf_counter()
    with _one_core_polars():
        folder = read_parts(dump, work, "t0", rdf=False, buckets=buckets, parts=READ_PARTS, workers=2)
    seconds = time.perf_counter() - started
    same = same_files(serial, folder)
    shutil.rmtree(work, ignore_errors=True)
    return {"scale_reader_command_mb_per_second_2p": round(dump.stat().st_size / 1e6 / seconds, 2),
            "scale_reader_command_same_files": float(same)}


def measure(cache: Path, *, triples: int, seed: int = 0, buckets: int = 8) -> dict[str, float]:
    from timelyqa.wikidata import pipeline
    from timelyqa.wikidata.snapshot import SnapshotInfo

    pair = dump_pair(cache, triples=triples, seed=seed)
    work_root = cache / "scale-work"
    shutil.rmtree(work_root, ignore_errors=True)
    dump_mb = max(pair.t0.stat().st_size, pair.t1.stat().st_size) / 1e6
    f: dict[str, float] = {"scale_dump_mb": round(dump_mb, 2), "scale_buckets": buckets}
    peaks = {}
    for n in (buckets, 4 * buckets):
        work = work_root / f"b{n}" / "work"
        started = time.perf_counter()
        t0 = pipeline.read_snapshot(pair.t0, work, "t0", rdf=False, buckets=n)
        read_seconds = time.perf_counter() - started
        t1 = pipeline.read_snapshot(pair.t1, work, "t1", rdf=False, buckets=n)
        i0, i1 = SnapshotInfo.load(t0), SnapshotInfo.load(t1)
        runs = {w: run_buckets(t0, t1, work, n, w) for w in ((1, 2) if n == buckets else (2,))}
        peaks[n] = max(r["worker_peak_mb"] for r in runs.values())
        if n == buckets:
            f |= measure_reader(pair.t0, t0, work_root / "reader", n)
            join_seconds, buckets_seconds = f.pop("_join_seconds"), f.pop("_join_buckets_seconds")
            f["scale_reader_join_triples_per_second"] = round(i0.truthy_triples / buckets_seconds, 1)
            f["scale_reader_finish_entities_per_second"] = round(i0.entities / (join_seconds - buckets_seconds), 1)
            f |= {"scale_read_entities_per_second": round(i0.entities / read_seconds, 1),
                  "scale_triples": i0.truthy_triples + i1.truthy_triples,
                  "scale_entities": i0.entities + i1.entities}
            for w, r in runs.items():
                f[f"scale_partitions_per_second_{w}w"] = round(r["partitions"] / r["seconds"], 3)
                f[f"scale_triples_per_second_{w}w"] = round(f["scale_triples"] / r["seconds"], 1)
                f[f"scale_worker_peak_mb_{w}w"] = round(r["worker_peak_mb"], 1)
            merge_started = time.perf_counter()
            pipeline.merge_delta(work)
            merge_seconds = time.perf_counter() - merge_started
            rows = json.loads((work / "ledger" / "delta.json").read_text())["counts"]["delta_triples"]
            f |= {"scale_delta_rows": rows, "scale_merge_rows_per_second": round(rows / merge_seconds, 1)}
    shutil.rmtree(work_root, ignore_errors=True)
    share = dump_mb / buckets, dump_mb / (4 * buckets)
    slope = max(0.0, (peaks[buckets] - peaks[4 * buckets]) / (share[0] - share[1]))
    f |= {"scale_worker_peak_mb_fine": round(peaks[4 * buckets], 1), "scale_bucket_mb": round(share[0], 3),
          "scale_worker_mb_per_bucket_mb": round(slope, 3),
          "scale_worker_base_mb": round(max(peaks[4 * buckets] - slope * share[1], 1.0), 1),
          "scale_worker_peak_over_dump_mb": round(peaks[buckets] / dump_mb, 3)}
    return f | project(f)


def project(f: dict[str, float]) -> dict[str, float]:
    """The formula of the module's docstring, on 16 and 64 cores, and a worker's peak at full size."""
    p1 = f["scale_triples_per_second_1w"]
    eff = min(1.0, f["scale_triples_per_second_2w"] / (2 * p1))
    per_entity = f["scale_triples"] / f["scale_entities"]
    x_full = 2 * FULL_ENTITIES_PER_DUMP * per_entity
    rows_full = x_full * f["scale_delta_rows"] / f["scale_triples"]
    serial_read = FULL_ENTITIES_PER_DUMP / f["scale_read_entities_per_second"]
    merge = rows_full / f["scale_merge_rows_per_second"]
    q1 = f["scale_reader_parts_entities_per_second_1w"]
    eff_read = min(1.0, f["scale_reader_parts_entities_per_second_2w"] / (2 * q1))
    hashed = FULL_DUMP_MB / f["scale_reader_hash_mb_per_second"]
    z1 = f["scale_reader_index_mb_per_second_1t"]
    eff_index = min(1.0, f["scale_reader_index_mb_per_second_2t"] / (2 * z1))
    finish = FULL_ENTITIES_PER_DUMP / f["scale_reader_finish_entities_per_second"]
    out = {"scale_two_worker_efficiency": round(max(eff, 1e-3), 3), "scale_full_triples": round(x_full),
           "scale_reader_two_worker_efficiency": round(max(eff_read, 1e-3), 3),
           "scale_reader_index_two_thread_efficiency": round(max(eff_index, 1e-3), 3),
           "scale_full_read_hours": round(serial_read / 3600, 2), "scale_full_merge_hours": round(merge / 3600, 3),
           "scale_full_read_hash_hours": round(hashed / 3600, 3),
           "scale_full_read_index_mb": round(f["scale_reader_index_mb"] * FULL_DUMP_MB / f["scale_dump_mb"], 1),
           "scale_full_read_finish_hours": round(finish / 3600, 3),
           "scale_full_worker_peak_mb": round(f["scale_worker_base_mb"] + f["scale_worker_mb_per_bucket_mb"]
                                              * FULL_DUMP_MB / FULL_BUCKETS, 1)}
    for n in CORES:
        index = 2 * FULL_DUMP_MB / (z1 * n * max(eff_index, 1e-3))
        parts = 2 * FULL_ENTITIES_PER_DUMP / (q1 * n * max(eff_read, 1e-3))
        join = x_full / (f["scale_reader_join_triples_per_second"] * n)
        read = max(hashed, index) + parts + join + finish  # one pass: the hash is fed from the index's reads
        out[f"scale_full_read_join_hours_{n}"] = round(join / 3600, 3)
        buckets = x_full / (p1 * n * max(eff, 1e-3))
        out[f"scale_full_read_index_hours_{n}"] = round(index / 3600, 3)
        out[f"scale_full_read_parts_hours_{n}"] = round(parts / 3600, 3)
        out[f"scale_full_read_hours_{n}"] = round(read / 3600, 3)
        out[f"scale_full_delta_hours_{n}"] = round(buckets / 3600, 3)
        out[f"scale_full_hours_{n}"] = round((read + buckets + merge) / 3600, 2)
        out[f"scale_full_hours_{n}_serial_read"] = round((serial_read + buckets + merge) / 3600, 2)
    return out


def report(f: dict[str, Any]) -> list[str]:
    """Print the figures; the goals missed, each a line (under two hours on 16 cores, no process over 8 GB)."""
    print(f"\nWikidata on a Dask cluster: a {f['scale_triples']:,.0f}-triple pair ({f['scale_dump_mb']:.1f} MB a dump "
          f"gzipped) in {f['scale_buckets']:.0f} buckets")
    for w in (1, 2):
        print(f"  {w} worker(s): {f[f'scale_partitions_per_second_{w}w']:.2f} delta partitions/s "
              f"({f[f'scale_triples_per_second_{w}w']:,.0f} triples/s), worker peak "
              f"{f[f'scale_worker_peak_mb_{w}w']:,.0f} MB")
    print(f"  two workers against one: {2 * f['scale_two_worker_efficiency']:.2f}x "
          f"(efficiency {f['scale_two_worker_efficiency']:.2f})")
    print(f"  worker peak {f['scale_worker_peak_mb_2w']:,.0f} MB with {f['scale_bucket_mb']:.2f} MB of dump a bucket, "
          f"{f['scale_worker_peak_mb_fine']:,.0f} MB with a quarter of that: {f['scale_worker_base_mb']:,.0f} MB + "
          f"{f['scale_worker_mb_per_bucket_mb']:.2f} MB per MB of dump a bucket; "
          f"{f['scale_worker_peak_over_dump_mb']:.2f} MB per MB of dump")
    print(f"  serial reader {f['scale_read_entities_per_second']:,.0f} entity lines/s a dump; merge "
          f"{f['scale_merge_rows_per_second']:,.0f} delta rows/s")
    print(f"  reader in {READ_PARTS} parts ({f['scale_reader_decompressed_mb']:,.0f} MB of JSON): "
          + ", ".join(f"{w} worker(s) {f[f'scale_reader_mb_per_second_{w}w']:.2f} MB of dump/s "
                      f"({f[f'scale_reader_parts_entities_per_second_{w}w']:,.0f} entity lines/s in the parts, "
                      f"worker peak {f[f'scale_reader_worker_peak_mb_{w}w']:,.0f} MB)" for w in (1, 2)))
    print(f"    plan in one pass over the stored bytes (index on every core, hash fed from the same reads): "
          f"{f['scale_reader_plan_mb_per_second']:,.0f} MB/s; alone, the hash "
          f"{f['scale_reader_hash_mb_per_second']:,.0f} MB/s and the index "
          f"{f['scale_reader_index_mb_per_second_2t']:,.0f} MB/s on two threads")
    print(f"    two workers against one: {2 * f['scale_reader_two_worker_efficiency']:.2f}x; index "
          f"{f['scale_reader_index_mb_per_second_1t']:,.0f} MB/s on "
          f"one thread, {f['scale_reader_index_mb_per_second_2t']:,.0f} on two ({f['scale_reader_index_mb']:.2f} MB of "
          "index), join "
          f"{f['scale_reader_join_triples_per_second']:,.0f} triples/s a process in buckets, then "
          f"{f['scale_reader_finish_entities_per_second']:,.0f} entities/s; the serial reader's files: "
          + ("same" if f["scale_reader_same_files_1w"] and f["scale_reader_same_files_2w"] else "DIFFERENT"))
    print(f"  `timelyqa wikidata`'s read ({READ_PARTS} parts, a pool of two processes): "
          f"{f['scale_reader_command_mb_per_second_2p']:.2f} MB of dump/s; the serial reader's files: "
          + ("same" if f["scale_reader_command_same_files"] else "DIFFERENT"))
    print(f"  a full dump's index, which every part loads: {f['scale_full_read_index_mb']:,.0f} MB")
    print(f"  full pair ({f['scale_full_triples'] / 1e9:.2f} billion triples): serial read "
          f"{f['scale_full_read_hours']:.2f} h, merge {f['scale_full_merge_hours']:.2f} h, worker peak "
          f"{f['scale_full_worker_peak_mb']:,.0f} MB at {FULL_BUCKETS} buckets")
    missed = []
    for n in CORES:
        print(f"  on {n} cores: {f[f'scale_full_hours_{n}']:.2f} h (read in parts "
              f"{f[f'scale_full_read_hours_{n}']:.2f} h: "
              f"plan max(hash {f['scale_full_read_hash_hours']:.2f}, "
              f"index {f[f'scale_full_read_index_hours_{n}']:.2f}), parts "
              f"{f[f'scale_full_read_parts_hours_{n}']:.2f}, join {f[f'scale_full_read_join_hours_{n}']:.2f} + "
              f"{f['scale_full_read_finish_hours']:.2f}; bucket deltas "
              f"{f[f'scale_full_delta_hours_{n}']:.2f} h); with the serial reader: "
              f"{f[f'scale_full_hours_{n}_serial_read']:.2f} h")
    if not (f["scale_reader_same_files_1w"] and f["scale_reader_same_files_2w"]
            and f["scale_reader_command_same_files"]):
        missed.append("the reader in parts wrote other files than the serial reader")
    ok = f["scale_full_hours_16"] < GOAL_HOURS
    print(f"  goal: under {GOAL_HOURS:.0f} h on 16 cores   {'ok' if ok else 'MISSED'}")
    if not ok:
        missed.append(f"scale_full_hours_16 {f['scale_full_hours_16']:.2f} >= {GOAL_HOURS}")
    ok = f["scale_full_worker_peak_mb"] < GOAL_PROCESS_GB * 1024
    print(f"  goal: no process over {GOAL_PROCESS_GB:.0f} GB   {'ok' if ok else 'MISSED'}")
    if not ok:
        missed.append(f"scale_full_worker_peak_mb {f['scale_full_worker_peak_mb']:.0f} >= {GOAL_PROCESS_GB * 1024}")
    return missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=2_000_000, help="truthy triples per dump")
    parser.add_argument("--buckets", type=int, default=8, help="a power of two; the second read takes 4x")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args(argv)
    figures = measure(args.cache, triples=args.triples, seed=args.seed, buckets=args.buckets)
    missed = report(figures)
    print(json.dumps(figures, indent=2, sort_keys=True))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
