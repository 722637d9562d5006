#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Pictures of ipusim outputs, as PNG files.

  tools/plot.py out/RUN/trace.json      -> trace_gantt.png: each IPU's phases and pipeline stages
  tools/plot.py out/RUN/summary.json    -> summary_balance.png (busiest vs mean tile per compute
                                           set) and summary_memory.png (memory per tile per IPU)
  tools/plot.py out/sweeps/S/results.csv [--x POINTER] [--y METRIC] [--heat POINTER]
                                        -> results_curves.png, or results_heatmap.png with --heat

Files go next to the input unless --out DIR is given. Uses only Python 3 and matplotlib.
"""
import argparse
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

PHASE_COLOURS = {"compute": "#4c72b0", "sync": "#c0c0c0", "exchange": "#dd8452", "host": "#55a868",
                 "ipu_copy": "#8172b3", "collective": "#c44e52", "streaming_memory": "#937860"}
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


def gantt(trace, out):
    """One row of phases and one row of pipeline stages per IPU (time in tile cycles)."""
    events = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X" and e.get("tid") in (0, 1)
              and e.get("cat") not in ("tile", "link")]
    ipus = sorted({e["pid"] for e in events})
    if not ipus:
        fail("the trace has no IPU phases (was it written with --trace?)")
    fig, ax = plt.subplots(figsize=(14, 1.0 + 0.9 * len(ipus)))
    labels = []
    for row, ipu in enumerate(ipus):
        for track in (0, 1):
            y = 2 * row + track
            spans = {}
            for e in events:
                if e["pid"] != ipu or e["tid"] != track:
                    continue
                start, cycles = e["args"]["start_cycle"], e["args"]["cycles"]
                key = e["cat"] if track == 0 else e["name"].split(" ")[0]
                spans.setdefault(key, []).append((start, cycles))
            for key, bars in spans.items():
                colour = (PHASE_COLOURS if track == 0 else STAGE_COLOURS).get(key, "#333333")
                ax.broken_barh(bars, (y - 0.4, 0.8), facecolors=colour, label=key)
            labels.append(f"IPU {ipu} {'phases' if track == 0 else 'stages'}")
    handles, names = ax.get_legend_handles_labels()
    unique = dict(zip(names, handles))
    ax.legend(unique.values(), unique.keys(), loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel("tile cycles")
    ax.set_title("Pipeline Gantt chart")
    fig.tight_layout()
    path = os.path.join(out, "trace_gantt.png")
    fig.savefig(path, dpi=100)
    return [path]


def summary_plots(summary, out):
    """Tile balance of the longest compute sets, and memory per tile of every IPU."""
    paths = []
    balance = summary.get("tile_balance", [])[:20]
    if balance:
        fig, ax = plt.subplots(figsize=(12, 0.5 + 0.35 * len(balance)))
        names = [f"{b['compute_set']} (IPU {b['ipu']})" for b in balance]
        ax.barh(names, [b["busiest_tile_cycles"] for b in balance], color="#c44e52", label="busiest tile")
        ax.barh(names, [b["mean_tile_cycles"] for b in balance], color="#4c72b0", label="mean tile")
        ax.invert_yaxis()
        ax.set_xlabel("tile cycles per execution")
        ax.set_title("Tile balance of the longest compute sets")
        ax.legend()
        fig.tight_layout()
        paths.append(os.path.join(out, "summary_balance.png"))
        fig.savefig(paths[-1], dpi=100)
    memory = summary.get("memory", [])
    if memory:
        fig, axes = plt.subplots(len(memory), 1, figsize=(12, 2.5 * len(memory)), squeeze=False)
        for ax, m in zip(axes[:, 0], memory):
            tiles, always, peak = [], [], []
            for first, count, a, n in m["per_tile"]:
                for t in range(first, first + count):
                    tiles.append(t)
                    always.append(a)
                    peak.append(a + n)
            ax.fill_between(tiles, peak, step="mid", color="#dd8452", label="not always live (peak)")
            ax.fill_between(tiles, always, step="mid", color="#4c72b0", label="always live")
            ax.axhline(m["tile_capacity_bytes"], color="black", linewidth=0.8, label="capacity")
            ax.set_ylabel("bytes")
            ax.set_title(f"IPU {m['ipu']}: memory per tile")
            ax.legend(fontsize="small", loc="upper right")
        axes[-1, 0].set_xlabel("tile")
        fig.tight_layout()
        paths.append(os.path.join(out, "summary_memory.png"))
        fig.savefig(paths[-1], dpi=100)
    if not paths:
        fail("the summary has neither tile_balance nor memory")
    return paths


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


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
        path = os.path.join(out, "results_heatmap.png")
    else:
        # One curve per combination of the other axes.
        others = [a for a in axes if a != x]
        curves = {}
        for r in ok:
            key = ", ".join(f"{a.rsplit('/', 1)[-1]}={r[a]}" for a in others)
            curves.setdefault(key, []).append((number(r[x]), number(r[y])))
        fig, ax = plt.subplots(figsize=(9, 6))
        for key, points in sorted(curves.items()):
            points.sort()
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=key or y)
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        if len(curves) > 1:
            ax.legend(fontsize="small")
        ax.set_title(f"{y} against {x}")
        path = os.path.join(out, "results_curves.png")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return [path]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", help="trace.json, summary.json or a sweep's results.csv")
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
        doc = load_json(args.input)
        if "traceEvents" in doc:
            paths = gantt(doc, out)
        elif "total_cycles" in doc:
            paths = summary_plots(doc, out)
        else:
            fail(f"{args.input}: neither a trace (traceEvents) nor a summary (total_cycles)")
    for p in paths:
        print(p)


if __name__ == "__main__":
    main()
