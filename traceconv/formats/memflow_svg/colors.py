"""Colouring blocks: each block gets a legend key; keys get colours.

Categorical keys (category, op type, owner) are ranked by the bytes they hold, so the
biggest consumers get the most distinct colours and the legend reads top-down by weight;
keys beyond the palette share one grey "other" entry. Lifetime keys are decade buckets on a
sequential palette, short-lived blocks light and long-lived ones dark.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import networkx as nx
import numpy as np

from ...model import MemoryBlock
from ...units import format_duration

# Tableau 10 followed by its lighter companions: distinct, print-safe, colour-blind tolerant.
CATEGORICAL = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
               "#ff9da7", "#9c755f", "#a0cbe8", "#ffbe7d", "#8cd17d", "#b6992d", "#f1ce63",
               "#86bcb6", "#d37295", "#fabfd2", "#d4a6c8")
OTHER = "#d0d0d0"        # the "N others" entry
NO_KEY = "#8c8c8c"       # blocks that say nothing: unknown category, no owner op
# Fixed colours for the categories readers commonly set, so pictures compare at a glance
# (close to PyTorch's memory-timeline colours: weights green, activations red/orange, ...).
KNOWN = {"parameter": "#59a14f", "weight": "#59a14f", "optimizer_state": "#edc948",
         "input": "#4d4d4d", "temporary": "#b07aa1", "workspace": "#b07aa1",
         "activation": "#f28e2b", "gradient": "#4e79a7", "autograd_detail": "#a0cbe8",
         "unknown": NO_KEY, "uncategorised": NO_KEY, "no owner op": NO_KEY,
         "unknown type": NO_KEY}
# Short-lived (yellow) to long-lived (dark blue), viridis stops: ordered and readable in grey.
SEQUENTIAL = ("#fde725", "#b5de2b", "#6ece58", "#35b779", "#1f9e89", "#26828e", "#31688e",
              "#3e4989", "#482878", "#440154")
BEFORE_START = "#9c9c9c"
NEVER_FREED = "#b2182b"


@dataclass(frozen=True)
class LegendEntry:
    label: str
    color: str
    blocks: int
    bytes: int


@dataclass(frozen=True)
class Coloring:
    """Per block an index into ``entries``; what the legend lists."""

    title: str
    entries: list[LegendEntry]
    entry_of: np.ndarray


def color_blocks(blocks: list[MemoryBlock], color_by: str, graph: nx.DiGraph,
                 max_entries: int = len(CATEGORICAL) + 1,
                 duration: Callable[[int], str] = format_duration) -> Coloring:
    """Colour ``blocks`` by ``lifetime``, ``op-type``, ``category`` or ``owner``.

    Categorical colourings name at most ``max_entries - 1`` keys; the rest share "others".
    ``duration`` writes a lifetime's bound (on a logical clock: a number of entries).

    >>> blocks = [MemoryBlock(0, 10, 0, 5, category="weight"),
    ...           MemoryBlock(0, 30, 0, 5, category="activation")]
    >>> c = color_blocks(blocks, "category", nx.DiGraph())
    >>> [(e.label, e.bytes) for e in c.entries], c.entry_of.tolist()
    ([('activation', 30), ('weight', 10)], [1, 0])
    """
    if color_by == "lifetime":
        return _by_lifetime(blocks, duration)
    key = {"category": lambda b: b.category or "uncategorised",
           "op-type": lambda b: _op_type(graph, b.owner_op),
           "owner": lambda b: b.owner_name or "no owner op"}[color_by]
    return _categorical(blocks, [key(b) for b in blocks], color_by.replace("-", " "),
                        max_entries)


def _op_type(graph: nx.DiGraph, owner: str | None) -> str:
    if owner is None:
        return "no owner op"
    node = graph.nodes.get(owner)
    return (node or {}).get("type") or "unknown type"


def _categorical(blocks: list[MemoryBlock], keys: list[str], title: str,
                 max_entries: int) -> Coloring:
    weight: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for block, key in zip(blocks, keys, strict=True):
        weight[key][0] += 1
        weight[key][1] += block.size
    ranked = sorted(weight, key=lambda k: (-weight[k][1], k))
    taken = {KNOWN[k] for k in ranked if k in KNOWN}
    palette = iter(c for c in CATEGORICAL if c not in taken)
    named, colors = [], []
    for key in ranked[:max_entries if len(ranked) <= max_entries else max_entries - 1]:
        color = KNOWN.get(key) or next(palette, None)
        if color is None:
            break
        named.append(key)
        colors.append(color)
    rest = ranked[len(named):]
    entries = [LegendEntry(k, c, *weight[k]) for k, c in zip(named, colors, strict=True)]
    index = {k: i for i, k in enumerate(named)}
    if rest:
        entries.append(LegendEntry(f"{len(rest)} others", OTHER,
                                   sum(weight[k][0] for k in rest),
                                   sum(weight[k][1] for k in rest)))
        index.update(dict.fromkeys(rest, len(named)))
    return Coloring(title, entries, np.asarray([index[k] for k in keys], np.int64))


def _by_lifetime(blocks: list[MemoryBlock], duration: Callable[[int], str]) -> Coloring:
    """Decade buckets of free − alloc; open-ended blocks get their own two entries."""
    keys: list[tuple[int, str]] = []
    for b in blocks:
        if b.alloc_ns is None:
            keys.append((100, "allocated before the start"))
        elif b.free_ns is None:
            keys.append((101, "never freed"))
        else:
            life = b.free_ns - b.alloc_ns
            if life <= 0:
                keys.append((0, "zero lifetime"))
                continue
            decade = min(len(str(life - 1)), len(SEQUENTIAL))   # 10**decade >= life
            bound = 10 ** decade
            if decade == len(SEQUENTIAL):
                label = f"> {duration(bound // 10)}"
            else:
                label = f"≤ {duration(bound)}"
            keys.append((decade, label))
    present = sorted(set(keys))
    palette = {0: "#d0d0d0", 100: BEFORE_START, 101: NEVER_FREED}
    decades = [rank for rank, _ in present if rank not in palette]
    last = len(SEQUENTIAL) - 1
    for i, rank in enumerate(decades):   # spread the buckets present over the whole ramp
        palette[rank] = SEQUENTIAL[round(i * last / (len(decades) - 1)) if len(decades) > 1
                                   else last // 2]
    counts: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])
    for block, key in zip(blocks, keys, strict=True):
        counts[key][0] += 1
        counts[key][1] += block.size
    entries = [LegendEntry(label, palette[rank], *counts[(rank, label)])
               for rank, label in present]
    index = {key: i for i, key in enumerate(present)}
    return Coloring("lifetime", entries, np.asarray([index[k] for k in keys], np.int64))
