"""The streaming snapshot decoder against the standard unpickler (the independent reference):
the same documents and the same model on the real sample in every protocol it can be written
in, on random plain data, and on hostile variants (clear located errors, never a hang)."""

from __future__ import annotations

import gzip
import io
import pickle
import pickletools
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import traceconv
from traceconv.errors import InputError
from traceconv.formats.torch_snapshot.decoder import Decoder, PickleError, Restart
from traceconv.formats.torch_snapshot.to_trace import SnapshotBuilder
from traceconv.formats.torch_snapshot.unpickle import PlainUnpickler, RefusedObject
from traceconv.formats.torch_snapshot.window import Window

SNAPSHOT = "samples/torch/resnet18_train_snapshot.pickle.gz"


@pytest.fixture(scope="module")
def raw() -> bytes:
    """The real snapshot's bytes, as torch wrote them (protocol 4, framed)."""
    with gzip.open(SNAPSHOT) as f:
        return f.read()


@pytest.fixture(scope="module")
def reference(raw) -> dict:
    return pickle.loads(raw)


def decode(data: bytes) -> tuple[object, Decoder]:
    decoder = Decoder(Window(io.BytesIO(data), chunk=1 << 16))
    return decoder.load(), decoder


def model(trace: traceconv.Trace) -> tuple:
    """Everything a snapshot puts in the model, as plain values."""
    def blocks(items):
        return [(b.address, b.size, b.alloc_ns, b.free_ns, b.device, b.name, b.category,
                 sorted(b.args.items())) for b in items]
    return (blocks(trace.memory), blocks(trace.reservations),
            [(c.track, c.ts, c.value) for c in trace.iter_counter_samples()],
            [(i.track, i.ts, i.name, i.args) for i in trace.iter_instants()],
            [(s.track, s.start, s.dur, s.name) for s in trace.iter_slices()],
            [t.name for t in trace.tracks],
            sorted((d.code, d.count) for d in trace.diagnostics))


def test_real_sample_decodes_to_the_same_document(raw, reference):
    document, decoder = decode(raw)
    assert document == reference
    entries = reference["device_traces"][0]
    stacks = {tuple((f["name"], f["filename"], f["line"]) for f in e["frames"])
              for e in entries}
    assert len(stacks) == 219   # distinct stacks among 3,983 entries, counted here
    # each frames list is either shared or (first time) decoded alone, never skipped
    frames_lists = len(entries) + sum(len(s["blocks"]) + 1 for s in reference["segments"])
    assert decoder.stats.shared_hits + decoder.stats.slow_lists == frames_lists
    assert decoder.stats.shared_hits > 0.9 * frames_lists


@pytest.mark.slow
@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_every_protocol_gives_the_same_model(tmp_path, reference, protocol):
    path = tmp_path / f"snapshot_p{protocol}.pickle"
    path.write_bytes(pickle.dumps(reference, protocol=protocol))
    try:
        document, _ = decode(path.read_bytes())
        assert document == reference
    except Restart:   # explicit memo indices make every stack's bytes unique: nothing to
        assert protocol < 4   # share, so the standard unpickler reads the file
    plain = SnapshotBuilder(reference).build()
    streamed = traceconv.load(path)
    assert model(streamed) == model(plain)
    assert len(streamed.memory) == 1524 and len(streamed.reservations) == 45


@pytest.mark.slow
def test_repeated_history_shares_stacks(reference):
    """A long recording repeats its stacks: each is decoded once, then shared."""
    entries = reference["device_traces"][0]
    doc = {"segments": [], "device_traces": [
        [{**e, "time_us": e["time_us"] + copy} for copy in range(3) for e in entries]]}
    document, decoder = decode(pickle.dumps(doc, protocol=5))
    assert document == doc
    assert decoder.stats.decoded_stacks <= 3 * 219   # independent of the copies' count
    first = document["device_traces"][0]
    assert first[0]["frames"] is first[len(entries)]["frames"]


def test_names_that_look_like_pickle_opcodes(reference):
    """Frame names with the bytes the list search keys on: still exact (verified)."""
    tricky = ["aK\x00ue", "bK\x00u}(", "q\x01ua", "}(\x94ue", "x" * 300 + "K\x05ue"]
    doc = {"device_traces": [[{"action": "alloc", "frames": [
        {"name": name, "filename": "m.py", "line": n}, {"name": "f", "filename": "", "line": 7}]}
        for n, name in enumerate(tricky * 3)]]}
    for protocol in (2, 4, 5):
        document, _ = decode(pickle.dumps(doc, protocol=protocol))
        assert document == doc


plain_scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                 | st.text(max_size=20) | st.binary(max_size=10))
plain_data = st.recursive(
    plain_scalars,
    lambda inner: (st.lists(inner, max_size=6) | st.tuples(inner, inner)
                   | st.dictionaries(st.text(max_size=8), inner, max_size=6)
                   | st.frozensets(st.integers(), max_size=4)
                   | st.builds(lambda f: {"frames": f}, st.lists(st.fixed_dictionaries(
                       {"name": st.text(max_size=30), "filename": st.text(max_size=10),
                        "line": st.integers(0, 70000)}), max_size=4))),
    max_leaves=16)


@given(plain_data, st.sampled_from([2, 3, 4, 5]), st.booleans())
def test_random_plain_data_decodes_like_pickle(value, protocol, share):
    """Sets and bytes are globals + REDUCE before protocol 4 (refused by both)."""
    data = pickle.dumps([value, value] if share else value, protocol=protocol)
    try:
        expected = PlainUnpickler(io.BytesIO(data)).load()
    except RefusedObject:
        with pytest.raises(PickleError) as refusal:
            decode(data)
        assert refusal.value.refused
        return
    got = decode(data)[0]
    assert got == expected and type(got) is type(expected)


def test_containers_of_protocols_4_and_5():
    value = {"s": {1, 2}, "f": frozenset({3}), "t": (1,), "u": (), "x": b"\x00" * 300}
    assert decode(pickle.dumps(value, protocol=4))[0] == value
    value["b"] = bytearray(b"xy")   # BYTEARRAY8, protocol 5 only
    got = decode(pickle.dumps(value, protocol=5))[0]
    assert got == value and type(got["b"]) is bytearray


def _frames_list_index(data: bytes, which: int) -> int:
    """Memo index of the ``which``-th list stored under a ``frames`` key (pickletools)."""
    memo: list[object] = []
    found, pushed, before = [], None, None
    for op, arg, _ in pickletools.genops(data):
        if op.name == "MEMOIZE":
            if pushed == "<list>" and before == "frames":
                found.append(len(memo))
            memo.append(pushed)
            continue
        before = pushed
        pushed = (arg if "UNICODE" in op.name else memo[arg] if "GET" in op.name
                  else "<list>" if op.name == "EMPTY_LIST" else None)
    return found[which]


def test_a_list_changed_after_it_was_shared_is_read_exactly(tmp_path):
    """Legal but never written by pickle.dump: appending to a frames list later through
    the memo. The decoder hands the file to the standard unpickler (same result)."""
    frame = {"name": "f", "filename": "a.py", "line": 1}
    doc = {"segments": [], "device_traces": [[
        {"action": "alloc", "addr": a, "size": 8, "time_us": a, "frames": [dict(frame)]}
        for a in range(3)]]}
    data = pickle.dumps(doc, protocol=4)
    index = _frames_list_index(data, 2)
    extra = (b"j" + index.to_bytes(4, "little") + b"}(\x8c\x04name\x8c\x01g\x8c\x08filename"
             b"\x8c\x01b\x8c\x04lineK\x02ua0")
    hacked = data[:-2] + extra + data[-2:]   # before the final SETITEMS, STOP
    expected = pickle.loads(hacked)
    assert len(expected["device_traces"][0][2]["frames"]) == 2
    with pytest.raises(Restart):
        decode(hacked)
    path = tmp_path / "changed.pickle"
    path.write_bytes(hacked)
    assert model(traceconv.load(path)) == model(SnapshotBuilder(expected).build())


def test_text_opcodes_go_to_the_standard_unpickler(tmp_path):
    doc = {"segments": [], "device_traces": [[{"action": "alloc", "addr": 4096, "size": 8,
                                              "time_us": 5, "frames": []}]]}
    path = tmp_path / "p0.pickle"
    path.write_bytes(pickle.dumps(doc, protocol=0))
    with pytest.raises(Restart):
        decode(path.read_bytes())
    (block,) = traceconv.load(path, format="torch-snapshot").memory
    assert (block.address, block.alloc_ns) == (4096, 5000)


def test_every_cut_gives_a_located_error(raw, tmp_path):
    """Truncated anywhere (inside a frame header, a frame, a string, a stack): an error
    naming the byte, never a hang or a partial document."""
    head = raw[:400_000]
    cuts = sorted({1, 2, 5, 10, 11, 12, 13, 100, 65_000, 65_769, 65_770, 65_771,
                   *range(1_274_000, 1_276_000, 97), len(raw) - 1})
    for cut in cuts:
        data = (head if cut < len(head) else raw)[:cut]
        with pytest.raises(PickleError):
            try:
                decode(data)
            except Exception as exc:   # the truncated-frame error is the window's
                if type(exc).__name__ == "TruncatedFrame":
                    raise PickleError(exc.args[0], exc.args[1]) from None
                raise
    path = tmp_path / "cut.pickle"
    path.write_bytes(raw[:1_275_000])
    with pytest.raises(InputError, match=r"cut\.pickle:byte \d+: not a readable pickle"):
        traceconv.load(path, format="torch-snapshot")


def test_wrong_memo_index_names_the_byte(tmp_path):
    shared = "stream 7"
    doc = {"segments": [], "device_traces": [[
        {"action": "alloc", "addr": 1, "a": shared, "b": shared, "frames": []}]]}
    data = pickle.dumps(doc, protocol=4)
    (at,) = [pos for op, _, pos in pickletools.genops(data) if op.name == "BINGET"]
    bad = data[:at + 1] + bytes([200]) + data[at + 2:]   # a memo slot never stored
    path = tmp_path / "memo.pickle"
    path.write_bytes(bad)
    with pytest.raises(InputError) as error:
        traceconv.load(path, format="torch-snapshot")
    assert str(error.value).startswith(f"{path}:byte {at}: not a readable pickle: memo index "
                                       "200 was never stored")


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_refusal_names_the_global_and_its_byte(tmp_path, protocol):
    data = pickle.dumps({"segments": [], "device_traces": [[{"frames": [], "x": print}]]},
                        protocol=protocol)
    path = tmp_path / "evil.pickle"
    path.write_bytes(data)
    with pytest.raises(InputError) as error:
        traceconv.load(path, format="torch-snapshot")
    where = int(re.search(r"byte (\d+): refused to load global builtins\.print",
                          str(error.value)).group(1))
    assert data[where] in b"c\x93"   # GLOBAL / STACK_GLOBAL, by the file's own bytes


def test_mutants_decode_like_the_standard_unpickler_or_fail_located(reference):
    """Byte flips, cuts, deletions and splices of small snapshots in three protocols: the
    decoder gives the standard unpickler's document or a located error (or hands the file
    over), never another exception; where both succeed they agree."""
    import random

    from traceconv.formats.torch_snapshot.window import TruncatedFrame

    small = {"segments": [dict(reference["segments"][0], blocks=[])],
             "device_traces": [reference["device_traces"][0][:6]],
             "allocator_settings": reference["allocator_settings"]}
    seeds = [pickle.dumps(small, protocol=p) for p in (2, 4, 5)]
    rng = random.Random(7)
    agreed = 0
    for _ in range(200):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 3)):
            at, kind = rng.randrange(len(data)), rng.random()
            if kind < 0.5:
                data[at] = rng.randrange(256)
            elif kind < 0.7:
                del data[at:at + rng.randint(1, 20)]
            elif kind < 0.9:
                start = rng.randrange(len(data))
                data[at:at] = data[start:start + rng.randint(1, 200)]
            else:
                del data[at:]
        try:
            got = decode(bytes(data))[0]
        except (PickleError, TruncatedFrame, Restart):
            continue
        try:
            expected = PlainUnpickler(io.BytesIO(bytes(data)), buffers=None).load()
        except (pickle.UnpicklingError, MemoryError, ValueError, EOFError):
            continue   # the standard unpickler is stricter on a few framings / memo sizes
        assert got == expected
        agreed += 1
    assert agreed > 10
