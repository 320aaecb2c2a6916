"""Small PyTorch training loops (and one inference) on the torch_xla device
that PJRT_DEVICE selects, writing losses and final parameters to an .npz so
that two runs (PJRT_DEVICE=CPU, PJRT_DEVICE=HLOC) can be compared.

    PJRT_DEVICE=HLOC python train_models.py MODEL OUT.npz

Models (seeded; data made on the CPU, so both devices see the same numbers;
no dropout, whose random numbers would differ):
  mlp          3-layer MLP, SGD with momentum, cross-entropy
  convnet      conv + batch norm + ReLU + max-pool (x2), linear; SGD momentum
  transformer  embedding + 2-layer nn.TransformerEncoder + head; AdamW, CE
  gpt          GPT-style decoder (causal attention, GELU MLP): logits and a
               greedy continuation, inference only
"""
import math
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla


def train(model, optimizer, batches, loss_fn, device):
    losses = []
    model.train()
    for inputs, targets in batches:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        losses.append(loss.item())
    return losses


def mlp(device):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.Tanh(),
                          nn.Linear(64, 10))
    batches = [(torch.randn(16, 32), torch.randint(0, 10, (16,))) for _ in range(6)]
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return model, train(model, optimizer, batches, F.cross_entropy, device)


def convnet(device):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 4 * 4, 10))
    batches = [(torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))) for _ in range(4)]
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    return model, train(model, optimizer, batches, F.cross_entropy, device)


class TokenClassifier(nn.Module):
    def __init__(self, vocab=50, d_model=32, heads=4, layers=2, seq=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.position = nn.Parameter(torch.randn(seq, d_model) * 0.1)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=64, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens) + self.position))


def transformer(device):
    torch.manual_seed(0)
    model = TokenClassifier()
    batches = [(torch.randint(0, 50, (4, 8)), torch.randint(0, 50, (4, 8))) for _ in range(4)]
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    loss_fn = lambda logits, targets: F.cross_entropy(logits.reshape(-1, 50), targets.reshape(-1))
    return model, train(model, optimizer, batches, loss_fn, device)


class Block(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                 nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool, device=x.device))
        scores = scores.masked_fill(~mask, float("-inf"))
        y = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


class TinyGpt(nn.Module):
    def __init__(self, vocab=64, d_model=48, heads=4, layers=2, context=16):
        super().__init__()
        self.token = nn.Embedding(vocab, d_model)
        self.position = nn.Embedding(context, d_model)
        self.blocks = nn.Sequential(*[Block(d_model, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        return self.head(self.ln(self.blocks(self.token(tokens) + self.position(positions))))


def gpt(device):
    torch.manual_seed(0)
    model = TinyGpt().eval()
    prompt = torch.randint(0, 64, (2, 8))
    model.to(device)
    outputs = []
    with torch.no_grad():
        tokens = prompt.to(device)
        logits = model(tokens)
        torch_xla.sync()
        outputs.append(logits[:, -1].sum(dim=-1).cpu())
        for _ in range(3):  # Greedy continuation: each length is a new graph.
            next_token = model(tokens)[:, -1].argmax(dim=-1, keepdim=True)
            tokens = torch.cat([tokens, next_token], dim=1)
            torch_xla.sync()
        outputs.append(tokens.cpu().float().sum(dim=-1))
    return model, [float(v) for out in outputs for v in out]


MODELS = {"mlp": mlp, "convnet": convnet, "transformer": transformer, "gpt": gpt}


def main():
    name, out = sys.argv[1], sys.argv[2]
    device = torch_xla.device()
    start = time.time()
    model, losses = MODELS[name](device)
    seconds = time.time() - start
    arrays = {"losses": np.array(losses, dtype=np.float64)}
    for key, value in model.state_dict().items():
        arrays["param/" + key] = value.cpu().numpy()
    arrays["device"] = np.array(torch_xla._XLAC._xla_real_devices([str(device)])[0])
    np.savez(out, **arrays)
    print(f"{name} on {device}: {len(losses)} values in {seconds:.1f} s; "
          f"first {losses[0]:.6f} last {losses[-1]:.6f}")


if __name__ == "__main__":
    main()
