"""The static profile (and ``graph.json``) decoded as records reads what the schema reads.

The reference is the schema path the reader had: the document parsed by orjson and
validated by :class:`StaticProfile` (a bare ``graph_exec``: :class:`GraphExec`), its first
error named by its JSON path (a syntax error by its line). Generated documents are valid
ones with a hostile value put at a random place: texts where numbers go, ``"inf"``, floats
where ints go, ints past int64 or 2^64, a missing or an unknown key, JSON that orjson
refuses in a key no record has.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from unittest.mock import patch

import msgspec
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from traced_peak import traced_peak

import traceconv
from traceconv.errors import InputError, json_path
from traceconv.formats.megengine import static_profile
from traceconv.formats.megengine.document import decode_records
from traceconv.formats.megengine.schema import (
    GraphExec,
    GraphExecRecords,
    StaticProfile,
    StaticProfileRecords,
)
from traceconv.io import Source

DEVICE = 'CompNode("gpu0:0")'
HOSTILE = ["inf", "-INF", "nan", "1.5", "7", "", 1.5, 3.0, -0.0, 0, -1, True, None,
           (1 << 63) - 1, 1 << 63, 1 << 64, 1 << 70, -(1 << 63), -(1 << 63) - 1, 1e300,
           [], [1, "a"], {}, {"k": 1 << 65}]
# tokens orjson refuses (or reads as a float) in a key no record has
RAW_TOKENS = ["1e400", '"\\ud800"', "123456789012345678901234567890", "[1, 2]"]


def _timing(draw: st.DrawFn) -> dict:
    start = draw(st.floats(0, 10, allow_nan=False))
    return {"start": start, "kern": draw(st.sampled_from([-1, start])),
            "end": start + draw(st.floats(0, 1, allow_nan=False))}


@st.composite
def profiles(draw: st.DrawFn) -> dict:
    """A small valid static profile: oprs in a chain over vars, chunks, timings."""
    count = draw(st.integers(1, 4))
    oprs = [str(10 + 2 * i) for i in range(count)]
    var = {}
    for i in range(count + 1):
        var_id = str(11 + 2 * i - 2) if i else "1"
        var[var_id] = {
            "node_type": "var", "id": var_id, "name": f"v{var_id}",
            "flag": draw(st.sampled_from([[], ["PERSISTENT_DEVICE_VALUE"]])),
            "comp_node": DEVICE, "dev_ptr": draw(st.sampled_from([None, 4096 * (i + 1)])),
            "prev_dev_ptr": draw(st.sampled_from([0, 8192 * (i + 1)])),
            "mem_readonly_fwd_src": None, "force_update_src": None,
            "mem_plan": draw(st.sampled_from([None, {
                "mem_chunk_id": f"chk{var_id}", "offset_byte": 0,
                "layout": {"shape": [2, i + 1], "stride": [i + 1, 1], "dtype": "Float32"}}])),
            "static_infer_tags": {"SHAPE": {
                "node_type": "static_infer_tag", "infer_type": "CONST",
                "inferred_result": draw(st.sampled_from([None, [2, i + 1], "x"])),
                "deps": [{"dep_type": "SHAPE", "var": "1"}]}}}
    var_ids = list(var)
    operator = {opr: {"node_type": "operator", "id": opr, "name": f"op{opr}", "type": "Conv",
                      "input": [var_ids[i]], "output": [var_ids[i + 1]],
                      "extra": {"priority": i, "gopt::cvprop": False},
                      "waiting_spec": draw(st.sampled_from([None, {}]))}
                for i, opr in enumerate(oprs)}
    mem_chunk = {f"chk{v}": {"node_type": "mem_chunk", "id": f"chk{v}",
                             "size": draw(st.integers(0, 4096)), "owner_var": v,
                             "dev_ptr": var[v]["dev_ptr"]} for v in var_ids[1:]}
    return {"graph_exec": {"comp_seq": oprs, "operator": operator, "var": var,
                           "mem_chunk": mem_chunk},
            "profiler": {
                "device": {o: {DEVICE: _timing(draw)} for o in oprs},
                "host": {o: {"main": _timing(draw)} for o in oprs},
                "opr_footprint": {o: {"computation": draw(st.sampled_from([None, 1000])),
                                      "memory": 64, "in_shapes": [[2, 1]],
                                      "out_shapes": [[2, 2]],
                                      "param": draw(st.sampled_from([{"mode": 1}, [0, 1]])),
                                      "in_layouts": None} for o in oprs},
                "opr_internal_pf": {}}}


def _places(value: object, where: tuple = ()) -> list[tuple]:
    """Every place in ``value`` (a path of keys and indices), the root excepted."""
    places = []
    items = (value.items() if isinstance(value, dict)
             else enumerate(value) if isinstance(value, list) else ())
    for key, item in items:
        places.append((*where, key))
        places.extend(_places(item, (*where, key)))
    return places


def _container(doc: object, place: tuple) -> object:
    for key in place[:-1]:
        doc = doc[key]   # type: ignore[index]
    return doc


@st.composite
def documents(draw: st.DrawFn) -> tuple[bytes, bool]:
    """(JSON text, whether it is left valid) of a profile or a bare ``graph_exec``."""
    doc: dict = draw(profiles())
    if draw(st.integers(0, 3)) == 0:
        doc = doc["graph_exec"]
    change = draw(st.sampled_from(["none", "value", "value", "value", "delete", "unknown",
                                   "raw"]))
    place = draw(st.sampled_from(_places(doc)))
    parent = _container(doc, place)
    if change == "value":
        parent[place[-1]] = draw(st.sampled_from(HOSTILE))
    elif change == "delete" and isinstance(parent, dict):
        del parent[place[-1]]
    elif change in ("unknown", "raw") and isinstance(parent, dict):
        parent["more"] = "RAW" if change == "raw" else 1
    text = json.dumps(doc)
    if change == "raw":
        text = text.replace('"RAW"', draw(st.sampled_from(RAW_TOKENS)))
    return text.encode(), change == "none"


def plain(value: object) -> object:
    """Records or models as the fields the records have; floats by their text (-0.0, nan)."""
    if isinstance(value, BaseModel):
        return {name: plain(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, msgspec.Struct):
        return {name: plain(getattr(value, name)) for name in value.__struct_fields__}
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return (type(value).__name__, repr(value))


def schema_read(data: bytes, fields: Callable[[object], object] = plain) -> tuple:
    """("error", where) or ("read", bare graph_exec?, fields), the orjson + pydantic way."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:   # (the input layer names line and column)
        return ("error", f"{exc.lineno}:{exc.colno}")
    graph_only = isinstance(value, dict) and "comp_seq" in value and "graph_exec" not in value
    try:
        if graph_only:
            doc = fields(StaticProfile.model_validate({"profiler": {}, "graph_exec": value}))
        else:
            doc = fields(StaticProfile.model_validate(value))
    except ValidationError as exc:
        loc = exc.errors()[0]["loc"]
        return ("error", json_path(loc[1:] if graph_only else loc))
    return ("read", graph_only, doc)


def records_read(data: bytes, folder: Path,
                 fields: Callable[[object], object] = plain) -> tuple:
    path = folder / "profile.json"
    path.write_bytes(data)
    try:
        doc, graph_only = static_profile.load_profile(Source(path))
    except InputError as exc:
        return ("error", exc.location)
    return ("read", graph_only, fields(doc))


@pytest.mark.slow
@settings(max_examples=400)
@given(documents())
def test_records_read_what_the_schema_reads(tmp_path_factory, drawn):
    data, valid = drawn
    assert records_read(data, tmp_path_factory.mktemp("doc")) == schema_read(data)
    if valid:   # a valid document is decoded as records (not read through the schema)
        assert (decode_records(data, StaticProfileRecords, StaticProfile)
                or decode_records(data, GraphExecRecords, GraphExec)) is not None


@pytest.mark.parametrize("token, where", [
    ("1e400", 1), ('"\\ud800"', 1), ("123456789012345678901234567890", None)])
def test_json_in_a_key_no_record_has_is_read_by_orjson(tmp_path, token, where):
    # the records skip what an unknown key holds; orjson refuses these, or reads a float
    doc = json.dumps({"comp_seq": [], "operator": {}, "more": "RAW"}).replace('"RAW"', token)
    got = records_read(doc.encode(), tmp_path)
    assert got == schema_read(doc.encode())
    assert got[0] == ("error" if where else "read")


def _nothing(doc: object) -> None:
    return None


@pytest.mark.parametrize("depth", [200, 600, 990, 1100])
def test_deep_untyped_values_are_read_as_the_schema_reads_them(tmp_path, depth):
    # an operator's extra nested ``depth`` lists deep: too deep for the decoder (or the
    # walks over untyped values) is the schema path's to read or refuse
    doc = {"comp_seq": ["1"], "operator": {"1": {"id": "1", "name": "a", "type": "t",
                                                 "extra": {"k": "DEEP"}}}}
    text = json.dumps(doc).replace('"DEEP"', "[" * depth + "]" * depth).encode()
    got = records_read(text, tmp_path, fields=_nothing)   # (plain would recurse as deep)
    assert got == schema_read(text, fields=_nothing)
    assert got[0] == ("read" if depth < 1000 else "error")


def _real_profiles(shared_samples: Path, data: Path) -> list[Path]:
    return sorted([*shared_samples.glob("megengine/*profile*.json"),
                   *shared_samples.glob("megengine/*/graph.json"),
                   *data.glob("megengine/*profile*.json.gz"), *data.glob("seeds/megengine*"),
                   *data.glob("hostile/megengine_*.json")])


@pytest.mark.slow
def test_real_files_convert_to_the_same_bytes_as_the_schema_path(shared_samples, data,
                                                                  tmp_path):
    # every real profile and graph.json: read as records, and with the records refusing
    # every document (what the reader did before: orjson, then the pydantic models)
    paths = _real_profiles(shared_samples, data)
    assert len(paths) >= 12
    for path in paths:
        source = Source(path)
        assert (decode_records(source.read_bytes(), StaticProfileRecords, StaticProfile)
                or decode_records(source.read_bytes(), GraphExecRecords, GraphExec)
                or "shape_inf" in path.name), path   # ("inf" texts: the schema's spelling)
        outputs = []
        for refuse in (False, True):
            out = tmp_path / f"{path.name}.{refuse}.pftrace"
            with patch.object(static_profile, "decode_records",
                              side_effect=(lambda *_: None) if refuse
                              else static_profile.decode_records):
                try:
                    traceconv.save(traceconv.load(path, format="megengine"), out)
                    outputs.append(out.read_bytes())
                except InputError as exc:
                    outputs.append(str(exc).encode())
        assert outputs[0] == outputs[1], path


def _grown(profile: dict, copies: int) -> dict:
    """``profile`` with its graph and timings repeated ``copies`` times under new ids."""
    exe, prof = profile["graph_exec"], profile["profiler"]
    step = 1 + max(int(i) for i in [*exe["operator"], *exe["var"]])

    def renamed(text: str | None, copy: int) -> str | None:
        if text is None or not text.removeprefix("chk").isdecimal():
            return text
        prefix = "chk" if text.startswith("chk") else ""
        return prefix + str(int(text.removeprefix("chk")) + copy * step)

    grown: dict = {"graph_exec": {"comp_seq": [], "operator": {}, "var": {}, "mem_chunk": {}},
                   "profiler": {"device": {}, "host": {}, "opr_footprint": {},
                                "opr_internal_pf": {}}}
    for copy in range(copies):
        out = grown["graph_exec"]
        out["comp_seq"] += [renamed(i, copy) for i in exe["comp_seq"]]
        for key, opr in exe["operator"].items():
            out["operator"][renamed(key, copy)] = {
                **opr, "id": renamed(opr["id"], copy),
                "input": [renamed(v, copy) for v in opr["input"]],
                "output": [renamed(v, copy) for v in opr["output"]]}
        for key, var in exe["var"].items():
            plan = var["mem_plan"] and {**var["mem_plan"], "mem_chunk_id": renamed(
                var["mem_plan"]["mem_chunk_id"], copy)}
            out["var"][renamed(key, copy)] = {**var, "id": renamed(var["id"], copy),
                                              "mem_plan": plan}
        for key, chunk in exe["mem_chunk"].items():
            out["mem_chunk"][renamed(key, copy)] = {
                **chunk, "id": renamed(chunk["id"], copy),
                "owner_var": renamed(chunk["owner_var"], copy)}
        for part in ("device", "host", "opr_footprint"):
            grown["profiler"][part].update(
                {renamed(key, copy): value for key, value in prof[part].items()})
    return grown


@pytest.mark.slow
def test_a_grown_profile_decodes_in_bounded_memory(data, tmp_path):
    # 20 copies of the resnet50ish profile (18 MB, 16,000 vars): the schema path held the
    # parsed JSON and a model per record, 19 bytes per input byte at its peak; the records
    # 4.8 (the input bytes included)
    path = tmp_path / "grown.json"
    profile = json.loads(Source(data / "megengine/resnet50ish_lar_embed_profile.json.gz")
                         .read_bytes())
    path.write_bytes(orjson.dumps(_grown(profile, 20)))
    del profile
    size = path.stat().st_size
    (doc, graph_only), peak = traced_peak(lambda: static_profile.load_profile(Source(path)))
    assert isinstance(doc, StaticProfileRecords) and not graph_only
    assert len(doc.graph_exec.var) == 20 * 799
    assert peak < 6 * size, peak / size
