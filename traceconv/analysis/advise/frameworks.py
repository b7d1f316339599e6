"""What to try depends on the framework the trace came from.

Rules measure concepts of the model and state the problem; the words of the advice (which API
to call) come from this table, per framework. A framework missing from a rule's row gets the
rule's generic text, which names no framework's API. ``None`` in a row means the rule cannot
apply to traces of that framework (the reason is given), so it is reported as skipped instead
of firing.
"""

from __future__ import annotations

import itertools
import re

from ...model import ProcessKind, Trace
from ...vocabularies.paddle import STATIC_GRAPH_NAMES

_FRAMEWORKS = (("pytorch", re.compile(r"torch|kineto", re.I)),
               ("paddle", re.compile(r"paddle", re.I)),
               ("megengine", re.compile(r"megengine", re.I)),
               ("jax", re.compile(r"\bjax|xla", re.I)),
               ("onnxruntime", re.compile(r"onnx", re.I)),
               ("migraphx", re.compile(r"migraphx", re.I)),
               ("tensorrt", re.compile(r"tensorrt|trtexec", re.I)))

# compiled inference engines: no Python loop, no optimizer, no data loader of theirs
_ENGINES = ("onnxruntime", "migraphx", "tensorrt")
# MegEngine's graph profiler (jit.trace(profiling=True), load_and_run --profile) records a
# static graph that its executor runs: the advice "trace it as a static graph" is moot
MEGENGINE_GRAPH = "megengine graph"
# a Paddle run inside a static-graph executor (ParallelExecutor, StandaloneExecutor...): the
# advice "run a static graph" is moot; a rule without words of its own for it takes Paddle's
PADDLE_STATIC = "paddle static graph"
# a PyTorch run with no device: advice that names CUDA (graphs, pinned memory) cannot apply;
# a rule without words of its own for it takes PyTorch's
PYTORCH_CPU = "pytorch cpu"
_REASONS = {
    MEGENGINE_GRAPH: "a MegEngine static-graph profile: the graph executor, not Python, "
                     "dispatches the ops, and the graph is already traced",
    **dict.fromkeys(_ENGINES, "a compiled inference engine's profile: the engine, not a "
                              "Python loop, schedules the ops"),
}

ADVICE: dict[str, dict[str, str | None]] = {
    "framework-overhead": {
        "pytorch": "Time between ops is Python and framework overhead: look at the Python "
                   "frames between ops (profile with_stack=True if the trace has none), move "
                   "per-step bookkeeping out of the loop, use torch.compile or CUDA graphs "
                   "(torch.cuda.graphs) to cut per-op dispatch.",
        PYTORCH_CPU: "Time between ops is Python and framework overhead: look at the Python "
                     "frames between ops (profile with_stack=True if the trace has none), "
                     "move per-step bookkeeping out of the loop, use torch.compile to cut "
                     "per-op dispatch.",
        "paddle": "The framework (scheduling, Python, op dispatch) takes a large part of the "
                  "step: run a static graph (paddle.jit.to_static), larger batches, fewer "
                  "small ops.",
        PADDLE_STATIC: "The executor (scheduling, op dispatch) takes a large part of the "
                       "step of this static-graph run: larger batches, fewer and fused ops "
                       "(paddle.static.BuildStrategy fuse passes), more executor threads "
                       "(ExecutionStrategy.num_threads).",
        "megengine": "Time between ops is host-side dispatch: run the step as a traced "
                     "static graph (megengine.jit.trace(symbolic=True), with opt_level=2 "
                     "graph optimisation), larger batches, fewer small ops.",
        MEGENGINE_GRAPH: None,
        "jax": "Time between device programs is Python and dispatch: jit a larger function "
               "(the whole step), avoid host round-trips between jitted calls.",
        **dict.fromkeys(_ENGINES),
        "": "Time between ops is host-side framework work: capture or compile the step as a "
            "graph, raise the batch size, fuse small ops.",
    },
    "gpu-idle:host wait": {
        "pytorch": "The host does not enqueue work fast enough: look at the CPU ops between "
                   "kernels (Python overhead, data preparation), raise the batch size, fuse "
                   "small ops (torch.compile) or capture the step in a CUDA graph.",
        "paddle": "The host does not enqueue work fast enough: look at the CPU ops between "
                  "kernels, raise the batch size, run a static graph (paddle.jit.to_static).",
        PADDLE_STATIC: "The host does not enqueue work fast enough: look at the CPU ops "
                       "between kernels, raise the batch size, fuse ops "
                       "(paddle.static.BuildStrategy fuse passes).",
        "megengine": "The host does not enqueue work fast enough: raise the batch size, run "
                     "a traced static graph (megengine.jit.trace(symbolic=True)).",
        "jax": "The host does not enqueue work fast enough: jit larger functions, keep data "
               "on the device, prefetch the next batch.",
        "": "The host does not enqueue work fast enough: look at the host work between "
            "kernels, raise the batch size, fuse small ops or capture the step as a graph.",
    },
    "gpu-idle:kernel wait": {
        "pytorch": "Gaps are launch latency between back-to-back kernels: fewer, larger "
                   "kernels (fusion, torch.compile) or CUDA graphs remove them.",
        "": "Gaps are launch latency between back-to-back kernels: fewer, larger kernels "
            "(fusion) or a captured device graph remove them.",
    },
    "launch-bound": {
        "pytorch": "Each kernel costs more to launch than to run and the queue is empty: batch "
                   "more work per kernel, fuse (torch.compile), or capture the loop in a CUDA "
                   "graph.",
        "paddle": "Each kernel costs more to launch than to run and the queue is empty: batch "
                  "more work per kernel, run a static graph with operator fusion "
                  "(paddle.jit.to_static).",
        PADDLE_STATIC: "Each kernel costs more to launch than to run and the queue is "
                       "empty: batch more work per kernel, fuse ops "
                       "(paddle.static.BuildStrategy fuse passes).",
        "megengine": "Each kernel costs more to launch than to run and the queue is empty: "
                     "batch more work per kernel, trace the step with graph optimisation "
                     "(megengine.jit.trace(symbolic=True, opt_level=2)).",
        "": "Each kernel costs more to launch than to run and the queue is empty: batch more "
            "work per kernel, fuse kernels, or capture the loop as a device graph.",
    },
    "sync-copy": {
        "pytorch": "The host waits for these copies: use pinned host memory and "
                   "non_blocking=True (tensor.to(device, non_blocking=True)), and avoid "
                   ".item()/.cpu()/print of device values inside the step; move such checks "
                   "off the hot loop.",
        "paddle": "The host waits for these copies: keep scalars and loop conditions on the "
                  "side that uses them (no .numpy()/float() of device values in the step), "
                  "feed data from pinned memory (paddle.io.DataLoader use_shared_memory).",
        "megengine": "The host waits for these copies: avoid .numpy()/.item() of device "
                     "tensors inside the step; move such checks off the hot loop.",
        "": "The host waits for these copies: copy asynchronously from pinned host memory and "
            "avoid reading device values back to the host inside the step.",
    },
    "pageable-copy": {
        "pytorch": "Pageable memory is staged through a bounce buffer and cannot overlap with "
                   "compute: allocate host tensors pinned (pin_memory=True in the DataLoader, "
                   "tensor.pin_memory()), then copy with non_blocking=True.",
        "paddle": "Pageable memory is staged through a bounce buffer and cannot overlap with "
                  "compute: use pinned host memory (paddle.CUDAPinnedPlace, DataLoader "
                  "use_shared_memory) for the tensors you copy.",
        "": "Pageable memory is staged through a bounce buffer and cannot overlap with "
            "compute: copy from pinned (page-locked) host memory.",
    },
    "dataloader-bound": {
        "pytorch": "The step waits for the next batch: more DataLoader workers (num_workers), "
                   "persistent_workers, pin_memory, prefetch_factor, or cheaper preprocessing.",
        PYTORCH_CPU: "The step waits for the next batch: more DataLoader workers "
                     "(num_workers), persistent_workers, prefetch_factor, or cheaper "
                     "preprocessing.",
        "paddle": "The step waits for the next batch: more paddle.io.DataLoader workers "
                  "(num_workers), use_shared_memory, or cheaper preprocessing.",
        "megengine": "The step waits for the next batch: more megengine.data.DataLoader "
                     "workers (num_workers), or cheaper preprocessing.",
        **dict.fromkeys(_ENGINES),
        "": "The step waits for the next batch: load data in parallel workers, prefetch, or "
            "make preprocessing cheaper.",
    },
    "exposed-communication": {
        "pytorch": "Collectives run while nothing computes: overlap them (DDP bucket_cap_mb, "
                   "gradient_as_bucket_view, FSDP prefetch, async collectives on a side "
                   "stream) or shrink them (compression, fewer all-reduces per step).",
        "paddle": "Collectives run while nothing computes: overlap them with compute "
                  "(fleet DistributedStrategy fuse_all_reduce_ops / fuse_grad_size_in_MB) or "
                  "shrink them (fewer all-reduces per step).",
        "": "Collectives run while nothing computes: overlap them with compute (bucketed, "
            "asynchronous collectives on a side stream) or shrink them (compression, fewer "
            "collectives per step).",
    },
    "memory-peak": {
        "pytorch": "Close to out-of-memory: activation checkpointing "
                   "(torch.utils.checkpoint), smaller micro-batches with gradient "
                   "accumulation, mixed precision, or freeing references earlier; the "
                   "memory-flow picture (traceconv memflow) shows what is alive at the peak.",
        "megengine": "Close to out-of-memory: sublinear memory or DTR "
                     "(megengine.jit.trace(sublinear_memory_config=...), "
                     "megengine.dtr.enable()), smaller batches; traceconv memflow shows what "
                     "is alive at the peak.",
        "": "Close to out-of-memory: recompute activations instead of keeping them, smaller "
            "micro-batches with gradient accumulation, lower precision; traceconv memflow "
            "shows what is alive at the peak.",
    },
    "fragmentation": {
        "pytorch": "Cached blocks are held but do not fit later requests: set "
                   "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, keep tensor shapes "
                   "stable, or allocate the largest buffers first.",
        "": "Cached blocks are held but do not fit later requests: keep tensor shapes stable "
            "or allocate the largest buffers first.",
    },
    "no-mixed-precision": {
        "pytorch": "No fp16/bf16 anywhere in the run: try automatic mixed precision "
                   "(torch.autocast(device_type='cuda', dtype=torch.bfloat16)) to run matrix "
                   "math on tensor cores at twice the fp32/TF32 rate or more.",
        "paddle": "No fp16/bf16 anywhere in the run: try automatic mixed precision "
                  "(paddle.amp.auto_cast, paddle.amp.GradScaler) to run matrix math on tensor "
                  "cores at twice the fp32/TF32 rate or more.",
        "megengine": "No fp16/bf16 anywhere in the run: try automatic mixed precision "
                     "(megengine.amp.autocast, megengine.amp.GradScaler) to run matrix math "
                     "on tensor cores at twice the fp32 rate or more.",
        "jax": "No fp16/bf16 anywhere in the run: compute in bfloat16 (cast params and "
               "activations, keep an fp32 master copy) to use the tensor cores.",
        "onnxruntime": "No fp16 anywhere in the run: convert the model to fp16 or run a "
                       "quantised (int8) model on a provider with tensor cores.",
        "migraphx": "No fp16 anywhere in the run: compile with fp16 quantisation "
                    "(migraphx-driver --fp16, migraphx.quantize_fp16).",
        "tensorrt": "No fp16 anywhere in the run: build the engine with --fp16 (or --bf16, "
                    "--int8 with calibration).",
        "": "No fp16/bf16 anywhere in the run: mixed precision runs matrix math on tensor "
            "cores at twice the fp32/TF32 rate or more.",
    },
}


def framework_of(trace: Trace) -> str:
    """The framework key of a trace (``""`` when unknown).

    >>> from traceconv.model import Metadata
    >>> framework_of(Trace(Metadata(framework="MegEngine"))), framework_of(Trace())
    ('megengine', '')
    >>> framework_of(Trace(Metadata(source_format="megengine", framework="MegEngine")))
    'megengine graph'
    >>> framework_of(Trace(Metadata(framework="PyTorch")))   # no device in it
    'pytorch cpu'
    >>> t = Trace(Metadata(framework="PaddlePaddle"))
    >>> _ = t.add_slice(t.add_track("main", process=t.add_process("p")), 0, 5,
    ...                 "StandaloneExecutor::run")
    >>> framework_of(t)
    'paddle static graph'

    """
    meta = trace.metadata
    if meta.source_format == "megengine":
        return MEGENGINE_GRAPH
    text = " ".join(str(x) for x in (meta.framework, meta.attributes.get("flavour"),
                                     meta.source_format) if x)
    for key, pattern in _FRAMEWORKS:
        if pattern.search(text):
            if key == "paddle" and _static_graph(trace):
                return PADDLE_STATIC
            no_device = not any(p.kind is ProcessKind.DEVICE for p in trace.processes)
            return PYTORCH_CPU if key == "pytorch" and no_device else key
    return ""


def _static_graph(trace: Trace) -> bool:
    """Whether a Paddle trace ran in a static-graph executor: a slice or statistics row
    named for one (:data:`~traceconv.vocabularies.paddle.STATIC_GRAPH_NAMES`; the trace's
    distinct strings, not its events, are searched).

    >>> from traceconv.model import OpStat
    >>> t = Trace(); _ = t.add_stat(OpStat("thread0::ParallelExecutor::Run"))
    >>> _static_graph(t), _static_graph(Trace())
    (True, False)
    """
    names = itertools.chain((s.name for s in trace.stats), trace.strings.strings)
    return any(STATIC_GRAPH_NAMES.search(name) for name in names)


def advice_for(rule: str, framework: str, fallback: str) -> str:
    """The advice text of ``rule`` for ``framework`` (its generic text when the framework
    has none of its own; ``fallback`` when the rule has no row).

    >>> "torch" in advice_for("no-mixed-precision", "megengine", "")
    False
    """
    row = ADVICE.get(rule)
    if row is None:
        return fallback
    # a MegEngine graph profile takes MegEngine's words, a CPU-only PyTorch run PyTorch's
    family = framework.split(" ")[0]
    text = row.get(framework, row.get(family, row.get("")))
    return fallback if text is None else text


def not_applicable(rule: str, framework: str) -> str | None:
    """Why ``rule`` cannot apply to traces of ``framework`` (None: it can).

    >>> not_applicable("dataloader-bound", "tensorrt") is not None, not_applicable("gpu-idle", "")
    (True, None)
    """
    row = ADVICE.get(rule)
    if row is not None and framework in row and row[framework] is None:
        return f"not applicable: {_REASONS.get(framework, framework)}"
    return None
