# SPDX-License-Identifier: MIT
"""The model set of ipusim's front door: models a researcher brings, written in plain PyTorch as
they would write them, at any size. The build exports them at full size (export_models.py) for
the benchmark; the tests export them at small sizes.

    Gpt(vocab, seq, width, heads, layers)   a GPT-2-style decoder: token and arange position
                                            embeddings, a causal-mask buffer, GELU, a head tied to
                                            the token embedding, per-token cross-entropy
    RecurrentLm(rnn, vocab, embed, hidden)  an embedding, a 2-layer nn.LSTM or nn.GRU, a linear
                                            head, per-token cross-entropy
    traceable(model)                        torchvision's stochastic depth as a dropout, so that
                                            torch 1.13 exports it in training mode
"""
import math

import torch
from torch import nn
from torch.nn import functional as F


class DecoderBlock(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.fc, self.out = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x, mask):
        b, s, d = x.shape
        h = self.heads
        q, k, v = (t.reshape(b, s, h, d // h).transpose(1, 2) for t in self.qkv(self.ln1(x)).split(d, dim=2))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // h) + mask
        x = x + self.proj((scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self, vocab, seq, width, heads, layers):
        super().__init__()
        self.vocab = vocab
        self.wte, self.wpe = nn.Embedding(vocab, width), nn.Embedding(seq, width)
        self.blocks = nn.ModuleList([DecoderBlock(width, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(width)
        self.register_buffer("mask", torch.triu(torch.full((seq, seq), -1e4), 1))

    def forward(self, ids, labels=None):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x, self.mask[:ids.shape[1], :ids.shape[1]])
        logits = self.ln(x) @ self.wte.weight.t()  # the LM head tied to the token embedding
        return logits if labels is None else F.cross_entropy(logits.reshape(-1, self.vocab), labels.reshape(-1))


class RecurrentLm(nn.Module):
    def __init__(self, rnn, vocab, embed, hidden, layers=2):
        super().__init__()
        self.vocab = vocab
        self.emb = nn.Embedding(vocab, embed)
        self.rnn = rnn(embed, hidden, num_layers=layers, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, ids, labels=None):
        h, _ = self.rnn(self.emb(ids))
        logits = self.out(h)
        return logits if labels is None else F.cross_entropy(logits.reshape(-1, self.vocab), labels.reshape(-1))


# Full sizes: GPT-2 small (Radford et al. 2019: 12 layers of 768, 12 heads, 1,024 tokens, a
# vocabulary of 50,257) and the medium LSTM language model of Zaremba et al. 2014 (two layers
# of 650 over 35 steps, a vocabulary of 10,000), with a GRU of the same size beside it.
GPT2_SMALL = dict(vocab=50257, seq=1024, width=768, heads=12, layers=12)
RNN_LM = dict(vocab=10000, embed=650, hidden=650)
RNN_STEPS = 35


def traceable(model):
    """The model with torchvision's StochasticDepth, whose Bernoulli draw torch 1.13 cannot export
    in training mode, as a Dropout of the same probability (in place): a training-mode export
    then keeps it, and the simulator prices it as PopART's dropout of the block's output (a mask
    an element, where stochastic depth's row mode draws one a sample: an upper bound)."""
    from torchvision.ops import StochasticDepth

    for name, child in model.named_children():
        if isinstance(child, StochasticDepth):
            setattr(model, name, nn.Dropout(child.p))
        else:
            traceable(child)
    return model
