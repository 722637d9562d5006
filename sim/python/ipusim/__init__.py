# SPDX-License-Identifier: MIT
"""ipusim from Python: the simulator the command line runs, as functions.

    import ipusim
    s = ipusim.run("configs/mnist/pipelined.json", overrides={"/run/epochs": 1})
    s["total_cycles"], s.samples_per_second    # summary.json as Python objects
    print(s)                                   # what `ipusim run` prints

A config is a path or a dict (relative paths in a dict, such as its "base", resolve in the bundled
configs/ folder unless `config_dir` says otherwise). Bad input raises ConfigError with the file,
the JSON pointer and what was expected; a program that does not fit raises OutOfMemory with its
report. Every figure comes from the C++ simulator; nothing is computed here.
"""
import json
import os
from pathlib import Path

from . import _ipusim
from ._ipusim import ConfigError

__all__ = ["run", "sweep", "params", "Summary", "OutOfMemory", "ConfigError", "CONFIGS"]

CONFIGS = Path(_ipusim.configs_dir)
"""The bundled configs folder (hardware descriptions, MNIST, BERT, ResNet-50, sweeps)."""


class Summary(dict):
    """summary.json as Python objects, keys also as attributes; `text` is the file's exact text."""

    def __init__(self, text):
        super().__init__(json.loads(text))
        self.text = text

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(f"the summary has no {key!r}; it has {', '.join(self)}") from None

    def __str__(self):
        return _ipusim.printed(self.text, False)


class OutOfMemory(Exception):
    """The program does not fit: `report` is oom_report.json as Python objects, `phase` is ""
    (the run itself) or "inference", `text` what the command line prints."""

    def __init__(self, report_text, phase):
        self.report = json.loads(report_text)
        self.phase = phase
        self.text = _ipusim.printed(report_text, True)
        super().__init__(self.text.splitlines()[0] if self.text else "out of memory")


def _sets(overrides):
    """--set strings from a {"/pointer": value} dict or a sequence of "/pointer=value" strings."""
    if isinstance(overrides, dict):
        return [f"{pointer}={json.dumps(value, allow_nan=False)}" for pointer, value in overrides.items()]
    if isinstance(overrides, str):
        raise TypeError('overrides: expected a dict {"/pointer": value} or a list of "/pointer=value", found a str')
    return [str(s) for s in overrides]


def run(config, overrides=(), *, out_dir=None, trace=False, vcd=False, engine="fast", inference=True, config_dir=None,
        force=False):
    """Simulates one experiment, as `ipusim run` does, and returns its Summary.

    config      a path, or a dict of the config's JSON
    overrides   {"/json/pointer": value} or ["/json/pointer=value", ...] (the CLI's --set)
    out_dir     where summary.json (and trace.json, waves.vcd) go; None: nothing is written
    trace, vcd  also write the Perfetto trace or the waveform (need out_dir)
    engine      "fast" (event-driven) or "reference" (every cycle ticked, checked against fast)
    inference   run the config's "inference" phase after training (under summary["inference"])
    config_dir  the folder a dict's relative paths resolve in (default: the bundled configs)
    force       replace results in out_dir that another config or other overrides wrote
                (otherwise ipusim.ConfigError: a run never deletes another run's results)
    """
    if engine not in ("fast", "reference"):
        raise ValueError(f"engine: expected 'fast' or 'reference', found {engine!r}")
    if (trace or vcd) and out_dir is None:
        raise ValueError("out_dir: expected a folder for the trace or waveform, found None")
    if not isinstance(config, (dict, str, os.PathLike)):
        raise TypeError(f"config: expected a path or a dict, found {type(config).__name__}")
    folder = os.fspath(config_dir) if config_dir is not None else str(CONFIGS)
    result = _ipusim.run(config, _sets(overrides), folder, "" if out_dir is None else os.fspath(out_dir), trace, vcd,
                         engine == "reference", inference, bool(force))
    if result["status"] == "out_of_memory":
        raise OutOfMemory(result["report"], result["phase"])
    return Summary(result["summary"])


def sweep(sweep_file, *, out_dir=None, jobs=1, resume=False):
    """Runs every point of a sweep file, as `ipusim sweep` does (each point in its own process,
    rows appended to out_dir/results.jsonl and .csv as they finish; default out/sweeps/<name>),
    and returns the rows of results.jsonl: {"point", "axes": {pointer: value}, "status": "ok",
    "summary": {...}} or, for a point that failed, "status" and "error"."""
    if not isinstance(jobs, int) or not 1 <= jobs <= 256:
        raise ValueError(f"jobs: expected an integer of 1 to 256, found {jobs!r}")
    folder, _failed = _ipusim.sweep(os.fspath(sweep_file), "" if out_dir is None else os.fspath(out_dir), jobs, resume)
    with open(Path(folder) / "results.jsonl") as rows:
        return [json.loads(line) for line in rows if line.strip()]


def params():
    """Every key a config takes (as `ipusim params` lists them): pointer, type, unit, default, range, source, description."""
    return _ipusim.params()
