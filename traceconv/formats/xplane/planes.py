"""What an ``XPlane`` and its ``XLine`` stand for: host threads, device streams, derived rows.

xprof names planes ``/host:CPU``, ``/device:GPU:N``, ``/device:TPU:N``, ``/device:CUSTOM:...``,
``/host:metadata`` (HLO modules, no events) and ``Task Environment`` (profile start/stop).
A GPU plane's lines are CUDA/HIP streams (``Stream #7(Kernel)``, ``Stream #9(MemcpyH2D)``)
plus rows xprof derives from them (``XLA Ops``, ``XLA Modules``, ``Steps``, ``TensorFlow
Ops``, ``TensorFlow Name Scope``, ``Source code``); a TPU plane's are ``XLA Ops`` (the work),
``XLA Modules``, ``Async XLA Ops``, ``XLA TraceMe``, ``Steps`` ...
"""

from __future__ import annotations

import re

from ...model import ProcessKind
from ...vocabularies.xplane import DEVICE_ANNOTATION, STEP

HOST_PREFIX = "/host:"
DEVICE_PREFIX = "/device:"
METADATA_PLANE = "/host:metadata"
TASK_ENVIRONMENT = "Task Environment"

# categories the analyses know (traceconv.analysis.activity)
KERNEL, MEMCPY, MEMSET = "kernel", "gpu_memcpy", "gpu_memset"
XLA_OP = "xla_op"                      # the ops a TPU ran (work, like kernels)
HOST = "host"

_DEVICE = re.compile(r"^/device:(?P<kind>[A-Z_]+):(?P<ordinal>\d+)$")
_STREAM = re.compile(r"^Stream #(?P<id>\d+)(?:\((?P<kind>[^)]*)\))?")
_DERIVED = {"XLA Modules", "XLA Ops", "Async XLA Ops", "XLA TraceMe", "Steps", "TensorFlow Ops",
            "TensorFlow Name Scope", "Framework Ops", "Framework Name Scope", "Source code",
            "Launch Stats", "Overlay", "SparseCore Ops", "SparseCore Modules", "Host Offload Ops"}
STEP_LINE = "Steps"
XLA_OPS_LINE = "XLA Ops"
TF_OPS_LINES = ("TensorFlow Ops", "Framework Ops")


def as_text(name: str | bytes) -> str:
    """A name field as text for matching: protobuf hands a string that is not UTF-8 over
    as bytes (the reader counts it where it keeps the name, :class:`.._proto.Utf8Repair`).

    >>> as_text(bytes([104, 255])) == "h\\ufffd", as_text("TPU:0")
    (True, 'TPU:0')
    """
    return name.decode("utf-8", "replace") if isinstance(name, bytes) else name


def plane_kind(name: str) -> ProcessKind:
    """Host planes hold threads, ``/device:GPU|TPU:N`` planes hold streams; custom planes
    (``/device:CUSTOM:Megascale Trace``) and others are synthetic groups.

    >>> plane_kind("/device:TPU:3").value, plane_kind("/host:CPU").value
    ('device', 'host')
    >>> plane_kind("/device:CUSTOM:Megascale Trace").value
    'synthetic'
    """
    if name.startswith(HOST_PREFIX):
        return ProcessKind.HOST
    match = _DEVICE.match(name)
    return ProcessKind.DEVICE if match and match["kind"] != "CUSTOM" else ProcessKind.SYNTHETIC


def device_ordinal(name: str) -> int | None:
    """``/device:GPU:4`` → 4.

    >>> device_ordinal("/device:GPU:4"), device_ordinal("/host:CPU")
    (4, None)
    """
    match = _DEVICE.match(name)
    return int(match["ordinal"]) if match else None


def device_line_category(line_name: str) -> str | None:
    """The category of the events of a device line; None for a line traceconv does not know
    (read as annotations, and counted).

    >>> device_line_category("Stream #16(Kernel)"), device_line_category("Stream #9(MemcpyH2D)")
    ('kernel', 'gpu_memcpy')
    >>> device_line_category("XLA Ops"), device_line_category("Steps")
    ('xla_op', 'step')
    >>> device_line_category("TensorFlow Name Scope"), device_line_category("Mystery row")
    ('device_annotation', None)
    """
    stream = _STREAM.match(line_name)
    if stream:   # (the line's name as xprof writes it, a grammar: its slices' names are the
        #          vocabulary's to judge, by the category given here)
        kind = (stream["kind"] or "").lower()
        if "memcpy" in kind:
            return MEMCPY
        return MEMSET if "memset" in kind else KERNEL
    if line_name == XLA_OPS_LINE:
        return XLA_OP
    if line_name == STEP_LINE:
        return STEP
    if line_name in _DERIVED or line_name.startswith("Host Offload Ops"):
        return DEVICE_ANNOTATION
    return None


def runtime_category(name: str) -> str:
    """The category of a host event that launched device work (it has a ``correlation_id``).

    >>> runtime_category("hipModuleLaunchKernel"), runtime_category("cuLaunchKernel")
    ('hip_runtime', 'cuda_driver')
    >>> runtime_category("cudaMemcpyAsync")
    'cuda_runtime'
    """
    # (whose API by its prefix, a spelling: the call's activity is the vocabulary's)
    if name.startswith("hip"):
        return "hip_runtime"
    if name.startswith("cu") and not name.startswith("cuda"):
        return "cuda_driver"
    return "cuda_runtime"


def process_name(plane_name: str, hostname: str | None) -> str:
    """``/host:CPU`` stays as xprof shows it, with the host it ran on.

    >>> process_name("/host:CPU", "tw003"), process_name("/device:TPU:0", None)
    ('/host:CPU (tw003)', '/device:TPU:0')
    """
    return f"{plane_name} ({hostname})" if hostname and plane_name.startswith(HOST_PREFIX) \
        else plane_name
