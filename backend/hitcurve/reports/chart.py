"""The e-mail's chart: a cluster's hit-rate curve as a PNG, drawn server-side with Pillow (mail
clients show no SVG or script, and an image from our server would be blocked or tracked: the PNG
travels inside the e-mail as a CID-attached part).

What it shows is what the report's text says: the curve the sizing answer read (and its band),
the target hit rate, today's memory with the measured hit rate, and the memory limit (-m) to set
for the target. Drawn at twice the displayed size so it stays sharp on high-density screens.
"""

from __future__ import annotations

import io
import math

from PIL import Image, ImageDraw, ImageFont

from hitcurve.reports.content import ClusterReport
from hitcurve.rules.percent import NBSP, hit_rate

# Displayed size in the e-mail (CSS pixels); the PNG has SCALE times as many pixels.
WIDTH, HEIGHT = 600, 280
SCALE = 2
MARGIN_L, MARGIN_R, MARGIN_T, MARGIN_B = 56, 16, 28, 40

INK = (34, 34, 34)
MUTED = (110, 110, 110)
GRID = (226, 229, 234)
CURVE = (29, 78, 216)
BAND = (219, 228, 252)
TARGET = (180, 83, 9)
TODAY = (75, 85, 99)
LIMIT = (21, 128, 61)

MIB = 1 << 20
# A white edge round the labels: the curve, band and grid pass under them without crossing a letter.
HALO_W, HALO_FILL = 2 * SCALE, (255, 255, 255)


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size * SCALE)


def _unit(span: float) -> tuple[float, str]:
    """The axis unit: GiB from 4 GiB of span up, MiB below (every tick in the one unit)."""
    return (float(1 << 30), "GiB") if span >= 4 * (1 << 30) else (float(MIB), "MiB")


def _nice_step(span: float, ticks: int) -> float:
    """A 1-2-5 step in binary units (MiB or GiB) giving about `ticks` intervals over span."""
    unit, _ = _unit(span)
    raw = span / unit / ticks
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return m * mag * unit
    return 10 * mag * unit


def label_at(
    x: float, other: float | None, width: float, left: float, right: float, pad: float
) -> tuple[float, str]:
    """Where a vertical line's label starts and its side ("l": to the right of the line, "r": to
    its left): away from a neighbouring line it would cross, and inside the plot. The demo's mail
    drew "today" at 64 MiB across the -m line at 68 MiB ("oday")."""
    right_room = x + pad + width <= right
    left_room = x - pad - width >= left
    crosses_right = other is not None and x < other <= x + pad + width
    if right_room and not crosses_right:
        return x + pad, "l"
    if left_room:
        return x - pad, "r"
    return (x + pad, "l") if right_room else (x - pad, "r")


def curve_png(c: ClusterReport) -> bytes | None:
    """The cluster's chart as PNG bytes, or None when the cluster has no curve yet."""
    if len(c.curve_points) < 2:
        return None
    # The -m is per node for clusters: on the curve's axis (the cluster's memory) it stands at -m x nodes.
    limit_total = c.memory_limit_bytes * c.nodes if c.memory_limit_bytes is not None else None
    marks = [c.allocated_bytes, limit_total]
    x_max = max([c.curve_points[-1][0], *[m for m in marks if m is not None]]) * 1.04
    s = SCALE
    img = Image.new("RGB", (WIDTH * s, HEIGHT * s), (255, 255, 255))
    d = ImageDraw.Draw(img)
    left, right = MARGIN_L * s, (WIDTH - MARGIN_R) * s
    top, bottom = MARGIN_T * s, (HEIGHT - MARGIN_B) * s

    def px(x: float) -> float:
        return left + (right - left) * x / x_max

    def py(y: float) -> float:
        return bottom - (bottom - top) * max(0.0, min(1.0, y))

    small, tiny = _font(12), _font(11)
    # grid and axes: hit rate 0-100 % every 20 %, memory in 1-2-5 steps
    for i in range(6):
        y = py(i / 5)
        d.line([(left, y), (right, y)], fill=GRID, width=s)
        d.text((left - 6 * s, y), f"{i * 20} %", fill=MUTED, font=tiny, anchor="rm")
    step = _nice_step(x_max, 5)
    unit, unit_name = _unit(x_max)
    v = 0.0
    while v <= x_max:
        x = px(v)
        d.line([(x, top), (x, bottom)], fill=GRID, width=s)
        label = f"{v / unit:g} {unit_name}" if v else "0"
        d.text((x, bottom + 6 * s), label, fill=MUTED, font=tiny, anchor="mt")
        v += step
    d.line([(left, bottom), (right, bottom)], fill=MUTED, width=s)
    d.line([(left, top), (left, bottom)], fill=MUTED, width=s)
    d.text((right, HEIGHT * s - 4 * s), "memory", fill=MUTED, font=tiny, anchor="rd")
    d.text((left, top - 8 * s), "hit rate", fill=MUTED, font=tiny, anchor="ld")

    # band, then the curve
    if c.band_points:
        poly = [(px(x), py(hi)) for x, _, hi in c.band_points] + [
            (px(x), py(lo)) for x, lo, _ in reversed(c.band_points)
        ]
        d.polygon(poly, fill=BAND)
    d.line([(px(x), py(y)) for x, y in c.curve_points], fill=CURVE, width=3 * s, joint="curve")

    # target hit rate
    ty = py(c.target)
    for x0 in range(int(left), int(right), 10 * s):
        d.line([(x0, ty), (min(x0 + 5 * s, right), ty)], fill=TARGET, width=2 * s)
    d.text(
        (left + 4 * s, ty - 4 * s),
        # the dashboard's "90 %" with a plain space: Pillow's default font draws U+00A0 as a box
        f"target {hit_rate(c.target).replace(NBSP, ' ')}",
        fill=TARGET,
        font=small,
        anchor="ld",
        stroke_width=HALO_W,
        stroke_fill=HALO_FILL,
    )

    # the memory limit (-m) for the target, and today's memory with the measured hit rate
    if c.memory_limit_bytes is not None and limit_total is not None:
        x = px(limit_total)
        d.line([(x, top), (x, bottom)], fill=LIMIT, width=2 * s)
        each = f" x {c.nodes} nodes" if c.nodes > 1 else ""
        label = f"-m {c.memory_limit_bytes // MIB}{each} for the target"
        today_x = px(c.allocated_bytes) if c.allocated_bytes is not None else None
        lx, side = label_at(x, today_x, d.textlength(label, font=small), left, right, 4 * s)
        # low in the plot, above "today": a curve rising to the right leaves that corner empty (at
        # the top the label lay on the curve's plateau)
        d.text(
            (lx, bottom - 22 * s),
            label,
            fill=LIMIT,
            font=small,
            anchor=side + "d",
            stroke_width=HALO_W,
            stroke_fill=HALO_FILL,
        )
    if c.needed_bytes is not None:
        x, y, r = px(c.needed_bytes), py(c.target), 4 * s
        d.ellipse([(x - r, y - r), (x + r, y + r)], fill=LIMIT)
    limit_x = px(limit_total) if c.memory_limit_bytes is not None and limit_total is not None else None
    if c.allocated_bytes is not None:
        x = px(c.allocated_bytes)
        for y0 in range(int(top), int(bottom), 8 * s):
            d.line([(x, y0), (x, min(y0 + 4 * s, bottom))], fill=TODAY, width=s)
        if c.measured_week is not None:
            y = py(c.measured_week)
            r = 4 * s
            d.ellipse([(x - r, y - r), (x + r, y + r)], fill=TODAY)
        lx, side = label_at(x, limit_x, d.textlength("today", font=small), left, right, 4 * s)
        d.text(
            (lx, bottom - 4 * s),
            "today",
            fill=TODAY,
            font=small,
            anchor=side + "d",
            stroke_width=HALO_W,
            stroke_fill=HALO_FILL,
        )

    out = io.BytesIO()
    img.save(out, format="PNG", optimize=True)
    return out.getvalue()
