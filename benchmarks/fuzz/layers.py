"""Hostile variants of the real inputs of the newest layers, and the commands that meet them.

A layer is a feature that several readers or commands share, so its variants come from the
bundled files that exercise it and go through the commands that use it:

- ``check``: ``check --json`` on Chrome JSON (the SliceTracker replay);
- ``tensorflow``: the TensorFlow step timeline flavour (``info``, ``summary``, conversion);
- ``other_report``: another tool's report inside a text report (``info``);
- ``pasted``: a CSV or a text report pasted into a page (quoted, fenced, NBSP,
  double-spaced lines) (``info``);
- ``runs``: files of several runs, taken apart (``summary``, ``diff FILE@N``);
- ``nothing``: commands with nothing to show (``critical-path``, ``memory``, ``--json``);
- ``node_links``: op graphs whose node links (parent, owner, alias_of) are hostile
  (``check --model``, ``summary``).

Each variant is one of the seed's own bytes edited by a layer mutator (the layer's structure:
events, process names, report sections, paste marks, run labels, node links) or a generic
one (edge numbers, control characters, mixed line ends, a cut at a line or a byte,
duplicated sections). What a variant is depends only on the seed, the layer, its number and
the campaign (``random.Random`` seeded from them), so any failure can be made again:

>>> first = variants("pasted", 3)
>>> [(s.name, v.label) for s, v in first] == [(s.name, v.label) for s, v in variants("pasted", 3)]
True
"""

from __future__ import annotations

import json
import random
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .families import ROOT, Seed, Variant
from .mutators import HOSTILE_NUMBERS, HOSTILE_VALUES, json_tree, text_lines

Edit = Callable[[bytes, random.Random], tuple[str, bytes]]


@dataclass(frozen=True)
class Layer:
    """A layer's seeds (paths under the repository), its commands (``{}`` stands for the
    input) and its own mutators."""

    seeds: tuple[str, ...]
    syntax: str
    commands: tuple[tuple[str, ...], ...]
    edits: tuple[Edit, ...]


# -- generic edits -----------------------------------------------------------------------------

_LINE = re.compile(rb"(?<=\n)")


def _lines(data: bytes) -> list[bytes]:
    return _LINE.split(data)


def mixed_line_ends(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Each line end drawn from LF, CRLF and CR (an editor's mix)."""
    ends = (b"\n", b"\r\n", b"\r")
    out = [line.rstrip(b"\r\n") + rng.choice(ends) if line.endswith(b"\n") else line
           for line in _lines(data)]
    return "mixed line ends", b"".join(out)


def cut_at_line(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Cut at a line end, or inside the line after it."""
    ends = [m.end() for m in re.finditer(rb"\n", data)] or [len(data)]
    at = rng.choice(ends) + rng.choice((0, 0, 1, 3, 7))
    return f"cut at {min(at, len(data))} of {len(data)}", data[:at]


def duplicated_block(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """A block of lines written twice (a section printed again, a paste doubled)."""
    lines = _lines(data)
    i = rng.randrange(len(lines))
    j = min(len(lines), i + rng.randint(1, max(1, len(lines) // 3)))
    return f"lines {i}-{j} twice", b"".join(lines[:j] + lines[i:j] + lines[j:])


def control_characters(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Control, bidi, NUL and zero-width characters inside 1-4 lines."""
    hostile = [b"\x00", b"\x1b[2J", b"\x07", b"\x08", "\u202e".encode(), "\u200b".encode(),
               "\ufeff".encode(), b"\x0c", b"\x1f", "\u2028".encode(), b"\xff"]
    lines = _lines(data)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(lines))
        at = rng.randrange(len(lines[i]) + 1)
        lines[i] = lines[i][:at] + rng.choice(hostile) + lines[i][at:]
    return "control characters", b"".join(lines)


def line_edits(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Lines deleted, doubled, swapped, cut; hostile numbers and characters in them."""
    return "line edits", text_lines(data, rng, [])


def text_numbers(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """1-6 numbers replaced by NaN, infinity, huge, negative or empty ones."""
    numbers = list(re.finditer(rb"(?<![\w.])\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])", data))
    if not numbers:
        return line_edits(data, rng)
    out = bytearray(data)
    for m in sorted(rng.sample(numbers, min(len(numbers), rng.randint(1, 6))),
                    key=lambda m: -m.start()):
        out[m.start():m.end()] = rng.choice(HOSTILE_NUMBERS + [b"1" + b"0" * 400, b"-5"])
    return "hostile numbers", bytes(out)


GENERIC_TEXT: tuple[Edit, ...] = (mixed_line_ends, cut_at_line, duplicated_block,
                                  control_characters, line_edits, text_numbers)


# -- JSON events (check, tensorflow) -----------------------------------------------------------

def _events(data: bytes) -> tuple[Any, list]:
    doc = json.loads(data)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return doc, events


def _dump(doc: Any) -> bytes:
    text = json.dumps(doc, ensure_ascii=False, allow_nan=True)
    return text.replace("-Infinity", "-1e999").replace("Infinity", "1e999") \
        .replace("NaN", "1e999").encode()


def event_fields(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """1-5 fields of events (ph, ts, dur, pid, tid, id, name, cat, args, s, bp) set to a
    hostile value (wrong type, edge number, empty, nested)."""
    doc, events = _events(data)
    keys = ("ph", "ts", "dur", "pid", "tid", "id", "name", "cat", "args", "s", "bp", "bind_id")
    touched = []
    for _ in range(rng.randint(1, 5)):
        event = rng.choice(events)
        if isinstance(event, dict):
            key = rng.choice(keys)
            event[key] = rng.choice(HOSTILE_VALUES + [-1e-3, 1e18, 2**62, "B", "E", "X"])
            touched.append(key)
    return f"fields {touched}", _dump(doc)


def colliding_ids(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Events of several processes moved onto one pid/tid, or flows of several processes
    given one id."""
    doc, events = _events(data)
    dicts = [e for e in events if isinstance(e, dict)]
    pid, tid = rng.choice([(e.get("pid"), e.get("tid")) for e in dicts] or [(1, 1)])
    how = rng.choice(("pid", "tid", "flow"))
    for e in rng.sample(dicts, max(1, len(dicts) // rng.choice((2, 5, 10)))):
        if how == "pid":
            e["pid"] = pid
        elif how == "tid":
            e["pid"], e["tid"] = pid, tid
        elif e.get("ph") in ("s", "t", "f"):
            e["id"] = 1
    return f"{how} ids collide", _dump(doc)


def unbalanced_slices(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """X events turned into B/E pairs with one side dropped, swapped or misnamed; a deep
    stack of B events on one thread."""
    doc, events = _events(data)
    how = rng.choice(("halves", "deep", "swapped"))
    if how == "deep":
        depth = rng.choice((513, 2000, 20000))
        events.extend({"ph": "B", "ts": k, "pid": 9, "tid": 9, "name": f"d{k % 7}"}
                      for k in range(depth))
        events.extend({"ph": "E", "ts": depth + k, "pid": 9, "tid": 9} for k in range(depth // 2))
        return f"B stack {depth} deep", _dump(doc)
    for e in rng.sample(events, min(len(events), 30)):
        if isinstance(e, dict) and e.get("ph") == "X" and isinstance(e.get("dur"), int | float):
            e["ph"] = "B"
            end = dict(e, ph="E", ts=e.get("ts", 0) + e["dur"])
            end.pop("dur", None)
            if how == "swapped":
                e["ph"], end["ph"] = "E", "B"
            if rng.random() < 0.7:
                events.append(end)
    return f"B/E {how}", _dump(doc)


def many_tiny_events(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Tens of thousands of tiny nested events on a few threads (the scaling check does the
    million)."""
    doc, events = _events(data)
    n = rng.choice((20000, 50000))
    events.extend({"ph": "X", "ts": k, "dur": 1 + k % 3, "pid": 1, "tid": k % 4, "name": "t"}
                  for k in range(n))
    return f"{n} tiny events", _dump(doc)


def json_tree_edit(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """The fuzz campaign's structural JSON edit."""
    return "json tree edit", json_tree(data, rng, [])


# -- TensorFlow process names -----------------------------------------------------------------

_TF_NAMES = ("/device:GPU:0/stream:all Compute", "/device:GPU:0/memcpy Compute",
             "/device:GPU:0/stream:7 Compute", "/gpu:0/stream:all Compute",
             "/job:w/replica:0/task:0/device:GPU:0 Compute", "/gpu:99999999999999999999 Compute",
             "/device:GPU:0/stream:\u202e Compute", "/device:GPU:0/stream:all Tensors", "",
             " Compute", "/device:GPU:0/stream:all Compute\x00")


def tensorflow_processes(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Process names of the timeline renamed to other TF devices and tracer parts, given
    twice to one pid, or to pids of another type."""
    doc, events = _events(data)
    metas = [e for e in events if isinstance(e, dict) and e.get("name") == "process_name"]
    how = rng.choice(("rename", "twice", "pid type", "no streams"))
    for e in rng.sample(metas, min(len(metas), rng.randint(1, 4))):
        if how == "rename":
            e["args"] = {"name": rng.choice(_TF_NAMES)}
        elif how == "twice":
            events.append(dict(e, args={"name": rng.choice(_TF_NAMES)}))
        elif how == "pid type":
            pid = e.get("pid")
            new = rng.choice((str(pid), float(pid or 0) + 0.5, -1, [pid], None, True))
            for other in events:
                if isinstance(other, dict) and other.get("pid") == pid:
                    other["pid"] = new
    if how == "no streams":
        for e in metas:
            name = e.get("args", {}).get("name", "")
            if isinstance(name, str) and "/stream:" in name and "stream:all" not in name:
                e["args"] = {"name": name.replace("/stream:", "/other:")}
    return f"TF processes: {how}", _dump(doc)


# -- reports inside text files --------------------------------------------------------------------

FOREIGN = ("nsys_stats/cuda_api_sum.csv", "nsys_stats/nanomoe_stats_console_nsys2026.1.txt",
           "migraphx/perf_simple_graph_rocm4.txt", "paddle/summary_small_2.6.2.txt")


def foreign_report(name: str) -> bytes:
    """The bytes of :data:`FOREIGN` report ``name`` (under tests/data or samples)."""
    for folder in ("tests/data", "samples"):
        path = ROOT / folder / name
        if path.exists():
            return path.read_bytes()
    return b""


def _foreign(rng: random.Random) -> bytes:
    return foreign_report(rng.choice(FOREIGN))


def other_report_inside(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Another tool's report (or a cut, doubled or CR-ended piece of it) put at a line of
    the seed: before, inside or after the seed's own report."""
    lines = _lines(data)
    foreign = _foreign(rng)
    how = rng.choice(("whole", "cut", "twice", "cr", "head only"))
    if how == "cut":
        foreign = foreign[:rng.randrange(len(foreign) + 1)]
    elif how == "twice":
        foreign = foreign + foreign
    elif how == "cr":
        foreign = foreign.replace(b"\n", b"\r")
    elif how == "head only":
        foreign = b"".join(_lines(foreign)[:2])
    at = rng.randrange(len(lines) + 1)
    if foreign and not foreign.endswith((b"\n", b"\r")):
        foreign += b"\n"
    return f"other report ({how}) at line {at}", b"".join(lines[:at] + [foreign] + lines[at:])


# -- pastes ---------------------------------------------------------------------------------------

def pasted(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """The seed as a page shows it: Markdown quote, fence, NBSP for spaces, lines double
    spaced, in combination, on part of the lines or all."""
    marks = rng.sample(("quote", "fence", "nbsp", "double", "partial quote"), rng.randint(1, 3))
    lines = [line.rstrip(b"\r\n") for line in _lines(data)]
    if lines and lines[-1] == b"":
        lines.pop()
    if "nbsp" in marks:
        lines = [line.replace(b" ", "\u00a0".encode(), rng.randint(1, 3)) for line in lines]
    if "fence" in marks:
        lines = [rng.choice((b"```", b"```csv", b"<pre>"))] + lines + [b"```"]
    if "quote" in marks:
        lines = [b"> " + line for line in lines]
    if "partial quote" in marks:
        lines = [b"> " + line if rng.random() < 0.5 else line for line in lines]
    sep = b"\n\n" if "double" in marks else b"\n"
    return f"pasted: {marks}", sep.join(lines) + b"\n"


# -- runs -----------------------------------------------------------------------------------------

def runs_relabelled(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """A run's section repeated many times, or the sections of two runs interleaved, cut
    between, or the runs' headers left out."""
    text = data
    marker = rng.choice((b"Running performance report", b"Summary:", b"Event Summary",
                         b"Operator Summary", b"Running ["))
    parts = text.split(marker)
    how = rng.choice(("many", "drop header", "swap"))
    if len(parts) < 2:
        return duplicated_block(data, rng)
    if how == "many":
        return f"run sections x{len(parts) * 20}", marker.join(parts + parts[1:] * 20)
    if how == "drop header":
        i = rng.randrange(1, len(parts))
        return "a run's header dropped", marker.join(parts[:i]) + parts[i]
    parts[1:] = rng.sample(parts[1:], len(parts) - 1)
    return "run sections swapped", marker.join(parts)


# -- node links (op graphs) -----------------------------------------------------------------------

def megengine_links(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """MegEngine profile's op, var and memory chunk ids (what the op graph's links come
    from) pointed at each other's kind, at missing ids, at themselves, or given wrong
    types."""
    doc = json.loads(data)
    graph = doc["graph_exec"]
    opr, var, chunks = graph["operator"], graph["var"], graph.get("mem_chunk", {})
    op_ids, var_ids = list(opr), list(var)
    how = rng.choice(("ops as vars", "missing", "types", "self", "chunk owner", "sequence"))
    for _ in range(rng.randint(1, 6)):
        op = opr[rng.choice(op_ids)]
        if how == "ops as vars":
            op[rng.choice(("input", "output"))] = rng.sample(op_ids, min(2, len(op_ids)))
        elif how == "missing":
            op[rng.choice(("input", "output"))] = ["999999999", ""]
        elif how == "types":
            op[rng.choice(("input", "output", "id", "name", "type"))] = rng.choice(HOSTILE_VALUES)
        elif how == "self":
            op["input"] = list(op.get("output") or []) + [op.get("id")]
        elif how == "chunk owner":
            for chunk in chunks.values():
                chunk["owner_var"] = rng.choice([*op_ids, "", None, 7, *var_ids[:1]])
        else:
            graph["comp_seq"] = rng.choice((graph["comp_seq"] * 2, var_ids[:5], ["x", None],
                                            list(reversed(graph["comp_seq"]))))
    return f"graph links: {how}", _dump(doc)


def execution_trace_links(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """A PyTorch execution trace's node ids and parents (``ctrl_deps``) made cyclic,
    self-referencing, duplicated across nodes, missing or of another type; a tensor id
    given to two nodes' outputs."""
    doc = json.loads(data)
    nodes = doc["nodes"]
    ids = [n.get("id") for n in nodes]
    how = rng.choice(("cycle", "self", "duplicate ids", "missing", "types", "chain"))
    if how == "cycle" and len(nodes) > 2:
        a, b, c = rng.sample(nodes, 3)
        a["ctrl_deps"], b["ctrl_deps"], c["ctrl_deps"] = b.get("id"), c.get("id"), a.get("id")
    elif how == "self":
        for n in rng.sample(nodes, min(4, len(nodes))):
            n["ctrl_deps"] = n.get("id")
    elif how == "duplicate ids":
        for n in rng.sample(nodes, min(6, len(nodes))):
            n["id"] = rng.choice(ids)
    elif how == "missing":
        for n in rng.sample(nodes, min(4, len(nodes))):
            n["ctrl_deps"] = rng.choice((10**9, -1, 2**64))
    elif how == "types":
        for n in rng.sample(nodes, min(3, len(nodes))):
            n[rng.choice(("ctrl_deps", "id", "parent"))] = rng.choice(HOSTILE_VALUES)
    else:   # one parent chain as deep as the recursion limit and more
        base = max(i for i in ids if isinstance(i, int)) + 1
        depth = rng.choice((2000, 20000))
        nodes.extend({"id": base + k, "name": f"deep{k % 3}", "ctrl_deps": base + k - 1,
                      "inputs": {"values": [], "shapes": [], "types": []},
                      "outputs": {"values": [], "shapes": [], "types": []}, "attrs": []}
                     for k in range(depth))
    return f"ET links: {how}", _dump(doc)


# -- the layers ----------------------------------------------------------------------------------

_JSON = (event_fields, colliding_ids, unbalanced_slices, json_tree_edit, mixed_line_ends,
         cut_at_line, control_characters)
LAYERS: dict[str, Layer] = {
    "check": Layer(("tests/data/chrome/node20_async_hooks.json", "tests/data/seeds/chrome.pt.trace.json",
                    "tests/data/tensorflow/cpu_timeline_01.json"), "json",
                   (("check", "{}", "--json"),), (*_JSON, many_tiny_events)),
    "tensorflow": Layer(("tests/data/tensorflow/gpu_timeline_01.json",), "json",
                        (("info", "{}", "--json"), ("summary", "{}", "--json"),
                         ("{}", "-o", "{out}.pftrace")),
                        (tensorflow_processes, tensorflow_processes, *_JSON)),
    "other_report": Layer(("samples/migraphx/perf_simple_graph_rocm4.txt",
                           "samples/paddle/summary_small_2.6.2.txt",
                           "tests/data/nsys_stats/nanomoe_stats_console_nsys2026.1.txt"), "text",
                          (("info", "{}", "--json"),),
                          (other_report_inside, other_report_inside, *GENERIC_TEXT)),
    "pasted": Layer(("tests/data/nsys_stats/cuda_api_sum.csv",
                     "tests/data/seeds/rocprof_results.stats.csv",
                     "samples/migraphx/perf_simple_graph_rocm4.txt",
                     "tests/data/paddle/gpu_summary.txt"), "text",
                    (("info", "{}", "--json"),),
                    (pasted, pasted, pasted, *GENERIC_TEXT)),
    "runs": Layer(("tests/data/migraphx/rocm7.2_perf_test_two_runs.txt",
                   "samples/paddle/summary_small_2.6.2.txt*2"), "text",
                  (("summary", "{}", "--json"), ("diff", "{}", "--json"),
                   ("diff", "{}@2", "{}@1", "--json"), ("info", "{}", "--json")),
                  (runs_relabelled, runs_relabelled, *GENERIC_TEXT)),
    "nothing": Layer(("tests/data/migraphx/summary_only_rocm5.7_bert_fragment.txt",
                      "tests/data/seeds/paddle.profile", "tests/data/seeds/rocprof_results.stats.csv"),
                     "text",
                     (("critical-path", "{}", "--json"), ("memory", "{}", "--json"),
                      ("critical-path", "{}")),
                     GENERIC_TEXT),
    "node_links": Layer(("tests/data/seeds/megengine_profile.json",
                         "tests/data/seeds/torch_et.json"), "json",
                        (("check", "--model", "{}"), ("summary", "{}", "--json"),
                         ("critical-path", "{}", "--json")),
                        (megengine_links, execution_trace_links, megengine_links,
                         execution_trace_links, json_tree_edit)),
}


def seeds(layer: str) -> list[Seed]:
    """The layer's seeds that this checkout holds (``NAME*2``: the file written twice, a
    report printed again in one log: two runs)."""
    found = []
    for name in LAYERS[layer].seeds:
        name, _, times = name.partition("*")
        path = ROOT / name
        if path.exists():
            found.append(Seed(layer, LAYERS[layer].syntax, path.name,
                              path.read_bytes() * int(times or 1)))
    return found


def variants(layer: str, count: int, campaign: int = 0) -> list[tuple[Seed, Variant]]:
    """``count`` variants per seed of ``layer``, each from its own seeded generator."""
    out = []
    edits = LAYERS[layer].edits
    for seed in seeds(layer):
        for k in range(count):
            rng = random.Random(zlib.crc32(f"{layer}/{seed.name}/{k}/{campaign}".encode()))
            edit = edits[k % len(edits)]
            try:
                label, data = edit(seed.data, rng)
            except (ValueError, KeyError, TypeError, AttributeError):   # not this seed's shape
                label, data = line_edits(seed.data, rng)
            out.append((seed, Variant(f"{edit.__name__}: {label}", data)))
    return out


def command_lines(layer: str, path: str, out: str) -> Iterator[list[str]]:
    """The layer's command lines for the input at ``path`` (``out``: an output stem)."""
    for command in LAYERS[layer].commands:
        yield [part.replace("{}", path).replace("{out}", out) for part in command]
