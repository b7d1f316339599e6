"""``diff --report``: the diff and its gates for CI, from the JSON object of ``diff --json``.

JUnit XML (one test case a gate, a failure when it fired), a Markdown table for a
pull-request comment, or GitHub Actions annotations (``::error`` for a gate that fired,
``::notice`` for one that passed). Nothing in them changes between runs of the same inputs
(no clock, no paths but the ones given), so a CI system can diff reports too.
"""

from __future__ import annotations

from collections.abc import Callable

from ..markup import escape
from ..units import format_duration, in_column_unit

MS = 1_000_000   # the Markdown tables' columns are in ms


def _ms(ns: float) -> str:
    """A signed figure of a ms column."""
    return in_column_unit(ns, MS, signed=True)


def _change(ns: float) -> str:
    """A signed duration in a sentence."""
    return format_duration(ns, signed=True)


def _pct(value: float | None) -> str:
    return "" if value is None else f" ({value:+.2f}%)"


def describe_check(check: dict) -> str:
    """One gate in one line: the medians, the change with its interval, the samples, the
    smallest change the gate could have seen.

    >>> print(describe_check({"gate": "total:+3%", "mode": "interval", "a_ns": 7_000_000,
    ...     "b_ns": 8_400_000, "delta_ns": 1_400_000, "delta_pct": 20.0,
    ...     "ci_ns": [900_000, 2_000_000], "ci_pct": [12.857, 28.571], "samples_a": 100,
    ...     "samples_b": 100, "detectable_ns": 710_000, "detectable_pct": 10.14}))
    total:+3%: median 7 ms → 8.4 ms, Δ +1.4 ms (+20.00%), 95% interval +900 µs … +2 ms (+12.86 … +28.57%), 100 → 100 samples; smallest change it fires on +710 µs (+10.14%)
    """
    low, high = check["ci_ns"]
    if check["samples_a"] == check["samples_b"] == 1:
        spread = "1 sample a side: the interval is the point"
    else:
        pct = check["ci_pct"]
        share = "" if pct is None else f" ({pct[0]:+.2f} … {pct[1]:+.2f}%)"
        spread = (f"95% interval {_change(low)} … {_change(high)}{share}, "
                  f"{check['samples_a']} → {check['samples_b']} samples")
    mode = "" if check["mode"] == "interval" else " (on the median alone)"
    return (f"{check['gate']}{mode}: median {format_duration(check['a_ns'])} → "
            f"{format_duration(check['b_ns'])}, Δ {_change(check['delta_ns'])}"
            f"{_pct(check['delta_pct'])}, {spread}; smallest change it fires on "
            f"{_change(check['detectable_ns'])}{_pct(check['detectable_pct'])}")


def _checks(data: dict) -> list[dict]:
    return (data.get("verdict") or {}).get("checks", [])


def _attribute(text: str) -> str:
    """An XML attribute value, quoted (:func:`traceconv.markup.escape`).

    >>> _attribute('a "b" <c>')
    '"a &quot;b&quot; &lt;c&gt;"'
    """
    return f'"{escape(text)}"'


def junit(data: dict, top: int = 0) -> str:
    """JUnit XML: a test suite for the diff, a test case per gate.

    >>> print(junit({"a": "a.json", "b": "b.json", "verdict": {"checks": []}}), end="")
    <?xml version="1.0" encoding="UTF-8"?>
    <testsuites name="traceconv diff" tests="0" failures="0">
      <testsuite name="a.json → b.json" tests="0" failures="0">
      </testsuite>
    </testsuites>
    """
    checks = _checks(data)
    failed = sum(c["regressed"] for c in checks)
    counts = f'tests="{len(checks)}" failures="{failed}"'
    suite = _attribute(f"{data['a']} → {data['b']}")
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites name="traceconv diff" {counts}>',
             f"  <testsuite name={suite} {counts}>"]
    for check in checks:
        lines.append(f'    <testcase classname="traceconv.diff" name={_attribute(check["gate"])}>')
        text = describe_check(check)
        if check["regressed"]:
            lines.append(f'      <failure message={_attribute("regressed: " + text)}>'
                         f"{escape(text)}</failure>")
        else:
            lines.append(f"      <system-out>{escape(text)}</system-out>")
        lines.append("    </testcase>")
    lines += ["  </testsuite>", "</testsuites>"]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell (a ``|`` or a newline would break the row)."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown(data: dict, top: int = 10) -> str:
    """A Markdown summary: the step time, a row per gate, the rows that changed most.

    >>> print(markdown({"a": "a", "b": "b", "samples_a": 1, "samples_b": 1,
    ...     "total": {"median_a_ns": 2e6, "median_b_ns": 3e6, "median_change_ns": 1e6,
    ...               "median_change_pct": 50.0, "ci_ns": [1e6, 1e6]}, "rows": []}), end="")
    ### traceconv diff: a → b
    <BLANKLINE>
    Median step 2 ms → 3 ms, Δ +1 ms (+50.00%); 1 sample a side: the interval is the point.
    """
    total = data["total"]
    if data["samples_a"] == data["samples_b"] == 1:
        spread = "1 sample a side: the interval is the point"
    else:
        low, high = total["ci_ns"]
        spread = (f"95% interval {_change(low)} … {_change(high)}, "
                  f"{data['samples_a']} → {data['samples_b']} samples")
    out = [f"### traceconv diff: {_cell(data['a'])} → {_cell(data['b'])}", "",
           f"Median step {format_duration(total['median_a_ns'])} → "
           f"{format_duration(total['median_b_ns'])}, Δ {_change(total['median_change_ns'])}"
           f"{_pct(total['median_change_pct'])}; {spread}."]
    checks = _checks(data)
    if checks:
        out += ["", "| gate | verdict | median A ms | median B ms | Δ ms | 95% interval ms | "
                "smallest change it fires on | samples |", "|---|---|--:|--:|--:|--:|--:|--:|"]
        for c in checks:
            out.append(f"| `{_cell(c['gate'])}` | {'❌ regressed' if c['regressed'] else '✅ ok'} "
                       f"| {in_column_unit(c['a_ns'], MS)} | {in_column_unit(c['b_ns'], MS)} "
                       f"| {_ms(c['delta_ns'])}{_pct(c['delta_pct'])} "
                       f"| {_ms(c['ci_ns'][0])} … {_ms(c['ci_ns'][1])} "
                       f"| {_ms(c['detectable_ns'])}{_pct(c['detectable_pct'])} "
                       f"| {c['samples_a']} → {c['samples_b']} |")
    rows = data["rows"][:top] if top > 0 else data["rows"]
    if rows:
        out += ["", "| name | kind | Δ median ms/step | 95% interval ms |", "|---|---|--:|--:|"]
        out += [f"| `{_cell(r['name'])}` | {r['kind']} | {_ms(r['median_change_ns'])} "
                f"| {_ms(r['ci_ns'][0])} … {_ms(r['ci_ns'][1])} |" for r in rows]
    return "\n".join(out) + "\n"


def _command_text(text: str, in_property: bool = False) -> str:
    """Text escaped for a GitHub Actions workflow command (``%``, line breaks; in a
    property also ``:`` and ``,``)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if in_property else text


def github(data: dict, top: int = 0) -> str:
    """GitHub Actions annotations: ``::error`` for a gate that fired, ``::notice`` else.

    >>> print(github({"verdict": {"checks": [{"gate": "total:+3%", "regressed": True,
    ...     "mode": "median", "a_ns": 1e6, "b_ns": 2e6, "delta_ns": 1e6, "delta_pct": 100.0,
    ...     "ci_ns": [1e6, 1e6], "samples_a": 1, "samples_b": 1, "detectable_ns": 3e4,
    ...     "detectable_pct": 3.0}]}}), end="")
    ::error title=traceconv diff total%3A+3%25::total:+3%25 (on the median alone): median 1 ms → 2 ms, Δ +1 ms (+100.00%25), 1 sample a side: the interval is the point; smallest change it fires on +30 µs (+3.00%25)
    """
    lines = []
    for check in _checks(data):
        level = "error" if check["regressed"] else "notice"
        lines.append(f"::{level} title={_command_text('traceconv diff ' + check['gate'], True)}"
                     f"::{_command_text(describe_check(check))}")
    return "".join(line + "\n" for line in lines)


REPORTS: dict[str, Callable[[dict, int], str]] = {"junit": junit, "markdown": markdown,
                                                   "github": github}
