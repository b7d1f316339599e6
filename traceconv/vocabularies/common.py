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

from ..model.activity import WORD_EDGE, Vocabulary
from ..model.evident_streams import StreamWords

# Collectives and point-to-point transfers by name: their libraries (NCCL, RCCL, MSCCL, Gloo,
# HCCL, c10d), vLLM's and SGLang's custom all-reduce (``cross_device_reduce_1stage``, peers'
# buffers read over NVLink/xGMI, no library word in its name), torch's
# ``record_param_comms``, Paddle's ``c_`` ops and XLA's hyphenated HLO names.
# "broadcast" alone is not one: ``aten::broadcast_tensors``, MIGraphX's ``multibroadcast``
# and ``VectorizedBroadcastKernel`` are shape work. An HLO name goes on only as
# ``-start`` or ``-done``: ``all-reduce-combiner`` is a compiler pass. (One alternation,
# factored: the pattern runs over every distinct slice name; whole words, any case.)
COLLECTIVE_NAMES = (r"nccl|rccl|msccl|c10d::|gloo:|hccl|record_param_comms|sendrecv|c_broadcast|"
                    r"cross[_-]?device[_-]?reduce|"
                    r"(?:all[_-]?(?:reduce|gather|to[_-]?all)|reduce[_-]?scatter|"
                    r"collective[_-]permute)(?!-(?!start|done)[a-z])")

# The operation a collective's name states, whichever library ran it: NCCL's, RCCL's and
# MSCCL's kernels (``ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL``), oneCCL's
# (``oneccl_allreduce_pcie``), HCCL's (``hcom_allReduce__503_0_1``), XLA's HLO names
# (``all-reduce-start.2``), Gloo's and c10d's (``gloo:all_reduce``); whole words, in this
# order: a compound before the words it holds, so ``reduce_sum[...],hlo_op=all-reduce``
# is an all-reduce. A name may state none (``ncclDevKernel_Generic``, MSCCL's
# ``mscclKernel_Sum_half_Simple_false``): its arguments may (Kineto's ``Collective name``).
_OPERATIONS = tuple((operation, re.compile(f"{WORD_EDGE}(?:{words}){WORD_EDGE}", re.IGNORECASE))
                    for operation, words in (
    ("allreduce", r"all[_-]?reduce|cross[_-]?device[_-]?reduce"), ("allgather", r"all[_-]?gather"),
    ("reducescatter", r"reduce[_-]?scatter"), ("alltoall", r"all[_-]?to[_-]?all"),
    ("sendrecv", r"send[_-]?recv"), ("collectivepermute", r"collective[_-]?permute"),
    ("broadcast", "broadcast"), ("barrier", "barrier"), ("reduce", "reduce"),
    ("gather", "gather"), ("scatter", "scatter"), ("send", "send"), ("recv", "recv")))


def collective_operation(name: str) -> str | None:
    """The operation (``allreduce``, ``reducescatter``, ``sendrecv``...) that a collective's
    name states, None when it states none.

    >>> [collective_operation(n) for n in ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    ...  "oneccl_allreduce_pcie", "hcom_reduceScatter_", "all-reduce-start.2",
    ...  "ncclKernel_Broadcast_RING_LL_Sum_int8_t", "ncclDevKernel_Generic_1")]
    ['allgather', 'allreduce', 'reducescatter', 'allreduce', 'broadcast', None]
    """
    return next((operation for operation, words in _OPERATIONS if words.search(name)), None)


COMMON = Vocabulary(
    "common",
    dataloader_names=(r"dataloader|data_loader|enumerate\(DataLoader\)",),
    communication_names=(COLLECTIVE_NAMES,),
    # calls that block the host until the device catches up; polls (cudaEventQuery) do not
    sync_names=("Synchroni[sz]e",),                               # cudaStreamSynchronize...
    launch_names=("Launch|Memcpy|Memset|hipExtModuleLaunch",),    # cudaLaunchKernel...
    # a copy or memset, a device's record or a call ("Memcpy HtoD (Pageable...)", cudaMemcpy)
    memcpy_names=("memcpy|HtoD|DtoH|DtoD",),
    memset_names=("memset",),
    # OS calls in which a thread is blocked until another thread, a timer, a child process
    # or a connection wakes it (nsys's OS runtime trace; the whole name, as it writes them):
    # waiting, not work. Reads, writes, ioctl and mmap stay work: the thread asked the
    # kernel to do something
    wait_names=(r"^(?:futex|sem_(?:timed|clock)?wait|p?poll|p?select|epoll_p?wait|"
                r"(?:clock_)?nanosleep|u?sleep|pause|wait(?:pid|id|3|4)?|sigsuspend|"
                r"sig(?:timed)?wait(?:info)?|accept4?|pthread_(?:join|barrier_wait|"
                r"cond_(?:timed|clock)?wait|mutex_(?:timed|clock)?lock|"
                r"rwlock_(?:timed|clock)?(?:rd|wr)lock))$",),
)

# a runtime call that launches one kernel (cudaLaunchKernel, cuLaunchKernelEx,
# cudaLaunchCooperativeKernel, hipModuleLaunchKernel, hipExtModuleLaunchKernel); not a
# graph launch (cudaGraphLaunch runs many kernels) nor a copy. Read from the name's first
# "Launch" on (if a later one is followed by "Kernel", so is the first): tried from each
# "Launch" of a long name, it re-read the rest of the name.
KERNEL_LAUNCH_CALL = re.compile(r"^(?:cuda|cu|hip)(?:(?!Launch)\w)*+Launch\w*Kernel")

# a runtime call that returns before its work is done (cudaMemcpyAsync, hipMemcpyAsync,
# Paddle's GpuMemcpyAsync); a copy call without it (cudaMemcpy, GpuMemcpySync) waits for it
ASYNC_CALL = re.compile("async", re.IGNORECASE)


def kernel_signature(name: str) -> bool:
    """Whether ``name`` has the shape of a kernel's signature: a function named a kernel
    (``vectorized_elementwise_kernel``, ``ncclDevKernel_...``) followed by its template
    arguments or parameters, or a templated ``void name<...>(...)`` as CUDA and HIP write a
    kernel. Host C++ has that shape too (``void std::__invoke<...>(...)``, torch's CPU
    ``add_kernel<float>``): it is device work only where the device's own copies place it
    (:mod:`traceconv.model.evident_streams`). (String operations, no pattern: a name of
    thousands of characters costs one pass.)

    >>> [kernel_signature(n) for n in ("void at::native::reduce_kernel<512, 1>(int)",
    ...  "void (anonymous namespace)::softmax_warp_forward<float, 8>(float*)",
    ...  "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    ...  "void Foo::bar(int)", "run_kernel", "cudaLaunchKernel")]
    [True, True, True, False, False, False]
    """
    name = name.replace("(anonymous namespace)::", "")
    cuts = [i for i in (name.find("<"), name.find("(")) if i > 0]
    if not cuts:
        return False
    cut = min(cuts)
    function = name[:cut].removeprefix("void ").rsplit("::", 1)[-1]
    if " " in function or not function:
        return False
    templated_void = name.startswith("void ") and name[cut] == "<" and name.endswith(")")
    return templated_void or "_kernel" in function or "Kernel" in function


# A copy or memset as only a device's tracer names one: by its direction (Kineto's
# "Memcpy HtoD (Pageable -> Device)", CUPTI's "[CUDA memcpy Device-to-Host]", rocprof's
# "CopyHostToDevice" and "MEMORY_COPY_HOST_TO_DEVICE", "MemcpyD2H", Paddle's
# "GpuMemcpySync:GPU->CPU") or the memory it fills ("Memset (Device)", "[CUDA memset]",
# ROCclr's "FillBuffer"). The words alone are no device's: libc's
# ``__memcpy_avx_unaligned_erms`` and a program's ``memcpy`` run on the host.
_PLACES = "Host|Device|Peer|Array"
DEVICE_COPIES = Vocabulary(
    "device copies",
    memcpy_names=(rf"(?-i:[HDPA]to[HDPA]|[HD]2[HD]|[CG]PU->[CG]PU)"
                  rf"|(?:{_PLACES})[_-]?to[_-]?(?:{_PLACES})",),
    memset_names=(r"memset \(\w+\)|\[CUDA memset\]|FillBuffer",),
)

# What tells a device stream written as a plain thread (traceconv.model.evident_streams):
# copies and memsets by their device names (above), kernels by their signatures; host work
# by a runtime call (``cudaMemcpyAsync``, ``hipMemcpy``, ``cuLaunchKernel``, ``hsa_...``,
# Paddle's ``GpuMemcpySync``), a framework operator (``aten::``) or a Python frame
# (``file.py(12): f``), whose names a copy word may be in.
HOST_WORK_NAMES = re.compile(r"^(?:cuda|cu|hip)[A-Z]|^hsa_|Mem(?:cpy|set)(?:Sync|Async)"
                             r"|^aten::|\.py\(\d+\)")
DEVICE_STREAM_WORDS = StreamWords(
    copy=lambda name: DEVICE_COPIES.named(name, "memcpy", "memset"),
    kernel=kernel_signature, host=HOST_WORK_NAMES.search)
