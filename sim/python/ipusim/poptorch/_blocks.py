# SPDX-License-Identifier: MIT
"""Block annotations (poptorch.Block, BlockFunction, BeginBlock) and where they fall in an ONNX
export: the module paths torch.onnx.export writes into node names ("/model/layer1/conv/Conv"),
which the simulator's "blocks" match by prefix."""
import functools

import torch

_active = []  # the open Block contexts: (name, ipu_id)


class Block:
    """`with poptorch.Block("B1", ipu_id=0):` — the modules called inside belong to block B1."""

    def __init__(self, user_id=None, ipu_id=None):
        self.name = user_id
        self.ipu = ipu_id

    def __enter__(self):
        _active.append((self.name, self.ipu))
        return self

    def __exit__(self, *exc):
        _active.pop()
        return False


def BlockFunction(user_id=None, ipu_id=None):
    """A decorator: the function's body runs inside `Block(user_id, ipu_id)`."""

    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with Block(user_id, ipu_id):
                return function(*args, **kwargs)

        return wrapper

    return decorate


def BeginBlock(layer, user_id=None, ipu_id=None):
    """Starts block `user_id` at `layer` (a module): it and what runs after it belong to the
    block, until the next block starts. Returns the layer."""
    if not isinstance(layer, torch.nn.Module):
        raise TypeError(f"layer: expected a torch.nn.Module, found {type(layer).__name__}")
    layer._ipusim_begin_block = (user_id, ipu_id)
    return layer


def onnx_scopes(model):
    """Each submodule's scope in torch.onnx.export's node names (torch 1.13): its attribute name,
    or for a child of a Sequential, ModuleList or ModuleDict its parent's scope, a dot and its
    key ("/layer1/layer1.0/conv1/Conv")."""
    containers = (torch.nn.Sequential, torch.nn.ModuleList, torch.nn.ModuleDict)
    scopes = {model: ""}
    for path, module in model.named_modules():
        if not path:
            continue
        parent_path, _, key = path.rpartition(".")
        parent = model.get_submodule(parent_path) if parent_path else model
        part = f"{scopes[parent].rsplit('/', 1)[-1]}.{key}" if isinstance(parent, containers) and parent is not model else key
        scopes[module] = f"{scopes[parent]}/{part}" if scopes[parent] else f"/{part}"
    return {m: s + "/" for m, s in scopes.items() if s}


class BlockRecorder:
    """While a model runs (its export's trace), records the block each submodule is called in;
    then gives the simulator's "blocks": a node-name prefix per module whose block differs from
    its parent's, in call order."""

    def __init__(self, model):
        self._model = model
        self._scopes = onnx_scopes(model)
        self._blocks = []  # (prefix, name, ipu)
        self._seen = set()
        self._hooks = []
        self._begun = None  # the block a BeginBlock started, active until the next one

    def __enter__(self):
        for module in self._scopes:
            self._hooks.append(module.register_forward_pre_hook(self._called))
        return self

    def __exit__(self, *exc):
        for hook in self._hooks:
            hook.remove()
        return False

    def _called(self, module, _inputs):
        if module in self._seen:
            return
        self._seen.add(module)
        begin = getattr(module, "_ipusim_begin_block", None)
        if begin is not None:
            self._begun = begin
        block = _active[-1] if _active else self._begun
        if block is not None and block[0] is not None:
            self._blocks.append((self._scopes[module], block[0], block[1]))
        elif not self._blocks:  # before the first block: PopTorch's default block, on IPU 0
            self._blocks.append((self._scopes[module], None, 0))

    def blocks(self):
        """[{"name", "prefix", "ipu"?}], dropping a module that gets its block anyway: from the
        longest prefix enclosing it, or (none enclosing it) from the block before."""
        out = []
        placed = any(ipu is not None for _, name, ipu in self._blocks if name is not None)
        for prefix, name, ipu in self._blocks:
            if name is None:  # the default block needs naming only beside blocks on IPUs
                if not placed:
                    continue
                name = "model"
            enclosing = [b for b in out if prefix.startswith(b["prefix"])]
            inherited = max(enclosing, key=lambda b: len(b["prefix"])) if enclosing else (out[-1] if out else None)
            if inherited is not None and inherited["name"] == name:
                continue
            entry = {"name": name, "prefix": prefix}
            if ipu is not None:
                entry["ipu"] = ipu
            out.append(entry)
        return out
