# SPDX-License-Identifier: MIT
"""trainingModel and inferenceModel: each host call computes for real with torch on the CPU and
advances a simulated clock by the cycles the simulator gives that call."""
import atexit
import contextlib
import copy
import json
import os
import shutil
import sys
import tempfile

import torch

from .. import ConfigError, _ipusim
from .. import run as simulate
from ._blocks import BlockRecorder
from ._options import OutputMode, _note

SYSTEMS = dict(_ipusim.hardware_presets())  # the library's hardware presets and their IPUs, smallest first
DEFAULT_HOST = "poptorch_calibrated"  # a preset system's host: PopTorch's, as configs/validation/host.json calibrates it
_POPTORCH_MEMORY_PROPORTION = 0.6  # PopTorch's default for an IPU the options leave out


def optimizer_settings(optimizer):
    """The config's optimizer entries for a torch or poptorch.optim optimizer."""
    if hasattr(optimizer, "ipusim_settings"):
        return optimizer.ipusim_settings()
    if isinstance(optimizer, torch.optim.SGD):
        return {"optimizer": "sgd", "momentum": optimizer.param_groups[0]["momentum"]}
    if isinstance(optimizer, (torch.optim.Adam, torch.optim.AdamW)):
        return {"optimizer": "adamw"}
    raise TypeError(f"optimizer: expected poptorch.optim.SGD, Adam, AdamW or LAMB, found {type(optimizer).__name__}")


def simulator_config(options, training, onnx_file, micro_batch, blocks, precision, optimizer=None, buffers=()):
    """The experiment config for one kind of host call: two such calls, each an epoch of its own,
    so that one simulation gives the first call's cycles and a later one's. `buffers`: the
    model's registered buffers the export reads (state not learned)."""
    ipus = [b["ipu"] for b in blocks if "ipu" in b]
    if options.strategy is not None:
        strategy = options.strategy.ipusim()
        ipus += [s["ipu"] for s in strategy.get("stages", [])]
    elif ipus:  # blocks with an ipu_id: auto-staged pipeline, as PopTorch defaults to
        strategy = {"kind": "pipelined"}
    else:
        strategy = {"kind": "single"}
    if options.replication_factor > 1:
        strategy["replicas"] = options.replication_factor
    per_replica = max(ipus, default=0) + 1
    workload = {"kind": "onnx", "file": str(onnx_file), "mode": "train" if training else "infer", "micro_batch": micro_batch,
                "precision": precision, "partials": _partials(options, precision), "loss": "none",
                "blocks": blocks, "strategy": strategy}
    if buffers:
        workload["buffers"] = list(buffers)
    if training:
        workload.update(optimizer_settings(optimizer))
        workload["offload_optimizer"] = not options.TensorLocations.optimizer_on_chip
    if options.TensorLocations.io_tiles:
        workload["io_tiles"] = options.TensorLocations.io_tiles
    if options._Popart.prefetch_depth is not None:
        workload["prefetch_depth"] = options._Popart.prefetch_depth
        if not options.TensorLocations.io_tiles:
            _note("the prefetch depth has no effect without IO tiles (TensorLocations.numIOTiles)")
    if options.output_mode != OutputMode.Default:
        workload["output_mode"] = options.output_mode.ipusim()
        workload["output_return_period"] = options.output_return_period
    if options.available_memory_proportion:
        by_ipu = options.available_memory_proportion
        workload["available_memory_proportion"] = [by_ipu.get(i, _POPTORCH_MEMORY_PROPORTION) for i in range(per_replica)]
    # (the library refuses an inference config's gradient accumulation other than 1, naming the option)
    accumulation = options.Training.gradient_accumulation
    run = {"device_iterations": options.device_iterations, "epochs": 2, "gradient_accumulation": accumulation,
           "dataset_samples": micro_batch * options.device_iterations * options.replication_factor * accumulation}
    if options._data_loader:  # the host's loader, as the poptorch.DataLoader made with these options
        run["data_loader"] = dict(options._data_loader, sample_seconds=options.sample_seconds)
    elif options.sample_seconds:
        _note("simulator(sample_seconds=...) has no effect: no poptorch.DataLoader was made with these options before the model")
    return {"name": "poptorch_" + ("train" if training else "infer"),
            "system": system_of(options, per_replica * options.replication_factor),
            "workload": workload, "run": run}


def _partials(options, precision):
    """PopTorch's partials type applies to half-precision matmuls and convolutions; fp32 ones
    accumulate in fp32."""
    return (options.Precision.partials or precision) if precision == "fp16" else "fp32"


def system_of(options, ipus):
    """The config's /system: the system file, and the host model the options name (by default
    PopTorch's for a preset; a system config file of the user's keeps its own host)."""
    system = {"base": system_file(options.system, ipus)}
    host = options.host or (DEFAULT_HOST if options.system is None or options.system in SYSTEMS else None)
    if host:
        system["host"] = {"base": f"hardware/host/{host}.json"}
    return system


def system_file(system, ipus):
    if system is None:
        for name, size in SYSTEMS.items():
            if size >= ipus:
                return f"hardware/{name}.json"
        largest, size = list(SYSTEMS.items())[-1]
        raise ValueError(f"Options.simulator: the model needs {ipus} IPUs, more than the largest preset's ({largest}, {size}); "
                         "name a system config")
    if system in SYSTEMS:
        if SYSTEMS[system] < ipus:
            raise ValueError(f"Options.simulator: expected a system of at least {ipus} IPUs, found {system!r} of {SYSTEMS[system]}")
        return f"hardware/{system}.json"
    return os.path.abspath(os.fspath(system))


def profile_folder():
    """Where PopTorch would write its profile (POPLAR_ENGINE_OPTIONS "autoReport.all" or
    "autoReport.outputExecutionProfile", in "autoReport.directory", default "."): there the
    simulator writes the summary and Perfetto trace of each kind of host call. None: no profile."""
    text = os.environ.get("POPLAR_ENGINE_OPTIONS")
    if not text:
        return None
    try:
        engine = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"POPLAR_ENGINE_OPTIONS: expected a JSON object, {error}") from None
    if not isinstance(engine, dict):
        raise ValueError("POPLAR_ENGINE_OPTIONS: expected a JSON object such as {\"autoReport.all\": \"true\"}")
    wanted = any(str(engine.get(k, "false")).lower() == "true" for k in ("autoReport.all", "autoReport.outputExecutionProfile"))
    return str(engine.get("autoReport.directory", ".")) if wanted else None


# Where a config the options made is refused: the PopTorch setting behind the JSON pointer.
_SETTING_OF = {"/run/gradient_accumulation": "Training.gradientAccumulation", "/run/device_iterations": "deviceIterations",
               "/workload/strategy": "setExecutionStrategy", "/workload/blocks": "the model's poptorch.Block annotations",
               "/workload/available_memory_proportion": "setAvailableMemoryProportion",
               "/workload/micro_batch": "the batch size (a call's batch over its micro-batches)", "/system": "Options.simulator",
               "/workload/loss_scaling": "the optimizer's loss_scaling", "/run/data_loader": "poptorch.DataLoader's mode and num_workers",
               "/workload/io_tiles": "TensorLocations.numIOTiles", "/workload/prefetch_depth": "_Popart.set('defaultPrefetchBufferingDepth')"}


def _name_the_option(error, config):
    """Gives a ConfigError the config the options made (error.config) and, in a note, the
    PopTorch setting its pointer comes from."""
    error.config = config
    pointer = getattr(error, "pointer", "")
    for prefix, setting in _SETTING_OF.items():
        if pointer == prefix or pointer.startswith(prefix + "/"):
            error.add_note(f"ipusim.poptorch: {pointer} comes from {setting} (the config is the error's .config)")
            return


def _leaves(value):
    """The tensors of a model input or output: itself, or those of a tuple, list or dict, in order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    raise TypeError(f"expected tensors, or tuples, lists or dicts of them, found {type(value).__name__}")


def _map(value, function):
    """`value` with `function` applied to each of its tensors, its structure kept."""
    if isinstance(value, torch.Tensor):
        return function(value)
    if isinstance(value, dict):
        return {k: _map(v, function) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_map(v, function) for v in value)
    return value


def _micro_batch(value, k, n):
    """The k-th of n micro-batches of an input: as PopTorch splits it, each tensor's first
    dimension in n equal parts."""
    return _map(value, lambda t: t[k * (t.shape[0] // n):(k + 1) * (t.shape[0] // n)])


def _loss_of(output):
    """The loss a training model returns: the output itself, a dict's "loss" (as a Lightning
    training_step returns it), or the one scalar of a tuple."""
    if isinstance(output, torch.Tensor):
        return output
    if isinstance(output, dict) and isinstance(output.get("loss"), torch.Tensor):
        return output["loss"]
    scalars = [o for o in output if isinstance(o, torch.Tensor) and o.dim() == 0] if isinstance(output, (tuple, list)) else []
    if len(scalars) != 1:
        raise ValueError("trainingModel: expected the model to return its loss, alone, as a dict's \"loss\" or as the one "
                         "scalar of a tuple")
    return scalars[0]


def _select(outputs, mode, period, replicas):
    """A host call's outputs of its micro-batches, as PopTorch's output mode returns them. The
    micro-batches run in the order of PopART's input layout (device iteration, accumulation step,
    replica), so each group of `replicas` is one step of every replica."""
    groups = [outputs[i:i + replicas] for i in range(0, len(outputs), replicas)]
    if mode == OutputMode.EveryN and period > len(groups):
        raise ValueError(f"output_return_period: expected at most {len(groups)} (the micro-batches of a replica in a host "
                         f"call), found {period}")
    chosen = {OutputMode.Final: groups[-1:], OutputMode.EveryN: groups[period - 1::period]}.get(mode, groups)
    if mode == OutputMode.Sum:
        chosen = [[_merge([g[r] for g in chosen], lambda values: torch.stack(values).sum(0)) for r in range(replicas)]]
    flat = [o for g in chosen for o in g]
    return flat[0] if len(flat) == 1 else _merge(flat, _join)


def _merge(values, combine):
    """Outputs of the same structure merged tensor by tensor with `combine`."""
    first = values[0]
    if isinstance(first, dict):
        return {key: _merge([v[key] for v in values], combine) for key in first}
    if isinstance(first, (tuple, list)):
        return type(first)(_merge([v[k] for v in values], combine) for k in range(len(first)))
    return combine(values)


def _join(values):
    """Micro-batches' values of one output: scalars stacked, batches concatenated."""
    return torch.stack(values) if values[0].dim() == 0 else torch.cat(values)


@contextlib.contextmanager
def _stochastic_depth_as_dropout(model):
    """torchvision's StochasticDepth draws with torch.bernoulli, which torch 1.13 cannot export in
    training mode: for the export, a Dropout of its probability stands in (the simulator prices
    it as PopART's dropout of the block's output, a mask an element where stochastic depth's row
    mode draws one a sample: an upper bound), and the model's own modules come back after."""
    try:
        from torchvision.ops import StochasticDepth
    except ImportError:  # no torchvision: no stochastic depth to stand in for
        yield
        return
    swapped = [(parent, name, child) for parent in model.modules() for name, child in parent.named_children()
               if isinstance(child, StochasticDepth)]
    for parent, name, child in swapped:
        setattr(parent, name, torch.nn.Dropout(child.p))
    try:
        yield
    finally:
        for parent, name, child in swapped:
            setattr(parent, name, child)


class _CallKind:
    """One kind of host call (its inputs' shapes): the simulated cycles of the first call and of
    each later one, the two epochs of its simulation."""

    def __init__(self, config, summary):
        self.config = config
        self.first_cycles, self.call_cycles = (epoch["cycles"] for epoch in summary.epochs)
        self.clock_hz = summary.clock_hz
        self.summary = summary  # of the config as simulated_config() gives it: two host calls
        self.calls = 0


class Executor:
    """A model wrapped by trainingModel or inferenceModel."""

    def __init__(self, model, options, training, optimizer=None):
        if training and optimizer is None:
            optimizer = torch.optim.SGD(model.parameters(), lr=0.01)  # PopTorch's default
        self.model = model
        self.options = options.clone()
        self.training = training
        self.optimizer = optimizer
        self._kinds = {}  # input shapes -> _CallKind
        self._retired = []  # (shapes, _CallKind) simulated with an optimizer set aside by setOptimizer
        self._folder = tempfile.mkdtemp(prefix="ipusim_poptorch_")
        atexit.register(shutil.rmtree, self._folder, True)
        self.simulated_seconds = 0.0
        self.last_call_seconds = 0.0
        self.samples = 0
        report = os.environ.get("IPUSIM_REPORT", "")
        self._report_calls = report == "calls"
        if report:
            atexit.register(lambda: print(self.report_text(), file=sys.stderr))

    def __call__(self, *args, **kwargs):
        if any(p.dtype == torch.half for p in self.model.parameters()):
            raise TypeError("a half-precision model does not run on the CPU (torch has no half convolutions or matmuls "
                            "there): keep the model in float32 and simulate it in half with "
                            "Options().simulator(..., precision=\"fp16\")")
        if kwargs:
            raise TypeError(f"keyword inputs are not supported yet ({', '.join(kwargs)}): pass the model's inputs by position")
        leaves = _leaves(args)
        micro_batches = self._micro_batches(leaves)
        micro_batch = leaves[0].shape[0] // micro_batches
        key = (micro_batch,) + tuple(((leaf.shape[0] // micro_batches,) + tuple(leaf.shape[1:]), leaf.dtype) for leaf in leaves)
        if key not in self._kinds:
            self._kinds[key] = self._simulate(args, micro_batch, micro_batches, len(self._kinds))
        self._advance_clock(self._kinds[key], leaves[0].shape[0])
        return self._compute(args, micro_batches)

    def _micro_batches(self, leaves):
        """The micro-batches of a host call, checking that they split each input."""
        if not leaves:
            raise TypeError("expected the model's inputs as tensors, the combined batch first")
        micro_batches = self.options.device_iterations * self.options.replication_factor * \
            (self.options.Training.gradient_accumulation if self.training else 1)
        for k, leaf in enumerate(leaves):
            if leaf.dim() == 0 or leaf.shape[0] == 0 or leaf.shape[0] % micro_batches:
                raise ValueError(f"input {k}: expected a combined batch of micro-batches x {micro_batches} (device iterations x "
                                 f"replicas{' x gradient accumulation' if self.training else ''}), found a shape of "
                                 f"{list(leaf.shape)}")
        return micro_batches

    def _advance_clock(self, kind, samples):
        cycles = kind.first_cycles if kind.calls == 0 else kind.call_cycles
        kind.calls += 1
        self.last_call_seconds = cycles / kind.clock_hz
        self.simulated_seconds += self.last_call_seconds
        self.samples += samples
        if self._report_calls:
            print(f"ipusim: {'training' if self.training else 'inference'} call {self.calls}: "
                  f"{self.last_call_seconds * 1e3:.3f} ms simulated ({self.samples:,} samples in {self.simulated_seconds:.6f} s, "
                  f"{self.samples / self.simulated_seconds:,.1f} samples/s)", file=sys.stderr)

    def _simulate(self, args, micro_batch, micro_batches, index):
        path = os.path.join(self._folder, f"model{index}.onnx")
        example = _micro_batch(args, 0, micro_batches)
        buffers = {name: b.clone() for name, b in self.model.named_buffers()}
        mode = torch.onnx.TrainingMode.TRAINING if self.training else torch.onnx.TrainingMode.EVAL
        with torch.random.fork_rng(), _stochastic_depth_as_dropout(self.model), BlockRecorder(self.model) as recorder:
            # A trailing {} keeps a dict input an input: export reads a last dict as keyword arguments.
            torch.onnx.export(self.model, tuple(example) + ({},), path, opset_version=17, training=mode, do_constant_folding=False,
                              export_params=False, input_names=[f"input{k}" for k in range(len(_leaves(args)))])
        with torch.no_grad():  # the trace ran the model: its batch norm statistics are as they were
            for name, b in self.model.named_buffers():
                b.copy_(buffers[name])
        read = set(_ipusim.onnx_graph_inputs(path))  # torch leaves out the buffers the model never reads
        config = simulator_config(self.options, self.training, path, micro_batch, recorder.blocks(),
                                  self.options.simulated_precision or "fp32", self.optimizer,
                                  [name for name, _ in self.model.named_buffers() if name in read])
        profile = profile_folder()
        out_dir = os.path.join(profile, f"{config['name']}_{index}") if profile else None
        try:
            # A profile folder holds the latest run's profile, as PopVision's auto-report does.
            summary = simulate(config, self.options.system_overrides, out_dir=out_dir, trace=out_dir is not None, force=True)
        except ConfigError as error:
            _name_the_option(error, config)
            raise
        if out_dir:
            print(f"ipusim: the simulated profile of two host calls is in {out_dir} (trace.json opens in ui.perfetto.dev)",
                  file=sys.stderr)
        return _CallKind(config, summary)

    def _compute(self, args, micro_batches):
        chunks = [_micro_batch(args, k, micro_batches) for k in range(micro_batches)]
        mode = self.options.output_mode
        if mode == OutputMode.Default:
            mode = OutputMode.Final if self.training else OutputMode.All
        outputs = []
        if not self.training:
            self.model.eval()
            with torch.no_grad():
                outputs = [self.model(*c) for c in chunks]
            return _select(outputs, mode, self.options.output_return_period, self.options.replication_factor)
        self.model.train()
        per_update = micro_batches // self.options.device_iterations
        for step in range(self.options.device_iterations):
            self.optimizer.zero_grad()
            for chunk in chunks[step * per_update:(step + 1) * per_update]:
                out = self.model(*chunk)
                (_loss_of(out) / per_update).backward()  # the mean over micro-batches and replicas
                outputs.append(_map(out, torch.Tensor.detach))
            self.optimizer.step()
        return _select(outputs, mode, self.options.output_return_period, self.options.replication_factor)

    # The model's weights are the torch module's own, on the CPU: attaching, detaching and copying
    # weights between host and device have nothing to do.
    def detachFromDevice(self):
        pass

    def attachToDevice(self):
        pass

    def isAttachedToDevice(self):
        return True

    def copyWeightsToHost(self):
        pass

    def copyWeightsToDevice(self):
        pass

    def destroy(self):
        pass

    def setOptimizer(self, optimizer):
        """Trains on with `optimizer` (say, a new learning rate). A different kind of optimizer is
        a different program: each kind of call is simulated again on its next call."""
        if not self.training:
            raise RuntimeError("setOptimizer: an inferenceModel has no optimizer")
        if optimizer_settings(optimizer) != optimizer_settings(self.optimizer):
            self._retired += self._kinds.items()
            self._kinds = {}
        self.optimizer = optimizer

    def __getattr__(self, name):
        """The wrapped model's attributes and methods, as PopTorch's models give them."""
        if name == "model" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.model, name)

    # What Lightning's IPUStrategy reads of a PopTorch model: its options, and whether it has been
    # compiled (here: captured and simulated, on its first call).
    @property
    def _options(self):
        return self.options

    @property
    def _executable(self):
        return self._kinds or None

    def _every_kind(self):
        """(input shapes, _CallKind) of every kind of call so far, set aside by setOptimizer or not."""
        return self._retired + list(self._kinds.items())

    @property
    def calls(self):
        """Host calls so far, of every kind."""
        return sum(kind.calls for _, kind in self._every_kind())

    def simulated_config(self):
        """The config of the latest kind of host call, as simulated: two such calls, one epoch each."""
        if not self._kinds:
            raise RuntimeError("no host call yet: the model is captured and simulated on its first call")
        return copy.deepcopy(list(self._kinds.values())[-1].config)

    @property
    def simulator_assumptions(self):
        """What the simulated figures assume, in a line: the IPUs and the host model (None before
        the first host call)."""
        if not self._kinds:
            return None
        summary = list(self._kinds.values())[-1].summary
        host = summary["host_model"]
        return (f"{summary['num_ipus']} simulated Mk2 IPUs, host model {host['name']}: "
                f"{host['call_overhead_seconds'] * 1e3:g} ms a host call, {host['sync_latency_seconds'] * 1e6:g} us a host exchange")

    def simulated_report(self):
        """Simulated time so far: host calls, seconds, samples per second, and per kind of call
        its cycles (of the first call and of each later one) and the simulator's summary of two
        such calls, whose "epochs" are the two calls."""
        kinds = [{"micro_batch": key[0], "inputs": [list(shape) for shape, _ in key[1:]], "calls": k.calls,
                  "first_call_cycles": k.first_cycles, "call_cycles": k.call_cycles, "summary": k.summary}
                 for key, k in self._every_kind()]
        return {"calls": self.calls, "simulated_seconds": self.simulated_seconds, "samples": self.samples,
                "samples_per_second": self.samples / self.simulated_seconds if self.simulated_seconds else 0.0, "kinds": kinds}

    def report_text(self):
        """The report as text: totals, then per kind of call its times, where the IPUs' cycles go
        and each IPU's peak tile memory."""
        r = self.simulated_report()
        lines = [f"ipusim: {'training' if self.training else 'inference'} model: {r['calls']} host calls, "
                 f"{r['simulated_seconds']:.6f} s simulated, {r['samples_per_second']:,.1f} samples/s"]
        for kind in r["kinds"]:
            summary, hz = kind["summary"], kind["summary"]["clock_hz"]
            ipus = len(summary["ipus"]) * self.options.replication_factor  # the summary's are one replica's
            lines.append(f"  micro-batch {kind['micro_batch']}, inputs {kind['inputs']}: {kind['calls']} calls on "
                         f"{ipus} of the system's {summary['num_ipus']} IPUs, the first {kind['first_call_cycles'] / hz * 1e3:.3f} ms, "
                         f"then {kind['call_cycles'] / hz * 1e3:.3f} ms each")
            shares = ", ".join(f"{name} {share * 100:.1f} %" for name, share in summary["breakdown_share"].items() if share)
            lines.append(f"    of the IPUs' cycles: {shares}")
            peaks = ", ".join(f"IPU {m['ipu']} {m['peak']['max']:,}" for m in summary["memory"])
            lines.append(f"    peak tile memory: {peaks} of {summary['memory'][0]['tile_capacity_bytes']:,} bytes")
        return "\n".join(lines)
