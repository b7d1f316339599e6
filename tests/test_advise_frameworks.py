"""advise speaks the framework of the trace (issue #27): MegEngine never gets torch.compile,
and a rule that cannot apply to a framework says so instead of firing."""

from __future__ import annotations

import re
from pathlib import Path

import traceconv
from traceconv.analysis.advise import advise
from traceconv.analysis.advise.frameworks import ADVICE, framework_of

ROOT = Path(__file__).parent.parent
MEGENGINE = ROOT / "samples" / "megengine" / "convnet_lar_embed_profile.json"
PADDLE = ROOT / "samples" / "paddle" / "report_gpu_before.txt"
TORCH = ROOT / "samples" / "torch" / "streams_graph_nccl_cuda.pt.trace.json.gz"
TORCH_API = re.compile(r"torch\.|pin_memory|CUDA graph|PYTORCH_", re.IGNORECASE)
PADDLE_API = re.compile(r"paddle\.", re.IGNORECASE)


def test_megengine_graph_profile_gets_no_pytorch_advice():
    trace = traceconv.load(MEGENGINE)
    assert framework_of(trace) == "megengine graph"
    result = advise(trace)
    assert result.findings, "the sample fires a rule"
    for finding in result.findings:
        assert not TORCH_API.search(finding.advice), finding
    fired = {f.rule for f in result.findings}
    assert "framework-overhead" not in fired
    skipped = {s.rule: s.reason for s in result.skipped}
    assert "MegEngine static-graph" in skipped["framework-overhead"]
    mixed = next(f for f in result.findings if f.rule == "no-mixed-precision")
    assert "megengine.amp" in mixed.advice


def test_paddle_report_gets_paddle_advice():
    # the report's runs are "thread0::ParallelExecutor::Run": already a static graph, so
    # Paddle's static-graph words, not "run a static graph (paddle.jit.to_static)"
    assert "ParallelExecutor::Run" in PADDLE.read_text()
    result = advise(traceconv.load(PADDLE))
    overhead = next(f for f in result.findings if f.rule == "framework-overhead")
    assert "paddle.static.BuildStrategy" in overhead.advice
    assert "to_static" not in overhead.advice and not TORCH_API.search(overhead.advice)


def test_pytorch_trace_keeps_pytorch_advice():
    result = advise(traceconv.load(TORCH))
    texts = {f.rule: f.advice for f in result.findings}
    assert "torch.autocast" in texts["no-mixed-precision"]
    assert not any(PADDLE_API.search(t) for t in texts.values())


def test_generic_texts_name_no_framework_api():
    for rule, row in ADVICE.items():
        generic = row[""]
        assert generic and not TORCH_API.search(generic) and not PADDLE_API.search(generic), rule


def test_gpu_idle_cause_picks_the_words():
    """The rule names the cause it found (not a title parsed back); the cause picks the
    framework's text: on the ResNet-18 run the gaps add up mostly to host wait."""
    trace = traceconv.load(ROOT / "samples" / "torch" / "resnet18_train_cuda.pt.trace.json.gz")
    idle = next(f for f in advise(trace).findings if f.rule == "gpu-idle")
    causes = {"host wait": "host_wait_ns", "kernel wait": "kernel_wait_ns", "other": "other_ns"}
    assert idle.cause == max(causes, key=lambda c: idle.evidence[causes[c]]) == "host wait"
    assert idle.advice == ADVICE["gpu-idle:host wait"]["pytorch"]
    assert idle.as_dict()["cause"] == "host wait"
    assert "cause" not in next(f for f in advise(trace).findings
                               if f.rule != "gpu-idle").as_dict()
