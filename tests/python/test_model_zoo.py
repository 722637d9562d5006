# SPDX-License-Identifier: MIT
"""torchvision's image classifiers as a researcher exports them (torch.onnx.export, opset 17,
without weights), at small images: each trains data-parallel on an IPU-POD16, and some pipelined
over the four IPUs of an IPU-M2000, with cycles from simulating, or stops with an out-of-memory
report. Stochastic depth (ConvNeXt's, EfficientNet's, MaxViT's, Swin's), a Bernoulli draw torch
1.13 cannot export in training mode, is exported as a dropout of its probability (the model set's
traceable()); models torch cannot export in training mode even so are exported in eval mode:
GoogLeNet's adaptive pooling to a size that does not divide its input, Inception's batch norm of a
1 x 1 image at batch 1."""
import os
import warnings

import pytest

torch = pytest.importorskip("torch", reason="python3-torch is not installed")
torchvision = pytest.importorskip("torchvision", reason="python3-torchvision is not installed")

import ipusim  # noqa: E402
from conftest import load_model_set  # noqa: E402

# name: (export mode, image side)
ZOO = {
    "alexnet": ("train", 224),  # its adaptive pooling to 6 x 6 exports only from a multiple of 6
    "convnext_tiny": ("train", 64),
    "densenet121": ("train", 64),
    "efficientnet_b0": ("train", 64),
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
    model = load_model_set().traceable(torchvision.models.get_model(name, weights=None))
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
# 4,096) fits no single IPU even so, at micro-batch 1 with the state offloaded too, and the search
# splits it into pipeline stages (its classifier's layers on IPUs of their own).
OUT_OF_MEMORY = {"alexnet": "/workload/strategy/replicated_tensor_sharding=true", "vgg11_bn": "stages"}  # name: how it fits


def test_cnn_zoo_trains_data_parallel_on_pod16(tmp_path):
    out_of_memory = {}
    for name in ZOO:
        doc = config(export(name, tmp_path), "pod16", {"kind": "single", "replicas": 16},
                     {"gradient_accumulation": 2, "device_iterations": 1, "host_calls": 1})
        try:
            summary = ipusim.run(doc, out_dir=tmp_path / name)
        except ipusim.OutOfMemory as oom:  # an honest answer too, with its report and what fits instead
            fit = oom.report["fits_with"]
            assert fit["found"], name
            out_of_memory[name] = "stages" if "stages" in fit else fit["sets"][-1]
            assert ipusim.run(doc, fit["sets"], out_dir=tmp_path / f"{name}_fits").total_cycles > 0, name  # it fits so, and runs
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


# A Swin transformer of one stage at 16 x 16: 4 x 4 patches, windows of 2, the second block's
# windows shifted by 1. Its attention mask is computed in the graph from constants (torchvision's
# shifted_window_attention: zeros, region counts written by ScatterND, a window partition, pairwise
# differences, masked_fill -100), which the import folds into one constant: 4 windows x 4 x 4
# positions, a buffer of 64 values (2 bytes each in fp16) beside the learned weights.
def test_swin_shifted_window_mask_is_a_folded_buffer(tmp_path):
    from torchvision.models.swin_transformer import SwinTransformer
    model = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2], num_heads=[2], window_size=[2, 2], num_classes=10)
    model.eval()
    path = tmp_path / "swin.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, torch.randn(1, 3, 16, 16), str(path), opset_version=17, training=torch.onnx.TrainingMode.EVAL,
                          do_constant_folding=False, export_params=False)
    doc = config(path, "pod16", {"kind": "single", "replicas": 16}, {"gradient_accumulation": 2, "device_iterations": 1, "host_calls": 1})
    summary = ipusim.run(doc, out_dir=tmp_path / "out")
    memory = summary["memory"][0]["bytes_by_kind"]
    assert memory["buffer"] == 2 * 4 * 4 * 4
    # The weights are torch's parameters (2 bytes each) but for each block's relative position
    # bias, which is read as the 4 x 4 rows of its 9-row table that the block's index buffer picks.
    parameters = sum(p.numel() for p in model.parameters())
    biases = 2 * 2 * (4 * 4 - 9)  # two blocks of two heads
    assert memory["weight"] == 2 * (parameters + biases)
    assert summary.total_cycles > 0


# Every image classifier torchvision 0.14 ships (torchvision.models.list_models), exported as a
# researcher would and trained data-parallel on an IPU-POD16 at micro-batch 2: what happens to
# each. "trains": it runs, as it is or with the smaller micro-batch or sharded optimizer state the
# out-of-memory report found to fit (which then runs); "split": it fits no single IPU even so,
# and the report's split into pipeline stages by module prefix (on as many IPUs a replica, fewer
# replicas; RegNetY-128GF's cut inside its modules, its last unit of 127 M parameters over
# several IPUs, each stage recomputed) runs; "no fit": the report found nothing to fit; "no export":
# torch 1.13's exporter fails; "unsupported": the import lists the nodes in the way. Training mode,
# stochastic depth as a dropout; eval mode where torch cannot export training even so (Inception's
# batch norm of a 1 x 1 image); small images
# where the model allows (AlexNet's and VGG's pooling to 6 x 6 and 7 x 7 and MaxViT's windows need
# 224, Inception 96; ViTs are built for 2 x 2 patches and exported at batch 2, as their [1, ...]
# embeddings need).
TRAINS, SPLIT, NO_FIT, NO_EXPORT, UNSUPPORTED = "trains", "split", "no fit", "no export", "unsupported"
_EVAL = ("inception",)
EVERY_CLASSIFIER = {
    "alexnet": TRAINS, "convnext_base": SPLIT, "convnext_large": SPLIT, "convnext_small": TRAINS, "convnext_tiny": TRAINS,
    "densenet121": TRAINS, "densenet161": SPLIT, "densenet169": SPLIT, "densenet201": SPLIT,
    "efficientnet_b0": TRAINS, "efficientnet_b1": TRAINS, "efficientnet_b2": TRAINS, "efficientnet_b3": TRAINS,
    "efficientnet_b4": TRAINS, "efficientnet_b5": TRAINS, "efficientnet_b6": SPLIT, "efficientnet_b7": SPLIT,
    "efficientnet_v2_l": SPLIT, "efficientnet_v2_m": SPLIT, "efficientnet_v2_s": TRAINS,
    "googlenet": TRAINS, "inception_v3": TRAINS, "maxvit_t": SPLIT,
    "mnasnet0_5": TRAINS, "mnasnet0_75": TRAINS, "mnasnet1_0": TRAINS, "mnasnet1_3": TRAINS,
    "mobilenet_v2": TRAINS, "mobilenet_v3_large": TRAINS, "mobilenet_v3_small": TRAINS,
    "regnet_x_16gf": TRAINS, "regnet_x_1_6gf": TRAINS, "regnet_x_32gf": SPLIT, "regnet_x_3_2gf": TRAINS, "regnet_x_400mf": TRAINS,
    "regnet_x_800mf": TRAINS, "regnet_x_8gf": TRAINS, "regnet_y_128gf": SPLIT, "regnet_y_16gf": TRAINS, "regnet_y_1_6gf": TRAINS,
    "regnet_y_32gf": SPLIT, "regnet_y_3_2gf": TRAINS, "regnet_y_400mf": TRAINS, "regnet_y_800mf": TRAINS, "regnet_y_8gf": TRAINS,
    "resnet101": TRAINS, "resnet152": SPLIT, "resnet18": TRAINS, "resnet34": TRAINS, "resnet50": TRAINS,
    "resnext101_32x8d": SPLIT, "resnext101_64x4d": SPLIT, "resnext50_32x4d": TRAINS,
    "shufflenet_v2_x0_5": TRAINS, "shufflenet_v2_x1_0": TRAINS, "shufflenet_v2_x1_5": TRAINS, "shufflenet_v2_x2_0": TRAINS,
    "squeezenet1_0": TRAINS, "squeezenet1_1": TRAINS,
    "swin_b": SPLIT, "swin_s": TRAINS, "swin_t": TRAINS,
    "swin_v2_b": NO_EXPORT, "swin_v2_s": NO_EXPORT, "swin_v2_t": NO_EXPORT,
    "vgg11": SPLIT, "vgg11_bn": SPLIT, "vgg13": SPLIT, "vgg13_bn": SPLIT, "vgg16": SPLIT, "vgg16_bn": SPLIT, "vgg19": SPLIT, "vgg19_bn": SPLIT,
    "vit_b_16": TRAINS, "vit_b_32": TRAINS, "vit_h_14": SPLIT, "vit_l_16": SPLIT, "vit_l_32": SPLIT,
    "wide_resnet101_2": SPLIT, "wide_resnet50_2": TRAINS,
}


def _export_classifier(name, folder):
    """The model's ONNX file, or None when torch's exporter fails."""
    vit = name.startswith("vit")
    side = 224 if name.startswith(("alexnet", "vgg", "maxvit")) else (28 if name.endswith("14") else 32) if vit else \
        96 if name == "inception_v3" else 64
    model = load_model_set().traceable(torchvision.models.get_model(name, weights=None, **({"image_size": side} if vit else {})))
    train = not name.startswith(_EVAL)
    model.train(train)
    path = folder / f"{name}.onnx"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, torch.randn(2 if vit else 1, 3, side, side), str(path), opset_version=17,
                              training=torch.onnx.TrainingMode.TRAINING if train else torch.onnx.TrainingMode.EVAL,
                              do_constant_folding=False, export_params=False)
    except Exception:  # torch's own limits (swin_v2's aten::zero)
        return None
    return path


def _outcome(name, folder):
    path = _export_classifier(name, folder)
    if path is None:
        return NO_EXPORT
    doc = config(path, "pod16", {"kind": "single", "replicas": 16}, {"gradient_accumulation": 2, "device_iterations": 1, "host_calls": 1})
    try:
        summary = ipusim.run(doc, out_dir=folder / name)
    except ipusim.OutOfMemory as oom:
        fit = oom.report["fits_with"]
        if not fit["found"]:
            assert "split the model over more IPUs" in fit["next"], name
            return NO_FIT
        summary = ipusim.run(doc, fit["sets"], out_dir=folder / f"{name}_fits")
        if "stages" in fit:
            assert len(summary["pipeline"]["stages"]) == len(fit["stages"]), name
            return SPLIT
    except ipusim.ConfigError as error:
        assert "stand in the way" in str(error) or "unsupported op" in str(error), (name, str(error))
        return UNSUPPORTED
    assert summary.total_cycles > 0 and summary["samples_per_second"] > 0, name
    return TRAINS


def _check_classifiers(names, folder):
    found = {name: _outcome(name, folder) for name in names}
    assert found == {name: EVERY_CLASSIFIER[name] for name in names}


def test_every_torchvision_classifier_is_listed():
    assert sorted(EVERY_CLASSIFIER) == sorted(torchvision.models.list_models(module=torchvision.models))


def test_every_torchvision_classifier_alexnet_to_efficientnet(tmp_path):
    _check_classifiers([n for n in sorted(EVERY_CLASSIFIER) if n < "g"], tmp_path)


def test_every_torchvision_classifier_googlenet_to_regnet(tmp_path):
    _check_classifiers([n for n in sorted(EVERY_CLASSIFIER) if "g" <= n < "res"], tmp_path)


def test_every_torchvision_classifier_resnet_to_squeezenet(tmp_path):
    _check_classifiers([n for n in sorted(EVERY_CLASSIFIER) if "res" <= n < "sw"], tmp_path)


def test_every_torchvision_classifier_swin_to_wide_resnet(tmp_path):
    _check_classifiers([n for n in sorted(EVERY_CLASSIFIER) if n >= "sw"], tmp_path)


# One classifier of each family torchvision 0.14 ships, exported as above, also pipelined over
# the four IPUs of an IPU-M2000 (training, stages at four evenly spaced of the module prefixes the
# out-of-memory report's split search cuts at) and run for inference data-parallel on an
# IPU-POD16: each runs, or stops with an out-of-memory report whose fit then runs.
FAMILIES = ["alexnet", "convnext_tiny", "densenet121", "efficientnet_b0", "efficientnet_v2_s", "googlenet", "inception_v3", "maxvit_t",
            "mnasnet0_5", "mobilenet_v2", "mobilenet_v3_small", "regnet_x_400mf", "regnet_y_400mf", "resnet18", "resnext50_32x4d",
            "shufflenet_v2_x0_5", "squeezenet1_0", "swin_t", "vgg11", "vit_b_16", "wide_resnet50_2"]


def _runs_or_fits(doc, folder):
    """"runs"; "fits with" the settings the out-of-memory report found (which then runs); or "no
    fit", the report naming what to try next."""
    try:
        summary = ipusim.run(doc, out_dir=folder)
    except ipusim.OutOfMemory as oom:
        fit = oom.report["fits_with"]
        if not fit["found"]:
            assert "split the model over more IPUs" in fit["next"], folder.name
            return "no fit"
        summary = ipusim.run(doc, fit["sets"], out_dir=folder.parent / f"{folder.name}_fits")
        assert summary.total_cycles > 0
        return "fits with " + ", ".join(s.split("=")[0].rsplit("/", 1)[-1] for s in fit["sets"])
    assert summary.total_cycles > 0 and summary["samples_per_second"] > 0
    return "runs"


# AlexNet's and MaxViT's last stages (at 224 x 224) fit at micro-batch 1; VGG-11's last stage,
# its classifier's 25,088 x 4,096 layer with the rest, fits no IPU whatever the micro-batch or
# optimizer state (the report says to split the model over more IPUs).
PIPELINED_AND_INFERENCE = {name: ("runs", "runs") for name in FAMILIES}
PIPELINED_AND_INFERENCE.update({"alexnet": ("fits with micro_batch", "runs"), "maxvit_t": ("fits with micro_batch", "runs"),
                                "vgg11": ("no fit", "runs")})


def test_every_family_pipelines_over_an_m2000_and_runs_inference(tmp_path):
    found = {}
    for name in FAMILIES:
        path = _export_classifier(name, tmp_path)
        prefixes = ipusim._ipusim.onnx_stage_prefixes(str(path))
        assert len(prefixes) >= 4, (name, prefixes)
        blocks = [{"name": f"s{i}", "prefix": prefixes[i * len(prefixes) // 4], "ipu": i} for i in range(4)]
        pipelined = config(path, "m2000", {"kind": "pipelined"}, {"gradient_accumulation": 8, "device_iterations": 1, "host_calls": 1}, blocks)
        inference = config(path, "pod16", {"kind": "single", "replicas": 16}, {"device_iterations": 4, "host_calls": 1})
        inference["workload"]["mode"] = "infer"
        found[name] = (_runs_or_fits(pipelined, tmp_path / f"{name}_pipelined"), _runs_or_fits(inference, tmp_path / f"{name}_infer"))
    assert found == PIPELINED_AND_INFERENCE
