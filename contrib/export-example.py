#!/usr/bin/python3
# Worked example: torchvision's ResNet-18 and Fashion-MNIST as an elastic-agent job.
"""Writes a ready-to-train job for `elastic-agent train` with your own PyTorch model.

    contrib/export-example.py OUTDIR [--train-samples N] [--dataset DIR]

OUTDIR/resnet18.pt     torchvision's ResNet-18 (1 input channel, 10 classes), torch.jit.script'ed
OUTDIR/data/train-*.pt the Fashion-MNIST train split, 10000 samples a shard
OUTDIR/data/test-000.pt the 10000 test samples
OUTDIR/job.toml        the job config (paths in it are relative to OUTDIR)

A shard is torch.save({"inputs": float32 [N, 1, 28, 28], "targets": int64 [N]}, FILE); the agent
trains on train*.pt and evaluates on test*.pt, in name order. Then:

    elastic-agent train --config OUTDIR/job.toml
    elastic-agent eval --config OUTDIR/job.toml
    elastic-agent export --config OUTDIR/job.toml --out OUTDIR/trained.pt   # torch.jit.load it

Needs the Debian package dataset-fashion-mnist (or --dataset DIR with the four IDX .gz files).
"""
import argparse
import glob
import gzip
import os
import struct
import sys

import torch
import torch.nn as nn
import torchvision

MEAN, STD = 0.2860, 0.3530  # Fashion-MNIST pixel mean and standard deviation (after /255)
SHARD_SIZE = 10000
FILES = {"train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
         "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}

JOB = """\
# ResNet-18 on Fashion-MNIST, written by contrib/export-example.py.
[model]
torchscript = "resnet18.pt"
[data]
format = "tensors"
path = "data"
[train]
ests = 8            # fixed however many workers run it: the results do not depend on them
global_batch = 64
lr = 0.05
momentum = 0.9
seed = 1
steps = 200
threads = 1
log_every = 20
[checkpoint]
dir = "checkpoints"
every_steps = 100
"""


def model():
    net = torchvision.models.resnet18(num_classes=10)
    # Fashion-MNIST is greyscale: one input channel, the stem's shape otherwise unchanged.
    net.conv1 = nn.Conv2d(1, 64, kernel_size=7, stride=2, padding=3, bias=False)
    return torch.jit.script(net)


def read_idx(path):
    """An IDX file (Fashion-MNIST's format) as a uint8 tensor of the shape in its header."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).view(shape)


def check_dataset(directory):
    if not os.path.isdir(directory):
        sys.exit(f"export-example: {directory} does not exist: install the Debian package "
                 "dataset-fashion-mnist (apt-get install dataset-fashion-mnist) or pass "
                 "--dataset DIR")
    missing = [n for pair in FILES.values() for n in pair
               if not os.path.isfile(os.path.join(directory, n))]
    if missing:
        sys.exit(f"export-example: {directory} lacks {', '.join(missing)}: install the Debian "
                 "package dataset-fashion-mnist (apt-get install dataset-fashion-mnist) or pass "
                 "--dataset DIR")


def split(directory, name, count):
    images, labels = (read_idx(os.path.join(directory, f)) for f in FILES[name])
    images, labels = images[:count], labels[:count]
    inputs = (images.float().div(255).unsqueeze(1) - MEAN) / STD
    return inputs, labels.long()


def write_shards(out, prefix, inputs, targets):
    written = []
    for i, start in enumerate(range(0, len(targets), SHARD_SIZE)):
        path = os.path.join(out, "data", f"{prefix}-{i:03d}.pt")
        end = start + SHARD_SIZE
        # clone(): saving a slice would store the whole tensor's storage in every shard.
        torch.save({"inputs": inputs[start:end].clone(), "targets": targets[start:end].clone()},
                   path)
        written.append((path, min(end, len(targets)) - start))
    return written


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir")
    parser.add_argument("--train-samples", type=int, default=None,
                        help="use only the first N train samples (a quick try)")
    parser.add_argument("--dataset", default="/usr/share/datasets/fashion-mnist")
    args = parser.parse_args()
    if args.train_samples is not None and args.train_samples < 1:
        parser.error("--train-samples: expected a positive count")
    check_dataset(args.dataset)
    torch.manual_seed(0)  # the initial weights, so two exports give the same model
    os.makedirs(os.path.join(args.outdir, "data"), exist_ok=True)
    # The agent reads every train*.pt there: shards of an earlier, larger export must go.
    for prefix in ("train", "test"):
        for old in glob.glob(os.path.join(args.outdir, "data", prefix + "-*.pt")):
            os.remove(old)

    model_path = os.path.join(args.outdir, "resnet18.pt")
    model().save(model_path)
    print(f"export-example: wrote {model_path} (torchvision ResNet-18, 1x28x28 -> 10 classes)")
    for name, prefix, count in (("train", "train", args.train_samples), ("test", "test", None)):
        for path, n in write_shards(args.outdir, prefix, *split(args.dataset, name, count)):
            print(f"export-example: wrote {path} ({n} samples)")
    job_path = os.path.join(args.outdir, "job.toml")
    with open(job_path, "w") as f:
        f.write(JOB)
    print(f"export-example: wrote {job_path}; now: elastic-agent train --config {job_path}")


if __name__ == "__main__":
    main()
