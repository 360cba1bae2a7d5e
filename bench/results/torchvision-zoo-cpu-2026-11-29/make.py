# Script several torchvision models nobody here wrote and tiny shards; write job configs.
import torch, torchvision, sys, os
out = sys.argv[1]
torch.manual_seed(0)
N = 64
x = torch.randn(N, 3, 32, 32)
y = torch.randint(0, 10, (N,))
os.makedirs(f"{out}/data", exist_ok=True)
torch.save({"inputs": x, "targets": y}, f"{out}/data/train-000.pt")
torch.save({"inputs": x[:16], "targets": y[:16]}, f"{out}/data/test-000.pt")
models = {
  "mobilenet_v2": lambda: torchvision.models.mobilenet_v2(num_classes=10),
  "shufflenet": lambda: torchvision.models.shufflenet_v2_x0_5(num_classes=10),
  "squeezenet": lambda: torchvision.models.squeezenet1_1(num_classes=10),
  "efficientnet_b0": lambda: torchvision.models.efficientnet_b0(num_classes=10),
  "mnasnet": lambda: torchvision.models.mnasnet0_5(num_classes=10),
  "regnet": lambda: torchvision.models.regnet_x_400mf(num_classes=10),
  "densenet": lambda: torchvision.models.densenet121(num_classes=10),
  "vgg11_bn": lambda: torchvision.models.vgg11_bn(num_classes=10),
  "vit_tiny": lambda: torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64, num_classes=10, dropout=0.1),
}
for name, make in models.items():
    try:
        m = make()
        s = torch.jit.script(m)
        s.save(f"{out}/{name}.pt")
        with open(f"{out}/{name}.toml", "w") as f:
            f.write(f'[model]\ntorchscript = "{name}.pt"\n[data]\nformat = "tensors"\npath = "data"\n'
                    f'[train]\nests = 4\nglobal_batch = 16\nlr = 0.01\nmomentum = 0.9\nsteps = 3\nseed = 1\nthreads = 1\n')
        print("ok", name)
    except Exception as e:
        print("FAIL", name, type(e).__name__, str(e)[:200])
