"""Small SVG charts for the dashboard (I5, T6), rendered on the server: pure functions from
numbers to markup, no script and nothing fetched from anywhere. Every text is escaped; every
bar and point carries a ``<title>`` (a tooltip, and what a screen reader reads)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

WIDTH, HEIGHT = 560, 170
LEFT, RIGHT, TOP, BOTTOM = 40, 10, 12, 22
MIN_BAR = 1.5  # the height of a bar for any request: 1 beside 400 was 0.3, shown as none
COLOURS = {
    "search": "#2457c5",
    "bundle": "#1a7f37",
    "hook": "#b35c00",
    "p50": "#2457c5",
    "p95": "#b42318",
    "bar": "#2457c5",
}


def _svg(label: str, body: list[str], height: int = HEIGHT) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
        f'width="100%" role="img" aria-label="{escape(label)}" class="chart">'
        f"<title>{escape(label)}</title>{''.join(body)}</svg>"
    )


def _nice(top: float) -> float:
    """A round axis maximum at least ``top`` (1, 2, 5 × a power of ten)."""
    if top <= 0:
        return 1.0
    step = 1.0
    while step * 10 <= top:
        step *= 10
    while step > top * 10:
        step /= 10
    return next(m * step for m in (1, 2, 5, 10) if m * step >= top)


def _left(top: float, unit: str) -> int:
    """Where the plot starts: right of the maximum's label, however long ("2,000 ms" was cut
    to "000 ms" at a fixed margin). About 6 units a character at font size 10."""
    return max(LEFT, 8 + 6 * len(_number(top) + unit))


def _frame(top: float, unit: str, days: Sequence[str]) -> list[str]:
    """Axes, the maximum's label, and the first and last day under the plot."""
    bottom, left = HEIGHT - BOTTOM, _left(top, unit)
    out = [
        f'<line x1="{left}" y1="{bottom}" x2="{WIDTH - RIGHT}" y2="{bottom}" stroke="#dde2e7"/>',
        f'<line x1="{left}" y1="{TOP}" x2="{WIDTH - RIGHT}" y2="{TOP}" stroke="#eef1f4"/>',
        f'<text x="{left - 4}" y="{TOP + 4}" text-anchor="end" font-size="10" '
        f'fill="#5b6670">{escape(_number(top))}{escape(unit)}</text>',
        f'<text x="{left - 4}" y="{bottom}" text-anchor="end" font-size="10" fill="#5b6670">0</text>',
    ]
    if days:
        out.append(_label(left, HEIGHT - 6, days[0], "start"))
        out.append(_label(WIDTH - RIGHT, HEIGHT - 6, days[-1], "end"))
    return out


def _label(x: float, y: float, text: str, anchor: str) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="10" '
        f'fill="#5b6670">{escape(text)}</text>'
    )


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 or value == int(value) else f"{value:.2g}"


def stacked_bars(label: str, days: Sequence[str], series: Mapping[str, Sequence[int]]) -> str:
    """One bar per day, stacked by series (requests per day by kind)."""
    totals = [sum(values[i] for values in series.values()) for i in range(len(days))]
    top = _nice(max(totals, default=0))
    left = _left(top, "")
    plot_w, plot_h = WIDTH - left - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(1, len(days))
    body = _frame(top, "", days)
    for i, day in enumerate(days):
        y: float = HEIGHT - BOTTOM
        for name, values in series.items():
            value = values[i]
            if not value:
                continue
            h = max(plot_h * value / top, MIN_BAR)  # a quiet day is not an empty one
            y -= h
            colour = COLOURS.get(name, COLOURS["bar"])
            body.append(
                f'<rect x="{left + i * slot + slot * 0.15:.1f}" y="{y:.1f}" '
                f'width="{slot * 0.7:.1f}" height="{h:.1f}" fill="{colour}">'
                f"<title>{escape(day)}: {value} {escape(name)}</title></rect>"
            )
    body += _legend(list(series))
    return _svg(label, body)


def lines(label: str, days: Sequence[str], series: Mapping[str, Sequence[float | None]]) -> str:
    """One line per series over the days (latency p50 and p95); days without a value leave a
    gap in the line."""
    values = [v for points in series.values() for v in points if v is not None]
    top = _nice(max(values, default=0))
    left = _left(top, " ms")
    plot_w, plot_h = WIDTH - left - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(1, len(days))
    body = _frame(top, " ms", days)
    for name, points in series.items():
        colour = COLOURS.get(name, COLOURS["bar"])
        run: list[str] = []
        for i, value in enumerate([*points, None]):
            if value is None:
                if len(run) > 1:
                    body.append(
                        f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" '
                        f'points="{" ".join(run)}"/>'
                    )
                run = []
                continue
            x, y = left + (i + 0.5) * slot, HEIGHT - BOTTOM - plot_h * value / top
            run.append(f"{x:.1f},{y:.1f}")
            body.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2" fill="{colour}">'
                f"<title>{escape(days[i])}: {escape(name)} {value:.1f} ms</title></circle>"
            )
    body += _legend(list(series))
    return _svg(label, body)


def horizontal_bars(label: str, rows: Sequence[tuple[str, int]], unit: str = "") -> str:
    """One labelled bar per row (the most served documents), longest first as given."""
    row_h, label_w = 18, 250
    height = max(1, len(rows)) * row_h + 8
    top = max((v for _, v in rows), default=0) or 1
    body = []
    for i, (name, value) in enumerate(rows):
        y = 4 + i * row_h
        w = (WIDTH - label_w - 50) * value / top
        short = name if len(name) <= 40 else "…" + name[-39:]
        body.append(_label(label_w - 6, y + 12, short, "end"))
        body.append(
            f'<rect x="{label_w}" y="{y + 2}" width="{max(w, 1):.1f}" height="{row_h - 6}" '
            f'fill="{COLOURS["bar"]}"><title>{escape(name)}: {value}{escape(unit)}</title></rect>'
        )
        body.append(_label(label_w + w + 4, y + 12, f"{value}", "start"))
    return _svg(label, body, height)


def _legend(names: list[str]) -> list[str]:
    out = []
    x = WIDTH - RIGHT - 70 * len(names)
    for name in names:
        colour = COLOURS.get(name, COLOURS["bar"])
        out.append(f'<rect x="{x}" y="2" width="8" height="8" fill="{colour}"/>')
        out.append(_label(x + 11, 10, name, "start"))
        x += 70
    return out
