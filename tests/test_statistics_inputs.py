"""Inputs that hold only statistics, given with a timeline or with each other: statistics of
the same run, never ranks (traceconv.analysis.statistics_inputs).

The data is one real rocprof v1 run (shashankparsi/HIP_Programming, MI300A):
``results.json`` (its timeline) and its ``--stats`` tables of kernels, HIP calls and copies.
Expected numbers come from the files themselves, read with plain json and csv.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

import traceconv
from traceconv.analysis.statistics_inputs import join_statistics
from traceconv.api import rank_traces
from traceconv.cli import app

RUN = "rocprof/shashankparsi__HIP_Programming__results"
TABLES = ("stats", "hip_stats", "copy_stats")


def _timeline(data: Path) -> Path:
    return data / f"{RUN}.json"


def _tables(data: Path) -> list[Path]:
    return [data / f"{RUN}.{table}.csv" for table in TABLES]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as file:
        return list(csv.DictReader(file))


def _total_ns(path: Path) -> int:
    return sum(int(row["TotalDurationNs"]) for row in _rows(path))


def _timeline_events(path: Path) -> int:
    """The ``X`` events of rocprof's JSON (one slice each), counted with plain json."""
    return sum(1 for event in json.loads(path.read_text())["traceEvents"]
               if event.get("ph") == "X")


def _invoke(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result.exit_code, result.output


def test_statistics_join_the_timeline_as_one_rank(data: Path):
    inputs = [traceconv.load(p) for p in (_timeline(data), *_tables(data))]
    [joined] = rank_traces(inputs)
    assert len(joined.slices) == _timeline_events(_timeline(data))
    assert len(joined.stats) == sum(len(_rows(p)) for p in _tables(data))
    assert {s.extra["input"] for s in joined.stats} == {p.name for p in _tables(data)}
    assert joined.diagnostics.count("merge.statistics_joined") == len(joined.stats)
    assert not joined.diagnostics.count("merge.clocks")
    assert not joined.diagnostics.count("align.kept")
    assert all(len(t.stats) == len(_rows(p)) for t, p in zip(inputs[1:], _tables(data),
                                                            strict=True))   # unchanged
    assert traceconv.validate(joined) == []


def test_statistics_alone_join_each_other(data: Path):
    [joined] = join_statistics([traceconv.load(p) for p in _tables(data)])
    assert len(joined.stats) == sum(len(_rows(p)) for p in _tables(data))
    assert "alignment" not in joined.metadata.attributes


@pytest.mark.parametrize("tables", [TABLES, ("hip_stats",)])
def test_converted_statistics_are_drawn_beside_the_timeline(tmp_path: Path, data: Path,
                                                            trace_processor, tables):
    given = [data / f"{RUN}.{table}.csv" for table in tables]
    out = tmp_path / "run.pftrace"
    assert _invoke(_timeline(data), *given, "-o", out)[0] == 0
    trace_processor.load(out.read_bytes())
    [count] = trace_processor.query("select count(*) as n from slice")
    # every dispatch, call and copy of the timeline, and one slice per statistics row
    assert count.n == _timeline_events(_timeline(data)) + sum(len(_rows(p)) for p in given)
    [drawn] = trace_processor.query("select count(*) as n, sum(dur) as total from slice "
                                    "where category = 'aggregate'")
    assert (drawn.n, drawn.total) == (sum(len(_rows(p)) for p in given),
                                      sum(_total_ns(p) for p in given))


def test_summary_shows_the_host_tables_beside_the_timeline(data: Path):
    code, output = _invoke("summary", _timeline(data), *_tables(data), "--json")
    assert code == 0
    statistics = orjson.loads(output)["statistics"]
    host_ns = round(sum(r["host_self_time"] for r in statistics["host_rows"]) * 1e9)
    assert host_ns == _total_ns(data / f"{RUN}.hip_stats.csv")
    assert len(statistics["host_rows"]) == len(_rows(data / f"{RUN}.hip_stats.csv"))
    text = _invoke("summary", _timeline(data), *_tables(data))[1]
    assert "statistics given with the timeline" in text and "hipMemcpy" in text


def test_summary_says_how_many_host_rows_it_does_not_show(data: Path):
    hip, copies = (data / f"{RUN}.{t}.csv" for t in ("hip_stats", "copy_stats"))
    code, output = _invoke("summary", hip, copies)
    assert code == 0
    assert f"host self time per operator: {len(_rows(hip))} rows not shown" in output


def test_critical_path_counts_ranks_from_timelines_only(data: Path):
    code, output = _invoke("critical-path", _timeline(data), *_tables(data), "--json")
    assert code == 0 and "ranks" not in orjson.loads(output)
    code, output = _invoke("critical-path", *_tables(data)[1:])
    assert code == 1 and "no critical path" in output


def test_info_on_statistics_alone_aligns_no_clock(data: Path):
    code, output = _invoke("info", *_tables(data), "--wide")
    assert code == 0
    assert "clock alignment" not in output and "merge.clocks" not in output
    assert ", ".join(p.name for p in _tables(data)) + ": rocprof" in output


def test_advise_names_the_inputs_and_advises_the_timeline(data: Path):
    code, output = _invoke("advise", _timeline(data), *_tables(data), "--rule", "gpu-idle")
    assert code == 0   # (one trace advised: the timeline's rule ran, on it)
    assert ".json + 3 more (1 rule passed, 0 not applicable)" in output


def test_batch_merge_joins_statistics_as_convert_does(tmp_path: Path, data: Path):
    inputs = [_timeline(data), *_tables(data)]
    assert _invoke(*inputs, "-o", tmp_path / "convert.pftrace")[0] == 0
    assert _invoke("batch", *inputs, "-o", tmp_path / "b", "--to", "perfetto", "--merge")[0] == 0
    merged = traceconv.load(tmp_path / "b" / "merged.pftrace")
    assert len(merged.slices) == _timeline_events(_timeline(data)) + sum(
        len(_rows(p)) for p in _tables(data))
    assert (tmp_path / "b" / "merged.pftrace").read_bytes() == \
        (tmp_path / "convert.pftrace").read_bytes()


def test_each_rank_takes_the_statistics_named_like_it(samples: Path, data: Path):
    llama = samples / "rocprof" / "llamacpp_results"
    paths = [llama.with_suffix(".csv"), _timeline(data), llama.with_suffix(".stats.csv"),
             *_tables(data)]
    ranks = rank_traces([traceconv.load(p) for p in paths])
    assert [len(r.stats) for r in ranks] == [
        len(_rows(llama.with_suffix(".stats.csv"))), sum(len(_rows(p)) for p in _tables(data))]
    code, output = _invoke("critical-path", *paths, "--json")
    assert code == 0 and len(orjson.loads(output)["ranks"]) == 2


def test_nested_rows_keep_their_parent_when_joined():
    from traceconv.model import Metadata, OpStat, Trace

    first = Trace(Metadata(source_file="a.csv"))
    first.add_stat(OpStat("x", calls=1, total_ns=5))
    second = Trace(Metadata(source_file="b.csv"))
    step = second.add_stat(OpStat("step", calls=1, total_ns=5))
    second.add_stat(OpStat("conv", calls=1, total_ns=2, parent=step, depth=1))
    [joined] = join_statistics([first.freeze(), second.freeze()])
    assert [(s.name, s.parent) for s in joined.stats] == [("x", None), ("step", None),
                                                          ("conv", 1)]
