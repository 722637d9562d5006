# SPDX-License-Identifier: MIT
"""Block annotations (poptorch.Block, BlockFunction, BeginBlock) and where they fall in an ONNX
export: the module paths torch.onnx.export writes into node names ("/model/layer1/conv/Conv"),
which the simulator's "blocks" match by prefix. As in PopTorch, an op belongs to the block
current when it runs: a poptorch.Block puts everything it runs, functional ops too, under a scope
of its own ("/Block[B1]/..."); after a BeginBlock, a parent's own ops (torch.flatten in ResNet's
forward) fall in the block of the node before them."""
import functools
import itertools

import torch

_active = []  # the open Block contexts: (name, ipu_id)
_auto_ids = itertools.count()  # names of unnamed blocks, "0", "1", ... in the order they begin
_recorder = None  # the BlockRecorder recording, if any


def _name(user_id):
    """A block's name: its user_id, or (none given) the next automatic id, as PopTorch numbers
    each unnamed block it begins."""
    return user_id if user_id is not None else str(next(_auto_ids))


class Block:
    """`with poptorch.Block("B1", ipu_id=0):` — the modules called inside belong to block B1."""

    def __init__(self, user_id=None, ipu_id=None):
        self.name = user_id
        self.ipu = ipu_id

    def __enter__(self):
        _active.append((_name(self.name), self.ipu))
        if _recorder is not None:
            _recorder.enter_block(_active[-1])
        return self

    def __exit__(self, *exc):
        if _recorder is not None:
            _recorder.exit_block()
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


def scope_parts(model):
    """Each submodule's part of the scope in torch.onnx.export's node names (torch 1.13): its
    attribute name, or for a child of a Sequential, ModuleList or ModuleDict its parent's part, a
    dot and its key ("/layer1/layer1.0/conv1/Conv")."""
    containers = (torch.nn.Sequential, torch.nn.ModuleList, torch.nn.ModuleDict)
    parts = {}
    for path, module in model.named_modules():
        if not path:
            continue
        parent_path, _, key = path.rpartition(".")
        parent = model.get_submodule(parent_path) if parent_path else model
        parts[module] = f"{parts[parent]}.{key}" if isinstance(parent, containers) and parent is not model else key
    return parts


class BlockRecorder:
    """While a model runs (its export's trace), records the block each submodule is called in;
    then gives the simulator's "blocks": a node-name prefix per module call whose block differs
    from its parent's, in call order."""

    def __init__(self, model):
        self._model = model
        self._parts = scope_parts(model)
        self._calling = [""]  # the scopes of the module calls under way: torch nests a call's scope in its caller's
        self._recorded = {}  # prefix -> its block (name, ipu), in call order
        self._leaf_calls = {}  # scope -> calls so far of a module without children
        self._hooks = []
        self._begun = None  # the block a BeginBlock started, active until the next one

    def __enter__(self):
        global _auto_ids, _recorder
        _auto_ids = itertools.count()
        _recorder = self
        self._markers = []  # per open Block: whether it pushed a scope
        for module in self._parts:
            self._hooks.append(module.register_forward_pre_hook(self._called))
            self._hooks.append(module.register_forward_hook(self._returned))
        return self

    def __exit__(self, *exc):
        global _recorder
        _recorder = None
        for hook in self._hooks:
            hook.remove()
        return False

    def _call_scope(self, module):
        """The scope of this call's nodes: its caller's scope and the module's part. torch gives
        each later call that makes nodes under the same scope "_1", "_2", ...; a module without
        children makes nodes on every call, so its k-th call is scope_k."""
        scope = f"{self._calling[-1]}/{self._parts[module]}"
        if next(module.children(), None) is None:
            k = self._leaf_calls.get(scope, 0)
            self._leaf_calls[scope] = k + 1
            scope += f"_{k}" if k else ""
        self._calling.append(scope)
        return scope + "/"

    def _returned(self, _module, _inputs, _output):
        self._calling.pop()

    def enter_block(self, block):
        """A poptorch.Block entered while torch traces: its ops, functional ones too, go under a
        scope of their own, "/Block[name]" (torch names a later entry's ops "/Block[name]_1/..."),
        the prefix of the block's nodes. Modules called in it nest under that scope."""
        state = torch._C._get_tracing_state()
        self._markers.append(state is not None)
        if state is None:
            return
        part = f"Block[{block[0]}]"
        state.push_scope(f"torch.nn.Module::{part}")  # a module scope's form: torch names nodes by its part
        scope = f"{self._calling[-1]}/{part}"
        self._calling.append(scope)
        self._recorded.setdefault(scope, block)  # no trailing "/": "/Block[B]_1/" is B's too

    def exit_block(self):
        if self._markers.pop():
            torch._C._get_tracing_state().pop_scope()
            self._calling.pop()

    def _called(self, module, _inputs):
        begin = getattr(module, "_ipusim_begin_block", None)
        if begin is not None:  # each call begins the block, as PopTorch's hook does
            self._begun = (_name(begin[0]), begin[1])
        block = _active[-1] if _active else self._begun
        scope = self._call_scope(module)
        if block is None:  # in no block: the block current, the last recorded (before any: PopTorch's default, IPU 0)
            self._recorded.setdefault(scope, next(reversed(self._recorded.values())) if self._recorded else (None, 0))
            return
        if scope in self._recorded:
            if self._recorded[scope] != block:
                raise ValueError(f"module {scope[1:-1]!r} is called in blocks {self._recorded[scope][0]!r} and {block[0]!r}: "
                                 "the simulator places a module's nodes by its scope, so give each block its own module")
            return
        self._recorded[scope] = block

    def blocks(self):
        """[{"name", "prefix", "ipu"?}], dropping a module that gets its block anyway: from the
        longest prefix enclosing it, or (none enclosing it) from the block before."""
        out = []
        placed = any(ipu is not None for name, ipu in self._recorded.values() if name is not None)
        for prefix, (name, ipu) in self._recorded.items():
            if self._split(prefix, (name, ipu)):
                continue  # its own ops (torch.flatten in its forward) go with the block current when they run
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

    def _split(self, prefix, block):
        """Whether a module call encloses calls in other blocks (ResNet's forward around the
        layers BeginBlock starts). Its prefix is left out: its own nodes then fall in the block
        of the node before, the block current when they run, as in PopTorch."""
        return prefix.endswith("/") and any(p != prefix and p.startswith(prefix) and b != block for p, b in self._recorded.items())
