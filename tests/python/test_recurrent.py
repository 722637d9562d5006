# SPDX-License-Identifier: MIT
"""Recurrent language models as a researcher exports them (opset 17, training mode, without
weights): an embedding, a 2-layer nn.LSTM or nn.GRU (batch_first, zero initial state) and a
linear head, per-token cross-entropy. torch writes each layer as an ONNX LSTM or GRU between a
Transpose and a Squeeze, its weights re-packed by Slice and Concat and its initial state as
zeros expanded over the batch; each becomes one lstm or gru layer that loops over the steps on
the IPU, forward and backward through time."""
import warnings

import pytest

torch = pytest.importorskip("torch", reason="python3-torch is not installed")
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

import ipusim  # noqa: E402
from conftest import load_model_set  # noqa: E402

VOCAB, SEQ, EMBED, HIDDEN = 256, 16, 32, 64
CELLS = {"lstm": (nn.LSTM, 4, "LSTM"), "gru": (nn.GRU, 3, "GRU")}


def LanguageModel(rnn):  # noqa: N802 (a model class's name)
    """The model set's recurrent language model (tools/onnx/model_set.py) at small size."""
    return load_model_set().RecurrentLm(rnn, vocab=VOCAB, embed=EMBED, hidden=HIDDEN)


def export(folder, cell, training=True):
    path = folder / f"{cell}{'' if training else '_infer'}.onnx"
    ids = torch.randint(0, VOCAB, (2, SEQ))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(LanguageModel(CELLS[cell][0]).train(training), (ids, ids) if training else (ids,), str(path),
                          input_names=["ids", "labels"] if training else ["ids"], opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL,
                          do_constant_folding=False, export_params=False)
    return path


def config(path, system, strategy, mode="train", accumulation=8):
    return {"system": {"base": f"hardware/{system}.json"},
            "workload": {"kind": "onnx", "file": str(path), "mode": mode, "micro_batch": 2, "precision": "fp16",
                         "partials": "fp16", "strategy": strategy},
            "run": {"gradient_accumulation": accumulation if mode == "train" else 1, "device_iterations": 1, "host_calls": 1}}


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_recurrent_language_model_trains_data_parallel_on_pod16(tmp_path, cell):
    summary = ipusim.run(config(export(tmp_path, cell), "pod16", {"kind": "single", "replicas": 16}), out_dir=tmp_path / "pod16")
    assert summary.total_cycles > 0
    # The weights are torch's parameters in fp16: each layer's input and recurrent weights and
    # both biases, as ONNX's W, R and B hold them.
    parameters = sum(p.numel() for p in LanguageModel(CELLS[cell][0]).parameters())
    assert summary.memory[0]["bytes_by_kind"]["weight"] == 2 * parameters
    # 2 x multiply-adds a token forward: each step's matmul of [x_t, h_t-1] by the gates'
    # weights (G H x (I + H)) and the head; training three times that: backward through time
    # the gate gradients by the weights (dx and dh_t-1), then the weights' gradient over every
    # step (the embedding is a gather, no multiply-adds).
    gates = CELLS[cell][1]
    forward = 2 * SEQ * (gates * HIDDEN * (EMBED + HIDDEN) + gates * HIDDEN * 2 * HIDDEN + HIDDEN * VOCAB)
    assert summary["flops"]["model_flops_per_sample"] == 3 * forward


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_recurrent_language_model_pipelines_a_layer_an_ipu_over_an_m2000(tmp_path, cell):
    op = CELLS[cell][2]
    doc = config(export(tmp_path, cell), "m2000", {"kind": "pipelined"})
    doc["workload"]["blocks"] = [{"name": "embedding", "prefix": "/emb/", "ipu": 0},
                                 {"name": "layer0", "prefix": f"/rnn/{op}", "ipu": 1},
                                 {"name": "layer1", "prefix": f"/rnn/{op}_1", "ipu": 2},
                                 {"name": "head", "prefix": "/out/", "ipu": 3}]
    summary = ipusim.run(doc, out_dir=tmp_path / "pipelined")
    assert [s["ipu"] for s in summary["pipeline"]["stages"]] == [0, 1, 2, 3]
    memory = {m["ipu"]: m["bytes_by_kind"]["weight"] for m in summary.memory}
    layer0 = gates_params(cell, EMBED)
    assert memory[1] == 2 * layer0 and memory[2] == 2 * gates_params(cell, HIDDEN)


def gates_params(cell, inputs):
    gates = CELLS[cell][1]
    return gates * HIDDEN * (inputs + HIDDEN) + 2 * gates * HIDDEN


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_recurrent_language_model_runs_inference_with_nothing_saved(tmp_path, cell):
    infer = ipusim.run(config(export(tmp_path, cell, training=False), "mk2", {"kind": "single"}, mode="infer"), out_dir=tmp_path / "infer")
    assert infer.total_cycles > 0
    assert infer["flops"]["model_flops_per_sample"] == 2 * SEQ * (CELLS[cell][1] * HIDDEN * (EMBED + 3 * HIDDEN) + HIDDEN * VOCAB)


def test_a_bidirectional_lstm_is_refused_naming_the_node(tmp_path):
    class Bidirectional(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.rnn = nn.Embedding(VOCAB, EMBED), nn.LSTM(EMBED, HIDDEN, batch_first=True, bidirectional=True)

        def forward(self, ids):
            return self.rnn(self.emb(ids))[0]

    path = tmp_path / "bidirectional.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Bidirectional(), (torch.randint(0, VOCAB, (2, SEQ)),), str(path), input_names=["ids"], opset_version=17,
                          do_constant_folding=False, export_params=False)
    with pytest.raises(ipusim.ConfigError, match=r'ONNX node "/rnn/LSTM" \(LSTM\): expected direction "forward": a bidirectional LSTM'):
        ipusim.run(config(path, "mk2", {"kind": "single"}, mode="infer"), out_dir=tmp_path / "refused")


def test_lstm_language_model_through_poptorch_pipelines_with_begin_block():
    from ipusim import poptorch

    class WithLoss(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, ids, labels):
            logits = self.model(ids)
            return logits, F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))

    torch.manual_seed(0)
    model = LanguageModel(nn.LSTM)
    model.rnn = poptorch.BeginBlock(model.rnn, "rnn", ipu_id=1)
    model.out = poptorch.BeginBlock(model.out, "head", ipu_id=1)
    opts = poptorch.Options()
    opts.Training.gradientAccumulation(4)
    opts.setExecutionStrategy(poptorch.PipelinedExecution())
    training = poptorch.trainingModel(WithLoss(model), opts, torch.optim.SGD(model.parameters(), lr=0.5))
    ids = torch.randint(0, VOCAB, (4 * 2, SEQ))
    before = F.cross_entropy(model(ids).reshape(-1, VOCAB), ids.reshape(-1)).item()
    for _ in range(3):
        training(ids, ids)
    assert F.cross_entropy(model(ids).reshape(-1, VOCAB), ids.reshape(-1)).item() < before  # torch's weights learned
    config = training.simulated_config()
    assert [b["ipu"] for b in config["workload"]["blocks"]] == [0, 1, 1]
    summary = training.simulated_report()["kinds"][0]["summary"]
    assert [s["ipu"] for s in summary["pipeline"]["stages"]] == [0, 1]
    assert summary["total_cycles"] > 0
