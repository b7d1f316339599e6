"""One fuzz input end to end, in a worker process with a memory limit.

The input is written to a file named like the real thing, read by one reader (format forced,
so each reader sees every mutant of its seeds), and the trace goes through every writer into
memory. The outcome is ``ok``, ``error`` (a handled, located error: the contract) or ``crash``
(anything else: an exception kind the code did not expect, or an error with no location).
"""

from __future__ import annotations

import io
import os
import resource
import tempfile
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection

READ_LIMIT = 64 << 20        # --max-bytes for fuzz inputs: mutants are small
# every writer the registry has; (a writer that cannot express the trace refuses cleanly)
WRITERS = ("chrome", "perfetto", "summary", "summary-json", "graphml", "dot", "svg")


@dataclass
class Outcome:
    status: str              # ok | error | crash
    signature: str = ""      # crash: exception type and innermost traceconv frame
    detail: str = ""         # crash: traceback; error: the message
    seconds: float = 0.0


def _signature(exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/traceconv/" in f.filename]
    where = ""
    if frames:
        frame = frames[-1]
        where = f" at {frame.filename.rsplit('/traceconv/', 1)[1]}:{frame.name}"
    return f"{type(exc).__name__}{where}"


def run_target(target: str, path: str) -> Outcome:
    """Read ``path`` as ``target`` (a format name, or ``check:<format>``), then write it."""
    import traceconv
    from traceconv import registry
    from traceconv.errors import TraceconvError

    began = time.perf_counter()
    stage = "read"
    try:
        if target.startswith("check:"):
            traceconv.check(path, target.split(":", 1)[1], max_bytes=READ_LIMIT)
            return Outcome("ok", seconds=time.perf_counter() - began)
        trace = traceconv.load(path, format=target, max_bytes=READ_LIMIT)
        stage = "write"
        for writer in WRITERS:
            try:
                registry.get(writer).load().write(trace, io.BytesIO())
            except TraceconvError:
                continue   # e.g. "no memory data to draw": a clean refusal
        return Outcome("ok", seconds=time.perf_counter() - began)
    except TraceconvError as exc:
        seconds = time.perf_counter() - began
        if stage == "read" and not exc.file:
            return Outcome("crash", f"unlocated error: {exc.message[:60]}", str(exc), seconds)
        return Outcome("error", detail=str(exc), seconds=seconds)
    except Exception as exc:  # noqa: BLE001 - every other kind is what the fuzzer looks for
        return Outcome("crash", f"{stage}: {_signature(exc)}", traceback.format_exc(),
                       time.perf_counter() - began)


def serve(conn: Connection, memory_limit: int, folder: str) -> None:
    """Worker loop: receive ``(target, file name, data)``, answer an :class:`Outcome`."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    while True:
        job = conn.recv()
        if job is None:
            return
        target, name, data = job
        path = os.path.join(folder, name)
        with open(path, "wb") as out:
            out.write(data)
        try:
            outcome = run_target(target, path)
        except MemoryError:
            outcome = Outcome("crash", "MemoryError (over the worker's memory limit)")
        conn.send(outcome)


def scratch_folder() -> str:
    return tempfile.mkdtemp(prefix="traceconv-fuzz-")
