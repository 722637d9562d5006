# SPDX-License-Identifier: MIT
"""tools/plot.py's reading and drawing decisions: trace lines read by pattern and by JSON alike,
rows named as the trace names its processes, busy rows merged to columns stacked by every state
in them, legends beside the data, liveness from 0 bytes, alike layers one balance bar, sweep
legends in numeric order, log axes for ratio-spaced sweeps, and file names that carry the
metric."""
import importlib.util
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="python3-matplotlib is not installed")
spec = importlib.util.spec_from_file_location("plot", Path(os.environ["IPUSIM_ROOT"]) / "tools/plot.py")
plot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plot)


def span(pid, tid, cat, name, start, cycles):
    return json.dumps({"ph": "X", "pid": pid, "tid": tid, "cat": cat, "name": name, "ts": 0, "dur": 0,
                       "args": {"start_cycle": start, "cycles": cycles, "iteration": 0}}, separators=(",", ":"))


def trace_file(path, events):
    """events written as ipusim writes a trace: its header line, then one event a line."""
    path.write_text(",\n".join(events).join(['{"displayTimeUnit":"ns","otherData":{},\n"traceEvents":[\n', "\n]}\n"]))
    return str(path)


def name(kind, pid, text, tid=None):
    track = {} if tid is None else {"tid": tid}
    return json.dumps({"ph": "M", "name": kind, "pid": pid, **track, "args": {"name": text}}, separators=(",", ":"))


def test_trace_lines_read_by_pattern_and_by_json_alike(tmp_path):
    path = trace_file(tmp_path / "trace.json", [
        name("process_name", 0, "IPU 0"),
        span(0, 0, "compute", "conv", 0, 10), span(0, 1, "pipeline", "forward 3", 0, 12),
        span(0, 0, "sync", 'a "quoted" name', 10, 5),  # the pattern declines it; JSON reads it
        span(1, 0, "link", "copy", 0, 4),               # links are not drawn
        '{"ph":"X","pid":0,"tid":16,"cat":"tile","name":"conv","ts":0.000,"dur":0.010}'])
    rows, names = plot.trace_spans(path)
    assert rows == {(0, 0): [(0, 10, "compute"), (10, 5, "sync")], (0, 1): [(0, 12, "forward")]}
    assert names == {(0, None): "IPU 0"}
    # A trace of another writer (one line) is read whole, to the same spans and names.
    whole = tmp_path / "other.json"
    whole.write_text(json.dumps(json.loads((tmp_path / "trace.json").read_text())))
    assert plot.trace_spans(str(whole)) == (rows, names)


def test_rows_named_as_the_trace_names_its_processes(tmp_path):
    # Two IPUs, the IPU-Links (not drawn) and the host, named as ipusim names them: the host is
    # the process after the links, and an IPU is renamed with its stage balance at the end.
    path = trace_file(tmp_path / "trace.json", [
        *[name("process_name", ipu, f"IPU {ipu}") for ipu in (0, 1)],
        *[name("thread_name", ipu, track, tid) for ipu in (0, 1) for tid, track in enumerate(["phases", "pipeline"])],
        span(0, 0, "compute", "conv", 0, 10), span(1, 1, "pipeline", "backward 0", 10, 5),
        name("process_name", 2, "IPU-Links"), name("thread_name", 2, "IPU 0 -> IPU 1", 0),
        span(2, 0, "link", "x", 0, 4),
        name("process_name", 3, "host"), name("thread_name", 3, "data loader", 0),
        name("thread_name", 3, "dispatch", 1),
        span(3, 0, "host_work", "batch 0", 0, 8), span(3, 1, "host_work", "host call 0", 8, 2),
        name("thread_name", 0, "tile 5", 21),
        name("process_name", 0, "IPU 0 (stage 0: 10 cycles per micro-batch)")])
    rows, names = plot.trace_spans(path)
    pids = sorted({pid for pid, _ in rows})
    assert [label for pid in pids for label in plot.row_labels(names, pid)] == [
        "IPU 0 (stage 0: 10 cycles per micro-batch) phases", "IPU 0 (stage 0: 10 cycles per micro-batch) pipeline",
        "IPU 1 phases", "IPU 1 pipeline", "host data loader", "host dispatch"]
    # The host's rows are host work, not a pass named by its spans' first word ("host").
    assert rows[(3, 0)] == [(0, 8, "host_work")] and rows[(3, 1)] == [(8, 2, "host_work")]
    # A trace without names (another writer's) is taken as ipusim's IPUs.
    assert plot.row_labels({}, 2) == ["IPU 2 phases", "IPU 2 pipeline"]


def test_busy_rows_stack_the_shares_of_every_state_in_each_column(monkeypatch):
    monkeypatch.setattr(plot, "GANTT_COLUMNS", 4)
    # 400 cycles in 4 columns of 100: column 0 is 60 % compute, column 1 all sync, columns 2-3 exchange.
    spans = [(0, 60, "compute"), (60, 40, "sync"), (100, 100, "sync"), (200, 200, "exchange")]
    edges, shares = plot.column_shares(spans, 0, 400)
    assert edges == [0, 100, 200, 300, 400]
    assert shares == {"compute": [0.6, 0, 0, 0], "sync": [0.4, 1, 0, 0], "exchange": [0, 0, 1, 1]}
    assert plot.stacked(shares) == shares  # every state is past MIN_SHARE where it runs: drawn as it is
    # A short pipeline stage (IPU 2 of the tutorial) wins no column's majority; it still shows in
    # each, at least MIN_SHARE of the row, and the idle rest of each column stays a gap. A window is
    # binned from its start, and the last, narrower column is shared out by its own width.
    stages = [(1000, 5, "forward"), (1005, 10, "backward"), (1100, 5, "forward"), (1240, 30, "backward")]
    edges, shares = plot.column_shares(stages, 1000, 1270)
    assert edges == [1000, 1068, 1136, 1204, 1270]
    assert shares == {"forward": [5 / 68, 5 / 68, 0, 0], "backward": [10 / 68, 0, 0, 30 / 66]}
    assert plot.stacked(shares) == {"forward": [0.1, 0.1, 0.0, 0.0], "backward": [10 / 68, 0.0, 0.0, 30 / 66]}
    # A column whose states, raised to MIN_SHARE, overfill it is scaled down to fit.
    crowded = plot.stacked({"compute": [0.95], "sync": [0.03], "exchange": [0.02]})
    assert sum(h[0] for h in crowded.values()) == pytest.approx(1)
    assert crowded["sync"] == crowded["exchange"] == pytest.approx([0.1 / 1.15])


def test_memory_legend_beside_the_tiles_not_over_them():
    # The last tiles, nearly full, are where an inside legend sat (tiles 1,380 to 1,472).
    fig = plot.memory_figure([{"ipu": 0, "per_tile": [[0, 1380, 1000, 500], [1380, 92, 600000, 30000]],
                               "tile_capacity_bytes": 638976}])
    fig.tight_layout()
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1
    plot.plt.close(fig)


def test_liveness_drawn_from_zero_bytes():
    fig = plot.liveness_figure([{"ipu": 0, "tile_capacity_bytes": 1000,
                                 "liveness": {"ipu_bytes": [5e8, 6e8, 5.5e8], "peak_tile_bytes": [400, 450, 420],
                                              "peak_tile": 7}}])
    whole, tile = fig.axes
    assert whole.get_ylim()[0] == 0 and whole.get_ylim()[1] >= 6e8
    assert tile.get_ylim()[0] == 0 and tile.get_ylim()[1] >= 1000
    plot.plt.close(fig)


def test_alike_layers_are_one_balance_bar():
    def cs(ipu, compute_set, busiest, mean=50.0):
        return {"ipu": ipu, "compute_set": compute_set, "busiest_tile_cycles": busiest, "mean_tile_cycles": mean}

    balance = ([cs(1, f"L{n}.attention.qkv", 100) for n in range(3, 10)]
               + [cs(1, "L4.attention.qkv", 100),          # its recomputation: one more compute set
                  cs(2, "L10.attention.qkv", 100),         # another IPU: a bar of its own
                  cs(1, "L10.attention.qkv", 90),          # other cycles: a bar of its own
                  cs(0, "layer0.ffn.output", 80), cs(0, "layer2.ffn.output", 80), cs(0, "layer9.ffn.output", 80),
                  cs(0, "layer1.ffn.out", 80)])            # other text: a bar of its own
    assert plot.balance_bars(balance) == [
        ("L{3..9}.attention.qkv ×8 (IPU 1)", 100, 50.0), ("L10.attention.qkv (IPU 2)", 100, 50.0),
        ("L10.attention.qkv (IPU 1)", 90, 50.0), ("layer{0,2,9}.ffn.output ×3 (IPU 0)", 80, 50.0),
        ("layer1.ffn.out (IPU 0)", 80, 50.0)]
    assert [label for label, _, _ in plot.balance_bars(balance, count=2)] == [
        "L{3..9}.attention.qkv ×8 (IPU 1)", "L10.attention.qkv (IPU 2)"]
    assert plot.number_set(["9", "3", "4", "5", "11", "12"]) == "{3..5,9,11,12}"


def test_sweep_legends_in_numeric_order_and_ratio_spaced_axes_on_log_scale():
    assert sorted(["16", "2", "128", "x"], key=plot.sort_key) == ["2", "16", "128", "x"]
    assert plot.geometric([1, 2, 4, 8, 16])
    assert plot.geometric([1e9, 1e10, 1e11, 1e12])
    assert not plot.geometric([736, 1104, 1472])
    assert not plot.geometric([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    assert plot.file_part("/system/ipu/tiles") == "system.ipu.tiles"
    assert plot.file_part("samples_per_second") == "samples_per_second"
