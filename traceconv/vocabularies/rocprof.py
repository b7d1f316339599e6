"""The activities of rocprof slices, by the categories its reader gives them.

Every rocprof output (v1 CSV, JSON and database; rocprofv3 CSV, JSON and ``rocpd``) is
read into the same categories: ``kernel`` dispatches, ``gpu_memcpy`` copies, ``hip_runtime``
and ``hsa_api`` calls (both runtime APIs: the HSA runtime is the layer below HIP), and
``user_annotation`` (roctx) ranges; rocprofv3's own Perfetto output files its HIP calls
under ``hip_api`` (read by the Perfetto reader, which states no activity: the general
vocabulary, this one among its parts, classifies them). A dispatch named ``<barrier packet>`` (rocprof's name for an
AQL barrier packet, filed among the kernels) is the device waiting for the packets it
depends on: a device sync, not work. HSA's ``hsa_signal_wait_*`` calls block the host until
a signal (a dispatch or copy completing) changes, as a synchronize does.

>>> from traceconv.model.activity import Activity
>>> Activity(ROCPROF_VOCABULARY.classify("hsa_api", "hsa_agent_get_info", False)).name
'RUNTIME'
>>> Activity(ROCPROF_VOCABULARY.classify("hsa_api", "hsa_signal_wait_scacquire", False)).name
'SYNC'
>>> Activity(ROCPROF_VOCABULARY.classify("kernel", "<barrier packet>", True)).name
'DEVICE_SYNC'
"""

from __future__ import annotations

from ..model.activity import Vocabulary
from .common import COMMON

ROCPROF_VOCABULARY = Vocabulary.union("rocprof", COMMON, Vocabulary(
    "rocprof",
    kernel={"kernel"},
    memcpy={"gpu_memcpy"},
    runtime={"hip_runtime", "hip_api", "hsa_api"},
    annotation={"user_annotation"},
    sync_names=("signal_wait",),
    # (the copy kinds of its statistics and databases: CopyHostToDevice, MEMORY_COPY_...)
    memcpy_names=("Copy(?:Host|Device|Peer)To(?:Host|Device|Peer)|MEMORY_COPY",),
    memset_names=("FillBuffer",),
    device_sync_names=("<barrier packet>",),
))
