"""MegEngine profiles whose activations were allocated at run time (``jit.trace``,
``load_and_run`` without ``--embed-input``): memory blocks from ``prev_dev_ptr`` ranges."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
from traceconv.cli.app import app

DATA = Path(__file__).parent / "data" / "megengine"


def expected_ranges(doc: dict) -> list[tuple[int, int]]:
    """(address, size) of each var that ran, holds no chunk and forwards nothing, read
    straight from the JSON."""
    exe = doc["graph_exec"]
    executed = {o for o in exe["comp_seq"]}
    produced = {v for o, op in exe["operator"].items() if o in executed for v in op["output"]}
    return sorted((v["prev_dev_ptr"], v["prev_dev_ptr_end"] - v["prev_dev_ptr"])
                  for v in exe["var"].values()
            if v["id"] in produced and not v.get("mem_plan")
            and not v.get("mem_readonly_fwd_src") and not v.get("force_update_src")
            and v.get("prev_dev_ptr") and (v.get("prev_dev_ptr_end") or 0) > v["prev_dev_ptr"])


@pytest.mark.parametrize("name", ["convnet_static_profile.json.gz",
                                  "convnet_lar_profile.json.gz"])
def test_blocks_from_prev_dev_ptr_ranges(name):
    doc = json.loads(gzip.decompress((DATA / name).read_bytes()))
    ranges = expected_ranges(doc)
    trace = traceconv.load(DATA / name)
    derived = sorted((b.address, b.size) for b in trace.memory
                     if b.args.get("derived_from") == "prev_dev_ptr")
    assert len(ranges) > 20 and derived == ranges
    assert trace.diagnostics.count("megengine.dynamic_var_memory") == len(ranges)
    assert all(b.alloc_ns is not None and b.free_ns is not None and b.alloc_ns <= b.free_ns
               for b in trace.memory if b.args.get("derived_from"))


def test_memflow_draws_them(tmp_path):
    out = tmp_path / "flow.svg"
    result = CliRunner().invoke(app, ["memflow", str(DATA / "convnet_static_profile.json.gz"),
                                      "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().count("<rect") >= 32


def test_a_statically_planned_profile_keeps_only_its_chunks():
    trace = traceconv.load(DATA / "convnet_lar_embed_profile.json.gz")   # --embed-input
    assert not trace.diagnostics.count("megengine.dynamic_var_memory")
    assert not [b for b in trace.memory if "derived_from" in b.args]
