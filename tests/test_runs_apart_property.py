"""Taking a run out as a property: on any layout of runs' processes, op-graph components
and memory blocks, run k keeps exactly what the rule of :mod:`traceconv.analysis.runs`
gives it.

The expected selection is worked out here from the generated layout, one element at a
time (union-find components, the rule's sets of "mine" and "theirs" ops), not by the
code under test, which indexes the whole trace once and selects by arrays.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from traceconv.analysis.runs import split_runs
from traceconv.model import MemoryBlock, OpStat, Trace, add_op, add_tensor
from traceconv.model.validate import validate

RUNS = 3
# a process's run (0..RUNS-1, RUNS: no run), whether it says so by its name or a label
PROCESSES = st.lists(st.tuples(st.integers(0, RUNS), st.booleans()), min_size=1, max_size=5)
SLICES = st.lists(st.integers(0, 9), max_size=12)                  # each one's process
EDGES = st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=8)
# each block's owner op (None, or one of the ops) and device (a process's index, or past
# them: a device no process is named after)
BLOCKS = st.lists(st.tuples(st.none() | st.integers(0, 11), st.integers(0, 6)), max_size=10)


def _label(run: int) -> str:
    return f"run {run + 1}"


def _build(processes, slices, edges, blocks) -> tuple[Trace, list[str]]:
    t = Trace()
    names = []
    for k, (run, labelled) in enumerate(processes):
        name = f"process {k}" + (f" {_label(run)}" if run < RUNS and not labelled else "")
        names.append(name)
        labels = [f"run={_label(run)}"] if run < RUNS and labelled else []
        t.add_track("main", process=t.add_process(name, labels=labels))
    for run in range(RUNS):
        t.add_stat(OpStat("op", extra={"run": _label(run)}))
    for i, process in enumerate(slices):
        row = t.add_slice(process % len(processes), 10 * i, 5, f"op{i}")
        add_op(t.graph, i, f"op{i}", slices=[row])
    for k, (a, b) in enumerate(edges):   # op a makes a tensor that op b takes
        if a < len(slices) and b < len(slices) and a != b:
            tensor = add_tensor(t.graph, k, f"t{k}")
            t.graph.add_edge(f"op/{a}", tensor)
            t.graph.add_edge(tensor, f"op/{b}")
    for i, (owner, device) in enumerate(blocks):
        t.add_memory_block(MemoryBlock(
            address=64 * i, size=8, alloc_ns=0, free_ns=5,
            device=names[device] if device < len(names) else "elsewhere",
            owner_op=None if owner is None else f"op/{owner}"))
    return t.freeze(), names


def _expected(processes, slices, edges, blocks, run: int):
    """Run ``run``'s slice names, blocks (owner, address) and graph nodes, by the rule."""
    process_run = [r if r < RUNS else None for r, _ in processes]
    ours = [r in (run, None) for r in process_run]
    parent = list(range(len(slices)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for a, b in edges:
        if a < len(slices) and b < len(slices) and a != b:
            parent[root(a)] = root(b)
    mine, theirs = set(), set()
    for i, process in enumerate(slices):
        (mine if ours[process % len(processes)] else theirs).add(root(i))
    for owner, device in blocks:
        if owner is not None:
            on_theirs = device < len(processes) and not ours[device]
            (theirs if on_theirs else mine).add(root(owner))
    kept = {c for c in set(map(root, range(len(slices)))) if c in mine or c not in theirs}
    names = sorted(f"op{i}" for i, p in enumerate(slices) if ours[p % len(processes)])
    nodes = sorted([f"op/{i}" for i in range(len(slices)) if root(i) in kept]
                   + [f"tensor/{k}" for k, (a, b) in enumerate(edges)
                      if a < len(slices) and b < len(slices) and a != b and root(a) in kept])
    memory = []
    for i, (owner, device) in enumerate(blocks):
        by_device = device >= len(processes) or ours[device]
        if (by_device if owner is None else root(owner) in kept):
            memory.append(64 * i)
    return names, memory, nodes


@settings(max_examples=300, deadline=None, derandomize=True)
@given(PROCESSES, SLICES, EDGES, BLOCKS)
def test_each_run_keeps_what_the_rule_gives_it(processes, slices, edges, blocks):
    slices = [s % len(processes) for s in slices]
    blocks = [(None if o is None or not slices else o % len(slices), d % (len(processes) + 1))
              for o, d in blocks]
    trace, _ = _build(processes, slices, edges, blocks)
    apart = split_runs(trace)
    assert [label for label, _ in apart] == [_label(r) for r in range(RUNS)]
    for run, (_, got) in enumerate(apart):
        names, memory, nodes = _expected(processes, slices, edges, blocks, run)
        assert sorted(s.name for s in got.iter_slices()) == names
        assert [b.address for b in got.memory] == memory
        assert sorted(got.graph.nodes) == nodes
        assert validate(got) == []
