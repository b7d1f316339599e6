"""ONNX Runtime session profiles (``SessionOptions.enable_profiling``): a bare JSON array
of ``X`` events, ``cat`` ``Session`` (model loading, initialisation, each ``model_run``) or
``Node`` (one per node execution: ``<node>_kernel_time``, ``_fence_before``,
``_fence_after``), with ``op_name``, ``provider`` and the memory arena figures in ``args``
(numbers written as strings)."""

from __future__ import annotations

from .base import Flavour

ORT_CATEGORIES = frozenset({"Session", "Node"})
NODE_SUFFIXES = ("_kernel_time", "_fence_before", "_fence_after")


class OnnxRuntime(Flavour):
    """ONNX Runtime's profiler output."""

    name = "onnxruntime"
    framework = "ONNX Runtime"

    @classmethod
    def detect(cls, envelope: dict, events: list) -> bool:
        first = [e for e in events[:200] if isinstance(e, dict) and e.get("ph") == "X"]
        return bool(first) and all(e.get("cat") in ORT_CATEGORIES for e in first) and any(
            e.get("cat") == "Node" and str(e.get("name", "")).endswith(NODE_SUFFIXES)
            or e.get("name") in ("model_loading_uri", "session_initialization")
            for e in first)
