"""Read-only containers for frozen traces.

A reader builds a :class:`~traceconv.model.Trace` and hands it over frozen: its columns,
lists and tables keep their types (so every reading path stays as fast as before) but
refuse every change with :class:`FrozenTraceError`. Transformations build a new trace
instead (:mod:`traceconv.model.copying`), so a trace can be shared by any number of
results without one of them corrupting another.

>>> column = FrozenArray("q", [1, 2]); column[1], sum(column)
(2, 3)
>>> column.append(3)
Traceback (most recent call last):
...
traceconv.model.frozen.FrozenTraceError: this trace is frozen (read-only): build a new one (Trace.copy(), traceconv.model.copying)
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import compress, count, islice
from typing import Any, NoReturn, TypeVar

import numpy as np

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


class FrozenTraceError(TypeError):
    """Something tried to change a frozen trace."""

    def __init__(self) -> None:
        super().__init__("this trace is frozen (read-only): build a new one "
                         "(Trace.copy(), traceconv.model.copying)")


def _refuse(self: object, *args: Any, **kwargs: Any) -> NoReturn:
    raise FrozenTraceError


def _refusing(*names: str) -> dict[str, Any]:
    return dict.fromkeys(names, _refuse)


class FrozenWhenUnpickled:
    """For the model's classes that have a ``_frozen`` flag and a ``freeze()``: once frozen,
    no attribute is set or deleted, whatever the route (an assignment, ``__init__`` or
    ``__setstate__`` called again); an unpickled copy of a frozen one is frozen again. Its
    read-only parts pickle as plain lists, dicts and arrays (so that :meth:`copy` and
    ``pickle`` of a part make an editable one), and the flag alone would leave them
    changeable behind a trace that says it is frozen; a batch worker or a pool must hand
    over what the reader handed over.

    >>> import pickle
    >>> from traceconv.model import Trace
    >>> trace = Trace(); _ = trace.add_process("p"); _ = trace.freeze()
    >>> type(pickle.loads(pickle.dumps(trace)).processes).__name__
    'FrozenList'
    >>> trace.strings.__init__()
    Traceback (most recent call last):
    ...
    traceconv.model.frozen.FrozenTraceError: this trace is frozen (read-only): build a new one (Trace.copy(), traceconv.model.copying)
    """

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_frozen", False):
            raise FrozenTraceError
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if getattr(self, "_frozen", False):
            raise FrozenTraceError
        object.__delattr__(self, name)

    def __setstate__(self, state: Any) -> None:
        if getattr(self, "_frozen", False):   # (unpickling fills a new one: never this)
            raise FrozenTraceError
        values, slots = state if isinstance(state, tuple) else (state, None)
        frozen = False
        for part in (values, slots):
            if part:
                frozen = bool(part.pop("_frozen", False)) or frozen
                for name, value in part.items():   # (past a __setattr__ that refuses)
                    object.__setattr__(self, name, value)
        object.__setattr__(self, "_frozen", False)
        if frozen:
            self.freeze()   # type: ignore[attr-defined]


class FrozenArray(Sequence[Any]):
    """A typed column of a frozen trace: read as an ``array.array`` is read (an item, a
    length, ``typecode``, ``itemsize``, ``tolist``, ``tobytes``, ``==``), held in
    immutable bytes. It exports no writable memory by any route: ``numpy.asarray`` gives a
    read-only view that numpy cannot be told to make writeable (its memory is ``bytes``),
    and it offers no buffer to ``memoryview`` or ``numpy.frombuffer`` (a Python class
    could only offer array.array's writable one). A slice, a copy and a pickle of it are
    plain arrays, to edit (``copy.copy``: one copy of the bytes).

    >>> import numpy as np
    >>> column = FrozenArray("q", [1, 2]); view = np.asarray(column); view.tolist()
    [1, 2]
    >>> view.setflags(write=True)
    Traceback (most recent call last):
    ...
    ValueError: cannot set WRITEABLE flag to True of this array
    >>> column[1:], column == array("q", [1, 2])
    (array('q', [2]), True)
    """

    __slots__ = ("_items",)

    def __init__(self, typecode: str, values: Any = ()) -> None:
        if not (isinstance(values, array) and values.typecode == typecode):
            values = array(typecode, values)
        # (a cast memoryview: C-speed items; its owner, the bytes, can never be written)
        self._items = memoryview(values.tobytes()).cast(typecode)  # type: ignore[call-overload]

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(self, "_items"):   # (set once, by __init__: __init__ again is refused)
            raise FrozenTraceError
        object.__setattr__(self, name, value)

    __delattr__ = _refuse

    @property
    def typecode(self) -> str:
        return self._items.format

    @property
    def itemsize(self) -> int:
        return self._items.itemsize

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return array(self._items.format, self._items[index].tobytes())
        return self._items[index]

    def __iter__(self) -> Any:
        return iter(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenArray):
            return self._items == other._items   # (as arrays compare: item by item, by value)
        return self._items == other if isinstance(other, array) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def tolist(self) -> list[Any]:
        return self._items.tolist()

    def tobytes(self) -> bytes:
        return self._items.tobytes()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        view = np.frombuffer(self._items, self._items.format) if len(self._items) else \
            np.zeros(0, self._items.format)
        if copy:
            view = view.copy()
        return view if dtype is None else view.astype(dtype, copy=False)

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return array, (self._items.format, bytes(self._items))

    def __copy__(self) -> array:  # type: ignore[type-arg]
        editable = array(self._items.format)
        editable.frombytes(self._items.cast("B"))   # (one copy, straight from the bytes)
        return editable

    def __deepcopy__(self, memo: Any) -> array:  # type: ignore[type-arg]
        return self.__copy__()

    def __repr__(self) -> str:
        return f"FrozenArray({self._items.format!r}, {self._items.tolist()!r})"

    locals().update(_refusing(   # (array.array's changes, refused as the trace's others are)
        "append", "extend", "frombytes", "fromlist", "fromunicode", "fromfile", "insert",
        "pop", "remove", "reverse", "byteswap", "__setitem__", "__delitem__", "__iadd__",
        "__imul__"))


class _MadeWhole(type):
    """The metaclass of :class:`FrozenList` and :class:`FrozenDict`: an instance is filled
    when it is made, never by ``__init__``, which would fill it again on a later call
    (``list.__init__`` clears the list first): theirs refuses."""

    def __call__(cls, items: Any = (), /, **named: Any) -> Any:
        made = cls.__new__(cls)  # type: ignore[call-overload]
        cls._fill(made, items, **named)   # type: ignore[attr-defined]
        return made


class FrozenList(list[T], metaclass=_MadeWhole):
    """A ``list`` that refuses changes; a copy of it (``copy``, ``pickle``) is a list."""

    __slots__ = ()
    _fill = list.extend

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return list, (list(self),)

    locals().update(_refusing(
        "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
        "__setitem__", "__delitem__", "__iadd__", "__imul__", "__init__"))


class FrozenDict(dict[K, V], metaclass=_MadeWhole):
    """A ``dict`` that refuses changes; a copy of it (``copy``, ``pickle``) is a dict.

    >>> held = FrozenDict({"a": 1}, b=2); held, type(held).__name__
    ({'a': 1, 'b': 2}, 'FrozenDict')
    >>> held.__init__(c=3)
    Traceback (most recent call last):
    ...
    traceconv.model.frozen.FrozenTraceError: this trace is frozen (read-only): build a new one (Trace.copy(), traceconv.model.copying)
    """

    __slots__ = ()
    _fill = dict.update

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return dict, (dict(self),)

    locals().update(_refusing(
        "__setitem__", "__delitem__", "__ior__", "clear", "pop", "popitem", "setdefault",
        "update", "__init__"))


def _made_list(items: Any) -> FrozenList[Any]:
    """``FrozenList(items)`` without the metaclass's Python call (freezing makes one per
    distinct list a trace holds)."""
    made = _NEW_LIST(FrozenList)
    _EXTEND(made, items)
    return made


def _made_dict(items: Any) -> FrozenDict[Any, Any]:
    """``FrozenDict(items)``, as :func:`_made_list` makes a list."""
    made = _NEW_DICT(FrozenDict)
    _UPDATE(made, items)
    return made


_NEW_LIST, _EXTEND, _NEW_DICT, _UPDATE = list.__new__, list.extend, dict.__new__, dict.update


def frozen_array(column: array | FrozenArray) -> FrozenArray:  # type: ignore[type-arg]
    """``column`` as a :class:`FrozenArray` (one copy of its bytes; none when it is one)."""
    return column if isinstance(column, FrozenArray) else FrozenArray(column.typecode, column)


def frozen_list(items: list[T]) -> FrozenList[T]:
    """``items`` as a :class:`FrozenList` (itself when it is one)."""
    return items if isinstance(items, FrozenList) else _made_list(items)


_GRAPH_CHANGES = ("add_node", "add_nodes_from", "remove_node", "remove_nodes_from",
                  "add_edge", "add_edges_from", "add_weighted_edges_from", "remove_edge",
                  "remove_edges_from", "clear", "clear_edges", "update")
_GRAPH_TWINS: dict[type, type] = {}


def freeze_graph(graph: Any) -> Any:
    """Make a networkx graph refuse structural changes (as ``networkx.freeze`` does, with
    :class:`FrozenTraceError`) and any attribute set or deleted (``networkx.freeze``'s
    methods, set on the graph itself, could be deleted or set back, ``graph.graph``
    replaced, ``__init__`` called again); returns it. A copy of it is frozen too; a graph
    networkx makes of its class (``copy()``, ``reverse()``) is a plain one to fill.

    >>> import networkx as nx, pickle; g = freeze_graph(nx.DiGraph()); nx.is_frozen(g)
    True
    >>> nx.is_frozen(pickle.loads(pickle.dumps(g)))   # a copy is frozen too
    True
    >>> del g.add_node
    Traceback (most recent call last):
    ...
    traceconv.model.frozen.FrozenTraceError: this trace is frozen (read-only): build a new one (Trace.copy(), traceconv.model.copying)
    >>> type(g.copy()).__name__
    'DiGraph'
    """
    cls = type(graph)
    if cls not in _GRAPH_TWINS.values():
        object.__setattr__(graph, "__class__", frozen_graph_class(cls))
    return graph


def frozen_graph_class(cls: type) -> type:
    """The read-only subclass of networkx graph class ``cls`` (made once per class)."""
    twin = _GRAPH_TWINS.get(cls)
    if twin is not None:
        return twin

    def new(klass: type, *args: Any, **kwargs: Any) -> Any:
        return cls(*args, **kwargs)   # (a plain graph: networkx's copies fill it)

    def reduce_ex(self: Any, protocol: Any) -> tuple[Any, ...]:
        if "_fill" in self.__dict__:   # (a lazy graph: filled first, then frozen again)
            self.fill_now()
            return self.__reduce_ex__(protocol)   # type: ignore[no-any-return]
        return _unpickled_graph, (cls,), dict(self.__dict__)

    def set_state(self: Any, state: dict[str, Any]) -> None:
        if self.__dict__:   # (a graph that holds something: only unpickling fills one)
            raise FrozenTraceError
        self.__dict__.update(state)
        freeze_graph_data(self)

    twin = _GRAPH_TWINS[cls] = type(f"Frozen{cls.__name__}", (cls,), {
        "frozen": True, "__new__": new, "__reduce_ex__": reduce_ex,
        "__setstate__": set_state, "__setattr__": _refuse, "__delattr__": _refuse,
        "__module__": cls.__module__, "__doc__": f"A read-only {cls.__name__}.",
        **_refusing("__init__", *_GRAPH_CHANGES)})
    return twin


def _unpickled_graph(cls: type) -> Any:
    """An empty frozen graph of class ``cls`` for a pickle to fill (its state, then)."""
    return object.__new__(frozen_graph_class(cls))


def deep_freeze(value: Any) -> Any:
    """``value`` with every list, dict and set inside it read-only (lists and dicts as
    :class:`FrozenList` / :class:`FrozenDict`, sets as frozensets), at any depth (a loop,
    not recursion: a value nested 10,000 deep is fine); other values as they are.

    >>> held = deep_freeze({"shape": [2, 3], "tags": {"a"}}); type(held["shape"]).__name__
    'FrozenList'
    >>> held["shape"].append(4)
    Traceback (most recent call last):
    ...
    traceconv.model.frozen.FrozenTraceError: this trace is frozen (read-only): build a new one (Trace.copy(), traceconv.model.copying)
    """
    kind = type(value)
    if kind not in _CONTAINERS:
        return _frozen_leaf(value)
    if kind is dict and _MUTABLE.isdisjoint(map(type, value.values())):
        return _made_dict(value)   # (the common case: a flat dict of numbers and strings)
    if kind is list and _MUTABLE.isdisjoint(map(type, value)):
        return _made_list(value)   # (a flat list: a profiler's shapes, types, strides)
    stack: list[tuple[Any, Any, list[Any]]] = [(value, _entries(value), [])]
    while True:
        node, entries, built = stack[-1]
        for key, child in entries:
            kind = type(child)
            if kind is list and _MUTABLE.isdisjoint(map(type, child)):
                built.append((key, _made_list(child)))   # (a shape in a list of shapes)
            elif kind in _CONTAINERS:
                built.append(key)   # (its frozen value replaces it when the child is done)
                stack.append((child, _entries(child), []))
                break
            else:
                built.append((key, _frozen_leaf(child)))
        else:
            stack.pop()
            kind = type(node)
            if kind is dict or kind is FrozenDict:
                frozen: Any = _made_dict(built)
            else:
                values = [item for _, item in built]
                frozen = tuple(values) if kind is tuple else _made_list(values)
            if not stack:
                return frozen
            parent = stack[-1][2]
            parent[-1] = (parent[-1], frozen)


def _entries(node: Any) -> Any:
    return iter(node.items()) if isinstance(node, dict) else ((None, v) for v in node)


def _frozen_leaf(value: Any) -> Any:
    kind = type(value)
    if kind is set:
        return frozenset(value)
    if kind is bytearray:
        return bytes(value)
    return value


_CONTAINERS = frozenset({dict, list, tuple, FrozenDict, FrozenList})
_MUTABLE = frozenset({dict, list, tuple, set, bytearray, FrozenDict, FrozenList})


def deep_freeze_in_place(values: list[Any], first: int = 0) -> None:
    """Replace each mutable entry of ``values`` (from ``first`` on) by its
    :func:`deep_freeze` (one pass that skips the numbers and strings most entries are);
    ``values`` may be a :class:`FrozenList` (its owner's: written through ``list``'s own
    methods), and is not copied. Freezing stays proportional to the distinct values, in
    time and in memory (a profiler repeats the same shapes a million times, as a list of
    its own per row): flat lists of ints and strings alike are one frozen list, and an
    object held at several places is frozen once.

    >>> shape = [2]; values = FrozenList([1, shape, "x", shape, [2], {"a": [2]}])
    >>> deep_freeze_in_place(values); type(values[1]).__name__, values[1] is values[4]
    ('FrozenList', True)
    >>> values = [[1], [True], [1.0]]; deep_freeze_in_place(values); values   # (not alike)
    [[1], [True], [1.0]]
    """
    put, mutable = list.__setitem__, _MUTABLE.__contains__
    alike: dict[tuple[Any, ...], FrozenList[Any]] = {}
    # id -> its frozen twin. The originals need not be kept alive for their ids to stay
    # unique: each id looked up is that of an entry still in ``values`` (so alive), and
    # every such entry was alive, at an address of its own, before the first replacement.
    frozen: dict[int, Any] = {}
    for index in compress(count(first), map(mutable, map(type, islice(values, first, None)))):
        value = values[index]
        if type(value) is list and _PLAIN_ITEMS.issuperset(map(type, value)):
            items = tuple(value)
            twin = alike.get(items)
            if twin is None:
                twin = alike[items] = _made_list(items)
        else:
            twin = frozen.get(id(value))
            if twin is None:
                twin = frozen[id(value)] = deep_freeze(value)
        put(values, index, twin)


# Items that equal only items of their own type (unlike a bool, 1 == True, or a float,
# 0.0 == -0.0): lists of them that compare equal are alike.
_PLAIN_ITEMS = frozenset({int, str, type(None)})


_TWINS: dict[type, type] = {}


def _frozen_twin(cls: type) -> type:
    """The read-only subclass of a record class (a slotted dataclass, or a frozen one, whose
    ``__init__`` could otherwise be called again) made once per class: setting or deleting a
    field raises; a copy (``copy``, ``pickle``, ``dataclasses.replace``) is a
    plain, changeable record; it compares equal to a plain record with the same fields and
    shows as one (``repr``)."""
    twin = _TWINS.get(cls)
    if twin is not None:
        return twin
    fields = tuple(cls.__dataclass_fields__)   # type: ignore[attr-defined]

    def new(*args: Any, **kwargs: Any) -> Any:
        return cls(*args[1:], **kwargs)   # (what dataclasses.replace makes: a plain record)

    def reduce_ex(self: Any, protocol: Any) -> tuple[Any, ...]:
        return cls, tuple(getattr(self, name) for name in fields)

    def equal(self: Any, other: object) -> bool:
        if not isinstance(other, cls):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in fields)

    # (a frozen dataclass keeps its hash; __init__ and a slotted one's __setstate__ would
    # write the fields past __setattr__: refused, as a copy is made by ``new`` instead)
    hashed = cls.__hash__ if cls.__dataclass_params__.frozen else None  # type: ignore[attr-defined]
    twin = type(f"Frozen{cls.__name__}", (cls,), {
        "__slots__": (), "__new__": new, "__reduce_ex__": reduce_ex, "__eq__": equal,
        "__hash__": hashed, "__setattr__": _refuse, "__delattr__": _refuse,
        "__init__": _refuse, "__setstate__": _refuse,
        "__repr__": lambda self: repr(cls(*(getattr(self, name) for name in fields))),
        "__copy__": lambda self: reduce_ex(self, 2)[0](*reduce_ex(self, 2)[1]),
        "__deepcopy__": lambda self, memo: cls(*(
            __import__("copy").deepcopy(getattr(self, name), memo) for name in fields)),
        "__module__": cls.__module__, "__doc__": f"A read-only {cls.__name__}."})
    _TWINS[cls] = twin
    _FROZEN_TWINS.add(twin)
    return twin


def freeze_record(record: T) -> T:
    """Make a slotted dataclass record read-only in place (its mutable fields too) and
    return it.

    >>> from traceconv.model.entities import Track
    >>> track = freeze_record(Track(0, "main", 0)); track.name = "other"
    Traceback (most recent call last):
    ...
    traceconv.model.frozen.FrozenTraceError: this trace is frozen (read-only): build a new one (Trace.copy(), traceconv.model.copying)
    >>> from dataclasses import replace; replace(track, name="other").name
    'other'
    """
    freeze_records([record])
    return record


def seal_records(records: list[Any]) -> None:
    """Make slotted dataclass records read-only in place, their containers left as they
    are: records handed over to a table that holds their fields from now on, where a change
    to the record itself would be lost (the table's rows are changed instead).

    >>> from traceconv.model.entities import Process
    >>> group = Process(0, "a", labels=[]); seal_records([group]); group.labels.append("x")
    >>> group.name = "b"
    Traceback (most recent call last):
    ...
    traceconv.model.frozen.FrozenTraceError: this trace is frozen (read-only): build a new one (Trace.copy(), traceconv.model.copying)
    """
    setter = object.__setattr__
    for record in records:
        cls = type(record)
        if cls not in _FROZEN_TWINS:
            setter(record, "__class__", _TWINS.get(cls) or _frozen_twin(cls))


def freeze_records(records: list[Any]) -> None:
    """:func:`freeze_record` for many records (a memory log of 10^5 blocks: the fields
    that may hold a container are looked at, the others not).

    >>> from traceconv.model.entities import Process
    >>> group = [Process(0, "a", labels=["x"])]; freeze_records(group)
    >>> type(group[0].labels).__name__
    'FrozenList'
    """
    setter, mutable = object.__setattr__, _MUTABLE
    last: type | None = None
    twin: type = object
    fields: tuple[str, ...] = ()
    for record in records:
        cls = type(record)
        if cls is not last:   # (records of one list are of one class: looked up once)
            last = cls
            if cls in _FROZEN_TWINS:
                twin, fields = cls, ()
            else:
                twin, fields = _TWINS.get(cls) or _frozen_twin(cls), _container_fields(cls)
        if twin is cls:
            continue
        for name in fields:
            value = getattr(record, name)
            kind = type(value)
            if kind in mutable:
                # (most records' args are empty: one shared read-only empty serves them all)
                setter(record, name, deep_freeze(value) if value else _empty(kind))
        setter(record, "__class__", twin)


_EMPTIES: dict[type, Any] = {}


def _empty(kind: type) -> Any:
    """The read-only empty value of a container type (made once per type)."""
    empty = _EMPTIES.get(kind)
    if empty is None:
        empty = _EMPTIES[kind] = deep_freeze(kind())
    return empty


_FIELDS_WITH_CONTAINERS: dict[type, tuple[str, ...]] = {}
_FROZEN_TWINS: set[type] = set()


def _container_fields(cls: type) -> tuple[str, ...]:
    """The fields of dataclass ``cls`` whose annotation allows a list, dict, set, tuple or
    anything."""
    found = _FIELDS_WITH_CONTAINERS.get(cls)
    if found is None:
        words = ("list", "dict", "set", "tuple", "Any", "object")
        found = _FIELDS_WITH_CONTAINERS[cls] = tuple(
            name for name, field in cls.__dataclass_fields__.items()   # type: ignore[attr-defined]
            if any(word in str(field.type) for word in words))
    return found


def freeze_graph_data(graph: Any) -> None:
    """Make the attribute dicts of ``graph`` (the graph's, every node's, every edge's)
    read-only all the way down, keeping networkx's own structure (an edge's dict is one
    object in both adjacency maps)."""
    nodes = graph._node
    for node, data in nodes.items():
        if type(data) is not FrozenDict:   # (frozen once: a pickle freezes its own)
            nodes[node] = deep_freeze(data)
    successors, predecessors = graph._adj, getattr(graph, "_pred", graph._adj)
    for source, targets in successors.items():
        for target, data in targets.items():
            if type(data) is not FrozenDict:
                frozen = deep_freeze(data)
                targets[target] = frozen
                predecessors[target][source] = frozen
    object.__setattr__(graph, "graph", deep_freeze(graph.graph))   # (past a frozen class)
