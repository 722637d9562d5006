# SPDX-License-Identifier: MIT
"""poptorch.optim: torch's optimizers, which update the real weights on the CPU, each marked with
the optimizer the simulator prices (its state, its update on the tiles)."""
import sys

import torch

__all__ = ["SGD", "Adam", "AdamW", "LAMB"]


# PopTorch's own optimizer arguments. loss_scaling is simulated (the gradients' unscaling); the
# others tune numerics on IPUs (accumulator types, scalings, clipping), which the CPU's float32
# computation and the simulator's fp32 optimizer state do not follow.
_IGNORED = ("velocity_scaling", "use_combined_accum", "accum_type", "first_order_momentum_accum_type",
            "second_order_momentum_accum_type", "max_grad_norm", "max_weight_norm")


def _poptorch_arguments(optimizer, kwargs):
    """Takes PopTorch's own arguments out of kwargs: loss_scaling is kept, the others noted."""
    optimizer._loss_scaling = kwargs.pop("loss_scaling", None)
    for name in _IGNORED:
        if kwargs.pop(name, None) is not None:
            print(f"ipusim: {type(optimizer).__name__}({name}=...) is ignored: it tunes numerics that are not simulated",
                  file=sys.stderr)
    return kwargs


def _settings(optimizer, kind, **extra):
    settings = {"optimizer": kind, **extra}
    if optimizer._loss_scaling is not None:
        settings["loss_scaling"] = optimizer._loss_scaling
    return settings


class SGD(torch.optim.SGD):
    """SGD; with momentum the simulator keeps one fp32 velocity per weight, without none."""

    def __init__(self, params, lr, momentum=0.0, *args, **kwargs):
        super().__init__(params, lr, momentum, *args, **_poptorch_arguments(self, kwargs))

    def ipusim_settings(self):
        return _settings(self, "sgd", momentum=self.param_groups[0]["momentum"])


class AdamW(torch.optim.AdamW):
    """AdamW: two fp32 moments per weight."""

    def __init__(self, params, *args, **kwargs):
        super().__init__(params, *args, **_poptorch_arguments(self, kwargs))

    def ipusim_settings(self):
        return _settings(self, "adamw")


class Adam(torch.optim.Adam):
    """Adam: priced as AdamW (the same moments and element-wise update; the decay is one more
    multiply-add, which the simulator counts either way)."""

    def __init__(self, params, *args, **kwargs):
        super().__init__(params, *args, **_poptorch_arguments(self, kwargs))

    def ipusim_settings(self):
        return _settings(self, "adamw")


class LAMB(torch.optim.Optimizer):
    """LAMB (You et al., 2019): Adam's moments, then each weight tensor's step scaled by the trust
    ratio ||w|| / ||update||."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01, bias_correction=True, **kwargs):
        kwargs = _poptorch_arguments(self, kwargs)
        if kwargs:
            raise TypeError(f"LAMB: unexpected arguments {', '.join(kwargs)}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, bias_correction=bias_correction))

    def ipusim_settings(self):
        return _settings(self, "lamb")

    @torch.no_grad()
    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["m"] = torch.zeros_like(p)
                    state["v"] = torch.zeros_like(p)
                state["step"] += 1
                m, v = state["m"], state["v"]
                m.mul_(beta1).add_(p.grad, alpha=1 - beta1)
                v.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                m_hat, v_hat = m, v
                if group["bias_correction"]:
                    m_hat, v_hat = m / (1 - beta1 ** state["step"]), v / (1 - beta2 ** state["step"])
                update = m_hat / (v_hat.sqrt() + group["eps"]) + group["weight_decay"] * p
                w_norm, u_norm = p.norm(), update.norm()
                trust = (w_norm / u_norm).item() if w_norm > 0 and u_norm > 0 else 1.0
                p.add_(update, alpha=-group["lr"] * trust)
        return loss
