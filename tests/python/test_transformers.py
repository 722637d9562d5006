# SPDX-License-Identifier: MIT
"""Transformers as a researcher exports them (opset 17, training mode, without weights): a
GPT-2-style decoder in plain PyTorch (token and arange position embeddings, causal mask, GELU,
tied LM head, per-token cross-entropy over logits.reshape(-1, V)), whose batch folds into the
tokens and unfolds again, and torchvision's VisionTransformer (a class token expanded over the
batch and concatenated to the patches, nn.MultiheadAttention moving the batch), at small
shapes. The import follows the batch, so the decoder exported at batch 1 and at batch 2
simulates alike."""
import math
import warnings

import pytest

torch = pytest.importorskip("torch", reason="python3-torch is not installed")
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

import ipusim  # noqa: E402
from conftest import load_model_set  # noqa: E402

torchvision = pytest.importorskip("torchvision", reason="python3-torchvision is not installed")

VOCAB, SEQ, WIDTH, HEADS, LAYERS = 512, 32, 64, 4, 2


def Gpt(layers=LAYERS):  # noqa: N802 (a model class's name)
    """The model set's GPT-2-style decoder at small size."""
    return load_model_set().Gpt(vocab=VOCAB, seq=SEQ, width=WIDTH, heads=HEADS, layers=layers)


def export(folder, batch, training=True, layers=LAYERS):
    path = folder / f"gpt{layers}_b{batch}{'' if training else '_infer'}.onnx"
    tokens = torch.randint(0, VOCAB, (batch, SEQ))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Gpt(layers).train(training), (tokens, tokens) if training else (tokens,), str(path),
                          input_names=["ids", "labels"] if training else ["ids"], opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL,
                          do_constant_folding=False, export_params=False)
    return path


def config(path, system, strategy, mode="train", buffers=(), accumulation=4):
    return {"system": {"base": f"hardware/{system}.json"},
            "workload": {"kind": "onnx", "file": str(path), "mode": mode, "micro_batch": 2, "precision": "fp16",
                         "partials": "fp16", "strategy": strategy, "buffers": list(buffers)},
            "run": {"gradient_accumulation": accumulation if mode == "train" else 1, "device_iterations": 1, "host_calls": 1}}


def export_training(model, inputs, path):
    """A model with its loss inside, as a researcher exports it: training mode, no weights."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model.train(), inputs, str(path), input_names=["ids", "labels"], opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False, export_params=False)
    return path


def test_gpt_decoder_trains_data_parallel_on_pod16_from_either_batch(tmp_path):
    runs = [ipusim.run(config(export(tmp_path, b), "pod16", {"kind": "single", "replicas": 16}, buffers=["mask"]),
                       out_dir=tmp_path / f"b{b}") for b in (2, 1)]
    assert runs[0].total_cycles > 0
    assert runs[0].total_cycles == runs[1].total_cycles  # the batch followed alike from an export at 2 and at 1
    # The weights: torch's parameters, the LM head sharing the token embedding's, in fp16; the
    # causal mask a buffer (named in the config: not learned, no optimizer state).
    parameters = sum(p.numel() for p in Gpt().parameters())
    assert runs[0].memory[0]["bytes_by_kind"]["weight"] == 2 * parameters
    assert runs[0].memory[0]["bytes_by_kind"]["buffer"] == 2 * SEQ * SEQ
    # 2 x multiply-adds a token forward: each layer's four linear layers (12 d^2) and the
    # attention's two matmuls (2 S d), and the head (V d); training three times that (the
    # embeddings are gathers, not multiply-adds).
    forward = 2 * SEQ * (LAYERS * (12 * WIDTH * WIDTH + 2 * SEQ * WIDTH) + VOCAB * WIDTH)
    assert runs[0]["flops"]["model_flops_per_sample"] == 3 * forward


def test_gpt_decoder_runs_inference(tmp_path):
    summary = ipusim.run(config(export(tmp_path, 2, training=False), "mk2", {"kind": "single"}, mode="infer"), out_dir=tmp_path / "infer")
    assert summary.total_cycles > 0
    assert summary["samples"] == 2
    # Without /workload/buffers an export without weights cannot tell the mask buffer from a
    # parameter: it is a weight too.
    parameters = sum(p.numel() for p in Gpt().parameters())
    assert summary.memory[0]["bytes_by_kind"]["weight"] == 2 * (parameters + SEQ * SEQ)


def test_gpt_decoder_pipelines_over_an_m2000_with_the_tied_head_beside_the_embedding(tmp_path):
    # Three layers on IPUs 1 to 3; the embeddings on IPU 0, and the head there too, as PopART
    # copies no learned weight between IPUs (optimum-graphcore's pipelined GPT-2 places it so).
    blocks = [{"name": "embeddings", "prefix": "/wte/", "ipu": 0}] + \
             [{"name": f"layer{i}", "prefix": f"/blocks.{i}/", "ipu": i + 1} for i in range(3)] + \
             [{"name": "head", "prefix": "/ln/", "ipu": 0}]
    doc = config(export(tmp_path, 2, layers=3), "m2000", {"kind": "pipelined"}, buffers=["mask"], accumulation=16)
    doc["workload"]["blocks"] = blocks
    summary = ipusim.run(doc, out_dir=tmp_path / "pipelined")
    pipeline = summary["pipeline"]
    assert [s["ipu"] for s in pipeline["stages"]] == [0, 1, 2, 3, 0]
    assert all(w["cycles_per_micro_batch"] > 0 for w in pipeline["ipu_work"])
    memory = {m["ipu"]: m["bytes_by_kind"] for m in summary.memory}
    # IPU 0 holds both embedding tables and the final norm, the head reading the token table.
    assert memory[0]["weight"] == 2 * (VOCAB * WIDTH + SEQ * WIDTH + 2 * WIDTH)
    # The mask lives with the first layer; later layers receive a copy every micro-batch (the
    # IPU-copy buffer of IPU 2 and 3 is larger than IPU 1's by the mask's bytes).
    assert memory[1]["buffer"] == 2 * SEQ * SEQ and "buffer" not in memory[2]
    assert memory[2]["ipu copy buffer"] - memory[1]["ipu copy buffer"] == 2 * SEQ * SEQ
    # A block reading the tied weight from another IPU is refused, naming the way out.
    blocks[-1]["ipu"] = 3
    doc = config(export(tmp_path, 2, layers=3), "m2000", {"kind": "pipelined"}, buffers=["mask"], accumulation=16)
    doc["workload"]["blocks"] = blocks[:3] + [dict(blocks[3], ipu=2), blocks[4]]
    with pytest.raises(ipusim.ConfigError, match="tied weights: put both blocks' stages on one IPU"):
        ipusim.run(doc, out_dir=tmp_path / "refused")


def test_vision_transformer_trains_data_parallel_on_pod16(tmp_path):
    from torchvision.models.vision_transformer import VisionTransformer
    vit = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128, num_classes=10)
    path = tmp_path / "vit.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(vit.train(), torch.randn(2, 3, 32, 32), str(path), opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False, export_params=False)
    doc = config(path, "pod16", {"kind": "single", "replicas": 16})
    doc["workload"]["loss"] = "cross_entropy"
    summary = ipusim.run(doc, out_dir=tmp_path / "vit")
    assert summary.total_cycles > 0
    # Every parameter is a weight, the class token and the position embedding too, in fp16.
    assert summary.memory[0]["bytes_by_kind"]["weight"] == 2 * sum(p.numel() for p in vit.parameters())
    # 2 x multiply-adds: 17 tokens (16 patches and the class token); the patch projection, per
    # layer the attention's four 64 x 64 projections, its two matmuls and the 64 -> 128 -> 64
    # MLP, and the head on the class token. Training is three times that, less the patch
    # projection's data gradient (the images need none).
    tokens, width = 17, 64
    patches = 2 * 16 * 3 * 8 * 8 * width
    forward = patches + 2 * 2 * tokens * (4 * width * width + 2 * tokens * width + 2 * width * 128) + 2 * width * 10
    assert summary["flops"]["model_flops_per_sample"] == 3 * forward - patches


def test_gpt_decoder_through_poptorch_pipelines_with_begin_block():
    # As a PopTorch user places it: BeginBlock per module, the final norm and the tied head back
    # on IPU 0; the shim names the mask buffer itself.
    from ipusim import poptorch
    model = Gpt(layers=3)
    model.wte = poptorch.BeginBlock(model.wte, "embeddings", ipu_id=0)
    for i, block in enumerate(model.blocks):
        model.blocks[i] = poptorch.BeginBlock(block, f"layer{i}", ipu_id=i + 1)
    model.ln = poptorch.BeginBlock(model.ln, "head", ipu_id=0)
    options = poptorch.Options()
    options.Training.gradientAccumulation(16)
    training = poptorch.trainingModel(model, options, optimizer=torch.optim.AdamW(model.parameters()))
    tokens = torch.randint(0, VOCAB, (32, SEQ))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss = training(tokens, tokens)
    assert torch.isfinite(loss).all()
    assert training.simulated_config()["workload"]["buffers"] == ["mask"]
    stages = training.simulated_report()["kinds"][0]["summary"]["pipeline"]["stages"]
    assert [(s["ipu"], s["blocks"]) for s in stages] == [(0, ["embeddings"]), (1, ["layer0"]), (2, ["layer1"]), (3, ["layer2"]),
                                                        (0, ["head"])]


class RmsNorm(nn.Module):
    """LLaMA's and T5's norm: x / sqrt(mean(x^2) + eps), times a learned scale."""

    def __init__(self, width):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class PooledEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.norm, self.fc, self.head = nn.Embedding(VOCAB, WIDTH), RmsNorm(WIDTH), nn.Linear(WIDTH, WIDTH), nn.Linear(WIDTH, 10)

    def forward(self, ids, labels):
        h = self.fc(self.norm(self.wte(ids)))
        return F.cross_entropy(self.head(h.mean(1) + 0.5 * h.sum(dim=1)), labels)


def test_rms_norm_and_token_pooling_train_as_pow_reduce_and_reciprocal(tmp_path):
    # x.pow(2) is a pow, .mean(-1, keepdim=True) a reduce over the last dimension, rsqrt's
    # 1 / sqrt a reciprocal; h.mean(1) and h.sum(dim=1) reduce over the tokens (strided).
    path = tmp_path / "pooled.onnx"
    ids, labels = torch.randint(0, VOCAB, (2, SEQ)), torch.randint(0, 10, (2,))
    export_training(PooledEncoder(), (ids, labels), path)
    summary = ipusim.run(config(path, "mk2", {"kind": "single"}), out_dir=tmp_path / "run")
    assert summary.total_cycles > 0
    assert summary.memory[0]["bytes_by_kind"]["weight"] == 2 * sum(p.numel() for p in PooledEncoder().parameters())
    # 2 x multiply-adds a sample forward: the linear layer on every token and the head once;
    # training three times that (the embedding is a gather, no multiply-adds).
    forward = 2 * (SEQ * WIDTH * WIDTH + WIDTH * 10)
    assert summary["flops"]["model_flops_per_sample"] == 3 * forward


class MultiQueryAttention(nn.Module):
    """Multi-query attention: HEADS query heads share one key and one value head."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, WIDTH)
        self.q, self.kv, self.proj = nn.Linear(WIDTH, WIDTH), nn.Linear(WIDTH, 2 * (WIDTH // HEADS)), nn.Linear(WIDTH, WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, ids, labels):
        x = self.wte(ids)
        b, s, d = x.shape
        q = self.q(x).reshape(b, s, HEADS, d // HEADS).transpose(1, 2)
        k, v = (t.reshape(b, s, 1, d // HEADS).transpose(1, 2) for t in self.kv(x).split(d // HEADS, dim=2))
        attn = (q @ k.transpose(-2, -1) / math.sqrt(d // HEADS)).softmax(-1) @ v
        x = x + self.proj(attn.transpose(1, 2).reshape(b, s, d))
        return F.cross_entropy(self.head(x).reshape(-1, VOCAB), labels.reshape(-1))


def test_multi_query_attention_trains_with_the_shared_key_and_value_broadcast(tmp_path):
    path = tmp_path / "mqa.onnx"
    ids = torch.randint(0, VOCAB, (2, SEQ))
    export_training(MultiQueryAttention(), (ids, ids), path)
    summary = ipusim.run(config(path, "pod16", {"kind": "single", "replicas": 16}), out_dir=tmp_path / "run")
    assert summary.total_cycles > 0
    # 2 x multiply-adds a token forward: the query, key-value, output and head projections, and
    # each head's two matmuls against the shared key and value; training three times that.
    head = WIDTH // HEADS
    forward = 2 * SEQ * (WIDTH * WIDTH + WIDTH * 2 * head + WIDTH * WIDTH + WIDTH * VOCAB + 2 * HEADS * SEQ * head)
    assert summary["flops"]["model_flops_per_sample"] == 3 * forward


def test_the_fit_search_splits_a_gpt_with_its_tied_head_on_the_embeddings_ipu(tmp_path):
    # A GPT of the model set too large for one IPU of 64,000-byte tiles: the out-of-memory
    # report's split puts the final norm and the head, which reads the token embedding's
    # weight, in a stage of their own on IPU 0 with the embedding, and that split runs.
    model_set = load_model_set()
    path = tmp_path / "gpt.onnx"
    ids = torch.zeros(2, 64, dtype=torch.long)
    export_training(model_set.Gpt(vocab=4096, seq=64, width=128, heads=4, layers=4), (ids, ids), path)
    doc = config(path, "pod16", {"kind": "single", "replicas": 16}, buffers=["mask"], accumulation=8)
    small = ["/system/ipu/tile_memory_bytes=64000"]
    with pytest.raises(ipusim.OutOfMemory) as oom:
        ipusim.run(doc, small, out_dir=tmp_path / "oom")
    fit = oom.value.report["fits_with"]
    assert fit["found"]
    assert [s["ipu"] for s in fit["stages"]] == [0, 1, 2, 3, 0]
    assert fit["stages"][0]["prefix"] == "/wte/" and fit["stages"][-1]["prefix"] == "/ln/"
    summary = ipusim.run(doc, small + fit["sets"], out_dir=tmp_path / "split")
    assert [s["ipu"] for s in summary["pipeline"]["stages"]] == [0, 1, 2, 3, 0]
    assert summary.total_cycles > 0


class MaskedAttention(nn.Module):
    """Attention masked as Hugging Face's GPT-2 masks it: torch.where of a bool causal-mask
    buffer, the scores and the smallest float."""

    def __init__(self):
        super().__init__()
        self.wte, self.qkv, self.head = nn.Embedding(VOCAB, WIDTH), nn.Linear(WIDTH, 3 * WIDTH), nn.Linear(WIDTH, VOCAB)
        self.register_buffer("bias", torch.tril(torch.ones(SEQ, SEQ, dtype=torch.bool)).view(1, 1, SEQ, SEQ))

    def forward(self, ids, labels):
        x = self.wte(ids)
        b, s, d = x.shape
        q, k, v = (t.reshape(b, s, HEADS, d // HEADS).transpose(1, 2) for t in self.qkv(x).split(d, dim=2))
        scores = torch.where(self.bias[:, :, :s, :s], q @ k.transpose(-2, -1), torch.tensor(torch.finfo(torch.float32).min))
        x = x + (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
        return F.cross_entropy(self.head(x).reshape(-1, VOCAB), labels.reshape(-1))


def test_attention_masked_by_where_of_a_bool_buffer_trains(tmp_path):
    path = tmp_path / "masked.onnx"
    ids = torch.randint(0, VOCAB, (2, SEQ))
    export_training(MaskedAttention(), (ids, ids), path)
    summary = ipusim.run(config(path, "mk2", {"kind": "single"}, buffers=["bias"]), out_dir=tmp_path / "run")
    assert summary.total_cycles > 0
    # The mask is a buffer, not learned: [1, 1, S, S] in the model's precision (fp16).
    assert summary.memory[0]["bytes_by_kind"]["buffer"] == 2 * SEQ * SEQ
    assert summary.memory[0]["bytes_by_kind"]["weight"] == 2 * sum(p.numel() for p in MaskedAttention().parameters())


class DataMasks(nn.Module):
    """Masks computed from data, as gates and masked activations write them: a comparison of two
    tensors and its complement selecting between them (Less, Not, Where of two tensors), an
    equality of two tensors, a comparison against a constant (Greater) filling with a scalar."""

    def __init__(self):
        super().__init__()
        self.wte, self.gate, self.head = nn.Embedding(VOCAB, WIDTH), nn.Linear(WIDTH, WIDTH), nn.Linear(WIDTH, VOCAB)

    def forward(self, ids, labels):
        x = self.wte(ids)
        g = self.gate(x)
        x = torch.where(~(g < x), g, x)
        x = torch.where(x == g, x, 2 * g)
        x = x.masked_fill(g > 0.5, 0.0)
        return F.cross_entropy(self.head(x).reshape(-1, VOCAB), labels.reshape(-1))


def test_masks_computed_from_data_select_between_tensors(tmp_path):
    path = tmp_path / "masks.onnx"
    ids = torch.randint(0, VOCAB, (2, SEQ))
    export_training(DataMasks(), (ids, ids), path)
    summary = ipusim.run(config(path, "mk2", {"kind": "single"}), out_dir=tmp_path / "run")
    assert summary.total_cycles > 0
    # The comparisons' constant (0.5) is a one-element buffer; the weights are torch's.
    assert summary.memory[0]["bytes_by_kind"]["buffer"] == 2
    assert summary.memory[0]["bytes_by_kind"]["weight"] == 2 * sum(p.numel() for p in DataMasks().parameters())
    ran = {t["op_type"].replace("#*", "") for t in summary["op_types"]}  # a layer beside a parameter's: "/Greater#*"
    # Each comparison and select ran, and both selects' gradients; no gradient went to a mask.
    for name in ("/Less", "/Not", "/Where", "/Where.grad_x", "/Where.grad_y", "/Equal", "/Greater"):
        assert name in ran, (name, sorted(ran))
    assert not any(t.startswith(("/Less.", "/Not.", "/Equal.", "/Greater.")) and "grad" in t for t in ran)
