#!/usr/bin/python3
# Builds the TorchScript models, tensor shards and bad inputs the C++ tests of issue 25 load.
"""Usage: make_test_artifacts.py OUTDIR

Deterministic: the same torch/torchvision give the same files (fixed seeds and names). Writes
OUTDIR/MANIFEST, one path per line (relative to OUTDIR), of every file written.
"""
import gzip
import os
import struct
import sys

# TorchScript writes a module's __constants__ (a Python set) in hash order, so the archives are
# byte-identical across runs only under a fixed string hash seed: re-run under one.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.execve(sys.executable, [sys.executable] + sys.argv, {**os.environ, "PYTHONHASHSEED": "0"})

import torch  # noqa: E402 (after the re-exec, so the import is paid once)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torchvision  # noqa: E402

FASHION_MNIST = os.environ.get("FASHION_MNIST", "/usr/share/datasets/fashion-mnist")
FORTUNES = os.environ.get("FORTUNES", "/usr/share/games/fortunes/fortunes")
MEAN, STD = 0.2860, 0.3530  # Fashion-MNIST pixel statistics, as the built-in loader uses
VOCAB, D_MODEL, HEADS, CONTEXT = 64, 32, 2, 16
TRAIN_SHARDS = (700, 700, 648)  # unequal on purpose: a shard boundary inside a batch
TEST_IMAGES = 1000
TEXT_TRAIN_BYTES = 20480  # the text before this is train, after it test: no shared windows
WINDOW_STRIDE = 8


class Writer:
    """Saves under OUTDIR and remembers every path for the MANIFEST."""

    def __init__(self, root):
        self.root = root
        self.written = []

    def path(self, relative):
        full = os.path.join(self.root, relative)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        self.written.append(relative)
        return full

    def save(self, relative, obj):
        torch.save(obj, self.path(relative))

    def script(self, relative, module):
        torch.jit.script(module).save(self.path(relative))

    def raw(self, relative, data):
        with open(self.path(relative), "wb") as f:
            f.write(data)

    def directory(self, relative):
        # An empty directory has no file to list; MANIFEST names it with a trailing slash.
        os.makedirs(os.path.join(self.root, relative), exist_ok=True)
        self.written.append(relative.rstrip("/") + "/")

    def manifest(self):
        with open(os.path.join(self.root, "MANIFEST"), "w") as f:
            f.writelines(p + "\n" for p in sorted(self.written))


# ---- models ----

def resnet18_1ch():
    model = torchvision.models.resnet18(num_classes=10)
    model.conv1 = nn.Conv2d(1, 64, kernel_size=7, stride=2, padding=3, bias=False)
    return model


def mobilenet_v2_1ch():
    # torchvision's own code, untouched but for a 1-channel stem: BatchNorm, in-place ReLU6,
    # inverted residuals and a dropout classifier.
    model = torchvision.models.mobilenet_v2(num_classes=10)
    model.features[0][0] = nn.Conv2d(1, 32, kernel_size=3, stride=2, padding=1, bias=False)
    return model


def vit_1ch():
    # torchvision's VisionTransformer, small: nn.MultiheadAttention, LayerNorm, GELU, dropout.
    model = torchvision.models.VisionTransformer(
        image_size=28, patch_size=7, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
        dropout=0.1, num_classes=10)
    model.conv_proj = nn.Conv2d(1, 32, kernel_size=7, stride=7)
    return model


class CausalSelfAttention(nn.Module):
    # Written out rather than nn.TransformerEncoderLayer: 1.13's layer has a fused eval-mode
    # "fast path" whose kernels differ from the training path; this block is one code path.
    def __init__(self, d, heads, dropout):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.attn_drop = nn.Dropout(dropout)

    def forward(self, x):
        n, t, d = x.shape
        qkv = self.qkv(x).view(n, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = torch.matmul(q, k.transpose(-2, -1)) / float(d // self.heads) ** 0.5
        future = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        weights = self.attn_drop(F.softmax(scores.masked_fill(future, float("-inf")), dim=-1))
        return self.proj(torch.matmul(weights, v).transpose(1, 2).reshape(n, t, d))


class Block(nn.Module):
    def __init__(self, d, heads, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads, dropout)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        x = x + self.drop(self.attn(self.ln1(x)))
        return x + self.drop(self.mlp(self.ln2(x)))


class TinyTransformer(nn.Module):
    """Token model: int64 [N, T] -> logits [N, T, VOCAB]."""

    def __init__(self, layers=2, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Parameter(torch.randn(CONTEXT, D_MODEL) * 0.02)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.Sequential(*[Block(D_MODEL, HEADS, dropout) for _ in range(layers)])
        self.ln = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, VOCAB)

    def forward(self, tokens):
        x = self.drop(self.embed(tokens) + self.pos[: tokens.size(1)])
        return self.head(self.ln(self.blocks(x)))


def seq_cnn():
    # A flat nn.Sequential: its children are the segments the agent may checkpoint.
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.25), nn.Linear(16 * 7 * 7, 10))


def traced_mlp():
    mlp = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 64), nn.ReLU(), nn.Linear(64, 10))
    return torch.jit.trace(mlp, torch.zeros(2, 1, 28, 28))


class NoParams(nn.Module):
    def forward(self, x):
        return x.flatten(1)[:, :10]


class WrongShape(nn.Module):
    """Has parameters but returns [N, 10, 1, 1]: logits must be [N, C] or [N, T, V]."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 10, 28)

    def forward(self, x):
        return self.conv(x)


def write_models(out):
    torch.manual_seed(0)
    out.script("resnet18.pt", resnet18_1ch())
    torch.manual_seed(0)
    out.script("transformer.pt", TinyTransformer())
    torch.manual_seed(0)
    out.script("seq_cnn.pt", seq_cnn())
    torch.manual_seed(0)
    traced_mlp().save(out.path("traced_mlp.pt"))
    torch.manual_seed(0)
    out.script("mobilenet_v2.pt", mobilenet_v2_1ch())
    torch.manual_seed(0)
    out.script("vit.pt", vit_1ch())


# ---- data ----

def read_idx(path):
    """An IDX file (the Fashion-MNIST format) as a uint8 tensor of its shape."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    _, _, kind, dims = struct.unpack(">BBBB", data[:4])
    if kind != 0x08:
        raise ValueError(f"{path}: IDX element type {kind:#x}, expected unsigned byte")
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).view(shape)


def fashion_mnist(split, count=None):
    """(inputs float32 [N,1,28,28] normalised, targets int64 [N]); split "train" or "t10k"."""
    for name in (f"{split}-images-idx3-ubyte.gz", f"{split}-labels-idx1-ubyte.gz"):
        if not os.path.exists(os.path.join(FASHION_MNIST, name)):
            sys.exit(f"make_test_artifacts: {FASHION_MNIST}/{name} missing "
                     "(Debian package dataset-fashion-mnist)")
    images = read_idx(os.path.join(FASHION_MNIST, f"{split}-images-idx3-ubyte.gz"))[:count]
    labels = read_idx(os.path.join(FASHION_MNIST, f"{split}-labels-idx1-ubyte.gz"))[:count]
    inputs = (images.float().div(255).unsqueeze(1) - MEAN) / STD
    return inputs, labels.long()


def shard(inputs, targets):
    # clone(): torch.save of a slice would store the whole underlying storage.
    return {"inputs": inputs.clone(), "targets": targets.clone()}


def write_images(out):
    inputs, targets = fashion_mnist("train", sum(TRAIN_SHARDS))
    start = 0
    for i, size in enumerate(TRAIN_SHARDS):
        out.save(f"images/train-{i:03d}.pt", shard(inputs[start:start + size],
                                                   targets[start:start + size]))
        start += size
    out.save("images/test-000.pt", shard(*fashion_mnist("t10k", TEST_IMAGES)))


def token_windows(text):
    """Windows of CONTEXT+1 bytes every WINDOW_STRIDE: inputs and next-token targets."""
    tokens = torch.tensor([b % VOCAB for b in text], dtype=torch.int64)
    windows = tokens.unfold(0, CONTEXT + 1, WINDOW_STRIDE)
    return windows[:, :-1].contiguous(), windows[:, 1:].contiguous()


def write_tokens(out):
    with open(FORTUNES, "rb") as f:
        text = f.read()
    inputs, targets = token_windows(text[:TEXT_TRAIN_BYTES])
    half = inputs.size(0) // 2
    out.save("tokens/train-000.pt", shard(inputs[:half], targets[:half]))
    out.save("tokens/train-001.pt", shard(inputs[half:], targets[half:]))
    out.save("tokens/test-000.pt", shard(*token_windows(text[TEXT_TRAIN_BYTES:])))


# ---- bad inputs ----

def write_bad(out):
    gen = torch.Generator().manual_seed(0)

    def garbage(n):
        return bytes(torch.randint(0, 256, (n,), generator=gen).tolist())

    torch.manual_seed(0)
    out.save("bad/not_torchscript.pt", seq_cnn().state_dict())
    out.raw("bad/garbage.pt", garbage(4096))
    out.script("bad/no_params.pt", NoParams())
    out.script("bad/wrong_shape.pt", WrongShape())
    image = torch.zeros(10, 1, 28, 28)
    out.save("bad_shards/mismatched/train-000.pt",
             {"inputs": image, "targets": torch.zeros(9, dtype=torch.int64)})
    out.save("bad_shards/missing_key/train-000.pt", {"inputs": image})
    out.save("bad_shards/float_targets/train-000.pt",
             {"inputs": image, "targets": torch.zeros(10, dtype=torch.float32)})
    out.directory("bad_shards/empty")
    out.save("bad_shards/not_a_dict/train-000.pt", image)
    out.raw("bad_shards/unreadable/train-000.pt", garbage(4096))


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        sys.exit(__doc__)
    torch.set_num_threads(1)
    out = Writer(argv[1])
    os.makedirs(out.root, exist_ok=True)
    write_models(out)
    write_images(out)
    write_tokens(out)
    write_bad(out)
    out.manifest()
    print(f"make_test_artifacts: {len(out.written)} entries in {out.root} (see MANIFEST)")


if __name__ == "__main__":
    main(sys.argv)
