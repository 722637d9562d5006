# SPDX-License-Identifier: MIT
"""poptorch.optim: torch's optimizers, which update the real weights on the CPU, each marked with
the optimizer the simulator prices (its state, its update on the tiles)."""
import torch

__all__ = ["SGD", "Adam", "AdamW", "LAMB"]


class SGD(torch.optim.SGD):
    """SGD; with momentum the simulator keeps one fp32 velocity per weight, without none."""

    def __init__(self, params, lr, momentum=0.0, **kwargs):
        super().__init__(params, lr=lr, momentum=momentum, **kwargs)

    def ipusim_settings(self):
        return {"optimizer": "sgd", "momentum": self.param_groups[0]["momentum"]}


class AdamW(torch.optim.AdamW):
    """AdamW: two fp32 moments per weight."""

    def ipusim_settings(self):
        return {"optimizer": "adamw"}


class Adam(torch.optim.Adam):
    """Adam: priced as AdamW (the same moments and element-wise update; the decay is one more
    multiply-add, which the simulator counts either way)."""

    def ipusim_settings(self):
        return {"optimizer": "adamw"}


class LAMB(torch.optim.Optimizer):
    """LAMB (You et al., 2019): Adam's moments, then each weight tensor's step scaled by the trust
    ratio ||w|| / ||update||."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def ipusim_settings(self):
        return {"optimizer": "lamb"}

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
                m_hat = m / (1 - beta1 ** state["step"])
                v_hat = v / (1 - beta2 ** state["step"])
                update = m_hat / (v_hat.sqrt() + group["eps"]) + group["weight_decay"] * p
                w_norm, u_norm = p.norm(), update.norm()
                trust = (w_norm / u_norm).item() if w_norm > 0 and u_norm > 0 else 1.0
                p.add_(update, alpha=-group["lr"] * trust)
        return loss
