#!/usr/bin/env python3
"""Draws a PROFILE=1 trace (Chrome trace JSON) as an SVG timeline: one
row per device, one bar per kernel or copy, named when there is room.
Used to make docs/profile.svg for the README:

    python3 docs/trace_svg.py /tmp/tgcore_profile.json docs/profile.svg
"""
import json
import sys
from xml.sax.saxutils import escape


def main(src, dst, width=960):
    events = json.load(open(src))["traceEvents"]
    rows = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    bars = [e for e in events if e["ph"] == "X"]
    end = max(e["ts"] + e["dur"] for e in bars) or 1.0
    left, row_h, top = 90, 34, 28
    scale = (width - left - 10) / end
    height = top + row_h * len(rows) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" font-family="monospace" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="8" y="18">PROFILE=1: {len(bars)} events, '
           f'{end:.0f} us</text>']
    for i, (pid, name) in enumerate(sorted(rows.items())):
        y = top + i * row_h
        out.append(f'<text x="8" y="{y + 20}">{escape(name)}</text>')
        for e in (b for b in bars if b["pid"] == pid):
            x, w = left + e["ts"] * scale, max(e["dur"] * scale, 1.0)
            color = "#e8a0a0" if e["cat"] == "copy" else "#90b8e8"
            out.append(f'<rect x="{x:.1f}" y="{y + 4}" width="{w:.1f}" '
                       f'height="{row_h - 8}" fill="{color}" '
                       f'stroke="#404040" stroke-width="0.5">'
                       f'<title>{escape(e["name"])} {e["dur"]:.1f} us'
                       f'</title></rect>')
            if w > 7 * len(e["name"]):
                out.append(f'<text x="{x + 3:.1f}" y="{y + 21}">'
                           f'{escape(e["name"])}</text>')
    ticks = 5
    for k in range(ticks + 1):
        x = left + (width - left - 10) * k / ticks
        out.append(f'<text x="{x:.0f}" y="{height - 8}" '
                   f'text-anchor="middle">{end * k / ticks:.0f} us</text>')
    out.append("</svg>")
    open(dst, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
