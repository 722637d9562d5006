# SPDX-License-Identifier: MIT
"""The Python package: the same figures as the command line (summary.json byte for byte on every
shipped config, the simulator's own wall-clock section aside), dict configs and overrides,
errors carrying the file and JSON pointer, out-of-memory reports, parameters and sweeps."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import ipusim

ROOT = Path(os.environ["IPUSIM_ROOT"])
CLI = os.environ["IPUSIM_CLI"]
RESNET = Path(os.environ.get("IPUSIM_ONNX_DIR", "/nonexistent")) / "resnet50.onnx"


def without_wall_clock(text):
    """summary.json's text without the "simulator" section (wall-clock speed differs run to run)."""
    return re.sub(r' "simulator": \{[^}]*\},?\n', "", text)


def shipped_configs():
    configs = [ROOT / "configs/default.json"]
    for folder in ("mnist", "graph", "schedules", "bert", "resnet"):
        configs += sorted((ROOT / "configs" / folder).glob("*.json"))
    return [c for c in configs if c.name != "oom.json"]


@pytest.mark.parametrize("config", shipped_configs(), ids=lambda c: f"{c.parent.name}/{c.name}")
def test_summary_equals_the_command_lines(config, tmp_path):
    if config.parent.name == "resnet" and not RESNET.exists():  # the config names bundled:resnet50.onnx
        pytest.skip("the build exported no ResNet-50 (python3-torch and python3-torchvision are not installed)")
    out = tmp_path / "out"
    cli = subprocess.run([CLI, "run", str(config), "--out", str(out)],
                         capture_output=True, text=True, env=dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1"))
    assert cli.returncode == 0, cli.stderr
    from_cli = (out / "summary.json").read_text()
    summary = ipusim.run(config, out_dir=out)  # the same folder: the same paths inside
    assert without_wall_clock(summary.text) == without_wall_clock(from_cli)
    assert (out / "summary.json").read_text() == summary.text
    assert summary.total_cycles == json.loads(from_cli)["total_cycles"] > 0


def figures(summary):
    """A summary without what names its config file and the wall clock."""
    return {k: v for k, v in summary.items() if k not in ("config", "simulator")}


def test_dict_config_overrides_and_printed_summary():
    doc = json.loads((ROOT / "configs/default.json").read_text())
    base = ipusim.run(doc)  # "base": "hardware/mk2.json" resolves in the bundled configs
    assert figures(base) == figures(ipusim.run(ROOT / "configs/default.json"))
    slow = ["/system/ipu/exchange/send_bytes_per_cycle", "/system/ipu/exchange/recv_bytes_per_cycle"]
    halved = ipusim.run(doc, {p: 2 for p in slow})
    assert figures(halved) == figures(ipusim.run(doc, [f"{p}=2" for p in slow]))
    assert halved.total_cycles > base.total_cycles  # less exchange bandwidth never saves cycles
    printed = str(base)
    assert printed.startswith("mnist_train_step (mnist)")
    assert f"{base.total_cycles:,} cycles" in printed
    with pytest.raises(AttributeError, match="the summary has no 'nope'"):
        base.nope


def test_runs_from_several_threads_wait_for_each_other():
    """The run releases the GIL, and SystemC has one current kernel: runs started from several
    threads take turns and give the figures of runs one after another."""
    import threading
    config, sets = ROOT / "configs/mnist/train.json", ["/run/dataset_samples=0", "/run/epochs=1"]
    expected = figures(ipusim.run(config, sets, inference=False))
    results, errors = [], []

    def runs():
        try:
            for _ in range(3):
                results.append(figures(ipusim.run(config, sets, inference=False)))
        except Exception as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(repr(e))

    threads = [threading.Thread(target=runs) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert results == [expected] * 6


def test_writes_outputs_only_when_asked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ipusim.run(ROOT / "configs/default.json")
    assert list(tmp_path.iterdir()) == []
    summary = ipusim.run(ROOT / "configs/default.json", out_dir=tmp_path / "out", trace=True)
    assert json.loads((tmp_path / "out/summary.json").read_text()) == summary
    assert "traceEvents" in json.loads((tmp_path / "out/trace.json").read_text())


def test_config_errors_carry_file_pointer_and_message():
    with pytest.raises(ipusim.ConfigError) as error:
        ipusim.run(ROOT / "configs/default.json", {"/system/ipu/tiles": -3})
    assert error.value.file == "overrides"  # where the bad value came from
    assert error.value.pointer == "/system/ipu/tiles"
    assert error.value.message.startswith("expected integer, >= 1")
    assert str(error.value) == f"overrides: /system/ipu/tiles: {error.value.message}"
    assert isinstance(error.value, ValueError)
    with pytest.raises(ipusim.ConfigError) as error:
        ipusim.run(ROOT / "configs/mnist/train.json", {"/workload/micro_batch": 0})
    assert (error.value.file, error.value.pointer) == ("overrides", "/workload/micro_batch")
    with pytest.raises(ipusim.ConfigError, match="cannot read file"):
        ipusim.run(ROOT / "configs/nope.json")
    with pytest.raises(ipusim.ConfigError, match=r"<dict>: /workload/io_tiles: expected 0 or an even number"):
        doc = json.loads((ROOT / "configs/default.json").read_text())
        doc["workload"]["io_tiles"] = 3
        ipusim.run(doc)


def test_python_argument_errors_name_the_argument():
    default = ROOT / "configs/default.json"
    with pytest.raises(ValueError, match="engine: expected 'fast' or 'reference', found 'turbo'"):
        ipusim.run(default, engine="turbo")
    with pytest.raises(TypeError, match="config: expected a path or a dict, found int"):
        ipusim.run(3)
    with pytest.raises(TypeError, match="overrides: expected a dict"):
        ipusim.run(default, "/system/ipu/tiles=3")
    with pytest.raises(ValueError, match="out_dir: expected a folder for the trace"):
        ipusim.run(default, trace=True)
    with pytest.raises(ValueError, match="Out of range float"):
        ipusim.run(default, {"/system/ipu/clock_hz": float("nan")})
    with pytest.raises(ValueError, match="jobs: expected an integer of 1 to 256, found 0"):
        ipusim.sweep(ROOT / "configs/sweeps/exchange_tiles.json", jobs=0)


def test_out_of_memory_raises_with_the_report(tmp_path):
    with pytest.raises(ipusim.OutOfMemory) as oom:
        ipusim.run(ROOT / "configs/mnist/oom.json", out_dir=tmp_path)
    report = oom.value.report
    assert report == json.loads((tmp_path / "oom_report.json").read_text())
    assert report["ipus"][0]["tiles_over"] > 0
    assert oom.value.phase == ""
    assert str(oom.value).startswith("error: out of memory on IPU 0")
    assert not (tmp_path / "summary.json").exists()


def test_params_are_the_command_lines():
    params = {p["pointer"]: p for p in ipusim.params()}
    assert params["/system/ipu/tiles"]["default"] == "1472"
    listed = subprocess.run([CLI, "params"], capture_output=True, text=True, check=True).stdout
    assert len(params) == len(listed.splitlines()) - 3  # the header, and the note on sources after a blank line
    for pointer in params:
        assert pointer in listed


def test_sweep_returns_the_rows(tmp_path):
    sweep = tmp_path / "tiles.json"
    sweep.write_text(json.dumps({"name": "tiles", "config": str(ROOT / "configs/default.json"),
                                 "axes": [{"pointer": "/system/ipu/tiles", "values": [736, 1472]}]}))
    rows = ipusim.sweep(sweep, out_dir=tmp_path / "out")
    assert [(r["point"], r["axes"], r["status"]) for r in rows] == [(0, {"/system/ipu/tiles": 736}, "ok"),
                                                                      (1, {"/system/ipu/tiles": 1472}, "ok")]
    single = ipusim.run(ROOT / "configs/default.json", {"/system/ipu/tiles": 736})
    assert figures(rows[0]["summary"]) == figures(single)
    assert (tmp_path / "out/results.csv").exists()


def test_a_run_never_replaces_another_runs_results(tmp_path):
    out = tmp_path / "out"
    ipusim.run(ROOT / "configs/default.json", out_dir=out)
    with pytest.raises(ipusim.ConfigError, match="holds the results of another run"):
        ipusim.run(ROOT / "configs/default.json", {"/system/ipu/tiles": 64}, out_dir=out)
    assert json.loads((out / "run.json").read_text())["set"] == []
    ipusim.run(ROOT / "configs/default.json", {"/system/ipu/tiles": 64}, out_dir=out, force=True)
    assert json.loads((out / "run.json").read_text())["set"] == ["/system/ipu/tiles=64"]
    # Two different dicts are two runs, though neither has a file.
    doc = {"system": {"base": "hardware/mk2.json"}, "workload": {"kind": "mnist"}}
    ipusim.run(doc, out_dir=tmp_path / "dict")
    with pytest.raises(ipusim.ConfigError, match="holds the results of another run"):
        ipusim.run(dict(doc, run={"device_iterations": 2}), out_dir=tmp_path / "dict")
