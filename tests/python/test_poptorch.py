# SPDX-License-Identifier: MIT
"""ipusim.poptorch: PopTorch's options, blocks and strategies map onto the config they must make;
the tutorial's model, trained through it, runs at exactly the simulated throughput of
configs/mnist/pipelined.json; outputs are real torch results; unsupported ops name the node."""
import importlib.util
import json
import os
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="python3-torch is not installed")
from torch import nn  # noqa: E402

import ipusim  # noqa: E402
from ipusim import poptorch  # noqa: E402
from ipusim.poptorch._executor import system_file  # noqa: E402


def _tutorial():
    """The tutorial's script (tools/examples/mnist_pipelining.py): its model, with blocks B1-B4 as
    poptorch.Block scopes, and the model with its loss."""
    path = Path(os.environ["IPUSIM_ROOT"]) / "tools/examples/mnist_pipelining.py"
    spec = importlib.util.spec_from_file_location("mnist_pipelining", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_script = _tutorial()
Network, TrainingModelWithLoss = _script.Network, _script.TrainingModelWithLoss


def tutorial_options():
    opts = poptorch.Options().deviceIterations(10)
    opts.Training.gradientAccumulation(10)
    opts.setExecutionStrategy(poptorch.PipelinedExecution("B1", "B2", "B3", "B4"))
    return opts


def batch(n, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(n, 1, 28, 28, generator=generator), torch.randint(0, 10, (n,), generator=generator)


def test_options_blocks_and_strategy_make_the_tutorials_config():
    model = Network()
    opts = tutorial_options()
    opts.TensorLocations.setOptimizerLocation(poptorch.TensorLocationSettings().useOnChipStorage(False))
    opts.Precision.setPartialsType(torch.half)
    opts.setAvailableMemoryProportion({"IPU1": 0.3})
    training = poptorch.trainingModel(TrainingModelWithLoss(model), opts, poptorch.optim.AdamW(model.parameters(), lr=1e-3))
    training(*batch(4000))
    config = training.simulated_report()["kinds"][0]["summary"]
    workload = json.loads(json.dumps(training.simulated_config()))["workload"]
    # Each poptorch.Block's ops go under its own scope; the loss follows layer4 in B4, and
    # layer3_act layer3 in B3: the block of the node before.
    assert workload["blocks"] == [{"name": "B1", "prefix": "/model/Block[B1]"}, {"name": "B2", "prefix": "/model/Block[B2]"},
                                  {"name": "B3", "prefix": "/model/Block[B3]"}, {"name": "B4", "prefix": "/model/Block[B4]"}]
    assert workload["strategy"] == {"kind": "pipelined", "stages": [{"blocks": [b], "ipu": i} for i, b in enumerate(["B1", "B2", "B3", "B4"])]}
    # PopTorch's partials type applies to half matmuls: an fp32 model accumulates in fp32.
    assert (workload["mode"], workload["micro_batch"], workload["precision"], workload["partials"]) == ("train", 40, "fp32", "fp32")
    half = poptorch.simulator_config(opts, True, "m.onnx", 40, [], "fp16", torch.optim.SGD(model.parameters(), lr=0.1))
    assert (half["workload"]["partials"], half["workload"]["optimizer"], half["workload"]["momentum"]) == ("fp16", "sgd", 0)
    assert (workload["optimizer"], workload["offload_optimizer"], workload["loss"]) == ("adamw", True, "none")
    assert workload["available_memory_proportion"] == [0.6, 0.3, 0.6, 0.6]
    # Two host calls of 4,000 samples, one epoch each: the first call's cycles and a later one's.
    assert training.simulated_config()["run"] == {"device_iterations": 10, "epochs": 2, "dataset_samples": 4000,
                                                  "gradient_accumulation": 10}
    # PopTorch's host as calibrated (configs/validation/host.json), unless simulator(host=...) says otherwise.
    assert training.simulated_config()["system"] == {"base": "hardware/m2000.json",
                                                     "host": {"base": "hardware/host/poptorch_calibrated.json"}}
    assert config.num_ipus == 4
    assert config["host_model"]["name"] == "poptorch_calibrated"
    assert training.simulator_assumptions == ("4 simulated Mk2 IPUs, host model poptorch_calibrated: 6.26 ms a host call, "
                                              "222 us a host exchange")
    ideal = poptorch.simulator_config(tutorial_options().simulator(host="ideal"), False, "m.onnx", 40, [], "fp32")
    assert ideal["system"]["host"] == {"base": "hardware/host/ideal.json"}
    # A system config of the user's keeps its own host unless a host model is named.
    own = poptorch.simulator_config(tutorial_options().simulator("my_system.json"), False, "m.onnx", 40, [], "fp32")
    assert "host" not in own["system"]
    with pytest.raises(ValueError, match="simulator: expected host to be one of ideal, poptorch_calibrated, found 'fast'"):
        tutorial_options().simulator(host="fast")


def test_the_tutorial_runs_at_the_pipelined_configs_throughput():
    model = Network()
    training = poptorch.trainingModel(TrainingModelWithLoss(model), tutorial_options(), poptorch.optim.AdamW(model.parameters(), lr=1e-3))
    data, labels = batch(4000)
    for _ in range(3):
        training(data, labels)
    report = training.simulated_report()
    cli = ipusim.run(ipusim.CONFIGS / "mnist/pipelined.json", {"/run/epochs": 1}, inference=False)
    assert report["calls"] == 3
    assert report["kinds"][0]["call_cycles"] * 15 == cli.total_cycles  # 15 host calls per epoch of 60,000
    assert report["samples_per_second"] == pytest.approx(cli.samples_per_second, rel=1e-12)
    assert training.last_call_seconds == pytest.approx(cli.seconds / 15, rel=1e-12)
    text = training.report_text()  # what IPUSIM_REPORT prints at exit
    assert f"3 calls on 4 of the system's 4 IPUs, the first {cli.seconds / 15 * 1e3:.3f} ms, then {cli.seconds / 15 * 1e3:.3f} ms each" in text
    assert f"compute {cli.breakdown_share['compute'] * 100:.1f} %" in text
    assert f"IPU 0 {cli.memory[0]['peak']['max']:,}, IPU 1" in text


def test_outputs_and_training_are_real():
    torch.manual_seed(0)
    model = Network()
    opts = poptorch.Options().deviceIterations(2)
    opts.Training.gradientAccumulation(3)
    opts.outputMode(poptorch.OutputMode.All)
    training = poptorch.trainingModel(TrainingModelWithLoss(model), opts, poptorch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9))
    data, labels = batch(2 * 3 * 8)
    before = torch.nn.functional.cross_entropy(model(data), labels).item()
    for _ in range(5):
        preds, losses = training(data, labels)
    assert preds.shape == (48, 10) and losses.shape == (6,)
    after = torch.nn.functional.cross_entropy(model(data), labels).item()
    assert after < before  # the real weights were updated
    opts.outputMode(poptorch.OutputMode.Final)
    final = poptorch.trainingModel(TrainingModelWithLoss(model), opts, torch.optim.SGD(model.parameters(), lr=0.0))
    preds, loss = final(data, labels)
    assert preds.shape == (8, 10) and loss.dim() == 0
    inference_opts = poptorch.Options().deviceIterations(6)
    inference = poptorch.inferenceModel(model, inference_opts)
    assert torch.allclose(inference(data), model.eval()(data))
    assert inference.simulated_config()["workload"]["mode"] == "infer"


def test_ipu_ids_auto_stage_and_begin_block():
    model = Network()
    model.layer2 = poptorch.BeginBlock(model.layer2, "second", ipu_id=1)
    model.forward = lambda x: model.layer4(model.layer3_act(model.layer3(model.layer2(model.layer1(x)).view(-1, 320))))
    inference = poptorch.inferenceModel(model, poptorch.Options().deviceIterations(4))
    inference(batch(32)[0])
    config = inference.simulated_config()
    assert config["workload"]["blocks"] == [{"name": "model", "prefix": "/layer1/", "ipu": 0},
                                            {"name": "second", "prefix": "/layer2/", "ipu": 1}]
    assert config["workload"]["strategy"] == {"kind": "pipelined"}
    auto = poptorch.Options().setExecutionStrategy(poptorch.PipelinedExecution(poptorch.AutoStage.AutoIncrement))
    assert poptorch.simulator_config(auto, False, "m.onnx", 8, config["workload"]["blocks"], "fp32")["workload"]["strategy"] == \
        {"kind": "pipelined"}
    assert config["system"] == {"base": "hardware/m2000.json", "host": {"base": "hardware/host/poptorch_calibrated.json"}}
    assert inference.simulated_report()["kinds"][0]["summary"]["num_ipus"] == 4


def test_a_parents_own_ops_after_begin_block_belong_to_the_current_block():
    # ResNet's shape: BeginBlock on the later stages, torch.flatten in the model's own forward
    # after the last; PopTorch runs the flatten and the head in the last block.
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3, padding=1)
            self.layer1 = nn.Conv2d(8, 8, 3, padding=1)
            self.layer2 = poptorch.BeginBlock(nn.Conv2d(8, 8, 3, padding=1), "late", ipu_id=1)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(8, 10)

        def forward(self, x):
            x = torch.relu(self.layer2(self.layer1(self.stem(x))))
            return self.fc(torch.flatten(self.pool(x), 1))

    class Wrapped(nn.Module):  # as a model with its loss wraps it: Net's nodes are "/net/..."
        def __init__(self):
            super().__init__()
            self.net = Net()

        def forward(self, x):
            return self.net(x)

    inference = poptorch.inferenceModel(Wrapped(), poptorch.Options().deviceIterations(2))
    inference(torch.randn(4, 3, 8, 8))
    assert inference.simulated_config()["workload"]["blocks"] == [{"name": "model", "prefix": "/net/stem/", "ipu": 0},
                                                                  {"name": "late", "prefix": "/net/layer2/", "ipu": 1}]


@pytest.mark.parametrize("strategy, config", [
    (lambda: poptorch.SerialPhasedExecution("B1", "B2", "B3", "B4"), "mnist/phased_serial.json"),
    (lambda: poptorch.ParallelPhasedExecution([poptorch.Phase("B1"), poptorch.Phase("B2"), poptorch.Phase("B3"),
                                               poptorch.Phase(poptorch.Stage("B4"))]).useSeparateBackwardPhase(False),
     "mnist/phased_parallel.json")])
def test_phased_execution_runs_at_the_phased_configs_throughput(strategy, config):
    model = Network()
    opts = poptorch.Options().deviceIterations(10)
    opts.Training.gradientAccumulation(10)
    opts.setExecutionStrategy(strategy())
    training = poptorch.trainingModel(TrainingModelWithLoss(model), opts, poptorch.optim.AdamW(model.parameters(), lr=1e-3))
    training(*batch(4000))
    cli = ipusim.run(ipusim.CONFIGS / config, {"/run/epochs": 1}, inference=False)
    assert training.simulated_report()["kinds"][0]["call_cycles"] * 15 == cli.total_cycles  # 15 host calls an epoch


def test_phases_the_simulator_cannot_place_are_refused():
    two_stages = poptorch.SerialPhasedExecution(poptorch.Phase(poptorch.Stage("B1").ipu(0), poptorch.Stage("B2").ipu(1)), "B3")
    with pytest.raises(ValueError, match="phase 0 has 2 stages; the simulator runs one stage a phase"):
        two_stages.ipusim()
    parallel = poptorch.ParallelPhasedExecution("B1", "B2")
    parallel.phase(1).ipus(0)
    with pytest.raises(ValueError, match="phase 1 on IPU 0; the simulator runs phases alternately on IPUs 0 and 1, phase 1 on IPU 1"):
        parallel.ipusim()
    with pytest.raises(ValueError, match="expected the phases"):
        poptorch.SerialPhasedExecution()
    with pytest.raises(ValueError, match="the phase has 1 stage"):
        poptorch.Phase("B1").ipus(0, 1)
    with pytest.raises(TypeError, match="expected poptorch.Stage objects or block names"):
        poptorch.Phase(3)


def test_identity_loss_reduces_as_torch_and_trains_from_the_loss_beneath_it():
    values = torch.tensor([1.0, 2.0, 6.0])
    assert poptorch.identity_loss(values, "sum").item() == 9.0
    assert poptorch.identity_loss(values, "mean").item() == 3.0
    assert poptorch.identity_loss(values, "none") is values
    with pytest.raises(ValueError, match="reduction: expected 'sum', 'mean' or 'none', found 'max'"):
        poptorch.identity_loss(values, "max")

    class WithIdentityLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(5, 3)

        def forward(self, x, y):
            out = self.fc(x)
            return out, poptorch.identity_loss(nn.functional.nll_loss(nn.functional.log_softmax(out, 1), y), reduction="mean")

    model = WithIdentityLoss()
    training = poptorch.trainingModel(model, poptorch.Options().deviceIterations(2), poptorch.optim.SGD(model.parameters(), lr=0.1))
    x, y = torch.randn(8, 5), torch.randint(0, 3, (8,))
    out, loss = training(x, y)
    assert out.shape == (4, 3) and loss.dim() == 0 and torch.isfinite(loss)  # the last micro-batch's (OutputMode.Final)
    assert training.simulated_config()["workload"]["mode"] == "train"
    assert training.simulated_report()["kinds"][0]["call_cycles"] > 0


def test_errors_name_the_node_or_the_argument():
    class Hard(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.act = nn.CELU()

        def forward(self, x):
            return self.act(self.fc(x))

    inference = poptorch.inferenceModel(Hard())
    with pytest.raises(ipusim.ConfigError, match=r'ONNX node "/act/Celu" \(Celu\): unsupported op'):
        inference(torch.zeros(2, 4))
    with pytest.raises(ValueError, match=r"input 0: expected a combined batch of micro-batches x 4 .*found a shape of \[6, 4\]"):
        poptorch.inferenceModel(Hard(), poptorch.Options().deviceIterations(4))(torch.zeros(6, 4))
    with pytest.raises(ValueError, match="deviceIterations: expected a positive integer, found 0"):
        poptorch.Options().deviceIterations(0)
    opts = poptorch.Options()
    opts.Training.gradientAccumulation(2)
    # The library's rule and message, named as the PopTorch option it comes from.
    with pytest.raises(ipusim.ConfigError, match="/run/gradient_accumulation: expected 1: inference has no gradient accumulation") \
            as refused:
        poptorch.inferenceModel(Hard(), opts)(torch.zeros(2, 4))
    assert "comes from Training.gradientAccumulation" in "\n".join(refused.value.__notes__)
    # The library's hardware presets, the largest included, pick the smallest system that holds a model.
    assert system_file(None, 100) == "hardware/pod128.json" and system_file(None, 256) == "hardware/pod256.json"
    with pytest.raises(ValueError, match=r"needs 300 IPUs, more than the largest preset's \(pod256, 256\)"):
        system_file(None, 300)
    with pytest.raises(ValueError, match="expected a system of at least 4 IPUs, found 'mk2' of 1"):
        model = Network()
        opts = tutorial_options().simulator("mk2")
        poptorch.trainingModel(TrainingModelWithLoss(model), opts, torch.optim.SGD(model.parameters(), lr=0.1))(*batch(4000))


def test_data_loader_batches_one_host_call():
    opts = tutorial_options()
    dataset = torch.utils.data.TensorDataset(*batch(8100))
    loader = poptorch.DataLoader(opts, dataset, batch_size=40, shuffle=True, mode=poptorch.DataLoaderMode.Async)
    assert loader.combinedBatchSize == 4000
    assert [len(x) for x, _ in loader] == [4000, 4000]  # the incomplete last batch is dropped


def test_data_loader_settings_reach_the_simulated_host(capsys):
    opts = tutorial_options().simulator(sample_seconds=5e-5)
    dataset = torch.utils.data.TensorDataset(*batch(8000))
    poptorch.DataLoader(opts, dataset, batch_size=40, num_workers=16, mode=poptorch.DataLoaderMode.Async)
    assert poptorch.simulator_config(opts, False, "m.onnx", 40, [], "fp32")["run"]["data_loader"] == \
        {"mode": "async", "workers": 16, "sample_seconds": 5e-5}
    # Options no DataLoader was made with leave the host's loader at the config's default.
    assert "data_loader" not in poptorch.simulator_config(tutorial_options(), False, "m.onnx", 40, [], "fp32")["run"]
    assert "data_loader" not in poptorch.simulator_config(tutorial_options().simulator(sample_seconds=1e-3), False, "m.onnx", 40,
                                                          [], "fp32")["run"]
    assert "simulator(sample_seconds=...) has no effect" in capsys.readouterr().err
    with pytest.raises(ValueError, match="num_workers: expected an integer >= 0, found -1"):
        poptorch.DataLoader(opts, dataset, batch_size=40, num_workers=-1)
    with pytest.raises(ValueError, match="simulator: expected sample_seconds from 0 to 10, found -1"):
        poptorch.Options().simulator(sample_seconds=-1)
    # The first call waits for its batch: 4,000 samples x 50 us, one worker's 0.2 s.
    model = Network()
    free = poptorch.trainingModel(TrainingModelWithLoss(model), tutorial_options(), poptorch.optim.AdamW(model.parameters(), lr=1e-3))
    loaded = poptorch.trainingModel(TrainingModelWithLoss(model), opts, poptorch.optim.AdamW(model.parameters(), lr=1e-3))
    data, labels = batch(4000)
    free(data, labels)
    loaded(data, labels)
    assert loaded.last_call_seconds == pytest.approx(free.last_call_seconds + 0.2, abs=1e-6)


def test_io_tiles_and_prefetch_depth_reach_the_workload(capsys):
    opts = tutorial_options()
    opts.TensorLocations.numIOTiles(32)
    opts._Popart.set("defaultPrefetchBufferingDepth", 3)
    workload = poptorch.simulator_config(opts, False, "m.onnx", 40, [], "fp32")["workload"]
    assert (workload["io_tiles"], workload["prefetch_depth"]) == (32, 3)
    depth_alone = tutorial_options()
    depth_alone._Popart.set("defaultBufferingDepth", 2)
    poptorch.simulator_config(depth_alone, False, "m.onnx", 40, [], "fp32")
    assert "the prefetch depth has no effect without IO tiles" in capsys.readouterr().err
    plain = poptorch.simulator_config(tutorial_options(), False, "m.onnx", 40, [], "fp32")["workload"]
    assert "io_tiles" not in plain and "prefetch_depth" not in plain
    with pytest.raises(ValueError, match=r"_Popart.set\('defaultBufferingDepth'\): expected a positive integer, found 0"):
        opts._Popart.set("defaultBufferingDepth", 0)
    with pytest.raises(ValueError, match="numIOTiles: expected an integer >= 0, found -2"):
        opts.TensorLocations.numIOTiles(-2)


class SharedActivation(nn.Module):
    """The seed's Block(ipu_id=...) example: unnamed blocks, one ReLU module called in three."""

    def __init__(self):
        super().__init__()
        self.layer1, self.layer2, self.layer3, self.layer4 = (nn.Linear(5, 10), nn.Linear(10, 5), nn.Linear(5, 5),
                                                              nn.Linear(5, 5))
        self.act = nn.ReLU()
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        with poptorch.Block(ipu_id=0):
            x = self.act(self.layer1(x))
        with poptorch.Block(ipu_id=1):
            x = self.act(self.layer2(x))
        with poptorch.Block(ipu_id=2):
            x = self.act(self.layer3(x))
            x = self.act(self.layer4(x))
        with poptorch.Block(ipu_id=3):
            x = self.softmax(x)
        return x


def test_unnamed_blocks_and_a_module_called_in_several():
    model = SharedActivation()
    inference = poptorch.inferenceModel(model, poptorch.Options().deviceIterations(20))
    x = torch.randn(80, 5)
    assert torch.allclose(inference(x), model(x))
    # PopTorch numbers unnamed blocks 0, 1, ...; each block's scope holds what it runs, the
    # shared ReLU's calls too.
    assert inference.simulated_config()["workload"]["blocks"] == [
        {"name": "0", "prefix": "/Block[0]", "ipu": 0}, {"name": "1", "prefix": "/Block[1]", "ipu": 1},
        {"name": "2", "prefix": "/Block[2]", "ipu": 2}, {"name": "3", "prefix": "/Block[3]", "ipu": 3}]

    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = nn.Sequential(nn.Linear(5, 5), nn.ReLU())

        def forward(self, x):
            with poptorch.Block("first", ipu_id=0):
                x = self.block(x)
            with poptorch.Block("second", ipu_id=1):
                return self.block(x)

    # A module called in two blocks runs in each, as in PopTorch: each call's ops are its block's.
    twice = poptorch.inferenceModel(Twice(), poptorch.Options().deviceIterations(2))
    twice(torch.randn(4, 5))
    assert twice.simulated_config()["workload"]["blocks"] == [{"name": "first", "prefix": "/Block[first]", "ipu": 0},
                                                              {"name": "second", "prefix": "/Block[second]", "ipu": 1}]
    assert twice.simulated_config()["workload"]["strategy"] == {"kind": "pipelined"}

    # A module called outside any block and then in one: each call's ops are the block's current.
    class InAndOut(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(5, 5)
            self.act = nn.ReLU()

        def forward(self, x):
            x = self.fc(self.act(x))
            with poptorch.Block("late", ipu_id=1):
                return self.fc(x)

    in_and_out = poptorch.inferenceModel(InAndOut(), poptorch.Options().deviceIterations(2))
    in_and_out(torch.randn(4, 5))
    assert in_and_out.simulated_config()["workload"]["blocks"] == [{"name": "model", "prefix": "/act/", "ipu": 0},
                                                                   {"name": "late", "prefix": "/Block[late]", "ipu": 1}]


def test_output_modes_return_what_poptorch_returns_per_replica():
    assert (poptorch.OutputMode.Final, poptorch.OutputMode.EveryN, poptorch.OutputMode.All, poptorch.OutputMode.Sum) == \
        (0, 1, 2, 3)  # PopTorch's numbers: the seed prints output_mode=2 after outputMode(All)
    assert poptorch.AnchorMode is poptorch.OutputMode
    model = Network()
    data, labels = batch(2 * 2 * 4 * 8)  # micro-batches of 8: 2 device iterations x 2 replicas x 4 accumulated

    def train(mode, period=None):
        opts = poptorch.Options().deviceIterations(2).replicationFactor(2).anchorMode(mode, period)
        opts.Training.gradientAccumulation(4)
        return poptorch.trainingModel(TrainingModelWithLoss(model), opts, torch.optim.SGD(model.parameters(), lr=0.0))(data, labels)

    # Each replica's last micro-batch; per micro-batch; every second step of each replica; summed.
    preds, loss = train(poptorch.OutputMode.Final)
    assert preds.shape == (16, 10) and loss.shape == (2,)
    assert torch.allclose(preds, model(data[-16:]))  # the micro-batches run as PopART lays them out: replica fastest
    preds, loss = train(poptorch.OutputMode.All)
    assert preds.shape == (128, 10) and loss.shape == (16,)
    preds, loss = train(poptorch.OutputMode.EveryN, 2)
    assert preds.shape == (64, 10) and loss.shape == (8,)
    preds, loss = train(poptorch.OutputMode.Sum)
    assert preds.shape == (16, 10) and loss.shape == (2,)
    with pytest.raises(ValueError, match="output_return_period: expected at most 8 .*found 9"):
        train(poptorch.OutputMode.EveryN, 9)


def test_the_wrapped_model_its_optimizer_and_inputs():
    model = Network()
    with_loss = TrainingModelWithLoss(model)
    training = poptorch.trainingModel(with_loss, tutorial_options(), poptorch.optim.AdamW(model.parameters()))
    assert training.loss is with_loss.loss and "model.layer4.bias" in training.state_dict()  # the wrapped model's
    training(*batch(4000))
    assert training.simulated_config()["workload"]["optimizer"] == "adamw"
    training.setOptimizer(poptorch.optim.AdamW(model.parameters(), lr=1e-4))  # same program: not simulated again
    assert len(training.simulated_report()["kinds"]) == 1
    training.setOptimizer(poptorch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, loss_scaling=128,
                                             velocity_scaling=128.0))
    training(*batch(4000))
    workload = training.simulated_config()["workload"]
    assert (workload["optimizer"], workload["momentum"], workload["loss_scaling"]) == ("sgd", 0.9, 128)
    report = training.simulated_report()  # both programs' calls, each at its own simulated time
    assert report["calls"] == 2 and [k["calls"] for k in report["kinds"]] == [1, 1]
    assert report["simulated_seconds"] == pytest.approx(sum(k["first_call_cycles"] / k["summary"]["clock_hz"]
                                                            for k in report["kinds"]), rel=1e-12)

    class ByKey(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, batch):
            return self.fc(batch["x"])

    inference = poptorch.inferenceModel(ByKey(), poptorch.Options().deviceIterations(2))
    assert inference({"x": torch.ones(6, 4)}).shape == (6, 2)
    assert inference.simulated_config()["workload"]["micro_batch"] == 3


def test_precision_is_simulated_while_the_cpu_computes_in_float32():
    with pytest.raises(TypeError, match=r'half-precision model does not run on the CPU.*precision="fp16"'):
        poptorch.inferenceModel(Network().half())(torch.zeros(2, 1, 28, 28).half())
    opts = poptorch.Options().simulator("m2000", precision="fp16")
    inference = poptorch.inferenceModel(Network(), opts)
    inference(batch(8)[0])
    workload = inference.simulated_config()["workload"]
    assert (workload["precision"], workload["partials"]) == ("fp16", "fp16")
    opts.Precision.setPartialsType(torch.float)
    assert poptorch.simulator_config(opts, False, "m.onnx", 8, [], opts.simulated_precision)["workload"]["partials"] == "fp32"
    with pytest.raises(ValueError, match='simulator: expected precision "fp16" or "fp32", found \'bf16\''):
        poptorch.Options().simulator(precision="bf16")


def test_lamb_bias_correction_and_loss_scaling():
    torch.manual_seed(1)
    weights = [torch.nn.Parameter(torch.randn(4, 4)) for _ in range(2)]
    for w in weights:
        w.grad = torch.ones(4, 4)
    poptorch.optim.LAMB([weights[0]], lr=0.1).step()
    poptorch.optim.LAMB([weights[1]], lr=0.1, bias_correction=False, loss_scaling=1024).step()
    assert not torch.allclose(weights[0], weights[1])
    assert poptorch.optim.LAMB(weights, loss_scaling=1024).ipusim_settings() == {"optimizer": "lamb", "loss_scaling": 1024}
    with pytest.raises(TypeError, match="LAMB: unexpected arguments momentum"):
        poptorch.optim.LAMB(weights, momentum=0.9)


def test_functional_ops_belong_to_the_block_current_when_they_run_and_short_data_sets_are_refused_early():
    class Functional(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.w = nn.Parameter(torch.ones(4, 4))

        def forward(self, x):
            with poptorch.Block("A", ipu_id=0):
                x = self.fc(x)
            with poptorch.Block("B", ipu_id=1):
                return torch.relu(x @ self.w)

    # x @ w and torch.relu run in block B: they are B's, on IPU 1, as in PopTorch.
    model = Functional()
    functional = poptorch.inferenceModel(model, poptorch.Options().deviceIterations(2))
    x = torch.randn(4, 4)
    assert torch.allclose(functional(x), model(x))
    assert functional.simulated_config()["workload"]["blocks"] == [{"name": "A", "prefix": "/Block[A]", "ipu": 0},
                                                                   {"name": "B", "prefix": "/Block[B]", "ipu": 1}]
    dataset = torch.utils.data.TensorDataset(*batch(50))
    with pytest.raises(ValueError, match="the dataset's 50 samples are not a whole number of host calls of 16"):
        poptorch.DataLoader(poptorch.Options().deviceIterations(4), dataset, batch_size=4, drop_last=False)


def test_buffers_the_model_reads_are_named_and_copied_to_the_later_stage_not_learned():
    class Masked(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(8, 8)
            self.b = poptorch.BeginBlock(nn.Linear(8, 8), "b", ipu_id=1)
            self.register_buffer("mask", torch.ones(8))
            self.register_buffer("unused", torch.zeros(1))  # never read: torch's export leaves it out

        def forward(self, x):
            return self.b(self.a(x) * self.mask) * self.mask  # the mask read on both IPUs

    model = Masked()
    inference = poptorch.inferenceModel(model, poptorch.Options().deviceIterations(4))
    x = torch.randn(4, 8)
    assert torch.allclose(inference(x), model(x))
    config = inference.simulated_config()
    assert config["workload"]["buffers"] == ["mask"]
    summary = inference.simulated_report()["kinds"][0]["summary"]
    memory = {m["ipu"]: m["bytes_by_kind"] for m in summary["memory"]}
    assert memory[0]["weight"] == 4 * (8 * 8 + 8) and memory[0]["buffer"] == 4 * 8  # a's weights, the mask beside them
    assert memory[1]["weight"] == 4 * (8 * 8 + 8) and "buffer" not in memory[1]  # b's; the mask arrives by IPU copy


def test_stochastic_depth_trains_as_a_dropout_and_the_model_keeps_its_own():
    torchvision = pytest.importorskip("torchvision", reason="python3-torchvision is not installed")

    class Residual(nn.Module):  # as torchvision's ConvNeXt and EfficientNet blocks drop their branch
        def __init__(self):
            super().__init__()
            self.fc, self.drop, self.head = nn.Linear(16, 16), torchvision.ops.StochasticDepth(0.2, "row"), nn.Linear(16, 4)

        def forward(self, x, y):
            out = self.head(x + self.drop(self.fc(x)))
            return out, nn.functional.cross_entropy(out, y)

    model = Residual()
    training = poptorch.trainingModel(model, poptorch.Options().deviceIterations(2), poptorch.optim.SGD(model.parameters(), lr=0.1))
    out, loss = training(torch.randn(8, 16), torch.randint(0, 4, (8,)))
    assert torch.isfinite(loss)
    assert isinstance(model.drop, torchvision.ops.StochasticDepth)  # exported as a dropout, run as itself
    kind = training.simulated_report()["kinds"][0]
    assert kind["call_cycles"] > 0
    ran = {t["op_type"] for t in kind["summary"]["op_types"]}
    assert {"/drop/Dropout", "/drop/Dropout.grad"} <= ran, sorted(ran)
