# SPDX-License-Identifier: MIT
"""tools/examples/mnist_pipelining.py, the PopTorch tutorial's script on ipusim.poptorch: one epoch
of the generated stand-in for MNIST trains and tests for real, and the simulated throughput it
prints is the command line's for the same settings."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="python3-torch is not installed")
import ipusim  # noqa: E402

SCRIPT = Path(os.environ["IPUSIM_ROOT"]) / "tools/examples/mnist_pipelining.py"
SIMULATED = r"simulated IPU ([\d,]+\.\d) samples/s"


def run_script(*arguments, cwd, **environment):
    result = subprocess.run([sys.executable, str(SCRIPT), "--epochs", "1", "--generated", *arguments], cwd=cwd,
                            capture_output=True, text=True, env=dict(os.environ, PYTHONWARNINGS="ignore", **environment))
    assert result.returncode == 0, result.stderr
    return result


def printed(pattern, text):
    match = re.search(pattern, text)
    assert match, f"{pattern!r} not in:\n{text}"
    return float(match.group(1).replace(",", ""))


def cli_summary(config, overrides):
    # The script's generated data: 8,000 training images (two host calls of 4,000), 1,600 test
    # images (two host calls of 800).
    return ipusim.run(ipusim.CONFIGS / "mnist" / config,
                      {"/run/epochs": 1, "/run/dataset_samples": 8000, "/inference/dataset_samples": 1600, **overrides})


def test_the_tutorial_script_agrees_with_the_pipelined_config(tmp_path):
    out = run_script("--profile", "--profile-dir", "profile", cwd=tmp_path).stdout
    cli = cli_summary("pipelined.json", {})
    assert out.count("Loss:") == 2  # each host call: its real loss and accuracy, and its simulated time
    assert out.count(f"| IPU {cli.seconds / 2 * 1e3:.3f} ms") == 2
    assert printed(r"epoch 1: .*" + SIMULATED, out) == pytest.approx(cli.samples_per_second, abs=0.05)
    assert printed(r"test: .*" + SIMULATED, out) == pytest.approx(cli["inference"]["samples_per_second"], abs=0.05)
    assert printed(r"Accuracy on test set: ([\d.]+)%", out) > 50  # it learned: chance is 10 %
    # Beside each simulated figure, what it assumes: the tutorial's IPUs and PopTorch's host as calibrated.
    assert out.count("samples/s (") and out.count("; 4 simulated Mk2 IPUs, host model poptorch_calibrated: 6.26 ms a host call, "
                                                  "222 us a host exchange)") == 2
    assert (tmp_path / "profile/poptorch_train_0/trace.json").stat().st_size > 0
    assert (tmp_path / "profile/poptorch_infer_0/summary.json").stat().st_size > 0


def test_sharded_with_the_optimiser_offloaded_agrees_with_the_sharded_config(tmp_path):
    # The tutorial's sharded model sets no gradient accumulation: a host call of 4,000 images is
    # 10 device iterations of micro-batches of 400.
    result = run_script("--strategy", "sharded", "--offload-optimiser", cwd=tmp_path, IPUSIM_REPORT="calls")
    out = result.stdout
    cli = cli_summary("sharded.json", {"/workload/micro_batch": 400, "/run/gradient_accumulation": 1,
                                       "/workload/offload_optimizer": True})
    # IPUSIM_REPORT=calls: each host call's simulated time on stderr as it returns, then the report.
    call = f"{cli.seconds / 2 * 1e3:.3f} ms simulated"
    assert f"ipusim: training call 1: {call} (4,000 samples" in result.stderr
    assert f"ipusim: training call 2: {call} (8,000 samples" in result.stderr
    assert "ipusim: training model: 2 host calls" in result.stderr
    assert printed(r"epoch 1: .*" + SIMULATED, out) == pytest.approx(cli.samples_per_second, abs=0.05)
    assert printed(r"test: .*" + SIMULATED, out) == pytest.approx(cli["inference"]["samples_per_second"], abs=0.05)


def test_a_missing_local_mnist_is_named(tmp_path):
    result = subprocess.run([sys.executable, str(SCRIPT), "--data-dir", str(tmp_path / "nowhere")], capture_output=True,
                            text=True)
    assert result.returncode != 0
    assert f"--data-dir {tmp_path / 'nowhere'}: expected MNIST in torchvision's layout" in result.stderr
