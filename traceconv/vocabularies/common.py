"""Names that several producers share, for their readers' activity vocabularies.

CUDA / HIP runtime calls and copy directions, collective libraries (NCCL, RCCL, Gloo,
HCCL) and data loaders are named the same whichever profiler recorded them, so the readers
of PyTorch, Paddle, MegEngine and MIGraphX traces add these words to their own
(:class:`~traceconv.model.activity.Vocabulary`).

>>> from traceconv.model.activity import Activity
>>> Activity(COMMON.classify("cpu_op", "gloo:all_reduce", False) & ~15).name
'COMMUNICATION'
"""

from __future__ import annotations

import re

from ..model.activity import Vocabulary

# Collectives and point-to-point transfers by name: their libraries (NCCL, RCCL, MSCCL, Gloo,
# HCCL, c10d), torch's ``record_param_comms``, Paddle's ``c_`` ops and XLA's hyphenated HLO names.
# "broadcast" alone is not one: ``aten::broadcast_tensors``, MIGraphX's ``multibroadcast``
# and ``VectorizedBroadcastKernel`` are shape work. (One alternation, factored: the pattern
# runs over every distinct slice name; matched case-insensitively.)
COLLECTIVE_NAMES = (r"nccl|rccl|msccl|c10d::|gloo:|hccl|record_param_comms|sendrecv|"
                    r"all[_-]?(?:reduce|gather|to[_-]?all)|reduce[_-]?scatter|"
                    r"collective[_-]permute|\bc_broadcast")

COMMON = Vocabulary(
    "common",
    dataloader_names=(r"dataloader|data_loader|enumerate\(DataLoader\)",),
    communication_names=(COLLECTIVE_NAMES,),
    # calls that block the host until the device catches up; polls (cudaEventQuery) do not
    sync_names=("Synchroni[sz]e",),                               # cudaStreamSynchronize...
    launch_names=("Launch|Memcpy|Memset|hipExtModuleLaunch",),    # cudaLaunchKernel...
    memcpy_names=("memcpy|HtoD|DtoH|DtoD",),                      # "Memcpy HtoD (Pageable...)"
    memset_names=("memset",),
    # OS calls in which a thread is blocked until another thread, a timer, a child process
    # or a connection wakes it (nsys's OS runtime trace): waiting, not work. Reads, writes,
    # ioctl and mmap stay work: the thread asked the kernel to do something
    wait_names=(r"(?<![\w])(?:futex|sem_(?:timed|clock)?wait|p?poll|p?select|epoll_p?wait|"
                r"(?:clock_)?nanosleep|u?sleep|pause|wait(?:pid|id|3|4)?|sigsuspend|"
                r"sig(?:timed)?wait(?:info)?|accept4?|pthread_(?:join|barrier_wait|"
                r"cond_(?:timed|clock)?wait|mutex_(?:timed|clock)?lock|"
                r"rwlock_(?:timed|clock)?(?:rd|wr)lock))"
                r"(?![\w])",),
)

# a runtime call that returns before its work is done (cudaMemcpyAsync, hipMemcpyAsync,
# Paddle's GpuMemcpyAsync); a copy call without it (cudaMemcpy, GpuMemcpySync) waits for it
ASYNC_CALL = re.compile("async", re.IGNORECASE)
