"""MegEngine profiler outputs.

* :mod:`.profile` (reader: :mod:`.static_profile`) — the static-graph profile JSON (``trace.get_profile()``,
  ``load_network_and_run --profile``): timeline, op graph, memory plan;
* :mod:`.meminfo` — ``StaticMemoryInfo.json`` (logical addresses of the static plan);
* :mod:`.memflow_svg` — the dynamic Profiler's ``memory_flow.svg`` as an input.

The dynamic Profiler's ``chrome_timeline.json`` is Chrome JSON, read by the Chrome reader
with its MegEngine flavour. :mod:`.schema` holds the pydantic models of these documents.
"""
