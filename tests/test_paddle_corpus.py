"""The whole Paddle corpus (``../shared/samples/paddle``, optional): every file reads, the
reports equal their text, and the formats that describe one run agree with each other."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

import traceconv
from traceconv.errors import InputError

FORMAT_OF = {".txt": ("paddle-report", "paddle-summary"), ".profile": ("paddle-profile",),
             ".pb": ("paddle-pb",), ".json": ("chrome",)}


def expected_formats(path: Path) -> tuple[str, ...]:
    name = path.name.removesuffix(".gz")
    if re.search(r"\.profile(\.\d+)?$", name):     # two sessions: profile.0, profile.1
        return FORMAT_OF[".profile"]
    return FORMAT_OF[Path(name).suffix]
ROW = re.compile(r"^( *)\S.*?\s+\d+\s+[-+\d.e]+")


def corpus(root: Path) -> list[Path]:
    return sorted(p for p in (root / "paddle").rglob("*")
                  if p.is_file() and "gen" not in p.parts)


def test_every_sample_reads(shared_samples: Path):
    files = corpus(shared_samples)
    assert len(files) > 100
    for path in files:
        trace = traceconv.load(path)
        assert trace.metadata.source_format in expected_formats(path), path
        assert trace.counts()["slices"] + trace.counts()["stat_rows"] > 0, path
        bad = [d.code for d in trace.diagnostics if d.kind == "dropped"]
        assert not bad, (path, bad)


def _table_rows(text: str) -> list[tuple[int, str]]:
    """(indent, line) of every Event Summary row, read the simple way."""
    rows, inside = [], False
    for line in text.splitlines():
        if re.match(r"^Event\s+Calls\s+Total", line):
            inside = True
        elif inside and not line.strip():
            inside = False
        elif inside:
            rows.append((len(line) - len(line.lstrip(" ")), line))
    return rows


def test_reports_equal_their_text(shared_samples: Path):
    for path in sorted((shared_samples / "paddle").glob("old_cpu_*/*.txt")):
        trace = traceconv.load(path)
        stats = [s for s in trace.stats if s.section.startswith("events")]
        rows = _table_rows(path.read_text())
        assert len(stats) == len(rows), path
        for stat, (indent, line) in zip(stats, rows, strict=True):
            assert stat.depth == indent // 2 and line.strip().startswith(stat.name), line
            # the calls follow the name, with or without a space (a name may fill its cell)
            assert line.strip()[len(stat.name):].split()[0] == str(stat.calls), line
        totals = [float(m.group(1)) for m in re.finditer(r"^Total time: (\S+)$",
                                                          path.read_text(), re.MULTILINE)]
        assert [s.total_ns for s in trace.stats if s.name == "Total time"] == [
            round(t * 1e6) for t in totals]


def test_binary_profile_and_its_timeline_json_agree(shared_samples: Path):
    folder = shared_samples / "paddle" / "old_cpu_2.6.2"
    pairs = [(folder / f"{p.name.removesuffix('.timeline.json')}.profile", p)
             for p in sorted((folder / "timeline").glob("*.timeline.json"))]
    pairs = [(a, b) for a, b in pairs if a.exists()]
    assert len(pairs) == 4
    for profile, timeline in pairs:
        a, b = traceconv.load(profile), traceconv.load(timeline)
        key = sorted((s.start, s.dur, s.name, s.category) for s in a.iter_slices())
        assert key == sorted((s.start, s.dur, s.name, s.category) for s in b.iter_slices())
        assert sorted(t.name for t in a.tracks) == sorted(t.name for t in b.tracks)


def test_protobuf_and_json_of_one_run_agree(shared_samples: Path):
    checked = 0
    for folder in sorted((shared_samples / "paddle").glob("new_cpu_*")):
        for pb in sorted(folder.glob("*.paddle_trace.pb")):
            stem = pb.name.split("_time_")[0]
            (json_path,) = folder.glob(f"{stem}_time_*.paddle_trace.json*")
            a, b = traceconv.load(pb), traceconv.load(json_path)
            assert Counter(s.category for s in a.iter_slices()) == Counter(
                s.category for s in b.iter_slices()), pb
            assert len(a.instants) == len(b.instants)
            assert len(a.memory) == len(b.memory)
            checked += 1
    assert checked == 9


def test_every_sample_converts_and_passes_check(shared_samples: Path, tmp_path: Path):
    from traceconv import check as check_file

    for path in corpus(shared_samples):
        if "large" in path.parent.name:
            continue                                  # benchmarks/paddle_bench.py
        out = tmp_path / "out.pftrace"
        trace = traceconv.load(path)
        if trace.stats and not (len(trace.slices) or len(trace.instants) or len(trace.counters)):
            # statistics with nothing drawn (a Perf Summary alone): refused, not written empty
            with pytest.raises(InputError, match="nothing to put on a timeline"):
                traceconv.convert(path, out)
            continue
        traceconv.convert(path, out)
        report = check_file(str(out))
        assert report.ok and not report.warnings, (path, report.errors, report.warnings)
