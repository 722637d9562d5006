#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Pictures of ipusim outputs, as PNG files.

  tools/plot.py out/RUN/trace.json      -> trace_gantt.png: each IPU's phases and pipeline stages,
                                           and the host's first two tracks
  tools/plot.py out/RUN/summary.json    -> summary_balance.png (busiest vs mean tile per compute
                                           set), summary_op_types.png (compute time and FLOP rate
                                           by op type), summary_memory.png (memory per tile per
                                           IPU) and summary_liveness.png (bytes live per step)
  tools/plot.py out/RUN/oom_report.json -> oom_memory.png: memory per tile of each IPU found not
                                           to fit, against its capacity
  tools/plot.py out/sweeps/S/results.csv [--x POINTER] [--y METRIC] [--heat POINTER]
                                        -> results_<METRIC>_vs_<X>.png, or
                                           results_<METRIC>_heat_<X>_<HEAT>.png with --heat

Files go next to the input unless --out DIR is given. Uses only Python 3 and matplotlib.
"""
import argparse
import collections
import csv
import json
import os
import re
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

PHASE_COLOURS = {"compute": "#4c72b0", "sync": "#c0c0c0", "exchange": "#dd8452", "host": "#55a868",
                 "ipu_copy": "#8172b3", "collective": "#c44e52", "streaming_memory": "#937860", "host_wait": "#da8bc3"}
STAGE_COLOURS = {"forward": "#2ca02c", "backward": "#d62728", "stash": "#bcbd22", "restore": "#17becf",
                 "recompute": "#9467bd", "update": "#7f7f7f", "output": "#8c564b"}


def fail(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")


# Columns a Gantt row is drawn at when it has more spans than this: at a figure's width, finer
# bars would only be a barcode.
GANTT_COLUMNS = 1400

# The least part of a row's height a state is drawn at in a column it runs in at all: a pipeline
# stage that takes a few % of every column would otherwise be a hairline.
MIN_SHARE = 0.1

# Legends beside the axes: inside, they cover data (the last tiles of a memory map).
BESIDE = {"loc": "upper left", "bbox_to_anchor": (1.0, 1.0), "fontsize": "small"}


# The names of what is drawn: a process (it has no track) and its first two tracks.
DRAWN_NAMES = {("process_name", None), ("thread_name", 0), ("thread_name", 1)}

# The fields of a phase or pipeline slice as ipusim writes it (ChromeTrace.cpp), four times
# faster to match than to parse as JSON.
SPAN_LINE = re.compile(r'\{"ph":"X","pid":(?P<pid>\d+),"tid":(?P<tid>[01]),"cat":"(?P<cat>[a-z_]+)",'
                       r'"name":"(?P<word>[^" \\]*)[^"\\]*",.*?"start_cycle":(?P<start>\d+),"cycles":(?P<cycles>\d+)')


def save(fig, path):
    """Writes the figure as a PNG file and returns its path."""
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def trace_spans(path):
    """The rows to draw and the trace's names for them: ({(pid, track): [(start, cycles, key)]},
    {(pid, track): name}, a process's own name under track None). Tracks 0 and 1 are drawn: an
    IPU's phases (keyed by kind) and pipeline slices (keyed by pass), or the host's first two.
    ipusim writes one event per line, so the trace is read a line at a time and never held
    whole; other writers' traces are read whole."""
    rows, names = {}, {}

    def span(pid, tid, cat, first_word, start, cycles):
        if tid in (0, 1) and cat not in ("tile", "link"):
            rows.setdefault((pid, tid), []).append((start, cycles, first_word if cat == "pipeline" else cat))

    def add(e):
        args = e.get("args", {})
        if e.get("ph") == "X" and "start_cycle" in args:
            span(e["pid"], e.get("tid"), e.get("cat"), e["name"].split(" ")[0], args["start_cycle"], args["cycles"])
        elif e.get("ph") == "M" and (e.get("name"), e.get("tid")) in DRAWN_NAMES:
            # A later name replaces an earlier one: ipusim renames an IPU with its stage balance.
            names[(e["pid"], e.get("tid"))] = args["name"]

    try:
        with open(path) as f:
            first = f.readline()
            if not first.startswith('{"displayTimeUnit"') or '"traceEvents"' in first:
                f.seek(0)
                for e in json.load(f).get("traceEvents", []):
                    add(e)
                return rows, names
            for line in f:
                if line.startswith('{"ph":"M"'):
                    if '"args":{"name":"tile ' not in line:  # the many tile tracks' names: skipped unparsed
                        add(json.loads(line.rstrip().rstrip(",")))
                    continue
                if not line.startswith('{"ph":"X"') or '"cat":"tile"' in line:
                    continue  # tile spans are not drawn
                fields = SPAN_LINE.match(line)
                if not fields:  # a name with quotes in it, a tile or link span: parse it all
                    add(json.loads(line.rstrip().rstrip(",")))
                else:
                    span(int(fields["pid"]), int(fields["tid"]), fields["cat"], fields["word"], int(fields["start"]),
                         int(fields["cycles"]))
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    return rows, names


def row_labels(names, pid):
    """A process's two rows, named as the trace names the process and its tracks ("IPU 0
    phases", "host dispatch"); a trace without names is taken as ipusim's IPUs."""
    process = names.get((pid, None), f"IPU {pid}")
    return [f"{process} {names.get((pid, track), default)}" for track, default in ((0, "phases"), (1, "pipeline"))]


def column_shares(spans, begin, end):
    """Spans merged to GANTT_COLUMNS columns of [begin, end): the columns' edges and each key's
    share of each column's cycles; what no key covers is idle."""
    width = max(1, -(-(end - begin) // GANTT_COLUMNS))
    edges = list(range(begin, end, width)) + [end]
    shares = collections.defaultdict(lambda: [0] * (len(edges) - 1))
    for start, cycles, key in spans:
        covered = shares[key]
        t, stop = start, start + cycles
        while t < stop:
            column = (t - begin) // width
            until = min(stop, edges[column + 1])
            covered[column] += until - t
            t = until
    widths = [b - a for a, b in zip(edges, edges[1:])]
    return edges, {key: [c / w for c, w in zip(covered, widths)] for key, covered in shares.items()}


def stacked(shares):
    """Each key's part of each column's height: its share, but at least MIN_SHARE wherever it
    runs, so that no state that runs in a column vanishes from it; a column whose states then
    overfill it is scaled down to fit. The rest is idle and drawn empty, so bubbles stay gaps."""
    heights = {key: [max(s, MIN_SHARE) if s > 0 else 0.0 for s in share] for key, share in shares.items()}
    for column, total in enumerate(map(sum, zip(*heights.values()))):
        if total > 1:
            for h in heights.values():
                h[column] /= total
    return heights


def legend_order(keys):
    """Phases, then pipeline passes, each in its palette's order; others last, by name."""
    order = list(PHASE_COLOURS) + list(STAGE_COLOURS)
    return sorted(keys, key=lambda k: (order.index(k) if k in order else len(order), k))


def gantt_row(ax, y, spans, begin, end, colours):
    """Draws one row: each span as a bar or, past GANTT_COLUMNS spans, columns stacked by share
    (one filled outline per key, fast however long the run). Returns the keys drawn and whether
    the row was binned."""
    if len(spans) <= GANTT_COLUMNS:
        by_key = {}
        for start, cycles, key in spans:
            by_key.setdefault(key, []).append((start, cycles))
        for key, bars in by_key.items():
            ax.broken_barh(bars, (y - 0.4, 0.8), facecolors=colours.get(key, "#333333"))
        return set(by_key), False
    edges, shares = column_shares(spans, begin, end)
    heights = stacked(shares)
    bottom = [y + 0.4] * (len(edges) - 1)  # the y axis is inverted: the row's foot is its largest y
    for key in legend_order(heights):
        top = [b - 0.8 * h for b, h in zip(bottom, heights[key])]
        ax.fill_between(edges, bottom + bottom[-1:], top + top[-1:], step="post", linewidth=0,
                        color=colours.get(key, "#333333"))
        bottom = top
    return set(heights), True


def gantt(path, out):
    """One row of phases and one row of pipeline stages per IPU (time in tile cycles), and the
    host's first two tracks."""
    rows, names = trace_spans(path)
    pids = sorted({pid for pid, _ in rows})
    if not pids:
        fail(f"{path}: the trace has no IPU phases (was it written with --trace?)")
    # A windowed trace is drawn over its window, not from cycle 0.
    begin = min(start for spans in rows.values() for start, _, _ in spans)
    end = max(start + cycles for spans in rows.values() for start, cycles, _ in spans)
    # ipusim names an IPU with its stage balance: long names wrap, and their rows grow to fit.
    labels = [textwrap.fill(label, 40, break_on_hyphens=False) for pid in pids for label in row_labels(names, pid)]
    lines = sum(max(2, label.count("\n") + 1) for label in labels)
    fig, ax = plt.subplots(figsize=(14, 1.0 + 0.22 * lines))
    shown, coarse = {}, False
    for row, pid in enumerate(pids):
        for track in (0, 1):
            colours = PHASE_COLOURS if track == 0 else STAGE_COLOURS
            keys, binned = gantt_row(ax, 2 * row + track, rows.get((pid, track), []), begin, end, colours)
            shown.update((key, colours.get(key, "#333333")) for key in keys)
            coarse |= binned
    keys = legend_order(shown)
    ax.legend([plt.Rectangle((0, 0), 1, 1, color=shown[k]) for k in keys], keys, **BESIDE)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize="small")
    ax.invert_yaxis()
    ax.set_xlim(begin, end)
    ax.set_xlabel("tile cycles" + (f"\n(busy rows in {GANTT_COLUMNS} columns, each stacked by its states' shares, at"
                                   f" least {MIN_SHARE:.0%} of the row for a state that runs in it at all; idle time"
                                   " left empty)" if coarse else ""))
    ax.set_title("Phases and pipeline stages per IPU")
    return [save(fig, os.path.join(out, "trace_gantt.png"))]


def number_set(texts):
    """Numbers as a set, runs of three or more as ranges: ["3", "4", "5", "9"] -> "{3..5,9}"."""
    runs = []
    for n in sorted({int(t) for t in texts}):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return "{" + ",".join(f"{a}..{b}" if b > a + 1 else ",".join(map(str, range(a, b + 1))) for a, b in runs) + "}"


def balance_bars(balance, count=20):
    """(label, busiest tile cycles, mean tile cycles) of the longest compute sets, longest first.
    The layers of a model are alike: the compute sets of one IPU with the same cycles whose names
    differ only in their numbers are one bar, "layer{3..9}.ffn.output ×7 (IPU 1)", not seven."""
    groups = {}
    for b in balance:
        parts = re.split(r"(\d+)", b["compute_set"])
        key = (b["ipu"], b["busiest_tile_cycles"], b["mean_tile_cycles"], tuple(parts[0::2]))
        groups.setdefault(key, []).append(parts[1::2])
    bars = []
    for (ipu, busiest, mean, texts), numbers in list(groups.items())[:count]:
        values = [sorted(set(n)) for n in zip(*numbers)]
        shown = [v[0] if len(v) == 1 else number_set(v) for v in values]
        name = "".join(t + n for t, n in zip(texts, shown + [""]))
        times = f" ×{len(numbers)}" if len(numbers) > 1 else ""
        bars.append((f"{name}{times} (IPU {ipu})", busiest, mean))
    return bars


def summary_plots(summary, out):
    """Tile balance of the longest compute sets, op types, memory per tile and liveness."""
    paths = []
    balance = balance_bars(summary.get("tile_balance", []))
    if balance:
        fig, ax = plt.subplots(figsize=(12, 0.5 + 0.35 * len(balance)))
        names = [name for name, _, _ in balance]
        ax.barh(names, [busiest for _, busiest, _ in balance], color="#c44e52", label="busiest tile")
        ax.barh(names, [mean for _, _, mean in balance], color="#4c72b0", label="mean tile")
        ax.invert_yaxis()
        ax.set_xlabel("tile cycles per execution")
        ax.set_title("Tile balance of the longest compute sets (×N: N compute sets alike but for their layer number)")
        ax.legend(**BESIDE)
        paths.append(save(fig, os.path.join(out, "summary_balance.png")))
    op_types = summary.get("op_types", [])[:20]
    if op_types:
        fig, ax = plt.subplots(figsize=(12, 0.5 + 0.35 * len(op_types)))
        names = [t["op_type"] for t in op_types]
        ax.barh(names, [100 * t["share_of_compute"] for t in op_types], color="#4c72b0")
        for y, t in enumerate(op_types):
            if t["flops"] > 0:
                ax.annotate(f" {t['tflops_while_running']:.1f} TFLOPS", (100 * t["share_of_compute"], y), va="center",
                            fontsize="small")
        ax.invert_yaxis()
        ax.set_xlabel("% of compute-set time (all IPUs, all executions)")
        ax.set_title("Op types by compute time, with the FLOP rate of matmuls and convolutions")
        paths.append(save(fig, os.path.join(out, "summary_op_types.png")))
    memory = summary.get("memory", [])
    if memory:
        paths.append(save(memory_figure(memory), os.path.join(out, "summary_memory.png")))
    if any("liveness" in m for m in memory):
        paths.append(save(liveness_figure(memory), os.path.join(out, "summary_liveness.png")))
    if not paths:
        fail("the summary has neither tile_balance nor memory")
    return paths


def memory_figure(ipus):
    """Always-live and peak memory of every tile, one panel per IPU, against its capacity."""
    fig, axes = plt.subplots(len(ipus), 1, figsize=(12, 2.5 * len(ipus)), squeeze=False)
    for ax, m in zip(axes[:, 0], ipus):
        tiles, always, peak = [], [], []
        for first, count, a, n in m["per_tile"]:
            # Two points per run of equal tiles draw it as a flat step.
            tiles += [first, first + count]
            always += [a, a]
            peak += [a + n, a + n]
        capacity = m["tile_capacity_bytes"]
        ax.fill_between(tiles, peak, color="#dd8452", label="not always live (peak)")
        ax.fill_between(tiles, always, color="#4c72b0", label="always live")
        ax.axhline(capacity, color="black", linewidth=0.8, label="capacity")
        over = f", {m['tiles_over']} tiles over capacity" if not m.get("fits", True) else ""
        ax.set_ylabel("bytes")
        ax.set_title(f"IPU {m['ipu']}: memory per tile{over}")
        ax.legend(**BESIDE)
    axes[-1, 0].set_xlabel("tile")
    return fig


def liveness_figure(ipus):
    """Bytes live at each program step: the whole IPU's and its peak tile's, from 0 bytes, so
    that a swing reads at its true size against the whole."""
    ipus = [m for m in ipus if "liveness" in m]
    fig, axes = plt.subplots(len(ipus), 2, figsize=(14, 2.5 * len(ipus)), squeeze=False)
    for (whole, tile), m in zip(axes, ipus):
        live = m["liveness"]
        steps = range(len(live["ipu_bytes"]))
        whole.step(steps, live["ipu_bytes"], where="post", color="#4c72b0")
        whole.set_title(f"IPU {m['ipu']}: bytes live on the IPU")
        tile.step(steps, live["peak_tile_bytes"], where="post", color="#dd8452")
        tile.axhline(m["tile_capacity_bytes"], color="black", linewidth=0.8, label="capacity")
        tile.set_title(f"IPU {m['ipu']}: bytes live on tile {live['peak_tile']} (its peak tile)")
        tile.legend(fontsize="small", loc="upper right")
        for ax in (whole, tile):
            ax.set_ylabel("bytes")
            ax.set_ylim(bottom=0)  # after the data: a limit set first would stop the top following it
    for ax in axes[-1]:
        ax.set_xlabel("program step (liveness order)")
    return fig


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def sort_key(text):
    """Numbers in numeric order (2 before 16), then text."""
    value = number(text)
    return (0, value, "") if value is not None else (1, 0.0, text)


def geometric(values):
    """A sweep axis spaced by ratios (a log sweep, or powers of two): drawn on a log axis."""
    xs = sorted({v for v in values if v is not None})
    if len(xs) < 3 or xs[0] <= 0:
        return False
    ratios = [b / a for a, b in zip(xs, xs[1:])]
    steps = [b - a for a, b in zip(xs, xs[1:])]
    return xs[-1] / xs[0] >= 8 and max(ratios) / min(ratios) < max(steps) / min(steps)


def file_part(text):
    """A column or pointer as part of a file name: /system/ipu/tiles -> system.ipu.tiles."""
    return "".join(c if c.isalnum() or c in "_-" else "." for c in text.strip("/")).strip(".") or "value"


def sweep_plots(rows, axes, out, x, y, heat):
    ok = [r for r in rows if r["status"] == "ok"]
    if not ok:
        fail("the sweep has no successful points")
    if y not in rows[0]:
        fail(f"no column {y!r} in the results (columns: {', '.join(rows[0])})")
    x = x or axes[0]
    if x not in axes:
        fail(f"--x {x!r} is not an axis of the sweep (axes: {', '.join(axes)})")
    if heat:
        if heat not in axes or heat == x:
            fail(f"--heat {heat!r} must be another axis of the sweep (axes: {', '.join(axes)})")
        xs = sorted({number(r[x]) for r in ok})
        hs = sorted({number(r[heat]) for r in ok})
        grid = [[float("nan")] * len(xs) for _ in hs]
        for r in ok:
            grid[hs.index(number(r[heat]))][xs.index(number(r[x]))] = number(r[y])
        fig, ax = plt.subplots(figsize=(8, 6))
        image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
        ax.set_xticks(range(len(xs)))
        ax.set_xticklabels([f"{v:g}" for v in xs], rotation=45)
        ax.set_yticks(range(len(hs)))
        ax.set_yticklabels([f"{v:g}" for v in hs])
        ax.set_xlabel(x)
        ax.set_ylabel(heat)
        fig.colorbar(image, label=y)
        ax.set_title(f"{y}")
        path = os.path.join(out, f"results_{file_part(y)}_heat_{file_part(x)}_{file_part(heat)}.png")
    else:
        # One curve per combination of the other axes, in their numeric order.
        others = [a for a in axes if a != x]
        curves = {}
        for r in ok:
            values = tuple(r[a] for a in others)
            curves.setdefault(values, []).append((number(r[x]), number(r[y])))
        fig, ax = plt.subplots(figsize=(9, 6))
        for values in sorted(curves, key=lambda v: [sort_key(t) for t in v]):
            points = sorted(curves[values])
            label = ", ".join(f"{a.rsplit('/', 1)[-1]}={v}" for a, v in zip(others, values))
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label or y)
        if geometric([number(r[x]) for r in ok]):
            ax.set_xscale("log")
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        if len(curves) > 1:
            ax.legend(fontsize="small")
        ax.set_title(f"{y} against {x}")
        path = os.path.join(out, f"results_{file_part(y)}_vs_{file_part(x)}.png")
    return [save(fig, path)]


def is_trace(path):
    """ipusim's traces start with their header line; reading it is enough to tell."""
    try:
        with open(path) as f:
            return f.read(20).startswith('{"displayTimeUnit"')
    except OSError as e:
        fail(f"{path}: {e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", help="trace.json, summary.json, oom_report.json or a sweep's results.csv")
    parser.add_argument("--out", help="folder for the PNG files (default: next to the input)")
    parser.add_argument("--x", help="sweep axis (JSON pointer) for the x axis (default: the first)")
    parser.add_argument("--y", default="total_cycles", help="sweep column to plot (default: total_cycles)")
    parser.add_argument("--heat", help="second sweep axis: draw a heat map instead of curves")
    args = parser.parse_args()
    out = args.out or os.path.dirname(os.path.abspath(args.input))
    os.makedirs(out, exist_ok=True)
    name = os.path.basename(args.input)
    if name.endswith(".csv"):
        try:
            with open(args.input, newline="") as f:
                rows = list(csv.DictReader(f))
        except OSError as e:
            fail(f"{args.input}: {e}")
        if not rows:
            fail(f"{args.input}: no rows")
        columns = list(rows[0].keys())
        axes = columns[1:columns.index("status")]
        paths = sweep_plots(rows, axes, out, args.x, args.y, args.heat)
    else:
        if is_trace(args.input):
            paths = gantt(args.input, out)
        else:
            doc = load_json(args.input)
            if "total_cycles" in doc:
                paths = summary_plots(doc, out)
            elif doc.get("error") == "out of memory":
                paths = [save(memory_figure(doc["ipus"]), os.path.join(out, "oom_memory.png"))]
            elif "traceEvents" in doc:
                paths = gantt(args.input, out)
            else:
                fail(f"{args.input}: neither a trace (traceEvents), a summary (total_cycles) nor an out-of-memory report")
    for p in paths:
        print(p)


if __name__ == "__main__":
    main()
