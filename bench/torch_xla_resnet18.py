"""Step time of a ResNet-18 training step (plain PyTorch, SGD with momentum)
on torch_xla's XLA:CPU (PJRT_DEVICE=CPU) and on hloc (PJRT_DEVICE=HLOC via
libhloc_pjrt.so), each in its own process, in one run.

    PYTHON=~/.cache/hloc-torch-venv/bin/python
    $PYTHON bench/torch_xla_resnet18.py PATH/TO/libhloc_pjrt.so [--batch 8 --size 128 --steps 5]

Prints, per device: the first step (trace + compile + run), the second (its
own graph: momentum buffers now exist), and the mean of the timed steps after.
"""
import argparse
import json
import os
import subprocess
import sys
import time


def resnet18(num_classes=1000):
    import torch.nn as nn

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

        def forward(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return self.relu(y + (x if self.down is None else self.down(x)))

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, num_classes)]
    return nn.Sequential(*layers)


def run_device(args):
    import torch
    import torch.nn.functional as F
    import torch_xla

    device = torch_xla.device()
    torch.manual_seed(0)
    model = resnet18().to(device).train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(args.batch, 3, args.size, args.size).to(device)
    y = torch.randint(0, 1000, (args.batch,)).to(device)
    times, losses = [], []
    for _ in range(2 + args.steps):
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        losses.append(loss.item())  # Waits for the step.
        times.append(time.perf_counter() - start)
    print(json.dumps({
        "device": torch_xla._XLAC._xla_real_devices([str(device)])[0],
        "first_step_s": times[0], "second_step_s": times[1],
        "step_s": sum(times[2:]) / args.steps, "losses": losses}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("plugin", nargs="?")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--device-run", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.device_run:
        return run_device(args)
    common = ["--batch", str(args.batch), "--size", str(args.size), "--steps", str(args.steps)]
    results = []
    for env in ({"PJRT_DEVICE": "CPU"},
                {"PJRT_DEVICE": "LIBRARY", "PJRT_LIBRARY_PATH": os.path.abspath(args.plugin)}):
        out = subprocess.run([sys.executable, __file__, "--device-run", *common],
                             env=dict(os.environ, **env), capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{env} failed:\n{out.stderr[-3000:]}")
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"ResNet-18 training step, batch {args.batch}, {args.size}x{args.size}, "
          f"SGD momentum, {args.steps} timed steps")
    print(f"{'device':8} {'first step':>11} {'second':>8} {'step':>8}   loss first/last")
    for r in results:
        print(f"{r['device']:8} {r['first_step_s']:10.2f}s {r['second_step_s']:7.2f}s "
              f"{r['step_s']:7.3f}s   {r['losses'][0]:.5f} / {r['losses'][-1]:.5f}")
    print(f"hloc / XLA:CPU step time: {results[1]['step_s'] / results[0]['step_s']:.2f}x")


if __name__ == "__main__":
    main()
