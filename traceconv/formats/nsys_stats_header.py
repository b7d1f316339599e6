"""What a header line of an ``nsys stats --format csv`` report says, from its column names
alone (no reader imported: the sniffer and the reader share it).

``nsys stats`` writes one table per report, often after lines of prose (``Generating SQLite
file ...``, ``Processing [...] with [.../cuda_gpu_kern_sum.py]...``, ``NOTICE: ...``,
`` ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):``, ``SKIPPED: ... does not contain ...``).
A header is recognised by its columns: the NVTX trace report (``nvtx_pushpop_trace``) by its
start, end, PID and TID; a summary report by a ``Total Time`` column and the column that
names its rows:

======================================  ==========  ===============================
report (new name / before 2022)         kind        counted by, named by
======================================  ==========  ===============================
``cuda_gpu_kern_sum`` / ``gpukernsum``  ``kernels``  Instances, Name
``cuda_api_sum`` / ``cudaapisum``       ``api``      Num Calls, Name (``osrt_sum``
                                                     has the same header)
``cuda_gpu_mem_time_sum`` /             ``memops``   Count (Operations), Operation
``gpumemtimesum``
``cuda_gpu_sum`` / ``gpusum``           ``gpu``      Instances, Operation, Category
``nvtx_sum`` / ``nvtxsum``              ``nvtx``     Instances, Range (and Style)
======================================  ==========  ===============================
"""

from __future__ import annotations

import csv
import re

TRACE = "trace"
_TRACE_COLUMNS = ("Start (ns)", "End (ns)", "Name", "PID", "TID")
_REPORTS = ("cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_sum", "cuda_api_sum",
            "osrt_sum", "nvtx_sum", "nvtx_pushpop_sum", "gpukernsum", "gpumemtimesum", "gpusum",
            "cudaapisum", "osrtsum", "nvtxsum", "nvtxppsum")
# a report's name as a script path ends ("/nvtx_sum.py]"), a banner closes ("(nvtx_sum):") or
# an output file of ``nsys stats -o BASE`` ends ("BASE_nvtx_sum.csv")
_REPORT_NAME = re.compile(rf"(?:^|[/(_])({'|'.join(_REPORTS)})(?:\.py\]|\):|\.csv)")
_PROSE = ("Generating ", "Processing ", "NOTICE:", "SKIPPED:", "**", "Exporting ", "Using ",
          "Running ", "WARNING:", "It is assumed", "Consider using")
_HEAD_LINES = 40


def kind_of(cells: list[str]) -> str | None:
    """The report whose header ``cells`` are: ``trace``, a summary kind, or None.

    >>> kind_of("Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),"
    ...         "StdDev (ns),Name".split(","))
    'kernels'
    >>> kind_of("Time(%),Total Time (ns),Operations,Average,Minimum,Maximum,Operation".split(","))
    'memops'
    >>> kind_of(["Start (ns)", "End (ns)", "Name", "PID", "TID"]), kind_of(["Name", "Calls"])
    ('trace', None)
    """
    columns = {cell.strip() for cell in cells}
    if all(c in columns for c in _TRACE_COLUMNS):
        return TRACE
    if not any(c.startswith("Total Time") for c in columns):
        return None
    if "Range" in columns:
        return "nvtx"
    if "Category" in columns and "Operation" in columns:
        return "gpu"
    if "Operation" in columns:
        return "memops"
    if "Name" in columns and "Num Calls" in columns:
        return "api"
    if "Name" in columns and "Instances" in columns:
        return "kernels"
    return None


def is_prose(line: str) -> bool:
    """A line nsys writes around its tables (progress, notices, banners, blank).

    >>> is_prose(" ** CUDA API Summary (cuda_api_sum):"), is_prose("12.5,100,3,kernel")
    (True, False)
    """
    text = line.strip()
    return not text or text.startswith(_PROSE)


def report_named(text: str) -> str | None:
    """The report a line of prose or a file name names (``cuda_gpu_kern_sum``...).

    >>> report_named("Processing [r.sqlite] with [/opt/nsys/reports/cuda_api_sum.py]... ")
    'cuda_api_sum'
    >>> report_named("run_gpukernsum.csv"), report_named("cuda_api_sum.csv")
    ('gpukernsum', 'cuda_api_sum')
    >>> report_named(" ** NVTX Range Summary (nvtx_sum):"), report_named("Generating r.sqlite")
    ('nvtx_sum', None)
    """
    found = _REPORT_NAME.search(text)
    return found.group(1) if found else None


def sniff_text(head: bytes) -> float:
    """How sure it is that ``head`` is an nsys stats CSV report: a known header after
    nothing but prose, or only prose that names an nsys report (a report nsys skipped).

    >>> sniff_text(b"Processing [r.sqlite] with [nvtx_sum.py]...\\nTime (%),Total Time (ns),"
    ...            b"Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range\\n")
    0.95
    >>> sniff_text(b"Kernel_Name,Start_Timestamp\\n"), sniff_text(b"a,b\\nTime (%),Total Time\\n")
    (0.0, 0.0)
    >>> sniff_text(b"Processing [r.sqlite] with [/x/cuda_gpu_kern_sum.py]... \\nSKIPPED: r.sqlite "
    ...            b"does not contain CUDA kernel data.\\n")
    0.9
    """
    lines = head.lstrip(b"\xef\xbb\xbf").decode("utf-8", "replace").splitlines()
    named = False
    for line in lines[:_HEAD_LINES]:
        if is_prose(line):
            named = named or (line.startswith("Processing ") and report_named(line) is not None)
            continue
        try:
            cells = next(csv.reader([line]), [])
        except csv.Error:
            return 0.0
        return 0.95 if kind_of(cells) else 0.0
    return 0.9 if named else 0.0
