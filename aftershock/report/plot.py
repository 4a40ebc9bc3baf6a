"""Draw a Picture: a PNG (matplotlib) for reports and notebooks, and a self-contained
interactive HTML page (SVG with a tooltip per bar, span and tick, and a zoom control)."""

from __future__ import annotations

import html
from pathlib import Path

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from aftershock.report.picture import COLOURS, FAULT_COLOUR, WITNESS_COLOUR, Picture

LANE = 22  # px per lane in the HTML drawing
LEFT = 260  # px for lane names
TICK_ROWS = 6  # tick labels are staggered over this many rows


def figure(picture: Picture, title: str = ""):
    """A matplotlib Figure (Agg backend: no display needed)."""
    lanes = max(len(picture.lanes), 1)
    fig = Figure(figsize=(14, 2.2 + 0.28 * lanes), dpi=100)
    ax = fig.add_subplot()
    for span in picture.faults:
        ax.axvspan(span.start, span.end, color=FAULT_COLOUR, alpha=0.18, lw=0)
        ax.text(span.start, lanes - 0.4, f" {span.label}", fontsize=7, color="#b71c1c",
                va="bottom", clip_on=True)
    for segment in picture.segments:
        ax.barh(segment.lane, segment.end - segment.start, left=segment.start, height=0.7,
                color=COLOURS[segment.state], edgecolor="none")
    for tick in picture.ticks:
        ax.axvline(tick.at, color=WITNESS_COLOUR if tick.witness else "#5c6bc0",
                   lw=1.4 if tick.witness else 0.6, alpha=0.9 if tick.witness else 0.5)
    ax.set_yticks(range(len(picture.lanes)))
    ax.set_yticklabels([f"{node}  {pod}" for node, pod in picture.lanes], fontsize=7)
    ax.set_ylim(-0.8, lanes - 0.2)
    ax.invert_yaxis()
    ax.set_xlim(0, max(picture.duration, 0.001))
    ax.set_xlabel("seconds since the first recorded event")
    handles = [Patch(color=colour, label=state) for state, colour in COLOURS.items()]
    handles += [Patch(color=FAULT_COLOUR, alpha=0.3, label="fault active"),
                Patch(color=WITNESS_COLOUR, label="witness event")]
    ax.legend(handles=handles, fontsize=7, loc="upper center", ncol=len(handles),
              bbox_to_anchor=(0.5, -0.12 - 1.2 / (2.2 + 0.28 * lanes)), frameon=False)
    if title:
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


def write_png(picture: Picture, path: Path, title: str = "") -> Path:
    figure(picture, title).savefig(path)
    return path


def _x(at: float, duration: float, width: int) -> float:
    return LEFT + (width - LEFT - 10) * at / max(duration, 0.001)


def svg(picture: Picture, width: int = 1400) -> str:
    top = 14 * TICK_ROWS + 10
    height = top + LANE * max(len(picture.lanes), 1) + 30
    duration = picture.duration
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="11">']
    for span in picture.faults:
        x0, x1 = _x(span.start, duration, width), _x(span.end, duration, width)
        parts.append(f'<rect class="fault" x="{x0:.1f}" y="{top}" width="{max(x1 - x0, 1):.1f}" '
                     f'height="{height - top - 30}" fill="{FAULT_COLOUR}" opacity="0.18">'
                     f"<title>fault: {html.escape(span.label)} "
                     f"({span.start:.3f}s to {span.end:.3f}s)</title></rect>")
    for lane, (node, pod) in enumerate(picture.lanes):
        y = top + lane * LANE
        parts.append(f'<text x="4" y="{y + 15}">{html.escape(node)} '
                     f"{html.escape(pod)}</text>")
    for segment in picture.segments:
        x0, x1 = _x(segment.start, duration, width), _x(segment.end, duration, width)
        y = top + segment.lane * LANE + 3
        pod = picture.lanes[segment.lane][1]
        parts.append(f'<rect x="{x0:.1f}" y="{y}" width="{max(x1 - x0, 1):.1f}" height="16" '
                     f'fill="{COLOURS[segment.state]}"><title>{html.escape(pod)}: '
                     f"{segment.state} {segment.start:.3f}s to {segment.end:.3f}s</title></rect>")
    for index, tick in enumerate(sorted(picture.ticks, key=lambda t: t.at)):
        x = _x(tick.at, duration, width)
        colour = WITNESS_COLOUR if tick.witness else "#5c6bc0"
        label = html.escape(tick.label)
        cls, stroke, opacity = ("witness", 2, 0.9) if tick.witness else ("tick", 1, 0.45)
        y1 = 10 + 14 * (index % TICK_ROWS)
        parts.append(f'<line class="{cls}" x1="{x:.1f}" x2="{x:.1f}" y1="{y1}" '
                     f'y2="{height - 30}" stroke="{colour}" stroke-width="{stroke}" '
                     f'opacity="{opacity}"><title>+{tick.at:.3f}s {label}</title></line>')
    for second in range(0, int(duration) + 1, max(1, int(duration // 20) or 1)):
        x = _x(second, duration, width)
        parts.append(f'<text x="{x:.1f}" y="{height - 12}" text-anchor="middle">{second}s</text>')
    parts.append("</svg>")
    return "".join(parts)


def page(picture: Picture, title: str, witness: str = "") -> str:
    """The interactive timeline: hover for details; the slider widens the drawing."""
    legend = " ".join(f'<span style="background:{c};padding:0 6px">{html.escape(s)}</span>'
                      for s, c in COLOURS.items())
    witness_block = (f"<h2>Witness</h2><pre id='witness'>{html.escape(witness)}</pre>"
                     if witness else "")
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>body{{font-family:sans-serif;margin:12px}}"
        "#plot{overflow-x:auto;border:1px solid #ccc}pre{background:#f5f5f5;padding:8px}</style>"
        "</head><body>"
        f"<h1 style='font-size:16px'>{html.escape(title)}</h1>"
        f"<p>{legend} <span style='background:{FAULT_COLOUR};opacity:.5;padding:0 6px'>fault"
        f"</span> <span style='color:{WITNESS_COLOUR}'>| witness</span> "
        "<label>zoom <input id='zoom' type='range' min='1' max='8' step='0.5' value='1'>"
        "</label></p>"
        f"<div id='plot'>{svg(picture)}</div>{witness_block}"
        "<script>const z=document.getElementById('zoom'),s=document.querySelector('#plot svg'),"
        "w=s.getAttribute('width');z.oninput=()=>{s.setAttribute('width',w*z.value);"
        "s.setAttribute('viewBox','0 0 '+w+' '+s.getAttribute('height'));"
        "s.setAttribute('preserveAspectRatio','none')};</script>"
        "</body></html>\n")
