"""Inputs cut short (a copy or download that stopped early) end in one line naming the file,
whatever reads them: two shared layers judge the cut, never a reader.

* An SQLite database (nsys exports, rpd traces, rocprof v1 and rocprofv3 databases)
  shorter than its header states is refused where every database is opened
  (``traceconv.sqlite_access.refuse_cut``). Before, SQLite read the pages it found: a cut
  was "malformed" at best, and one in the last pages (15 of 155 cuts of seven databases)
  read as a smaller trace, exit 0.
* A compressed input (gzip, xz, bz2) whose stream stops before its end is refused by the
  input layer at the decompressed byte where its content stops (``traceconv.io.cut_short``),
  before any reader's parser can name a wrong place or read a shorter input.

The expected sizes come from the files (their size, SQLite's own ``pragma page_size`` and
``page_count`` of the whole file) and the offsets from the standard library's decompressors,
never from traceconv.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import os
import sqlite3
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli_errors import one_error_line, run
from traceconv import registry
from traceconv.errors import InputError
from traceconv.sqlite_access import refuse_cut

ROOT = Path(__file__).parent.parent

# --- SQLite databases --------------------------------------------------------------------

DATABASES = [(name, seed.path) for name, seeds in registry.SEED_SAMPLES.items()
             for seed in seeds if seed.syntax == "sqlite"]


def _pages(path: Path) -> tuple[int, int]:
    """(page size, pages) of a whole database, as SQLite itself counts them."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro&immutable=1",
                                            uri=True)) as db:
        return (db.execute("pragma page_size").fetchone()[0],
                db.execute("pragma page_count").fetchone()[0])


def _cut_points(page: int, pages: int) -> list[int]:
    """24 places to cut a database of ``pages`` pages of ``page`` bytes: inside the 100-byte
    header, at page boundaries and mid-page, near the start, the middle and the last page
    (a tiny file's coincide: kept once). The header's first 16 bytes stay: fewer say
    nothing of SQLite, and the reader the name picks refuses them as not its format."""
    size = page * pages
    last = page * (pages - 1)
    points = [16, 28, 50, 99, 100, 101, page - 1, page, page + 1, 2 * page, 2 * page + page // 2,
              page * (pages // 4), page * (pages // 3) + 7, page * (pages // 2),
              page * (pages // 2) + page // 2, page * (3 * pages // 4), last - page,
              last - 1, last, last + 1, last + page // 2, size - 100, size - 2, size - 1]
    return sorted({p for p in points if 0 < p < size})


def _database_cuts() -> list[object]:
    cases = []
    for reader, path in DATABASES:
        page, pages = _pages(ROOT / path)
        for at in _cut_points(page, pages):
            for forced in (False, True):   # detected, and given to the reader by --format
                how = "format" if forced else "sniffed"
                cases.append(pytest.param(reader, path, at, forced,
                                          id=f"{Path(path).name}-{at}-{how}"))
    return cases


def test_the_database_seeds_are_whole_and_cover_every_sqlite_reader():
    # the seeds' own sizes are the claims below: each is exactly its pages
    for _, path in DATABASES:
        page, pages = _pages(ROOT / path)
        assert os.path.getsize(ROOT / path) == page * pages
    assert {reader for reader, _ in DATABASES} == {"nsys", "rpd", "rocprof"}
    assert len(DATABASES) == 4   # nsys, rpd, rocprof v1 results.db, rocprofv3 rocpd


@pytest.mark.parametrize(("reader", "path", "at", "forced"), _database_cuts())
def test_a_cut_database_is_one_line_with_both_sizes(tmp_path: Path, reader: str, path: str,
                                                    at: int, forced: bool):
    page, pages = _pages(ROOT / path)
    cut = tmp_path / "in" / Path(path).name
    cut.parent.mkdir()
    cut.write_bytes((ROOT / path).read_bytes()[:at])
    out = tmp_path / "out"
    out.mkdir()
    args = [str(cut), "-o", str(out / "t.pftrace")] + (["--format", reader] if forced else [])
    if at < 100:
        claim = f"it holds {at:,} bytes, fewer than the 100 of an SQLite header"
    else:
        claim = (f"it holds {at:,} bytes where its header states {pages:,} pages of "
                 f"{page:,} bytes ({page * pages:,} bytes)")
    one_error_line(run(*args), f"{cut}: the SQLite database is cut short: {claim}")
    assert list(out.iterdir()) == []


def test_a_cut_database_inside_a_gzip_names_the_gzip(tmp_path: Path):
    # decompressed into a private copy first: the copy is judged, the input named
    seed = ROOT / "tests/data/seeds/nsys.sqlite"
    page, pages = _pages(seed)
    at = page * pages // 2 + 7
    path = tmp_path / "nsys.sqlite.gz"
    path.write_bytes(gzip.compress(seed.read_bytes()[:at]))
    one_error_line(run(str(path), "-o", str(tmp_path / "t.pftrace")),
                   f"{path}: the SQLite database is cut short: it holds {at:,} bytes")
    assert not (tmp_path / "t.pftrace").exists()


def _with_header(data: bytes, at: int, value: bytes) -> bytes:
    return data[:at] + value + data[at + len(value):]


def test_a_page_size_no_sqlite_writes_is_refused(tmp_path: Path):
    path = tmp_path / "odd.rpd"
    path.write_bytes(_with_header((ROOT / "tests/data/seeds/matmul.rpd").read_bytes(), 16,
                                  (768).to_bytes(2, "big")))
    one_error_line(run(str(path), "--format", "rpd", "-o", str(tmp_path / "t.pftrace")),
                   f"{path}: not an SQLite database: its header states a page size of 768 bytes")


def test_without_a_valid_stated_size_a_partial_last_page_is_the_cut(tmp_path: Path):
    # a header whose version-valid-for number (bytes 92-95) is not its change counter
    # (24-27) states no size (SQLite before 3.7.0): the file's whole pages are its size
    seed = (ROOT / "tests/data/seeds/matmul.rpd").read_bytes()
    legacy = _with_header(seed, 92, (int.from_bytes(seed[24:28], "big") + 1).to_bytes(4, "big"))
    path = tmp_path / "old.rpd"
    path.write_bytes(legacy[:512 * 40 + 100])
    with pytest.raises(InputError, match=r"holds 20,580 bytes, not a whole number of its "
                                         r"512-byte pages"):
        refuse_cut(str(path), "old.rpd")
    path.write_bytes(legacy)
    refuse_cut(str(path), "old.rpd")   # whole: not refused


@pytest.mark.parametrize("log", ["-journal", "-wal"])
def test_a_log_beside_the_database_leaves_its_size_unjudged(tmp_path: Path, log: str):
    # a log may hold the pages the file lacks (a write-ahead log not yet checkpointed)
    path = tmp_path / "t.sqlite"
    path.write_bytes((ROOT / "tests/data/seeds/nsys.sqlite").read_bytes()[:4096])
    with pytest.raises(InputError, match="cut short"):
        refuse_cut(str(path), "t.sqlite")
    Path(str(path) + log).write_bytes(b"")
    refuse_cut(str(path), "t.sqlite")


@pytest.mark.parametrize(("data", "cut"), [(b"SQLite f", True), (b"SQLite format 3\x00", True),
                                           (b"Time,Name\n1,a\n", False), (b"", False)])
def test_a_short_file_is_a_cut_database_only_where_it_begins_as_one(tmp_path: Path,
                                                                    data: bytes, cut: bool):
    # a short CSV given as a database is no database (SQLite says so); an empty file is
    # SQLite's empty database (nothing read)
    path = tmp_path / "t.sqlite"
    path.write_bytes(data)
    if cut:
        with pytest.raises(InputError, match=f"it holds {len(data)} bytes, fewer than the 100"):
            refuse_cut(str(path), "t.sqlite")
    else:
        refuse_cut(str(path), "t.sqlite")


def test_every_bundled_database_is_whole():
    # no false alarm on the real databases of the project (samples and test data)
    found = [p for pattern in ("*.sqlite", "*.db", "*.rpd")
             for folder in ("samples", "tests/data") for p in (ROOT / folder).rglob(pattern)]
    assert len(found) >= 7
    for path in found:
        refuse_cut(str(path), path.name)


# --- compressed inputs -------------------------------------------------------------------

# one small real file per text or JSON reader (the registry's seeds)
TEXTS = {}
for _name, _seeds in registry.SEED_SAMPLES.items():
    for _seed in _seeds:
        if _seed.syntax in ("json", "text", "csv", "svg"):
            TEXTS.setdefault(_name, _seed.path)

# compression: (suffix, compress, what the standard library gets out of a cut stream)
COMPRESSIONS: dict[str, tuple[str, Callable[[bytes], bytes], Callable[[bytes], int]]] = {
    "gzip": (".gz", gzip.compress, lambda cut: len(zlib.decompressobj(wbits=31).decompress(cut))),
    "xz": (".xz", lzma.compress, lambda cut: len(lzma.LZMADecompressor().decompress(cut))),
    "bz2": (".bz2", bz2.compress, lambda cut: len(bz2.BZ2Decompressor().decompress(cut))),
}
# where to cut the compressed bytes: in its header (no content yet), in the middle, and
# 4 bytes short of its end (the trailer: a gzip's check and size, an xz's footer)
CUTS = {"header": lambda n: 10, "middle": lambda n: n // 2, "trailer": lambda n: n - 4}


def test_the_text_seeds_are_twelve_readers():
    assert sorted(TEXTS) == sorted([
        "chrome", "megengine", "megengine-meminfo", "megengine-memflow-svg", "migraphx",
        "nsys-stats", "paddle-report", "paddle-summary", "rocprof", "torch-et",
        "torch-memory", "trtexec"])


def _cut_compressed(tmp_path: Path, source: Path, kind: str,
                    where: Callable[[int], int]) -> tuple[Path, int]:
    """``source`` compressed with ``kind`` and cut at ``where(its length)``, in its own
    folder; with the bytes of content the standard library gets out of it."""
    suffix, compress, content = COMPRESSIONS[kind]
    data = compress(source.read_bytes())
    data = data[:where(len(data))]
    path = tmp_path / "in" / (source.name + suffix)
    path.parent.mkdir()
    path.write_bytes(data)
    return path, content(data)


def _refused_at(tmp_path: Path, path: Path, at: int, kind: str, *options: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    one_error_line(run(str(path), "-o", str(out / "t.pftrace"), *options),
                   f"{path}:decompressed byte {at}: the {kind} stream is cut short after "
                   f"{at:,} bytes of its content")
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("cut", sorted(CUTS))
@pytest.mark.parametrize("kind", sorted(COMPRESSIONS))
@pytest.mark.parametrize("reader", sorted(TEXTS))
def test_a_cut_compressed_input_is_one_line_at_its_content_byte(tmp_path: Path, reader: str,
                                                                kind: str, cut: str):
    path, at = _cut_compressed(tmp_path, ROOT / TEXTS[reader], kind, CUTS[cut])
    _refused_at(tmp_path, path, at, kind)


# Inputs whose content passes the 64 KiB head that detection reads, cut past it: the cut is
# met by the reader's own streaming read (lines, JSON chunks, protobuf, a database copy).
LARGE = {"chrome": "samples/torch/cnn_step5.pt.trace.json",
         "megengine": "samples/megengine/convnet_lar_embed_profile.json",
         "migraphx": "samples/migraphx/synthetic_resnet_perf_rocm7.2.txt",
         "rocprof": "samples/rocprof/jimw567__rocprof-unified-viewer__decode_hip_api_trace.csv",
         "perfetto": "samples/perfetto/rocprofv3_hip_taylor.pftrace",
         "nsys": "samples/nsys/mock_rtx3080_nsys2026.1.sqlite"}


@pytest.mark.parametrize("kind", ["gzip", "xz"])
@pytest.mark.parametrize("reader", sorted(LARGE))
def test_a_cut_past_the_head_is_the_same_line_from_the_reader(tmp_path: Path, reader: str,
                                                              kind: str):
    path, at = _cut_compressed(tmp_path, ROOT / LARGE[reader], kind, lambda n: n * 9 // 10)
    assert 64 << 10 < at < (ROOT / LARGE[reader]).stat().st_size   # past the head, not whole
    _refused_at(tmp_path, path, at, kind, "--format", reader)


@pytest.mark.parametrize("command", [["info"], ["summary"], ["check"], ["split", "-o"],
                                     ["convert", "--piece-by-piece", "-o"]])
def test_every_command_says_the_same_line(tmp_path: Path, command: list[str]):
    path, at = _cut_compressed(tmp_path, ROOT / LARGE["chrome"], "gzip", lambda n: n * 9 // 10)
    out = tmp_path / "out"
    out.mkdir()
    where = [str(out / ("pieces" if command[0] == "split" else "t.pftrace"))
             ] if command[-1] == "-o" else []
    one_error_line(run(command[0], str(path), *command[1:], *where),
                   f"{path}:decompressed byte {at}: the gzip stream is cut short")
    # (split makes its folder before it reads, and leaves it empty)
    assert [p for p in out.rglob("*") if not p.is_dir()] == []


def test_a_cut_stream_on_standard_input_is_the_same_line(tmp_path: Path):
    from click.testing import CliRunner

    from traceconv.cli import app

    data = gzip.compress((ROOT / TEXTS["chrome"]).read_bytes())[:-4]
    at = len(zlib.decompressobj(wbits=31).decompress(data))
    result = CliRunner().invoke(app, ["-", "--format", "chrome", "-o",
                                      str(tmp_path / "t.pftrace")], input=data)
    one_error_line(result, f"<stdin>:decompressed byte {at}: the gzip stream is cut short")
    assert not (tmp_path / "t.pftrace").exists()
