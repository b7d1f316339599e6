"""Fuzz inputs: the seeds (the project's own files, shrunk) and the mutant numbered ``index``.

Seeds are the project's own inputs (``samples/``, ``tests/data/``), recognised by the
registry and shrunk to a few dozen events so that a mutant runs in a millisecond or two: every
list and mapping is cut to its first ``SMALL`` items, or ``LARGE`` when the small cut no longer
reads (a trace whose cross references fall apart is a poor seed). The two checkers
(``check:perfetto``, ``check:chrome``) get mutants of files traceconv wrote.

A mutant depends only on ``(campaign seed, target, index)``, so any input of a campaign can be
made again from its number, in any process, whatever ran before it.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import lzma
import pickle
import random
from collections import Counter, defaultdict
from pathlib import Path

from . import hostile  # noqa: F401 - adds the mutators of issue 23's classes
from .families import family_mutators
from .mutators import MUTATORS, mutate, parse_wire, write_wire

MUTATORS.setdefault("sqlite", list(MUTATORS["bytes"]))   # (and the families, when on)
# A campaign's switch (set before its workers fork): the hostile families of the matrix
# (issue 33) among the mutators, and each reader's registry seeds in its pool
FAMILIES_ON = False

ROOT = Path(__file__).resolve().parents[2]
SEED_DIRS = (ROOT / "samples", ROOT / "tests" / "data")
SEED_SAMPLES_DIR = ROOT / "tests" / "data" / "seeds"
# the syntax of each reader's seed in the registry (SEED_SAMPLES) is how its input is built,
# for the mutators; a CSV is edited as text; a reader with no seed is fuzzed with byte edits
MUTATOR_KINDS = {"csv": "text"}


def _kind(name: str) -> str:
    from traceconv import registry

    seeds = registry.seed_samples(name)
    syntax = seeds[0].syntax if seeds else "bytes"
    return MUTATOR_KINDS.get(syntax, syntax)


def registry_targets() -> dict[str, str]:
    """target -> kind for every reader and every checker the registry lists (a checker
    ``check:NAME`` gets mutants of files traceconv wrote in that format)."""
    from traceconv import registry

    targets = {}
    for info in registry.all_formats():
        if info.reads:
            targets[info.name] = _kind(info.name)
        if info.checks:
            targets[f"check:{info.name}"] = _kind(info.name)
    return targets


# commands that read an input their own way, past the readers: split (with the overview it
# writes) streams Chrome JSON through a decoder of its own
COMMAND_TARGETS = {"split:chrome": "json"}
KINDS = registry_targets() | COMMAND_TARGETS
# the file name a mutant gets: some readers look at it (StaticMemoryInfo.json, ...)
FILE_NAMES = {"megengine-meminfo": "StaticMemoryInfo.json",
              "megengine-memflow-svg": "memory_flow.svg", "paddle-pb": "t.paddle_trace.pb",
              "paddle-profile": "t.profile", "torch-memory": "t.raw.json",
              "torch-snapshot": "t.pickle",
              "check:perfetto": "t.pftrace", "split:chrome": "t.json"}
SMALL, LARGE = 24, 150    # items kept per list or mapping (JSON) / repeated field (protobuf)
TEXT_BYTES = (8 << 10, 24 << 10)   # bytes kept per text seed, small then large
SEED_BYTES = 64 << 10     # a small cut above this keeps fewer items still, while it reads
WHOLE_SEED_BYTES = 400 << 10   # a file no cut of which reads is a seed whole up to this size


def file_name(target: str) -> str:
    """The name a mutant of ``target`` is written under: as its registry seed is named."""
    from traceconv import registry

    if target in FILE_NAMES:
        return FILE_NAMES[target]
    seeds = [] if ":" in target else registry.seed_samples(target)   # (a reader: no colon)
    if seeds:
        return Path(seeds[0].path).name
    return "t.json" if KINDS[target] == "json" else "t.txt"


def mutant(seeds: dict[str, list[bytes]], target: str, campaign_seed: int,
           index: int) -> tuple[str, bytes]:
    """Mutant number ``index`` of ``target``: ``(mutator name, bytes)``.

    >>> pool = {"migraphx": [b"a 1\\nb 2\\n"]}
    >>> mutant(pool, "migraphx", 0, 3) == mutant(pool, "migraphx", 0, 3)
    True
    """
    rng = random.Random(f"{campaign_seed}:{target}:{index}")
    pool = seeds[target]
    kind = KINDS[target]
    return mutate(kind, rng.choice(pool), rng, pool, family_mutators(kind) if FAMILIES_ON else ())


# -- shrinking ----------------------------------------------------------------------------

def _shrink(kind: str, data: bytes, keep: int, text_bytes: int) -> bytes:
    if kind == "json":
        try:
            return json.dumps(_cap_lists(json.loads(data), keep)).encode()
        except ValueError:
            return data[:text_bytes]
    if kind == "protobuf":
        try:
            return write_wire(_cap(parse_wire(data), keep))
        except ValueError:
            return data
    if kind == "pickle":
        from traceconv.formats.torch_snapshot.unpickle import PlainUnpickler

        return pickle.dumps(_cap_lists(PlainUnpickler(io.BytesIO(data)).load(), keep),
                            protocol=4)
    if len(data) > text_bytes:
        return data[:data.rfind(b"\n", 0, text_bytes) + 1] or data[:text_bytes]
    return data


def _cap_lists(value, keep: int):  # type: ignore[no-untyped-def]
    """Every list or mapping (events, oprs, memory records) cut to its first ``keep`` items."""
    if isinstance(value, list):
        return [_cap_lists(v, keep) for v in value[:keep]]
    if isinstance(value, dict):
        return {k: _cap_lists(v, keep) for k, v in list(value.items())[:keep]}
    return value


def _cap(fields: list, keep: int) -> list:
    seen: Counter = Counter()
    kept = []
    for number, wire, value in fields:
        seen[number] += 1
        if seen[number] <= keep:
            kept.append((number, wire, _cap(value, keep) if isinstance(value, list) else value))
    return kept


def _reads(target: str, data: bytes, folder: Path) -> bool:
    import traceconv

    path = folder / file_name(target)
    path.write_bytes(data)
    try:
        traceconv.load(path, format=target)
    except Exception:  # noqa: BLE001 - any failure: the cut broke the seed
        return False
    return True


def _smallest_readable(target: str, raw: bytes, folder: Path) -> bytes | None:
    """The seed cut small while it still reads; the whole file where no cut reads (a
    database, a length-prefixed record) and it is small enough; else None (no seed)."""
    small = _shrink(KINDS[target], raw, SMALL, TEXT_BYTES[0])
    if not _reads(target, small, folder):
        large = _shrink(KINDS[target], raw, LARGE, TEXT_BYTES[1])
        if _reads(target, large, folder):
            return large
        return raw if len(raw) <= WHOLE_SEED_BYTES and _reads(target, raw, folder) else None
    keep = SMALL
    while len(small) > SEED_BYTES and keep > 2:   # deep nesting: lists of lists of ...
        keep //= 2
        smaller = _shrink(KINDS[target], raw, keep, TEXT_BYTES[0])
        if not _reads(target, smaller, folder):
            break
        small = smaller
    return small


def _written_pftraces(json_seeds: list[bytes], folder: Path) -> list[bytes]:
    """Perfetto files traceconv writes from a few Chrome seeds (the checker's inputs)."""
    import traceconv
    from traceconv.formats import perfetto

    out = []
    for i, data in enumerate(json_seeds[:6]):
        path = folder / f"seed{i}.json"
        path.write_bytes(data)
        try:
            buffer = io.BytesIO()
            perfetto.write(traceconv.load(path, format="chrome"), buffer)
            out.append(buffer.getvalue())
        except Exception:  # noqa: BLE001 - a seed that does not convert is not a seed
            continue
    return out


def collect_seeds(folder: Path) -> dict[str, list[bytes]]:
    """target -> shrunk, distinct seed contents (``folder``: scratch space)."""
    from traceconv import registry
    from traceconv.io import Source

    seeds: dict[str, dict[str, bytes]] = defaultdict(dict)
    for directory in SEED_DIRS:
        for path in sorted(directory.rglob("*")):
            # (.input: a fuzz finding kept as a test, not a seed)
            if not path.is_file() or path.suffix in (".md", ".py", ".input"):
                continue
            if SEED_SAMPLES_DIR in path.parents:   # the registry's: with FAMILIES_ON, below
                continue
            try:
                name = registry.detect(Source(path)).name
            except Exception:  # noqa: BLE001 - not an input of any reader
                continue
            if name not in KINDS:
                continue
            raw = path.read_bytes()
            if raw[:2] == b"\x1f\x8b":
                raw = gzip.decompress(raw)
            elif raw[:6] == b"\xfd7zXZ\x00":
                raw = lzma.decompress(raw)
            data = _smallest_readable(name, raw, folder)
            if data is not None:
                seeds[name][hashlib.sha1(data).hexdigest()] = data
    for name in KINDS if FAMILIES_ON else ():   # each reader's registry seeds, whole
        for sample in [] if ":" in name else registry.seed_samples(name):
            data = (ROOT / sample.path).read_bytes()
            seeds[name][hashlib.sha1(data).hexdigest()] = data
    seeds["check:chrome"] = dict(seeds["chrome"])
    seeds["split:chrome"] = dict(seeds["chrome"])
    pftraces = _written_pftraces(list(seeds["chrome"].values()), folder)
    seeds["check:perfetto"] = {hashlib.sha1(d).hexdigest(): d for d in pftraces}
    return {target: list(by_hash.values()) for target, by_hash in seeds.items() if by_hash}
