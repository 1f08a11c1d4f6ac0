#!/usr/bin/env python3
"""What a decode step costs beyond reading its weights, on one real GPU (PyTorch + CUDA graphs; run where a GPU is).

scalefront's serving model times a decode step's GEMMs by the roofline (weights read once per step over HBM). A real
step also pays a fixed cost per kernel (launch in a CUDA graph, the first wave's ramp, the last wave's tail), which
at small batches is a large share of a step. This script measures it:

1. the time per kernel of a CUDA graph of 1,000 dependent tiny kernels (element-wise and GEMM);
2. a Llama 3 70B TP-8 decode layer (RMSNorm, QKV, rotary-like element-wise, output projection, residual, RMSNorm,
   gate/up, SiLU x up, down, residual; no attention core, no all-reduce) in BF16, 80 layers with their own weights
   in one CUDA graph, at batch 1, 8 and 64: the measured time, the weight-read roofline at the measured HBM read
   rate, and the kernels per layer (counted by the profiler in one eager layer), so that
   overhead per kernel = (measured - roofline) / kernels.
Writes $OUT/decode_floor.json (or ./decode_floor.json) and prints a table. Takes about a minute on an H100.
"""

import json
import os
import time

import torch
import torch.nn.functional as F

OUT = os.environ.get("OUT", ".")
dev = torch.device("cuda")
torch.manual_seed(0)
res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d")}


def graph_time_s(fn, reps=20):
    """Median wall time of one replay of fn captured in a CUDA graph."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e-3)
    times.sort()
    return times[len(times) // 2]


def hbm_read_gbps():
    """HBM read rate: a large reduction reads each byte once."""
    big = torch.randn(1 << 30, dtype=torch.bfloat16, device=dev)
    return 2 * big.numel() / graph_time_s(big.sum) / 1e9


res["hbm_read_GBps"] = hbm_read_gbps()
torch.cuda.empty_cache()

# 1. Tiny dependent kernels.
x = torch.zeros(8192, dtype=torch.bfloat16, device=dev)


def chain_add():
    for _ in range(1000):
        x.add_(1.0)


res["us_per_tiny_elementwise_kernel"] = graph_time_s(chain_add) / 1000 * 1e6
w = torch.randn(1024, 1024, dtype=torch.bfloat16, device=dev) * 0.01
v = torch.randn(1, 1024, dtype=torch.bfloat16, device=dev)


def chain_gemm():
    y = v
    for _ in range(1000):
        y = F.linear(y, w)


res["us_per_tiny_gemm_kernel"] = graph_time_s(chain_gemm) / 1000 * 1e6

# 2. A Llama 3 70B TP-8 decode layer, 80 layers.
H, Q, KV, FFN, L = 8192, 8192 // 8, 2 * 1024 // 8, 28672 // 8, 80
layers = [
    {
        "qkv": torch.randn(Q + KV, H, dtype=torch.bfloat16, device=dev) * 0.01,
        "o": torch.randn(H, Q, dtype=torch.bfloat16, device=dev) * 0.01,
        "up": torch.randn(2 * FFN, H, dtype=torch.bfloat16, device=dev) * 0.01,
        "down": torch.randn(H, FFN, dtype=torch.bfloat16, device=dev) * 0.01,
        "n1": torch.ones(H, dtype=torch.bfloat16, device=dev),
        "n2": torch.ones(H, dtype=torch.bfloat16, device=dev),
    }
    for _ in range(L)
]
weight_bytes = sum(t.numel() * 2 for t in layers[0].values())


def layer(h, p):
    a = F.rms_norm(h, (H,), p["n1"])
    qkv = F.linear(a, p["qkv"])
    q = qkv[:, :Q] * 1.0001  # stands for rotary: one element-wise pass over q
    h = h + F.linear(q, p["o"])
    a = F.rms_norm(h, (H,), p["n2"])
    gu = F.linear(a, p["up"])
    g, u = gu.split(FFN, dim=1)
    return h + F.linear(F.silu(g) * u, p["down"])


res["layer_weight_bytes"] = weight_bytes
res["decode"] = []
for batch in (1, 8, 64):
    h0 = torch.randn(batch, H, dtype=torch.bfloat16, device=dev)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        layer(h0, layers[0])
        torch.cuda.synchronize()
    kernels = sum(e.count for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA)

    def model(h0=h0):
        h = h0
        for p in layers:
            h = layer(h, p)

    measured = graph_time_s(model) / L
    roofline = weight_bytes / (res["hbm_read_GBps"] * 1e9)
    res["decode"].append(
        {
            "batch": batch,
            "kernels_per_layer": kernels,
            "us_per_layer": measured * 1e6,
            "roofline_us_per_layer": roofline * 1e6,
            "overhead_us_per_kernel": (measured - roofline) / kernels * 1e6,
        }
    )

with open(os.path.join(OUT, "decode_floor.json"), "w") as f:
    json.dump(res, f, indent=2)
print(json.dumps(res, indent=2))
