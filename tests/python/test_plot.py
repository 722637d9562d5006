# SPDX-License-Identifier: MIT
"""tools/plot.py's reading and drawing decisions: trace lines read by pattern and by JSON alike,
busy rows merged to columns by what covers most of each, sweep legends in numeric order, log
axes for ratio-spaced sweeps, and file names that carry the metric."""
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


def test_trace_lines_read_by_pattern_and_by_json_alike(tmp_path):
    lines = ['{"displayTimeUnit":"ns","otherData":{},', '"traceEvents":[',
             '{"ph":"M","name":"process_name","pid":0,"args":{"name":"IPU 0"}}',
             span(0, 0, "compute", "conv", 0, 10), span(0, 1, "pipeline", "forward 3", 0, 12),
             span(0, 0, "sync", 'a "quoted" name', 10, 5),  # the pattern declines it; JSON reads it
             span(1, 0, "link", "copy", 0, 4),               # links are not drawn
             '{"ph":"X","pid":0,"tid":16,"cat":"tile","name":"conv","ts":0.000,"dur":0.010}']
    path = tmp_path / "trace.json"
    path.write_text(",\n".join(lines[2:]).join([lines[0] + "\n" + lines[1] + "\n", "\n]}\n"]))
    assert plot.trace_spans(str(path)) == {(0, 0): [(0, 10, "compute"), (10, 5, "sync")], (0, 1): [(0, 12, "forward")]}
    # A trace of another writer (one line) is read whole, to the same spans.
    whole = tmp_path / "other.json"
    whole.write_text(json.dumps(json.loads(path.read_text())))
    assert plot.trace_spans(str(whole)) == plot.trace_spans(str(path))


def test_busy_rows_merge_to_columns_by_what_covers_most(monkeypatch):
    monkeypatch.setattr(plot, "GANTT_COLUMNS", 4)
    # 400 cycles in 4 columns of 100: column 0 is 60 % compute, column 1 all sync, columns 2-3 exchange.
    spans = [(0, 60, "compute"), (60, 40, "sync"), (100, 100, "sync"), (200, 200, "exchange")]
    assert plot.binned(spans, 0, 400) == [(0, 100, "compute"), (100, 100, "sync"), (200, 200, "exchange")]
    # Mostly idle columns stay gaps (pipeline bubbles), and a window is binned from its start.
    sparse = [(1000, 5, "forward"), (1100, 60, "forward"), (1200, 5, "forward"), (1300, 70, "backward")]
    assert plot.binned(sparse, 1000, 1400) == [(1100, 100, "forward"), (1300, 100, "backward")]


def test_sweep_legends_in_numeric_order_and_ratio_spaced_axes_on_log_scale():
    assert sorted(["16", "2", "128", "x"], key=plot.sort_key) == ["2", "16", "128", "x"]
    assert plot.geometric([1, 2, 4, 8, 16])
    assert plot.geometric([1e9, 1e10, 1e11, 1e12])
    assert not plot.geometric([736, 1104, 1472])
    assert not plot.geometric([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    assert plot.file_part("/system/ipu/tiles") == "system.ipu.tiles"
    assert plot.file_part("samples_per_second") == "samples_per_second"
