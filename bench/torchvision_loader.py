"""The loader users run: torchvision's ImageFolder + DataLoader with worker
processes, PIL decoding, and the transforms ddp-train's loader applies to
training images (resize to --image-size only when the image differs, random
crop from the image padded by 4, horizontal flip, to tensor, ImageNet mean and
std). TinyImageNet's layout: DIR/train/<wnid>/images/*.JPEG.

Prints one JSON line: images per second after the first batch (which pays for
starting the worker processes), like `ddp-train --loader-only`.
Usage: torchvision_loader.py --data DIR --workers N [--batch-size 32]
       [--image-size 64] [--batches 200]
"""
import argparse
import json
import time

import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms as T

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def train_transform(size):
    def fit(img):
        return img if img.size == (size, size) else img.resize((size, size))

    return T.Compose([T.Lambda(fit), T.RandomCrop(size, padding=4), T.RandomHorizontalFlip(), T.ToTensor(),
                      T.Normalize(MEAN, STD)])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--batches", type=int, default=200)
    a = p.parse_args()
    torch.set_num_threads(1)
    ds = datasets.ImageFolder(a.data + "/train", transform=train_transform(a.image_size))
    loader = DataLoader(ds, batch_size=a.batch_size, shuffle=True, num_workers=a.workers, drop_last=True)
    batches = min(a.batches, len(loader))
    if batches < 2:
        raise SystemExit("torchvision_loader: needs at least 2 batches: more images, or a smaller --batch-size")
    it = iter(loader)
    next(it)
    t0 = time.perf_counter()
    images = 0
    for _ in range(batches - 1):
        x, _ = next(it)
        images += x.shape[0]
    s = time.perf_counter() - t0
    print(json.dumps({"loader_img_per_s": images / s, "images": images, "seconds": s, "workers": a.workers,
                      "batch_size": a.batch_size, "image_size": a.image_size}), flush=True)


if __name__ == "__main__":
    main()
