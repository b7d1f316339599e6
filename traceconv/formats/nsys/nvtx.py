"""NVTX_EVENTS: push/pop ranges on their thread, start/end ranges on a per-process async
track, marks as instants; domains, categories, colours and payloads as args.

``NVTX_EVENTS`` holds metadata rows too (thread names, domain and category names); those
name things and are not events. PyTorch's ``emit_nvtx`` writes each op as
``aten::mm, seq = 12, op_id = 34, sizes = [...]``: the op name becomes the slice name and the
rest its args, so that ``summary`` groups by op as it does for a Kineto trace. A range
still open when the capture stopped (no end in the export) is kept: the builder ends it at
the trace's last timestamp, marked ``unfinished``
(:meth:`~traceconv.model.builder.TraceBuilder.not_ended`).
"""

from __future__ import annotations

import re

import numpy as np

from ...model.args import Args
from .._bulk import intern_texts
from .._sqlite import Database
from .context import Context
from .ids import process_of

NVTX = "NVTX_EVENTS"
MARKS = (34, 65)              # NvtxMark, NvtxtMark
PUSH_POP = (59, 70)           # NvtxPushPopRange, NvtxtPushPopRange
START_END = (60, 71)          # NvtxStartEndRange, NvtxtStartEndRange
CATEGORY_NAMES = (33, 64)     # NvtxCategory, NvtxtCategory
THREAD_NAMES = (39,)          # NvtxThread
DOMAIN_NAMES = (75,)          # NvtxDomainCreate
NAMING = CATEGORY_NAMES + THREAD_NAMES + DOMAIN_NAMES + (76,)   # 76: NvtxDomainDestroy
_TORCH_OP = re.compile(r"^(?P<name>[^,]+), (?P<rest>(seq|op_id|sizes|input_op_ids) = .*)$")
_FIELD = re.compile(r"(seq|op_id) = (\d+)")
# the sizes (group 1), up to the next field or the end; where nothing ends them the rest of
# the line is consumed once (group 1 unset), not read again from each later "sizes = ["
_SIZES = re.compile(r"sizes = (?:(\[.*?\])(?:, \w+ = |$)|\[.*)")
_PAYLOADS = ("uint64Value", "int64Value", "doubleValue", "uint32Value", "int32Value",
             "floatValue")


def _in(values: tuple[int, ...]) -> str:
    """An SQL list of numbers.

    >>> _in((39,)), _in((59, 70))
    ('(39)', '(59, 70)')
    """
    return "(" + ", ".join(map(str, values)) + ")"


def _text(db: Database) -> str:
    """The SQL of an event's text: inline, else its StringIds entry."""
    if db.has(NVTX, "textId") and db.has("StringIds", "id", "value"):
        inline = "n.text" if db.has(NVTX, "text") else "NULL"
        return f"coalesce({inline}, (select value from StringIds where id = n.textId), '')"
    return "coalesce(n.text, '')" if db.has(NVTX, "text") else "''"


def thread_names(db: Database) -> dict[int, str]:
    """Names given with ``nvtxNameOsThread`` (globalTid -> name)."""
    if not db.has(NVTX, "eventType", "globalTid"):
        return {}
    rows = db.query(f"select n.globalTid, {_text(db)} from {NVTX} n where eventType in "
                    f"{_in(THREAD_NAMES)}", NVTX)
    return {tid: name for tid, name in rows if isinstance(tid, int) and name}


def read_nvtx(ctx: Context) -> None:
    """Add the NVTX ranges and marks of the export."""
    db, trace = ctx.db, ctx.trace
    if not db.has(NVTX, "start", "eventType", "globalTid"):
        return
    domains, categories = _names(db)
    kinds = dict(db.query(f"select eventType, count(*) from {NVTX} group by eventType", NVTX))
    wanted = PUSH_POP + START_END + MARKS
    rows = db.numeric_columns(NVTX, {
        "rowid": ("i8", 0), "eventType": ("i8", 0), "start": ("i8", 0), "end": ("i8", -1),
        "globalTid": ("i8", 0), "endGlobalTid": ("i8", 0), "domainId": ("i8", 0)},
        where=f"eventType in {_in(wanted)}", order="rowid")
    texts = [row[0] for row in db.iterate(
        f"select {_text(db)} from {NVTX} n where eventType in {_in(wanted)} order by rowid", NVTX)]
    names, args = _split_ops(texts)
    _add_extras(db, rows, args, domains, categories)
    name_ids = intern_texts(trace, names)
    kind, start = rows["eventType"], rows["start"]
    # a range still open when the capture stopped (no end): the builder's rule ends it
    unfinished = rows["end"] < 0
    end = np.where(unfinished, start, rows["end"])
    for picked, tracks in (
            (np.isin(kind, PUSH_POP), lambda r: ctx.places.threads(rows["globalTid"][r])),
            (np.isin(kind, START_END), lambda r: _range_tracks(ctx, rows, r))):
        where = np.flatnonzero(picked)
        if len(where):
            made = ctx.add_slices(tracks(where), start[where], end[where], name_ids[where],
                                  "nvtx", [args[i] for i in where.tolist()], NVTX)
            trace.not_ended(made[unfinished[where]], "nsys.nvtx_unfinished_range")
    marks = np.flatnonzero(np.isin(kind, MARKS))
    if len(marks):
        category = trace.strings.intern("nvtx")
        trace.instants.extend([args[i] for i in marks.tolist()],
                              track=ctx.places.threads(rows["globalTid"][marks]),
                              ts=rows["start"][marks], name=name_ids[marks],
                              category=np.full(len(marks), category, np.int32))
    ctx.read_tables.add(NVTX)
    naming = sum(kinds.get(k, 0) for k in NAMING)
    trace.diagnostics.add("nsys.nvtx_names", count=naming)
    other = {k: n for k, n in kinds.items() if k not in wanted + NAMING}
    trace.diagnostics.add("nsys.nvtx_other_event_type", count=sum(other.values()),
                          example=f"eventType {sorted(other)}" if other else None)


def _range_tracks(ctx: Context, rows: dict[str, np.ndarray], where: np.ndarray) -> np.ndarray:
    processes = process_of(rows["globalTid"][where])
    return np.array([ctx.places.ranges(int(p)) for p in processes.tolist()], dtype=np.int64)


def _names(db: Database) -> tuple[dict[tuple[int, int], str], dict[tuple[int, int], str]]:
    """Domain and category names per (globalPid, id)."""
    if not db.has(NVTX, "domainId", "category"):
        return {}, {}
    found: tuple[dict[tuple[int, int], str], dict[tuple[int, int], str]] = ({}, {})
    for kind, tid, domain, category, text in db.query(
            f"select eventType, n.globalTid, coalesce(domainId, 0), coalesce(category, 0), "
            f"{_text(db)} from {NVTX} n where eventType in {_in(DOMAIN_NAMES + CATEGORY_NAMES)}",
            NVTX):
        if isinstance(tid, int) and text:
            table, key = (found[0], domain) if kind in DOMAIN_NAMES else (found[1], category)
            table[(tid & ~0xFFFFFF, key)] = text
    return found


def _split_ops(texts: list[str]) -> tuple[list[str], list[Args]]:
    """Names and args of the texts: PyTorch ``emit_nvtx`` op texts split into the op name
    and its ``seq``/``op_id``/``sizes``; other texts are names as they are.

    >>> _split_ops(["aten::mm, seq = 3, op_id = 9, sizes = [[2, 3], [3, 4]]", "step 1"])
    (['aten::mm', 'step 1'], [{'seq': 3, 'op_id': 9, 'sizes': '[[2, 3], [3, 4]]'}, None])
    """
    names: list[str] = []
    args: list[Args] = []
    for text in texts:
        match = _TORCH_OP.match(text) if ", " in text else None
        if match is None:
            names.append(text)
            args.append(None)
            continue
        rest = match["rest"]
        found: dict[str, object] = {k: int(v) for k, v in _FIELD.findall(rest)}
        sizes = next((found for found in _SIZES.finditer(rest) if found[1] is not None), None)
        if sizes:
            found["sizes"] = sizes[1]
        names.append(match["name"])
        args.append(found)
    return names, args


def _add_extras(db: Database, rows: dict[str, np.ndarray], args: list[Args],
                domains: dict[tuple[int, int], str],
                categories: dict[tuple[int, int], str]) -> None:
    """Domain, category, colour and payload of the (few) events that carry them."""
    payload = [p for p in _PAYLOADS if db.has(NVTX, p)]
    value = f"coalesce({', '.join(payload)})" if len(payload) > 1 else (
        payload[0] if payload else "NULL")
    color = "color" if db.has(NVTX, "color") else "NULL"
    category = "category" if db.has(NVTX, "category") else "NULL"
    json_text = "jsonText" if db.has(NVTX, "jsonText") else "NULL"
    domain = "domainId" if db.has(NVTX, "domainId") else "0"
    extras = db.query(
        f"select rowid, {color}, {category}, {domain}, {value}, {json_text} from {NVTX} "
        f"where eventType in {_in(PUSH_POP + START_END + MARKS)} and ({color} is not null or "
        f"{category} is not null or coalesce({domain}, 0) != 0 or {value} is not null or "
        f"{json_text} is not null)", NVTX)
    if not extras:
        return
    position = {r: i for i, r in enumerate(rows["rowid"].tolist())}
    tids = rows["globalTid"]
    for rowid, argb, cat, dom, pay, js in extras:
        i = position.get(rowid)
        if i is None:
            continue
        process = int(tids[i]) & ~0xFFFFFF
        extra: dict[str, object] = dict(args[i] or {})
        if isinstance(argb, int):
            extra["color"] = f"#{argb & 0xFFFFFF:06x}"
        if isinstance(cat, int) and cat:
            extra["category"] = categories.get((process, cat), cat)
        if isinstance(dom, int) and dom:
            extra["domain"] = domains.get((process, dom), str(dom))
        if pay is not None:
            extra["payload"] = pay
        if js is not None:
            extra["payload json"] = js
        args[i] = extra
