"""Where nsys events go: one process per OS process (threads as tracks), one per GPU (a
track per CUDA stream), each named from ``PROCESSES``, ``ThreadNames`` and ``TARGET_INFO_*``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...model import ProcessKind, Trace, TrackKind
from .._bulk import map_keys
from .._sqlite import Database
from .ids import NO_STREAM, pid_of, tid_of

if TYPE_CHECKING:
    from .schema import GpuInfo

# (CUPTI's synchronisation records carry device 0 whatever the device: not a source of it)
DEVICE_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                 "CUPTI_ACTIVITY_KIND_MEMSET")
_DEVICE_SORT = 1 << 30   # GPUs after every OS process


class Places:
    """Processes and tracks of the trace, made on first use and looked up by nsys ids."""

    def __init__(self, trace: Trace, db: Database, strings: dict[int, str],
                 gpus: dict[int, GpuInfo], extra_thread_names: dict[int, str]) -> None:
        self.trace = trace
        self.process_names = {int(g): str(name) for g, _, name in db.query(
            "select globalPid, pid, name from PROCESSES", "PROCESSES")
            if isinstance(g, int)} if db.has("PROCESSES", "globalPid", "name") else {}
        self.thread_names = dict(extra_thread_names)
        if db.has("ThreadNames", "globalTid", "nameId"):
            for tid, name_id in db.query("select globalTid, nameId from ThreadNames",
                                         "ThreadNames"):
                if isinstance(tid, int) and name_id in strings:
                    self.thread_names.setdefault(tid, strings[name_id])
        self.stream_info = _stream_info(db)
        self.gpus = gpus
        self._processes: dict[int, int] = {}
        self._threads: dict[int, int] = {}
        self._devices: dict[int, int] = {}
        self._streams: dict[tuple[int, int, int, int], int] = {}
        self._async: dict[int, int] = {}
        # the GPU of each (process, context), from the work that ran there
        self.context_device = _context_devices(db)
        per_device: dict[int, int] = {}
        for device in self.context_device.values():
            per_device[device] = per_device.get(device, 0) + 1
        self._shared_devices = {d for d, n in per_device.items() if n > 1}

    def process(self, global_pid: int) -> int:
        """The process of a ``globalPid``."""
        found = self._processes.get(global_pid)
        if found is None:
            pid = int(pid_of(global_pid))
            name = self.process_names.get(global_pid) or "process"
            found = self.trace.add_process(f"{name} (pid {pid})", pid=pid, sort_index=pid)
            self._processes[global_pid] = found
        return found

    def thread(self, global_tid: int) -> int:
        """The thread track of a ``globalTid``."""
        found = self._threads.get(global_tid)
        if found is None:
            tid = int(tid_of(global_tid))
            process = self.process(global_tid & ~0xFFFFFF)
            name = self.thread_names.get(global_tid) or f"thread {tid}"
            found = self.trace.add_track(name, process=process, tid=tid, sort_index=tid)
            self._threads[global_tid] = found
        return found

    def threads(self, global_tids: np.ndarray) -> np.ndarray:
        """The thread track of each row."""
        return map_keys(global_tids, self.thread)

    def device(self, device_id: int) -> int:
        """The process of GPU ``device_id`` (its model name as a label)."""
        found = self._devices.get(device_id)
        if found is None:
            gpu = self.gpus.get(device_id)
            labels = [gpu.name] if gpu is not None and gpu.name else []
            found = self.trace.add_process(f"GPU {device_id}", kind=ProcessKind.DEVICE,
                                           sort_index=_DEVICE_SORT + device_id, labels=labels)
            self._devices[device_id] = found
        return found

    def stream(self, device_id: int, global_pid: int, context_id: int, stream_id: int) -> int:
        """The track of one CUDA stream of one context on one GPU."""
        key = (device_id, global_pid, context_id, stream_id)
        found = self._streams.get(key)
        if found is None:
            name = ("synchronization (no stream)" if stream_id == NO_STREAM
                    else f"stream {stream_id}")
            if device_id in self._shared_devices:
                name += f" (pid {pid_of(global_pid)}, context {context_id})"
            info = self.stream_info.get((context_id, stream_id))
            found = self.trace.add_track(
                name, process=self.device(device_id), kind=TrackKind.STREAM,
                tid=None if stream_id == NO_STREAM else stream_id,
                sort_index=-1 if stream_id == NO_STREAM else stream_id,
                description=f"CUDA stream {stream_id}, context {context_id}, "
                            f"pid {pid_of(global_pid)}" + (f", {info}" if info else ""))
            self._streams[key] = found
        return found

    def streams(self, device: np.ndarray, global_pid: np.ndarray, context: np.ndarray,
                stream: np.ndarray) -> np.ndarray:
        """The stream track of each row."""
        keys = np.stack([device, global_pid, context, stream], axis=1) if len(device) else (
            np.zeros((0, 4), np.int64))
        distinct, inverse = np.unique(keys, axis=0, return_inverse=True)
        made = np.array([self.stream(*map(int, row)) for row in distinct.tolist()],
                        dtype=np.int64)
        return made[inverse.reshape(-1)] if len(device) else np.zeros(0, np.int64)

    def ranges(self, global_pid: int) -> int:
        """The track of a process's NVTX start/end ranges (they may cross threads and
        overlap: an async track)."""
        found = self._async.get(global_pid)
        if found is None:
            found = self.trace.add_track("NVTX start/end ranges", process=self.process(global_pid),
                                         kind=TrackKind.ASYNC, sort_index=-1)
            self._async[global_pid] = found
        return found


def _stream_info(db: Database) -> dict[tuple[int, int], str]:
    """``priority P`` per (context, stream) from TARGET_INFO_CUDA_STREAM."""
    if not db.has("TARGET_INFO_CUDA_STREAM", "contextId", "streamId"):
        return {}
    priority = db.expression("TARGET_INFO_CUDA_STREAM", "priority", "")
    return {(c, s): f"priority {p}" if p != "" else "" for c, s, p in db.query(
        f"select contextId, streamId, {priority} from TARGET_INFO_CUDA_STREAM",
        "TARGET_INFO_CUDA_STREAM")}


def _context_devices(db: Database) -> dict[tuple[int, int], int]:
    """(globalPid, contextId) -> deviceId, from the tables of work that ran on a GPU."""
    parts = [f"select globalPid, contextId, deviceId from {table}" for table in DEVICE_TABLES
             if db.has(table, "deviceId", "globalPid", "contextId")]
    if not parts:
        return {}
    rows = db.query(" union ".join(parts), "CUPTI_ACTIVITY_KIND_*")
    return {(p, c): d for p, c, d in rows if isinstance(d, int)}
