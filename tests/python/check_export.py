#!/usr/bin/python3
# Checks that the module `elastic-agent export` wrote gives, in PyTorch, the agent's eval logits.
"""Usage: check_export.py --model EXPORTED.pt --shards DIR --logits AGENT_LOGITS.pt
                       [--batch N] [--threads N]

Runs EXPORTED.pt (torch.jit.load, eval(), no_grad) on the inputs of DIR/test*.pt in name order
and compares with the logits `elastic-agent eval --save-logits` wrote. Prints the per-class
accuracy; exits 0 only if the two logit tensors are torch.equal (else prints the max abs diff).
--batch: forward in batches of N (default 0: all at once), to match the agent's eval batches
where a kernel's result depends on the batch size.
"""
import argparse
import glob
import os
import sys

import torch


def test_shards(directory):
    paths = sorted(glob.glob(os.path.join(directory, "test*.pt")))
    if not paths:
        sys.exit(f"check_export: no test*.pt in {directory}")
    shards = [torch.load(p) for p in paths]
    return (torch.cat([s["inputs"] for s in shards]), torch.cat([s["targets"] for s in shards]))


def per_class_lines(logits, targets):
    # Token models ([N, T, V] logits, [N, T] targets) count every position as one sample.
    predicted = logits.reshape(-1, logits.size(-1)).argmax(1)
    targets = targets.reshape(-1)
    hits = predicted == targets
    lines = [f"accuracy={hits.double().mean().item():.4f} correct={int(hits.sum())} "
             f"total={targets.numel()}"]
    for c in range(logits.size(-1)):
        mine = targets == c
        if mine.any():
            correct = int((hits & mine).sum())
            lines.append(f"class={c} accuracy={correct / int(mine.sum()):.4f} "
                         f"correct={correct} total={int(mine.sum())}")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--shards", required=True)
    parser.add_argument("--logits", required=True)
    parser.add_argument("--batch", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)  # reductions split by thread count: match the agent's
    inputs, targets = test_shards(args.shards)
    model = torch.jit.load(args.model)
    model.eval()
    with torch.no_grad():
        batches = inputs.split(args.batch) if args.batch > 0 else [inputs]
        ours = torch.cat([model(b) for b in batches])
    theirs = torch.load(args.logits)
    for line in per_class_lines(ours, targets):
        print("check_export: " + line)
    if ours.shape != theirs.shape or ours.dtype != theirs.dtype:
        print(f"check_export: DIFFERENT shapes/dtypes: python {tuple(ours.shape)} {ours.dtype}, "
              f"agent {tuple(theirs.shape)} {theirs.dtype}")
        return 1
    if not torch.equal(ours, theirs):
        diff = (ours.double() - theirs.double()).abs().max().item()
        print(f"check_export: DIFFERENT logits: max abs diff {diff:.6g}")
        return 1
    print(f"check_export: same bits: {tuple(ours.shape)} logits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
