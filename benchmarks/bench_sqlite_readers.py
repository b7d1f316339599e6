"""Benchmark: reading nsys and rpd SQLite databases, as is and grown N times.

The target is at most 1 s per 100 k event rows. A grown copy repeats every event table's
rows N times (times shifted past the previous copy, correlation ids and row ids offset so
that launches still pair with their own work), in a temporary folder.

    python benchmarks/bench_sqlite_readers.py                     # the bundled NCCL export
    python benchmarks/bench_sqlite_readers.py FILE --times 10     # any nsys / rpd file
"""

from __future__ import annotations

import argparse
import gzip
import resource
import shutil
import sqlite3
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "samples" / "nsys" / "mfu_2xh100_nccl_nsys2026.2.sqlite.gz"
NSYS_EVENTS = ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL",
               "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
               "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS", "OSRT_API",
               "CUPTI_ACTIVITY_KIND_OVERHEAD", "PROFILER_OVERHEAD")
RPD_EVENTS = ("rocpd_api", "rocpd_op", "rocpd_api_ops", "rocpd_monitor")


def plain_copy(path: Path, folder: Path) -> Path:
    out = folder / path.name.removesuffix(".gz")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def event_rows(db: sqlite3.Connection) -> int:
    tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
    return sum(db.execute(f"select count(*) from {t}").fetchone()[0]
               for t in (*NSYS_EVENTS, *RPD_EVENTS) if t in tables)


def grow(path: Path, times: int) -> None:
    """Repeat the event rows ``times`` times in place."""
    with closing(sqlite3.connect(path)) as db:
        tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
        events = sorted(tables & {*NSYS_EVENTS, *RPD_EVENTS})
        columns = {t: [r[1] for r in db.execute(f"pragma table_info({t})")] for t in events}
        original = {t: db.execute(f"select count(*) from {t}").fetchone()[0] for t in events}
        span = max((db.execute(f"select max(end) - min(start) from {t}").fetchone()[0] or 0)
                   for t in events if "start" in columns[t] and "end" in columns[t]) + 1
        for copy in range(1, times):
            for table in events:
                shifted = {"start": f"start + {copy * span}", "end": f"end + {copy * span}",
                           "correlationId": f"correlationId + {copy << 32}",
                           "id": f"id + {copy << 40}", "api_id": f"api_id + {copy << 40}",
                           "op_id": f"op_id + {copy << 40}"}
                cols = [c for c in columns[table] if not (c == "id" and table in (
                    "rocpd_monitor", "rocpd_api_ops"))]   # (their own ids: new ones)
                exprs = ", ".join(shifted.get(c, f'"{c}"') for c in cols)
                names = ", ".join(f'"{c}"' for c in cols)
                db.execute(f"insert into {table} ({names}) select {exprs} from {table} where "
                           f"rowid in (select rowid from {table} order by rowid limit "
                           f"{original[table]})")
        db.commit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("database", nargs="?", default=str(DEFAULT))
    parser.add_argument("--times", type=int, default=10)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import traceconv

    with tempfile.TemporaryDirectory() as folder:
        base = plain_copy(Path(args.database), Path(folder))
        grown = Path(folder) / f"grown{args.times}{base.suffix}"
        shutil.copyfile(base, grown)
        grow(grown, args.times)
        for path in (base, grown):
            with closing(sqlite3.connect(path)) as db:
                rows = event_rows(db)
            start = time.perf_counter()
            cpu = time.process_time()
            trace = traceconv.load(path)
            wall, used = time.perf_counter() - start, time.process_time() - cpu
            print(f"{path.name}: {rows:,} event rows -> {len(trace.slices):,} slices, "
                  f"{len(trace.flows):,} flows in {wall:.2f} s wall / {used:.2f} s CPU "
                  f"({used / rows * 1e5:.2f} CPU-s per 100 k rows)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
