"""The page skeleton and the few SVG pieces the reports share."""

from __future__ import annotations

from html import escape

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #1d232a; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
.meta { color: #5b6670; margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; margin-top: .5rem; }
th, td { text-align: left; padding: .25rem .6rem; border-bottom: 1px solid #e3e7ea; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: #1a7f37; } .fail { color: #c62828; } .error { color: #9a6700; }
svg text { font: 12px system-ui, sans-serif; fill: #1d232a; }
.legend span { display: inline-block; margin-right: 1rem; }
.swatch { display: inline-block; width: .8rem; height: .8rem; margin-right: .3rem; vertical-align: -1px; }
"""

# Counts what the browser really drew (bars with a size), for tests and for anyone checking a page.
RENDER_CHECK = """
window.addEventListener("load", function () {
  var drawn = 0;
  document.querySelectorAll("svg .bar").forEach(function (r) {
    var box = r.getBBox(); if (box.width > 0 && box.height > 0) { drawn += 1; }
  });
  document.body.setAttribute("data-rendered-bars", String(drawn));
});
"""

PALETTE = ("#2f6fde", "#e07b22", "#2a9d5b", "#b43fb8", "#c62828", "#6b7a8a")


def page(title: str, subtitle: str, body: str) -> str:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n"
        f'<body data-rendered-bars="0"><h1>{escape(title)}</h1><p class="meta">{escape(subtitle)}</p>\n'
        f"{body}\n<script>{RENDER_CHECK}</script></body></html>\n"
    )


def legend(names: list[str]) -> str:
    items = "".join(
        f'<span><i class="swatch" style="background:{PALETTE[i % len(PALETTE)]}"></i>{escape(n)}</span>'
        for i, n in enumerate(names)
    )
    return f'<p class="legend">{items}</p>'


def table(headers: list[str], rows: list[list[str]], numeric: set[int] | None = None) -> str:
    """Cells are given as HTML (callers escape text); `numeric` columns align right."""
    numeric = numeric or set()
    head = "".join(f'<th class="num">{escape(h)}</th>' if i in numeric else f"<th>{escape(h)}</th>"
                   for i, h in enumerate(headers))  # fmt: skip
    body = "".join(
        "<tr>"
        + "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(row))
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
