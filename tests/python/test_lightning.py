# SPDX-License-Identifier: MIT
"""ipusim.lightning: Lightning's IPUStrategy arguments map onto the poptorch.Options Lightning
builds from them (tested without Lightning, which Debian does not package), and a module called
as Lightning's strategy calls it (a (batch, batch_idx) step returning {"loss": ...}) trains on
the simulated system."""
import json
import os

import pytest

torch = pytest.importorskip("torch", reason="python3-torch is not installed")
from torch import nn  # noqa: E402

import ipusim  # noqa: E402
from ipusim import lightning, poptorch  # noqa: E402
from ipusim.poptorch._executor import profile_folder  # noqa: E402


def described(opts):
    return (opts.device_iterations, opts.replication_factor, opts.Training.gradient_accumulation)


def test_the_strategy_builds_lightnings_options(monkeypatch):
    monkeypatch.delenv("PL_GLOBAL_SEED", raising=False)
    strategy = lightning.poptorch_options
    assert described(strategy(True, device_iterations=32, devices=8, accumulate_grad_batches=4)) == (32, 8, 4)
    assert described(strategy(False, device_iterations=32, devices=8, accumulate_grad_batches=4)) == (32, 8, 1)
    # The user's options are used as given; the other kind takes its replicas from them.
    training = poptorch.Options().deviceIterations(4).replicationFactor(2)
    assert strategy(True, 16, 8, 4, training_opts=training) is training
    assert described(strategy(False, 16, 8, 4, training_opts=training)) == (16, 2, 1)
    inference = poptorch.Options().replicationFactor(4)
    assert described(strategy(True, 16, 8, 2, inference_opts=inference)) == (16, 4, 2)
    monkeypatch.setenv("PL_GLOBAL_SEED", "42")
    assert strategy(True).random_seed == 42
    with pytest.raises(TypeError, match="training_opts: expected poptorch.Options, found dict"):
        strategy(True, training_opts={"device_iterations": 4})


@pytest.mark.skipif(lightning.LIGHTNING_AVAILABLE, reason="with Lightning, IPUStrategy is Lightning's own")
def test_without_lightning_the_strategy_gives_its_options(monkeypatch, tmp_path):
    monkeypatch.delenv("POPLAR_ENGINE_OPTIONS", raising=False)
    strategy = lightning.IPUStrategy(device_iterations=20, autoreport=True, autoreport_dir=str(tmp_path / "report"))
    assert described(strategy.options(True, devices=8, accumulate_grad_batches=2)) == (20, 8, 2)
    assert json.loads(os.environ["POPLAR_ENGINE_OPTIONS"]) == {"autoReport.all": True,
                                                               "autoReport.directory": str(tmp_path / "report")}
    assert profile_folder() == str(tmp_path / "report") and (tmp_path / "report").is_dir()
    with pytest.raises(AttributeError, match="PyTorch Lightning .* is not installed"):
        strategy.setup(None)
    with pytest.raises(ValueError, match="device_iterations: expected a positive integer, found 0"):
        lightning.IPUStrategy(device_iterations=0)


class Classifier(nn.Module):
    """The seed's model-parallel LightningModule, as a module: BeginBlock places layers on IPUs."""

    def __init__(self):
        super().__init__()
        self.layer1 = poptorch.BeginBlock(nn.Linear(5, 10), ipu_id=0)
        self.layer2 = poptorch.BeginBlock(nn.Linear(10, 5), ipu_id=1)
        self.act = nn.ReLU()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return {"loss": nn.functional.cross_entropy(self.layer2(self.act(self.layer1(x))), y)}


class StepWrapper(nn.Module):
    """What Lightning's strategy hands to poptorch.trainingModel: forward is the training step."""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, *inputs):
        return self.module.training_step(*inputs)


def test_a_lightning_step_trains_on_the_simulated_system(monkeypatch):
    monkeypatch.delenv("PL_GLOBAL_SEED", raising=False)
    opts = lightning.poptorch_options(True, device_iterations=4, devices=1, accumulate_grad_batches=4)
    module = Classifier()
    model = poptorch.trainingModel(StepWrapper(module), opts, torch.optim.SGD(module.parameters(), lr=0.1))
    assert model._executable is None  # Lightning attaches compiled models only: this one is compiled on its first call
    x, y = torch.randn(128, 5), torch.randint(0, 5, (128,))
    batch_idx = torch.tensor(3).unsqueeze(0).repeat(16)  # as Lightning passes it: one per micro-batch
    loss = model((x, y), batch_idx)["loss"]
    assert loss.dim() == 0 and torch.isfinite(loss)
    assert model._executable and model._options.toDict()["replication_factor"] == 1  # as Lightning reads them
    config = model.simulated_config()
    # The step is not a module call: its layers' scopes are the wrapper's children's names.
    assert config["workload"]["blocks"] == [{"name": "0", "prefix": "/layer1/", "ipu": 0},
                                            {"name": "1", "prefix": "/layer2/", "ipu": 1}]
    assert (config["workload"]["micro_batch"], config["run"]["device_iterations"], config["run"]["gradient_accumulation"]) == \
        (8, 4, 4)
    assert model.simulated_report()["samples_per_second"] > 0
    # Too little accumulation for a two-stage pipeline: the simulator's error names the setting.
    short = lightning.poptorch_options(True, device_iterations=4, accumulate_grad_batches=2)
    with pytest.raises(ipusim.ConfigError, match="/run/gradient_accumulation: expected at least 3") as error:
        poptorch.trainingModel(StepWrapper(module), short, torch.optim.SGD(module.parameters(), lr=0.1))((x[:64], y[:64]),
                                                                                                     batch_idx[:8])
    assert error.value.__notes__ == ["ipusim.poptorch: /run/gradient_accumulation comes from Training.gradientAccumulation "
                                     "(the config is the error's .config)"]
    assert error.value.config["run"]["gradient_accumulation"] == 2


def test_a_model_answers_what_lightnings_strategy_asks(monkeypatch):
    """The calls pytorch_lightning 1.9's IPUStrategy makes of poptorch, in its order: wrap the
    step for training and validation (keyword arguments), rebuild the data loader, set the
    optimizer before each batch, step, attach compiled models, tear down."""
    monkeypatch.delenv("PL_GLOBAL_SEED", raising=False)
    module = Classifier()
    optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
    training_opts = lightning.poptorch_options(True, device_iterations=2, accumulate_grad_batches=4)
    training = poptorch.trainingModel(model=StepWrapper(module), options=training_opts, optimizer=optimizer)
    validation = poptorch.inferenceModel(model=nn.Sequential(module.layer1, module.layer2),
                                         options=lightning.poptorch_options(False, device_iterations=2))
    dataset = torch.utils.data.TensorDataset(torch.randn(128, 5), torch.randint(0, 5, (128,)))
    loader = poptorch.DataLoader(training_opts, dataset=dataset, batch_size=8, sampler=torch.utils.data.RandomSampler(dataset),
                                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=True)
    assert training._executable is None and training._options.toDict()["replication_factor"] == 1
    for index, step_batch in enumerate(loader):
        training.setOptimizer(optimizer)  # on_train_batch_start
        loss = training(tuple(step_batch), torch.tensor(index).unsqueeze(0).repeat(8))["loss"]
        assert torch.isfinite(loss)
    assert training._executable and training.isAttachedToDevice()
    training.detachFromDevice()  # before validating: _detach_models
    assert validation(torch.randn(16, 5)).shape == (16, 5)
    validation.attachToDevice()
    training.destroy()
    validation.destroy()
    assert training.simulated_report()["calls"] == 2
