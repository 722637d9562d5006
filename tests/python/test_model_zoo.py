# SPDX-License-Identifier: MIT
"""torchvision's image classifiers as a researcher exports them (torch.onnx.export, opset 17,
without weights), at small images: each trains data-parallel on an IPU-POD16, and some pipelined
over the four IPUs of an IPU-M2000, with cycles from simulating, or stops with an out-of-memory
report. Models torch 1.13 cannot export in training mode are exported in eval mode: ConvNeXt's and
EfficientNet's stochastic depth (Bernoulli), GoogLeNet's adaptive pooling to a size that does not
divide its input, Inception's batch norm of a 1 x 1 image at batch 1."""
import os
import warnings

import pytest

torch = pytest.importorskip("torch", reason="python3-torch is not installed")
torchvision = pytest.importorskip("torchvision", reason="python3-torchvision is not installed")

import ipusim  # noqa: E402

# name: (export mode, image side)
ZOO = {
    "alexnet": ("train", 224),  # its adaptive pooling to 6 x 6 exports only from a multiple of 6
    "convnext_tiny": ("eval", 64),
    "densenet121": ("train", 64),
    "efficientnet_b0": ("eval", 64),
    "googlenet": ("eval", 64),
    "inception_v3": ("eval", 96),
    "mnasnet0_5": ("train", 64),
    "mobilenet_v2": ("train", 64),
    "mobilenet_v3_large": ("train", 64),
    "regnet_y_400mf": ("train", 64),
    "resnet18": ("train", 64),
    "shufflenet_v2_x0_5": ("train", 64),
    "squeezenet1_0": ("train", 64),
    "vgg11_bn": ("train", 224),  # as alexnet, its pooling to 7 x 7: from a multiple of 7
}


def export(name, folder):
    mode, side = ZOO[name]
    model = torchvision.models.get_model(name, weights=None)
    model.train(mode == "train")
    path = folder / f"{name}.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, torch.randn(1, 3, side, side), str(path), opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING if mode == "train" else torch.onnx.TrainingMode.EVAL,
                          do_constant_folding=False, export_params=False)
    return path


def config(path, system, strategy, run, blocks=()):
    workload = {"kind": "onnx", "file": str(path), "loss": "cross_entropy", "mode": "train", "micro_batch": 2,
                "precision": "fp16", "partials": "fp16", "strategy": strategy}
    if blocks:
        workload["blocks"] = list(blocks)
    return {"system": {"base": f"hardware/{system}.json"}, "workload": workload, "run": run}


# Their fully connected classifiers (AlexNet's first: 9,216 x 4,096), with the weights' gradients,
# accumulators and AdamW moments, do not fit one IPU's tiles at micro-batch 2. The report's search
# finds AlexNet fits with the optimizer state sharded over the 16 replicas; VGG's first (25,088 x
# 4,096) fits no single IPU even so, at micro-batch 1 with the state offloaded too: it needs a split.
OUT_OF_MEMORY = {"alexnet": True, "vgg11_bn": False}  # name: whether a setting the search tries fits


def test_cnn_zoo_trains_data_parallel_on_pod16(tmp_path):
    out_of_memory = {}
    for name in ZOO:
        doc = config(export(name, tmp_path), "pod16", {"kind": "single", "replicas": 16},
                     {"gradient_accumulation": 2, "device_iterations": 1, "host_calls": 1})
        try:
            summary = ipusim.run(doc, out_dir=tmp_path / name)
        except ipusim.OutOfMemory as oom:  # an honest answer too, with its report and what fits instead
            fit = oom.report["fits_with"]
            out_of_memory[name] = fit["found"]
            if fit["found"]:  # it does fit so, and runs
                assert ipusim.run(doc, fit["sets"], out_dir=tmp_path / f"{name}_fits").total_cycles > 0, name
            else:
                assert "split the model over more IPUs" in fit["next"], name
            continue
        # Forward, backward and the update of every replica ran, and the gradients were averaged.
        assert summary.total_cycles > 0, name
        assert summary["samples_per_second"] > 0, name
    assert out_of_memory == OUT_OF_MEMORY


# Four stages by module prefix, as poptorch.BeginBlock would put them.
STAGES = {
    "mobilenet_v2": ["/features/features.0/", "/features/features.4/", "/features/features.9/", "/features/features.14/"],
    "densenet121": ["/features/conv0/", "/features/denseblock2/", "/features/denseblock3/", "/features/denseblock4/"],
    "convnext_tiny": ["/features/features.0/", "/features/features.3/", "/features/features.5/", "/features/features.7/"],
}


def test_cnn_zoo_pipelines_over_an_m2000(tmp_path):
    for name, prefixes in STAGES.items():
        blocks = [{"name": f"s{i}", "prefix": p, "ipu": i} for i, p in enumerate(prefixes)]
        doc = config(export(name, tmp_path), "m2000", {"kind": "pipelined"},
                     {"gradient_accumulation": 8, "device_iterations": 1, "host_calls": 1}, blocks)
        summary = ipusim.run(doc, out_dir=tmp_path / name)
        assert summary.total_cycles > 0, name
        # Four stages, one an IPU, each doing work every micro-batch.
        pipeline = summary["pipeline"]
        assert len(pipeline["stages"]) == 4, name
        assert all(w["cycles_per_micro_batch"] > 0 for w in pipeline["ipu_work"]), name
