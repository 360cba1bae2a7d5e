#!/usr/bin/python3
# The PyTorch baselines of bench/vs_pytorch.sh: a plain training loop and torchrun DDP (gloo).
"""Trains a TorchScript model on tensor shards the way a PyTorch user would, then evaluates it.

    vs_pytorch.py plain --model M.pt --data DIR [options]
    torchrun --nproc_per_node=W vs_pytorch.py ddp --model M.pt --data DIR [options]

Same job as `elastic-agent train` with [model] torchscript = M.pt, [data] format = "tensors":
train*.pt shards in name order, mean cross entropy, SGD with momentum (no weight decay, no
nesterov). Sampling: a seeded shuffle of the whole train set per epoch, read sequentially, each
step taking the next global_batch samples (a batch may straddle two epochs); under ddp rank r
takes every W-th sample of it from the r-th on (as DistributedSampler does), so a worker batch
is global_batch / W. Throughput counts the steps after --warmup (rank 0, after a barrier).

plain --micro-batches M (default 1) splits each global batch into M equal consecutive slices and
runs forward/backward on each, the loss of a slice being its mean cross entropy divided by M,
then takes one optimizer step: gradient accumulation, the gradient still the global-batch mean.
That is the work elastic-agent does on one rank with train.ests = M (each EST a slice of
global_batch / M samples, the per-EST mean gradients folded and divided by E). M = 1 is the
plain loop: one forward/backward of the whole batch.

Prints `vs_pytorch: mode=M W=W samples_per_s=... steps=... warmup=... global_batch=...
micro_batches=... loss=...`,
then `vs_pytorch: eval mode=M W=W accuracy=... correct=... total=...` and one line per class in
elastic-agent eval's format: `class=K accuracy=... correct=... total=...` (token models count
every position as a sample).
"""
import argparse
import glob
import os
import sys
import time

import torch
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=("plain", "ddp"))
    p.add_argument("--model", required=True, help="a torch.jit.script'ed or traced module")
    p.add_argument("--data", required=True, help="directory of train*.pt and test*.pt shards")
    p.add_argument("--global-batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5, help="steps not timed (first allocations)")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads per process")
    p.add_argument("--micro-batches", type=int, default=1, metavar="M",
                   help="plain: M equal slices of each global batch, gradients accumulated")
    p.add_argument("--eval-batch", type=int, default=256)
    p.add_argument("--no-eval", action="store_true")
    args = p.parse_args()
    if not 0 <= args.warmup < args.steps:
        p.error(f"--warmup {args.warmup}: expected 0 <= warmup < steps ({args.steps})")
    if args.micro_batches < 1 or args.global_batch % args.micro_batches:
        p.error(f"--micro-batches {args.micro_batches}: expected a divisor of --global-batch "
                f"({args.global_batch})")
    if args.mode == "ddp" and args.micro_batches != 1:
        p.error("--micro-batches is for plain mode only")
    return args


def load_shards(directory, prefix):
    paths = sorted(glob.glob(os.path.join(directory, prefix + "*.pt")))
    if not paths:
        sys.exit(f"vs_pytorch: no {prefix}*.pt in {directory}")
    shards = [torch.load(p) for p in paths]
    return torch.cat([s["inputs"] for s in shards]), torch.cat([s["targets"] for s in shards])


class EpochSampler:
    """An endless stream of sample indices: a new seeded permutation of [0, n) per epoch."""

    def __init__(self, n, seed):
        self.n = n
        self.generator = torch.Generator().manual_seed(seed)
        self.pending = torch.empty(0, dtype=torch.int64)

    def take(self, count):
        while self.pending.numel() < count:
            epoch = torch.randperm(self.n, generator=self.generator)
            self.pending = torch.cat([self.pending, epoch])
        batch, self.pending = self.pending[:count], self.pending[count:]
        return batch


def loss_of(model, inputs, targets):
    logits = model(inputs)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


def setup(args):
    """(model to train, the plain module, rank, world size) for the mode."""
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)  # dropout masks; the same seed on every rank, as usual
    module = torch.jit.load(args.model)
    module.train()
    if args.mode == "plain":
        return module, module, 0, 1
    if "WORLD_SIZE" not in os.environ:
        sys.exit("vs_pytorch: ddp mode runs under torchrun --nproc_per_node=W")
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    dist.init_process_group("gloo")
    world = dist.get_world_size()
    if args.global_batch % world:
        sys.exit(f"vs_pytorch: global batch {args.global_batch} does not split over W={world}")
    return DistributedDataParallel(module), module, dist.get_rank(), world


def barrier(world):
    if world > 1:
        torch.distributed.barrier()


def train(args, model, rank, world, inputs, targets):
    """Runs args.steps steps; returns (samples/s after warm-up, last global-batch loss)."""
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    sampler = EpochSampler(targets.size(0), args.seed)
    barrier(world)
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        mine = sampler.take(args.global_batch)[rank::world]
        optimizer.zero_grad(set_to_none=True)
        if args.micro_batches == 1:
            loss = loss_of(model, inputs[mine], targets[mine])
            loss.backward()
        else:
            loss = 0.0
            for part in mine.chunk(args.micro_batches):  # equal, consecutive slices
                part_loss = loss_of(model, inputs[part], targets[part]) / args.micro_batches
                part_loss.backward()
                loss += part_loss.detach()  # the sum of the scaled slice means: the batch mean
        optimizer.step()
        if step == args.warmup:
            barrier(world)  # time the same steps on every rank
            start = time.perf_counter()
    barrier(world)
    elapsed = time.perf_counter() - start
    loss = loss.detach()
    if world > 1:
        torch.distributed.all_reduce(loss)  # equal worker batches: the global mean is the mean
        loss /= world
    return (args.steps - args.warmup) * args.global_batch / elapsed, loss.item()


def evaluate(module, inputs, targets, batch):
    """Per-class (correct, total) lists over the test set, in eval() mode."""
    module.eval()
    with torch.no_grad():
        logits = [module(b) for b in inputs.split(batch)]
    classes = logits[0].size(-1)
    predicted = torch.cat([x.argmax(-1) for x in logits]).reshape(-1)
    targets = targets.reshape(-1)
    hits = predicted == targets
    return (torch.bincount(targets[hits], minlength=classes).tolist(),
            torch.bincount(targets, minlength=classes).tolist())


def ratio(correct, total):
    accuracy = correct / total if total else float("nan")
    return f"accuracy={accuracy:.4f} correct={correct} total={total}"


def main():
    args = parse_args()
    model, module, rank, world = setup(args)
    inputs, targets = load_shards(args.data, "train")
    rate, loss = train(args, model, rank, world, inputs, targets)
    if rank == 0:
        print(f"vs_pytorch: mode={args.mode} W={world} samples_per_s={rate:.1f} steps={args.steps} "
              f"warmup={args.warmup} global_batch={args.global_batch} "
              f"micro_batches={args.micro_batches} loss={loss:.6f}", flush=True)
        if not args.no_eval:
            correct, total = evaluate(module, *load_shards(args.data, "test"), args.eval_batch)
            print(f"vs_pytorch: eval mode={args.mode} W={world} {ratio(sum(correct), sum(total))}")
            for c, (k, n) in enumerate(zip(correct, total)):
                print(f"class={c} {ratio(k, n)}")
    if world > 1:
        # Every rank leaves together: a rank that tore gloo down while rank 0 still evaluated
        # once left rank 0 spinning at 100% CPU in its own teardown.
        barrier(world)
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
