"""The baseline users would otherwise pick: PyTorch DDP in Python, launched
with `python3 -m torch.distributed.run`, on the same torch build as ddp-train
(Debian's 1.13). The model is ddp-train's ResNet for small inputs (torchvision
layout, 3x3 stride-1 stem, no max-pool), SGD with momentum. Data: synthetic
batches made before timing (the default), or with --data DIR the JPEGs of a
TinyImageNet-shaped folder through torchvision's ImageFolder, a
DistributedSampler and a DataLoader with --workers worker processes, the way
users run it (transforms as in torchvision_loader.py).

Prints one JSON line on rank 0: global img/s over the timed steps (after the
warm-up steps, slowest rank's time) and the first optimizer step's wall-clock
time. Usage (under torch.distributed.run):
  python_ddp.py --model resnet18 --batch-size 32 --warmup 8 --steps 8
  python_ddp.py ... --data DIR --workers 1
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inp, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inp, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.down = None
        if stride != 1 or inp != planes:
            self.down = nn.Sequential(nn.Conv2d(inp, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (self.down(x) if self.down is not None else x))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inp, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inp, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.down = None
        if stride != 1 or inp != planes * 4:
            self.down = nn.Sequential(nn.Conv2d(inp, planes * 4, 1, stride, bias=False), nn.BatchNorm2d(planes * 4))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return F.relu(out + (self.down(x) if self.down is not None else x))


class ResNet(nn.Module):
    def __init__(self, block, layers, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        inp, stages = 64, []
        for i, (planes, n) in enumerate(zip([64, 128, 256, 512], layers)):
            blocks = []
            for j in range(n):
                blocks.append(block(inp, planes, 2 if (i > 0 and j == 0) else 1))
                inp = planes * block.expansion
            stages.append(nn.Sequential(*blocks))
        self.layers = nn.Sequential(*stages)
        self.fc = nn.Linear(inp, classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layers(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="resnet18", choices=["resnet18", "resnet50"])
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--classes", type=int, default=200)
    p.add_argument("--warmup", type=int, default=8)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--device", default="cpu")
    p.add_argument("--amp", default="off", choices=["off", "fp16", "bf16"], help="autocast on CUDA (fp16 with a scaler)")
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--data", help="TinyImageNet-shaped JPEG folder (default: synthetic batches)")
    p.add_argument("--workers", type=int, default=1, help="DataLoader worker processes with --data")
    a = p.parse_args()
    cuda = a.device == "cuda"
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", 0))
    dist.init_process_group("nccl" if cuda else "gloo")
    rendezvous_unix = time.time()
    dev = torch.device(f"cuda:{local}" if cuda else "cpu")
    if not cuda:
        torch.set_num_threads(1)
    torch.manual_seed(1)
    batches = None
    if a.data:
        from torch.utils.data import DataLoader, DistributedSampler
        from torchvision import datasets

        from torchvision_loader import train_transform

        ds = datasets.ImageFolder(a.data + "/train", transform=train_transform(a.image_size))
        a.classes = len(ds.classes)
        sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, drop_last=True)
        loader = DataLoader(ds, batch_size=a.batch_size, sampler=sampler, num_workers=a.workers, drop_last=True,
                            pin_memory=cuda)
        if len(loader) < a.warmup + a.steps:
            raise SystemExit(f"python_ddp: {a.data} has {len(loader)} batches per rank, fewer than "
                             f"--warmup + --steps ({a.warmup + a.steps})")
        batches = iter(loader)
    block, layers = (BasicBlock, [2, 2, 2, 2]) if a.model == "resnet18" else (Bottleneck, [3, 4, 6, 3])
    model = ResNet(block, layers, a.classes).to(dev)
    fmt = torch.channels_last if a.channels_last else torch.contiguous_format
    model = model.to(memory_format=fmt)
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[local] if cuda else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    amp = a.amp != "off" and cuda
    scaler = torch.cuda.amp.GradScaler(enabled=a.amp == "fp16" and cuda)
    gen = torch.Generator().manual_seed(rank)
    pool = [] if batches is not None else [(torch.randn(a.batch_size, 3, a.image_size, a.image_size, generator=gen).to(dev, memory_format=fmt),
             torch.randint(0, a.classes, (a.batch_size,), generator=gen).to(dev)) for _ in range(4)]
    first_step_unix = 0.0
    t0 = 0.0
    for step in range(a.warmup + a.steps):
        if step == a.warmup:
            if cuda:
                torch.cuda.synchronize()
            dist.barrier()
            t0 = time.perf_counter()
        if batches is not None:
            x, y = next(batches)
            x, y = x.to(dev, memory_format=fmt, non_blocking=True), y.to(dev, non_blocking=True)
        else:
            x, y = pool[step % len(pool)]
        opt.zero_grad(set_to_none=True)
        # (CPU autocast in 1.13 refuses fp16 even when disabled.)
        with torch.autocast(device_type="cuda" if cuda else "cpu", enabled=amp,
                            dtype=torch.float16 if cuda and a.amp == "fp16" else torch.bfloat16):
            loss = F.cross_entropy(ddp(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        if step == 0:
            first_step_unix = time.time()
    if cuda:
        torch.cuda.synchronize()
    elapsed = torch.tensor([time.perf_counter() - t0], dtype=torch.float64)
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
    if rank == 0:
        print(json.dumps({"img_per_s": a.steps * a.batch_size * world / elapsed.item(),
                          "first_step_unix": first_step_unix, "rendezvous_unix": rendezvous_unix,
                          "world_size": world}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
