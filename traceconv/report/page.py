"""The page around the report's sections: inline CSS, tables, escaping. No script, no network."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..markup import escape

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;
background:#fafafa}
main{max-width:1100px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;
padding-bottom:4px}
.sub{color:#666;margin:0 0 12px}
table{border-collapse:collapse;margin:6px 0 10px;background:#fff;font-size:13px}
th,td{border:1px solid #e3e3e3;padding:3px 8px;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.name{max-width:520px;min-width:8ch;overflow-wrap:anywhere}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(330px,1fr));gap:12px}
.card{background:#fff;border:1px solid #e3e3e3;border-radius:6px;padding:10px 12px;
margin:0 0 12px}
.card table{width:100%}
.plot{width:100%;height:auto;font:11px system-ui,sans-serif}
.plot .axis{stroke:#999}
.finding{background:#fff;border:1px solid #e3e3e3;border-left:5px solid #999;border-radius:4px;
padding:8px 12px;margin:8px 0}
.finding.high{border-left-color:#d62728}.finding.medium{border-left-color:#ff9f1c}
.finding.info{border-left-color:#1f77b4}
.sev{font-weight:600;text-transform:uppercase;font-size:12px;margin-right:6px}
.rule{font-family:ui-monospace,monospace;font-size:12px;color:#555}
.advice{color:#444;margin:4px 0}
details summary{cursor:pointer;color:#555}
pre{white-space:pre-wrap;font-size:12px;background:#f6f6f6;padding:6px;margin:4px 0}
.memflow svg{width:100%;height:auto;background:#fff}
.muted{color:#777}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12px;margin:4px 0 8px}
.legend i{display:inline-block;width:11px;height:11px;margin-right:5px;vertical-align:-1px}
"""
MAX_NAME = 110   # longer names (templated kernels) are cut; the full name is the tooltip


def table(headers: Sequence[str], rows: Iterable[Sequence[object]],
          numeric: Sequence[bool] | None = None) -> str:
    """An HTML table; ``numeric`` columns are right-aligned.

    >>> table(["op", "ms"], [["a<b", "1.0"]], [False, True])
    '<table><tr><th>op</th><th class="n">ms</th></tr><tr><td class="name">a&lt;b</td><td class="n">1.0</td></tr></table>'
    >>> table(["", ""], [["span", "1 ms"]])   # a table of fields: no empty header row
    '<table><tr><td class="name">span</td><td class="name">1 ms</td></tr></table>'
    """
    numeric = numeric or [False] * len(headers)
    head = "".join(f'<th class="n">{escape(h)}</th>' if n else f"<th>{escape(h)}</th>"
                   for h, n in zip(headers, numeric, strict=True))
    header_row = f"<tr>{head}</tr>" if any(headers) else ""   # (no blank strip above rows)
    body = []
    for row in rows:
        cells = "".join(f'<td class="n">{escape(str(c))}</td>' if n else _name_cell(str(c))
                        for c, n in zip(row, numeric, strict=True))
        body.append(f"<tr>{cells}</tr>")
    return f"<table>{header_row}{''.join(body)}</table>"


def _name_cell(text: str) -> str:
    if len(text) <= MAX_NAME:
        return f'<td class="name">{escape(text)}</td>'
    return (f'<td class="name" title="{escape(text)}">{escape(text[:MAX_NAME - 1])}…</td>')


def page(title: str, subtitle: str, sections: Sequence[tuple[str, str]]) -> str:
    """The whole document: ``sections`` are (heading, inner HTML)."""
    body = "".join(f'<section><h2>{escape(h)}</h2>{inner}</section>' for h, inner in sections)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>"
            f"<h1>{escape(title)}</h1><p class=\"sub\">{escape(subtitle)}</p>{body}"
            "</main></body></html>\n")
