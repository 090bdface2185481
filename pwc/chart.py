"""The SOTA-history and papers-per-year charts as PNG bytes, rendered deterministically
(docs/cli-contract.md §2.23, §2.24).

One picture of a :func:`pwc.history.sota_history` payload: every dated result as a faint point,
the best-so-far as a dark step line carried to the last result, each step a marked point
labelled with its model, the axes with units and direction, a title naming the benchmark and
the metric. 800×450 pixels; dark line and marks on light grey points and a white ground, so it
reads the same in greyscale.

Same payload, same bytes: matplotlib's Agg canvas on a :class:`~matplotlib.figure.Figure`
(never pyplot's global state), fonts loaded from the files matplotlib ships (never a system
font the font manager might prefer), tick positions computed here, and the PNG written by
Pillow from the pixel buffer with no text chunks (no software version, no timestamp).
matplotlib is imported on first use: the CLI's other commands never pay for it.
"""

from __future__ import annotations

import datetime as dt
import io
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, cast

from pwc.errors import UsageError

if TYPE_CHECKING:  # matplotlib is imported on first use
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.font_manager import FontProperties

    from pwc.history import HistoryPayload, HistoryStep
    from pwc.trends import TrendsPayload, TrendsYear

__all__ = ["HEIGHT", "WIDTH", "history_png", "trends_png", "write_chart"]

WIDTH, HEIGHT, _DPI = 800, 450, 100
_LABELLED_STEPS = 12
_LABEL_CHARS = 28
_INK, _POINTS, _GRID = "#1b2a41", "#b8c0c8", "#e6e9ec"
# matplotlib's text layout keeps per-process caches; one chart at a time keeps them consistent.
_LOCK = threading.Lock()


def _fonts() -> tuple[FontProperties, FontProperties]:
    from pathlib import Path

    import matplotlib
    from matplotlib.font_manager import FontProperties

    folder = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    return (FontProperties(fname=folder / "DejaVuSans.ttf", size=9),
            FontProperties(fname=folder / "DejaVuSans-Bold.ttf", size=11))


def _day(text: object) -> dt.datetime:
    # A history payload's dates are ISO strings (a point is [date, value]).
    return dt.datetime.combine(dt.date.fromisoformat(str(text)), dt.time())


def _years(first: dt.datetime, last: dt.datetime) -> list[int]:
    """Year ticks across the span, at most 10 (every 2nd, 5th... year on long spans)."""
    years = list(range(first.year, last.year + 2))
    step = 1
    while len(years[::step]) > 10:
        step += 1
    return years[::step]


def _short(text: object) -> str:
    label = str(text or "?")
    return label if len(label) <= _LABEL_CHARS else label[:_LABEL_CHARS - 1] + "…"


def _y_label(payload: HistoryPayload) -> str:
    unit = payload.get("unit")
    arrow = "↑" if payload.get("direction") == "higher" else "↓"
    way = f"{payload.get('direction')} is better" + ("" if payload.get("direction_known") else ", assumed")
    return f"{payload.get('metric')}{f' ({unit})' if unit else ''}, {way} {arrow}"


def history_png(payload: Mapping[str, object]) -> bytes:
    """The chart of a history payload as PNG bytes (800×450, palette PNG, no metadata).

    ``payload`` is a :func:`pwc.history.sota_history` (or its JSON round trip through the MCP layer).
    """
    with _LOCK:  # trusted shape, as history_markdown's: built by sota_history
        return _render(cast("HistoryPayload", payload))


def trends_png(payload: Mapping[str, object]) -> bytes:
    """The papers-per-year chart of a :func:`pwc.trends.trends_payload` as PNG bytes (800×450, palette
    PNG, no metadata): a bar per year, the papers with code dark at the bottom, those without light on top."""
    with _LOCK:  # trusted shape, as trends_markdown's: built by trends_payload
        return _render_trends(cast("TrendsPayload", payload))


def write_chart(path: str, draw: Callable[[], bytes]) -> None:
    """``--chart FILE``: write the PNG ``draw()`` makes to ``path``; ``UsageError`` when the file
    cannot be written."""
    try:
        with open(path, "wb") as handle:
            handle.write(draw())
    except OSError as exc:
        raise UsageError(f"cannot write --chart {path}: {exc.strerror or exc}") from None


def _png(fig: Figure, canvas: FigureCanvasAgg) -> bytes:
    from PIL import Image

    canvas.draw()
    pixels = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    # A 64-colour palette keeps the antialiased text and halves the bytes; Pillow writes no text chunk.
    image = pixels.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def _render_trends(payload: TrendsPayload) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    font, bold = _fonts()
    fig = Figure(figsize=(WIDTH / _DPI, HEIGHT / _DPI), dpi=_DPI, facecolor="white")
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0.09, 0.12, 0.88, 0.78))
    entity: Mapping[str, object] = payload.get("entity") or {}
    ax.set_title(f"{entity.get('name') or entity.get('slug') or '?'} ({payload.get('kind')}): papers per year",
                 fontproperties=bold, color=_INK, loc="left")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    rows: Sequence[TrendsYear] = payload.get("years") or []
    if not rows:
        ax.text(0.5, 0.5, "No paper with a publication date", transform=ax.transAxes,
                ha="center", va="center", fontproperties=font, color=_INK)
        ax.set_xticks([])
        ax.set_yticks([])
    else:
        years = [int(row["year"]) for row in rows]
        code = [int(row["with_code"]) for row in rows]
        without = [int(row["papers"]) - int(row["with_code"]) for row in rows]
        ax.bar(years, code, width=0.7, color=_INK, zorder=3, label="with code")
        ax.bar(years, without, width=0.7, bottom=code, color=_POINTS, zorder=3, label="without code")
        top = max(int(row["papers"]) for row in rows)
        ax.set_ylim(0, max(top, 1) * 1.1)
        ticks = [t for t in MaxNLocator(nbins=6, integer=True).tick_values(0, max(top, 1)) if 0 <= t <= max(top, 1)]
        ax.set_yticks(ticks, [f"{t:,.0f}" for t in ticks], fontproperties=font, color=_INK)
        step = 1
        while len(years[::step]) > 15:
            step += 1
        ax.set_xticks(years[::step], [str(y) for y in years[::step]], fontproperties=font, color=_INK)
        ax.set_xlim(years[0] - 0.6, years[-1] + 0.6)
        ax.grid(True, axis="y", color=_GRID, linewidth=0.8, zorder=0)
        legend = fig.legend(loc="lower right", bbox_to_anchor=(0.99, 0.0), ncol=2, prop=font, frameon=False)
        for text in legend.get_texts():
            text.set_color(_INK)
    ax.set_xlabel("publication year", fontproperties=font, color=_INK)
    ax.set_ylabel("papers", fontproperties=font, color=_INK)
    return _png(fig, canvas)


def _render(payload: HistoryPayload) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.dates import date2num
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    font, bold = _fonts()
    fig = Figure(figsize=(WIDTH / _DPI, HEIGHT / _DPI), dpi=_DPI, facecolor="white")
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0.09, 0.12, 0.88, 0.78))
    bench: Mapping[str, object] = payload.get("benchmark") or {}
    title = f"{bench.get('name') or 'Benchmark'}"
    if payload.get("task"):
        title += f" ({payload['task']})"
    ax.set_title(f"{title}: {payload.get('metric') or 'no metric'}, state of the art over time",
                 fontproperties=bold, color=_INK, loc="left")
    points: Sequence[Sequence[str | float]] = payload.get("points") or []
    steps: Sequence[HistoryStep] = payload.get("steps") or []
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_facecolor("white")
    if not points:
        ax.text(0.5, 0.5, "No dated result with a value for this metric", transform=ax.transAxes,
                ha="center", va="center", fontproperties=font, color=_INK)
        ax.set_xticks([])
        ax.set_yticks([])
    else:
        xs = [date2num(_day(d)) for d, _v in points]
        ys = [float(v) for _d, v in points]
        ax.scatter(xs, ys, s=16, color=_POINTS, edgecolors="none", zorder=2, label="every result")
        sx = [date2num(_day(s["date"])) for s in steps]
        sy = [float(s["value"]) for s in steps]
        ax.step([*sx, max(xs)], [*sy, sy[-1]], where="post", color=_INK, linewidth=2, zorder=3,
                label="best so far")
        ax.scatter(sx, sy, s=36, color=_INK, edgecolors="white", linewidths=1, zorder=4)
        low, high = min(ys), max(ys)
        pad = (high - low) * 0.12 or 1.0
        ax.set_ylim(low - pad, high + pad)
        first, last = _day(points[0][0]), _day(points[-1][0])
        years = _years(first, last)
        ax.set_xlim(date2num(_day(f"{years[0]}-01-01")) - 30, max(date2num(last) + 30,
                                                                   date2num(_day(f"{years[-1]}-01-01"))))
        ax.set_xticks([date2num(_day(f"{y}-01-01")) for y in years], [str(y) for y in years],
                      fontproperties=font, color=_INK)
        ticks = [t for t in MaxNLocator(nbins=6).tick_values(low - pad, high + pad) if low - pad <= t <= high + pad]
        ax.set_yticks(ticks, [f"{t:g}" for t in ticks], fontproperties=font, color=_INK)
        ax.grid(True, axis="y", color=_GRID, linewidth=0.8, zorder=0)
        left, right = ax.get_xlim()
        for rank, step in enumerate(steps[-_LABELLED_STEPS:]):
            below = rank % 2 == 1
            x = date2num(_day(step["date"]))
            # Labels in the right third point left, so none runs off the chart.
            leftward = x > left + (right - left) * 2 / 3
            ax.annotate(_short(step.get("model")), (x, float(step["value"])),
                        xytext=(-4 if leftward else 4, -8 if below else 6), textcoords="offset points",
                        fontproperties=font, color=_INK, zorder=5,
                        ha="right" if leftward else "left", va="top" if below else "bottom")
        # In the figure's bottom-right corner, beside the date label: never over a point or the title.
        legend = fig.legend(loc="lower right", bbox_to_anchor=(0.99, 0.0), ncol=2, prop=font, frameon=False)
        for text in legend.get_texts():
            text.set_color(_INK)
    ax.set_xlabel("publication date", fontproperties=font, color=_INK)
    ax.set_ylabel(_y_label(payload), fontproperties=font, color=_INK)
    return _png(fig, canvas)
