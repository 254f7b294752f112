#!/usr/bin/env python3
"""trainplan measurement harness: time a few training steps of a workload on this machine.

Writes runs in the layout `trainplan calibrate import` and the `recordMeasurements` mutation take
(step time, peak memory, GPU name, driver, PyTorch and CUDA versions), so predictions and plans
for this GPU and model learn from them. Needs only PyTorch; uses torchvision (zoo CNNs) or
transformers (a Hugging Face config.json) when they are installed and asked for, else replays the
model's layer list (the layers trainplan's predictor sees, each run as its own PyTorch op at its
own shape: the same kernels and sizes, not the model's data flow). Runs on CPU too, slowly.

    trainplan harness --model resnet50_v1.5 --out measure.py     # this file, with the model's layers
    python3 measure.py --batch-size 64 --precision AMP_BF16 --steps 20 --out runs.csv
    trainplan calibrate import runs.csv

Data parallel: `--gpus N` trains on N GPUs of this machine (torch DistributedDataParallel, one
process each, NCCL); under `torchrun` (several nodes) the launcher's processes are used instead,
and `--inter-node-gbps` / `--inter-node-transport` say what joins the nodes. The run's step time is
the slowest process's, so it includes the gradient all-reduce over this machine's links as they
are: a box whose GPUs cannot reach each other directly (GeForce cards have no peer-to-peer) is
timed as it will train.

Attention (`--attention fused|eager`): the cores run as trainplan costs the model on stock PyTorch
unless asked otherwise: a zoo model's replay as one scaled_dot_product_attention call per core where
its code fuses them (op by op where it writes the scores), a Hugging Face config as transformers
runs its type (attn_implementation sdpa or eager when asked). The `attention` column says which ran:
EAGER on a PyTorch before 2.0, which has no fused kernel, so the run is predicted as it ran.

Precision modes (trainplan's names): FP32 (TF32 off), TF32, AMP_FP16 (autocast + loss scaling),
AMP_BF16 (autocast), FP16 (fp16 model, fp32 master weights, loss scaling), FP16_PURE (everything
fp16), BF16 (bf16 model, fp32 master weights), FP8 (Transformer Engine linears in fp8_autocast;
only where transformer_engine is installed).

Recomputation (`--recompute`): full reruns the forward of the transformer blocks in backward,
keeping each block's input (Megatron-Core's full, Hugging Face's gradient checkpointing); selective
reruns only the attention core (Megatron-Core's default selective). The layer replay checkpoints
the layers trainplan's predictor reruns (the zoo model's marks, embedded with it); a Hugging Face
model checkpoints each of its blocks (full only).

Tensor parallelism (`--tensor-parallel N`, layer replay only): the processes form groups of N
consecutive ranks (one machine's GPUs), each rank replaying its 1/N of every layer trainplan's
predictor splits (column-parallel linears their outputs, row-parallel ones their inputs, attention
its heads, the vocabulary its rows, the rest their tokens) and all-reducing each row-parallel
linear's output over its group, in forward and again in backward: the all-reduces and message
sizes the predictor costs, Megatron's pattern. Data parallelism runs across the groups (ranks of
the same place in each group). The zoo model's marks, embedded with it, say what splits.

Pipeline parallelism (`--pipeline-parallel P`, layer replay only): the processes form pipelines of P
stages (the outermost split: rank = tensor rank + T x (data-parallel rank + D x stage), Megatron's
order), each stage replaying its 1/P of the transformer blocks, the first also the layers before
them (embeddings), the last those after (final norm, head, loss), as Megatron splits a model. A
step runs `--grad-accum-steps` micro-batches 1F1B (PipeDream-Flush): a forward waits for the previous
stage's activations and sends its own on, a backward waits for the next stage's gradient and sends
one back (the residual stream of a micro-batch each way, each tensor-parallel rank its share), so
the pipeline's fill and drain are in the step time; the gradients are then all-reduced across the
replicas. `--virtual-pipeline-stages V` interleaves (Megatron's virtual stages): the blocks split
into P x V model chunks, stage k holding chunks k, k + P, ..., and the micro-batches (a multiple of
P) run through them in groups of P with Megatron's interleaved warm-up. A tied head on the last
stage trains its own copy of the table (Megatron also all-reduces the two copies' gradients, which
is not replayed).

Context parallelism (`--context-parallel C`, layer replay only): rings of C processes (after the
tensor-parallel ranks in Megatron's order), each replaying its 1/C of every sequence (the attention's
queries against all keys); at each attention core K and V go round the ring, C - 1 steps of the
rank's K and V, posted before the core's first layer computes and awaited after it (ring attention
overlaps them so), twice in backward (K and V again, their gradients) and again when recomputation
reruns the core: the exchanges the predictor costs. Gradients are averaged over the data- and
context-parallel ranks together, as Megatron does.

Expert parallelism (`--expert-parallel E`, layer replay of a mixture of experts): groups of E
consecutive processes of a pipeline stage (Megatron-Core's order, expert tensor parallelism 1),
each holding 1/E of every expert layer's experts and running the tokens routed to them from the
whole group (routing taken as even, so as many rows as without it), after an all-to-all that
dispatches each MoE layer's routed tokens and before one that combines the outputs, both again in
backward: the all-to-alls and sizes the predictor costs. The experts' gradients are averaged over
the ranks holding the same experts, the other weights' over the data-parallel group.

ZeRO (`--zero-stage`, over the data-parallel processes: with tensor or context parallelism, the
ranks holding the same share): 1 shards the optimizer's states (ZeroRedundancyOptimizer; gradients
all-reduced as DistributedDataParallel does; the experts' states over the ranks holding the same
experts); 2 shards the gradients too and 3 the weights as well (FullyShardedDataParallel
SHARD_GRAD_OP and FULL_SHARD, one unit per transformer block or, in the layer replay, per layer with
weights, each expert layer's experts over the ranks holding them; needs PyTorch 2; every
micro-batch's backward reduce-scatters its gradients, no no_sync). Under 2 and 3, FP16 and BF16 keep
their fp32 master weights as FullyShardedDataParallel's sharded parameters.
Under a pipeline, 3 runs as torchtitan runs it: each model chunk under FSDP2 (`fully_shard`, one
unit per layer with weights, PyTorch 2.6+) without resharding after forward, so a stage gathers its
weights at its first micro-batch and keeps them, accumulating whole fp32 gradients until the chunk's
last micro-batch, whose backward reduce-scatters them (torch.distributed.pipelining turns gradient
sync off until then). Stage 2 under a pipeline is refused: no framework runs it (DeepSpeed refuses
it, and FSDP there is stage 3).
"""
import argparse
import contextlib
import csv
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings

# `trainplan harness --model ID` replaces the next line with the model's definition (JSON).
EMBEDDED_MODEL = None

PRECISIONS = ["FP32", "TF32", "AMP_FP16", "AMP_BF16", "FP16", "FP16_PURE", "BF16", "FP8"]
# trainplan's recompute modes the harness runs (service/harness-commands.ts HARNESS_RECOMPUTE).
RECOMPUTE = ["none", "selective", "full"]
CSV_COLUMNS = [
    "model", "seq_len", "gpu", "gpu_memory_gb", "nodes", "gpus_per_node", "batch_size_per_gpu",
    "grad_accum_steps", "precision", "framework", "step_time_ms", "peak_memory_gb", "source", "note",
    "inter_node_gbps", "inter_node_transport", "recompute", "zero_stage", "tensor_parallel",
    "pipeline_parallel", "virtual_pipeline_stages", "expert_parallel", "context_parallel", "attention",
]
# torchvision builders for zoo ids: only where torchvision builds the zoo entry's architecture
# (test/harness.test.ts compares their parameter counts and their convolution and linear FLOPs; the
# zoo's TF-derived heads have 1001 classes). Not mapped, so the layer list replays them: resnet50_v1
# and resnet152_v1 (torchvision's ResNets are v1.5, strided in the 3x3, not the first 1x1: same
# weights, 2% more FLOPs at 152 layers), resnext101_32x4d (torchvision has 32x8d, twice the weights)
# and alexnet (torchvision's conv4 has 256 channels, tf_cnn_benchmarks' variant in the zoo 384).
TORCHVISION = {
    "resnet50_v1.5": "resnet50", "vgg16": "vgg16",
    "inception_v3": "inception_v3", "efficientnet_b0": "efficientnet_b0",
    "efficientnet_b4": "efficientnet_b4", "vit_b16": "vit_b_16",
}


NO_TORCH = "PyTorch is not installed (pip install torch, or Debian's python3-torch)"


def is_kind(module, name):
    """Whether `module` is the replay's `name` module, sharded too: FSDP2's fully_shard subclasses a
    module's class as FSDP<name>, so its own class name no longer says what it is."""
    return any(c.__name__ == name for c in type(module).__mro__)


def experts_of(op):
    """A replayed expert layer's experts (the unit ZeRO shards over the ranks holding them, not the
    data-parallel ones), or None for any other op."""
    return op.op if is_kind(op, "Exchanged") and is_kind(op.op, "Experts") else None


def fail(message):
    print(f"measure.py: {message}", file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", help="zoo id (default: the embedded model)")
    p.add_argument("--layers", help="a trainplan layer-list JSON file (instead of the embedded model)")
    p.add_argument("--hf-config", help="a Hugging Face config.json (needs transformers)")
    p.add_argument("--builder", choices=["auto", "torchvision", "transformers", "layers"], default="auto",
                   help="auto: torchvision for zoo CNNs when installed, transformers for --hf-config, else the layer list")
    p.add_argument("--batch-size", type=int, required=True, help="per-GPU batch size")
    p.add_argument("--seq-len", type=int, help="sequence length (transformers: default 1024, or the position table's length if shorter) or image size (CNNs, ViT)")
    p.add_argument("--precision", choices=PRECISIONS, default="FP32")
    p.add_argument("--recompute", choices=RECOMPUTE, default="none",
                   help="activation recomputation: full (every transformer block) or selective (the "
                        "attention core); default none")
    p.add_argument("--zero-stage", type=int, choices=[0, 1, 2, 3], default=0,
                   help="ZeRO sharding over the data-parallel processes: 1 optimizer states "
                        "(ZeroRedundancyOptimizer), 2 and gradients, 3 and weights (FullyShardedDataParallel, "
                        "PyTorch 2); default 0")
    p.add_argument("--tensor-parallel", type=int, default=1,
                   help="tensor parallelism over groups of this many processes of a machine (layer replay "
                        "of an embedded zoo model; default 1)")
    p.add_argument("--pipeline-parallel", type=int, default=1,
                   help="pipeline stages the layer replay of an embedded zoo model is split into, one per "
                        "group of processes, run 1F1B over --grad-accum-steps micro-batches (default 1)")
    p.add_argument("--virtual-pipeline-stages", type=int, default=1,
                   help="model chunks per pipeline stage, run interleaved (Megatron's virtual pipeline "
                        "stages; needs --pipeline-parallel > 1 and --grad-accum-steps a multiple of --pipeline-parallel; "
                        "default 1)")
    p.add_argument("--context-parallel", type=int, default=1,
                   help="GPUs each sequence is split over (ring attention: K and V go round them), consecutive "
                        "processes after the tensor-parallel ones (layer replay of an embedded zoo model; default 1)")
    p.add_argument("--expert-parallel", type=int, default=1,
                   help="GPUs each mixture-of-experts layer's experts are spread over, consecutive processes of a "
                        "pipeline stage; tokens reach their experts by all-to-all (layer replay; default 1)")
    p.add_argument("--grad-accum-steps", type=int, default=1,
                   help="micro-batches of --batch-size per optimizer step (gradient accumulation; data "
                        "parallel, gradients are all-reduced once per step; the pipeline's micro-batches "
                        "under --pipeline-parallel; default 1)")
    p.add_argument("--attention", choices=["fused", "eager"],
                   help="how the attention cores run: fused, one scaled_dot_product_attention call each (PyTorch 2.0 "
                        "and later), or eager, op by op with the scores in memory (default: as trainplan costs the "
                        "model on stock PyTorch, which the script's marks say; a Hugging Face config: transformers' "
                        "default for its model type). The run says which way they ran")
    p.add_argument("--warmup", type=int, default=5, help="steps run before timing (default 5)")
    p.add_argument("--steps", type=int, default=20, help="timed optimizer steps (default 20)")
    p.add_argument("--device", default="auto", help="cuda, cuda:N, cpu or auto (default: cuda when available)")
    p.add_argument("--gpu", help="trainplan's id of this GPU (default: the device name; the importer maps it)")
    p.add_argument("--gpus", type=int, default=1,
                   help="GPUs of this machine to train on, data parallel (DistributedDataParallel, one process "
                        "each; default 1). Under torchrun leave it out: the launcher starts the processes")
    p.add_argument("--inter-node-gbps", type=float,
                   help="a run across nodes (torchrun --nnodes > 1): the network between them, Gbps")
    p.add_argument("--inter-node-transport", choices=["RDMA", "TCP"],
                   help="a run across nodes: how NCCL crossed the network (TCP: Ethernet only, no "
                        "InfiniBand, RoCE or EFA; default RDMA)")
    p.add_argument("--source", default="harness", help="source label stored with the run")
    p.add_argument("--format", choices=["csv", "json"], help="default: from --out's extension, else csv")
    p.add_argument("--out", help="append the run to this file (default: print it)")
    a = p.parse_args(argv)
    if a.batch_size < 1 or a.steps < 1 or a.warmup < 0 or a.grad_accum_steps < 1:
        fail("--batch-size, --grad-accum-steps and --steps must be at least 1, --warmup at least 0")
    if a.gpus < 1:
        fail(f"--gpus must be at least 1 (got {a.gpus})")
    launched = launcher_group()
    if launched and a.gpus != 1:
        fail("--gpus: under torchrun the launcher starts one process per GPU; leave --gpus out")
    if (launched or a.gpus > 1) and a.device not in ("auto", "cuda", "cpu"):
        fail(f"--device {a.device}: with several processes each trains on cuda:LOCAL_RANK; give cuda, cpu or auto")
    world = launched["world"] if launched else a.gpus
    local_world = launched["local_world"] if launched else a.gpus
    if a.tensor_parallel < 1:
        fail(f"--tensor-parallel must be at least 1 (got {a.tensor_parallel})")
    if a.tensor_parallel > 1 and local_world % a.tensor_parallel:
        fail(f"--tensor-parallel {a.tensor_parallel}: its groups are GPUs of one machine, and "
             f"{local_world} process{'es' if local_world > 1 else ''} per machine do not split into groups of {a.tensor_parallel} "
             "(give --gpus N, or torchrun --nproc-per-node N, a multiple of it)")
    if a.pipeline_parallel < 1:
        fail(f"--pipeline-parallel must be at least 1 (got {a.pipeline_parallel})")
    if a.virtual_pipeline_stages < 1:
        fail(f"--virtual-pipeline-stages must be at least 1 (got {a.virtual_pipeline_stages})")
    if a.virtual_pipeline_stages > 1 and a.pipeline_parallel == 1:
        fail(f"--virtual-pipeline-stages {a.virtual_pipeline_stages}: model chunks of a pipeline's stages need "
             "--pipeline-parallel > 1")
    if a.virtual_pipeline_stages > 1 and a.grad_accum_steps % a.pipeline_parallel:
        fail(f"--virtual-pipeline-stages: the interleaved schedule runs micro-batches in groups of the "
             f"{a.pipeline_parallel} stages; give --grad-accum-steps a multiple of {a.pipeline_parallel} "
             f"(got {a.grad_accum_steps})")
    if a.context_parallel < 1:
        fail(f"--context-parallel must be at least 1 (got {a.context_parallel})")
    model_parallel = a.tensor_parallel * a.pipeline_parallel
    if a.pipeline_parallel > 1 and world % model_parallel:
        fail(f"--pipeline-parallel {a.pipeline_parallel}: {world} process{'es' if world > 1 else ''} do not split "
             f"into whole pipelines of {model_parallel} (--tensor-parallel x --pipeline-parallel)")
    if a.context_parallel > 1 and world % (model_parallel * a.context_parallel):
        fail(f"--context-parallel {a.context_parallel}: {world} process{'es' if world > 1 else ''} do not split "
             f"into whole replicas of {model_parallel * a.context_parallel} (--tensor-parallel x --pipeline-parallel "
             "x --context-parallel)")
    if a.expert_parallel < 1:
        fail(f"--expert-parallel must be at least 1 (got {a.expert_parallel})")
    if a.expert_parallel > 1 and (world // a.pipeline_parallel) % a.expert_parallel:
        fail(f"--expert-parallel {a.expert_parallel}: its groups are processes of a pipeline stage, and the "
             f"{world // a.pipeline_parallel} of a stage do not split into groups of {a.expert_parallel}")
    for flag, size in (("--tensor-parallel", a.tensor_parallel), ("--pipeline-parallel", a.pipeline_parallel),
                       ("--context-parallel", a.context_parallel), ("--expert-parallel", a.expert_parallel)):
        if size > 1 and (a.hf_config or a.builder in ("torchvision", "transformers")):
            # Checked here, before any process starts: each would fail alike.
            fail(f"{flag}: the harness splits the layer replay of a zoo model (written by "
                 "`trainplan harness --model ID`), not a Hugging Face or torchvision build")
        if size > 1 and a.zero_stage == 2 and flag == "--pipeline-parallel":
            fail(f"--zero-stage 2 with {flag}: no framework shards a pipeline's gradients per micro-batch "
                 "(DeepSpeed refuses ZeRO-2 under a pipeline); FSDP under one, as torchtitan runs it, is "
                 "--zero-stage 3")
    if a.zero_stage and world // model_parallel < 2:
        fail(f"--zero-stage {a.zero_stage} shards over data-parallel processes: give --gpus N (N > 1"
             f"{', N / (--tensor-parallel x --pipeline-parallel) > 1' if model_parallel > 1 else ''}) or run under torchrun")
    check_replay(a)
    if a.zero_stage >= 2 and a.precision == "FP8":
        fail(f"--zero-stage {a.zero_stage}: FP8 (Transformer Engine) under FullyShardedDataParallel is not run here")
    if a.zero_stage >= 2:
        # Checked here, before any process starts: each would fail alike.
        try:
            import torch.distributed.fsdp  # noqa: F401, PLC0415
        except ImportError:
            fail(NO_TORCH)
        except Exception as e:  # noqa: BLE001 (Debian's PyTorch 1.13 raises ValueError on Python 3.11)
            fail(f"--zero-stage {a.zero_stage} needs FullyShardedDataParallel, which this PyTorch cannot import "
                 f"(PyTorch 2 can): {type(e).__name__}: {e}")
        if a.pipeline_parallel > 1:
            try:
                from torch.distributed.fsdp import fully_shard  # noqa: F401, PLC0415
            except ImportError:
                import torch  # noqa: PLC0415
                fail(f"--zero-stage 3 with --pipeline-parallel runs FSDP2 (fully_shard), as torchtitan does: "
                     f"PyTorch 2.6 or later (this is {torch.__version__})")
    if a.attention == "fused":
        try:
            import torch  # noqa: PLC0415
        except ImportError:
            fail(NO_TORCH)
        if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
            fail(f"--attention fused runs scaled_dot_product_attention: PyTorch 2.0 or later (this is {torch.__version__})")
    nodes = launched["world"] // launched["local_world"] if launched else 1
    if nodes > 1 and a.inter_node_gbps is None:
        fail(f"--inter-node-gbps: this run spans {nodes} nodes; give the network between them (Gbps), "
             "which the run's step time depends on")
    if nodes == 1 and (a.inter_node_gbps is not None or a.inter_node_transport):
        fail("--inter-node-gbps and --inter-node-transport describe a run across nodes (torchrun --nnodes > 1); "
             "this one runs on one machine")
    if a.inter_node_gbps is not None and not (a.inter_node_gbps > 0 and math.isfinite(a.inter_node_gbps)):
        fail(f"--inter-node-gbps must be a positive number (got {a.inter_node_gbps})")
    return a


def launcher_group():
    """The process group torchrun describes in the environment, or None when not launched by it."""
    env = os.environ
    # One process (torchrun --nproc-per-node 1 on one node) is a run on one GPU, as without torchrun.
    if "WORLD_SIZE" not in env or "LOCAL_RANK" not in env or int(env["WORLD_SIZE"]) == 1:
        return None
    world, local_world = int(env["WORLD_SIZE"]), int(env.get("LOCAL_WORLD_SIZE", env["WORLD_SIZE"]))
    if local_world < 1 or world % local_world:
        fail(f"torchrun: WORLD_SIZE {world} is not a whole number of nodes of LOCAL_WORLD_SIZE {local_world}")
    return {"rank": int(env["RANK"]), "local_rank": int(env["LOCAL_RANK"]), "world": world,
            "local_world": local_world, "init": "env://"}


# ---- the workload -------------------------------------------------------------------------------

def pair(v):
    return tuple(v) if isinstance(v, list) else (v, v)


def layer_module(torch, nn, layer):
    """One layer of trainplan's vocabulary as a module plus a maker of its per-sample input."""
    t = layer["type"]
    if t == "conv2d":
        m = nn.Conv2d(layer["inC"], layer["outC"], pair(layer["kernel"]), stride=layer.get("stride", 1),
                      padding=pair(layer.get("padding", 0)), groups=layer.get("groups", 1), bias=layer.get("bias", False))
        return m, ("float", (layer["inC"], layer["inH"], layer["inW"]))
    if t == "conv1d":
        m = nn.Conv1d(layer["inC"], layer["outC"], layer["kernel"], stride=layer.get("stride", 1),
                      padding=layer.get("padding", 0), dilation=layer.get("dilation", 1),
                      groups=layer.get("groups", 1), bias=layer.get("bias", False))
        return m, ("float", (layer["inC"], layer["inL"]))
    if t == "linear" and layer.get("experts", 1) > 1:
        # A mixture-of-experts layer as the predictor costs it: E weight copies, the routed tokens
        # (tokens = sequence x top-k) split evenly among them, one batched GEMM over the experts.
        # One nn.Linear over all routed tokens would time a single dense GEMM with one copy.
        experts, fin, fout = layer["experts"], layer["inFeatures"], layer["outFeatures"]
        per = max(1, round(layer.get("tokens", 1) / experts))
        bias = layer.get("bias", True)

        class Experts(nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = nn.Parameter(torch.randn(experts, fin, fout) * fin ** -0.5)
                self.bias = nn.Parameter(torch.zeros(experts, 1, fout)) if bias else None

            def forward(self, x):
                b = x.shape[0]
                h = x.reshape(b, experts, per, fin).transpose(0, 1).reshape(experts, b * per, fin)
                y = torch.bmm(h, self.weight)
                return y + self.bias if self.bias is not None else y
        return Experts(), ("float", (experts * per, fin))
    if t == "linear":
        m = nn.Linear(layer["inFeatures"], layer["outFeatures"], bias=layer.get("bias", True))
        return m, ("float", (layer.get("tokens", 1), layer["inFeatures"]))
    if t == "matmul":
        b, mm, n, k = layer.get("batches", 1), layer["m"], layer["n"], layer["k"]

        class MatMul(nn.Module):
            def forward(self, x):
                return torch.bmm(x[:, : b * mm * k].reshape(-1, mm, k), x[:, b * mm * k:].reshape(-1, k, n))
        return MatMul(), ("float", (b * mm * k + b * k * n,))
    if t == "embedding":
        return nn.Embedding(max(layer["vocab"], 1), layer["dim"]), ("index", (layer["tokens"],), max(layer["vocab"], 1))
    if t == "norm":
        c, e, kind = layer["channels"], layer["elements"], layer["kind"]
        per = max(e // c, 1)
        if kind == "batchnorm":
            return nn.BatchNorm1d(c), ("float", (c, per))
        if kind == "groupnorm":
            return nn.GroupNorm(math.gcd(32, c), c), ("float", (c, per))
        if kind == "rmsnorm":
            class RMSNorm(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.weight = nn.Parameter(torch.ones(c))

                def forward(self, x):
                    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * self.weight
            return RMSNorm(), ("float", (per, c))
        return nn.LayerNorm(c), ("float", (per, c))
    if t == "activation":
        class NewGELU(nn.Module):
            # gelu_new: the tanh approximation written out as separate ops, as Hugging Face's GPT-2
            # runs it (and trainplan costs it: several kernels, not one).
            def forward(self, x):
                return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
        fn = {"relu": nn.ReLU, "gelu": nn.GELU, "gelu_new": NewGELU, "silu": nn.SiLU, "swish": nn.SiLU,
              "sigmoid": nn.Sigmoid, "tanh": nn.Tanh}
        if layer["kind"] not in fn:
            fail(f"activation {layer['kind']!r} is not one the harness knows")
        return fn[layer["kind"]](), ("float", (layer["elements"],))
    if t == "elementwise":
        kind, e = layer["kind"], layer["elements"]
        if kind == "dropout":
            return nn.Dropout(0.1), ("float", (e,))

        class Elementwise(nn.Module):
            def forward(self, x):
                if kind == "scale":
                    return x * 0.5
                a, b = x[:, :e], x[:, e:]
                return a + b if kind == "add" else a * b
        return Elementwise(), ("float", (e if kind == "scale" else 2 * e,))
    if t == "softmax":
        return nn.Softmax(dim=-1), ("float", (layer["elements"],))
    if t == "pool":
        c, h, w = layer["channels"], layer["inH"], layer["inW"]
        if layer["kind"] == "global_avg":
            return nn.AdaptiveAvgPool2d(1), ("float", (c, h, w))
        cls = nn.MaxPool2d if layer["kind"] == "max" else nn.AvgPool2d
        return cls(layer["kernel"], layer["stride"], layer.get("padding", 0)), ("float", (c, h, w))
    if t == "rnn":
        cls = nn.LSTM if layer["cell"] == "lstm" else nn.GRU
        m = cls(layer["inputSize"], layer["hiddenSize"], batch_first=True, bidirectional=layer.get("bidirectional", False))

        class Rnn(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = m

            def forward(self, x):
                return self.rnn(x)[0]
        return Rnn(), ("float", (layer["steps"], layer["inputSize"]))
    if t == "loss":
        class Loss(nn.Module):
            def forward(self, x):
                return torch.logsumexp(x.float(), dim=-1)
        return Loss(), ("float", (layer["elements"],))
    fail(f"layer type {t!r} is not one the harness knows")


def tied_linear(torch, nn, linear, tables, index):
    """A tied output head as trainplan counts it: no weight of its own, its rows those of an
    embedding table before it of the same width (GPT-2's head is its token table; Transformer-XL's
    adaptive-softmax clusters are slices of one table), trained once through both; its bias its own."""
    rows, width = linear.weight.shape
    table = next((e for e in tables if e.weight.shape[1] == width and e.weight.shape[0] >= rows), None)
    if table is None:
        fail(f"layer {index}: a tied linear ({width} -> {rows}) with no embedding table of its width "
             "and at least its rows before it")
    if table.weight.shape[0] == rows:
        # The whole table: one parameter in two modules (FullyShardedDataParallel shards it so too).
        linear.weight = table.weight
        return linear

    class TiedSlice(nn.Module):
        def __init__(self):
            super().__init__()
            self.table = [table]  # a list: the table's weight is registered where the table is
            self.bias = linear.bias

        def forward(self, x):
            return torch.nn.functional.linear(x, self.table[0].weight[:rows], self.bias)
    return TiedSlice()


def tensor_parallel_share(layer, size, row):
    """A layer entry as one of `size` tensor-parallel ranks runs it: the dimension the predictor's
    split divides (its FLOPs, bytes and weights by `size`), rounded up where it does not divide."""
    share = dict(layer)

    def cut(key):
        share[key] = max(1, -(-layer[key] // size))
    t = layer["type"]
    if t == "linear" and layer.get("experts", 1) > 1:
        share["tokens"] = layer.get("tokens", 1) / size  # each rank routes its share of the tokens
    elif t == "linear":
        cut("inFeatures" if row else "outFeatures")
    elif t == "matmul":
        cut("batches" if layer.get("batches", 1) % size == 0 else "m")
    elif t == "embedding":
        cut("vocab")  # vocabulary-parallel: each rank holds its rows of the table
    elif t in ("norm", "activation", "elementwise", "softmax", "loss"):
        # Per-token work (Megatron's sequence parallelism), or the heads' / vocabulary's share.
        cut("elements")
        if t == "norm":
            share["elements"] = max(share["elements"], layer["channels"])
    return share


def context_parallel_share(layer, size):
    """A layer entry as one of `size` context-parallel ranks runs it: its 1/size of every sequence's
    tokens (rounded up where it does not divide), the attention's queries against all the keys (the
    keys and values come round the ring): 1/size of the work, as the predictor costs it."""
    share = dict(layer)

    def cut(key):
        share[key] = max(1, -(-layer[key] // size))
    t = layer["type"]
    if t == "linear" and layer.get("experts", 1) > 1:
        share["tokens"] = layer.get("tokens", 1) / size
    elif t in ("linear", "embedding"):
        cut("tokens")
    elif t == "matmul":
        cut("m")
    elif t in ("norm", "activation", "elementwise", "softmax", "loss"):
        cut("elements")
        if t == "norm":
            share["elements"] = max(share["elements"], layer["channels"])
    return share


def stage_count(layer, i, stage):
    """How many instances of layer entry `i` pipeline stage `stage` ({"index", "stages", "blocks"}:
    the entries in transformer blocks, one contiguous run) replays, as Megatron splits a model: the
    blocks evenly (the earlier stages one fewer where they do not divide), the layers before them
    (embeddings) on the first stage, those after them (final norm, head, loss) on the last."""
    count = layer.get("count", 1)
    if not stage:
        return count
    k, stages, blocks = stage["index"], stage["stages"], stage["blocks"]
    if blocks[i]:
        return count * (k + 1) // stages - count * k // stages
    before = i < blocks.index(True)
    return count if k == (0 if before else stages - 1) else 0


def expert_exchanges(layers):
    """Per layer entry, the all-to-all expert parallelism puts there: "dispatch" before the first
    expert layer after a router (the routed tokens to their experts' GPUs), "combine" after the last
    one before the next router or the end (their outputs back); None elsewhere."""
    marks = [None] * len(layers)
    routers = [i for i, l in enumerate(layers) if l.get("router")] + [len(layers)]
    for start, end in zip(routers, routers[1:]):
        experts = [i for i in range(start + 1, end) if layers[i].get("experts", 1) > 1]
        if experts:
            marks[experts[0]] = "dispatch"
            marks[experts[-1]] = "combine" if len(experts) > 1 else "both"
    return marks


def on_wire(dist, group, x):
    """`x` as a collective over `group` can carry it: gloo (CPU) has no bfloat16 reductions or
    all-to-alls, so there it goes as float32; NCCL carries it as it is."""
    if str(x.dtype) == "torch.bfloat16" and dist.get_backend(group) == "gloo":
        return x.float()
    return x


def fused_attention_module(torch, nn, scores, context, dropout):
    """An attention core (scores matmul through context matmul) as one call of PyTorch's
    scaled_dot_product_attention, as predictor/step.ts costs a fused core: heads x queries x keys
    scores that never reach memory. Q and K of the scores' width, V of the context's, per sample."""
    heads, queries, keys, width = scores.get("batches", 1), scores["m"], scores["n"], scores["k"]
    vwidth = context["n"]
    # is_causal aligns its mask top-left, so only where every query has its own key (not a context-
    # parallel rank's share of the queries against all the keys, which its FLOPs count whole).
    causal = bool(scores.get("causal")) and queries == keys
    sizes = (heads * queries * width, heads * keys * width, heads * keys * vwidth)

    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)

    class FusedAttention(nn.Module):
        def forward(self, x):
            b = x.shape[0]
            q, k, v = torch.split(x, sizes, dim=1)
            q, k = q.reshape(b, heads, queries, width), k.reshape(b, heads, keys, width)
            v = v.reshape(b, heads, keys, vwidth)
            p = 0.1 if dropout and self.training else 0.0
            if sdpa is not None:
                return sdpa(q, k, v, dropout_p=p, is_causal=causal)
            # PyTorch before 2.0 has no fused kernel: the same arithmetic op by op (attention_note says so).
            a = torch.matmul(q, k.transpose(-2, -1)) * width ** -0.5
            if causal:
                a = a.masked_fill(torch.ones(queries, keys, dtype=torch.bool, device=a.device).triu(1), float("-inf"))
            return torch.matmul(torch.nn.functional.dropout(a.softmax(-1), p), v)
    return FusedAttention(), ("float", (sum(sizes),))


def attention_ran(torch, fused):
    """How a run's attention cores ran, as its `attention` column says it: FUSED where they were
    asked to run fused and PyTorch has scaled_dot_product_attention, EAGER otherwise."""
    return "FUSED" if fused and hasattr(torch.nn.functional, "scaled_dot_product_attention") else "EAGER"


def attention_note(torch, fused):
    """What a run's note says when its attention cores could not run fused, or None."""
    if fused and any(fused) and not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        return (f"attention cores run op by op: PyTorch {torch.__version__} has no scaled_dot_product_attention "
                "(2.0 and later), so they are slower than trainplan's fused estimate")
    return None


def layer_replay(torch, nn, layers, rerun=None, tp=None, stage=None, ep=None, cp=None, fused=None):
    """Every layer instance as its own op on its own input: the predictor's view of the model, run.
    `rerun`: per layer entry, whether recomputation reruns it (checkpointed: its forward runs again
    in backward, and only its input is kept). `tp`: the embedded marks (per layer entry, `split` and
    `row`), the group's `size`, `group` and `dist`: each rank replays its share of the split layers,
    and a row-parallel linear's output is all-reduced over the group in forward and its gradient in
    backward (a checkpointed one's forward all-reduce runs again with its rerun). `stage`: this
    rank's pipeline stage (stage_count): only its layers are replayed. `ep`: the expert-parallel
    group's `size`, `group` and `dist`: each rank holds 1/size of every expert layer's experts and
    runs the tokens routed to them from the whole group (as many as all experts' share of its own,
    routing being even), after an all-to-all that sends its routed tokens to their experts' ranks
    and before one that brings the outputs back (expert_exchanges), each again in backward. `cp`:
    the context-parallel group's `size`, `group` and `dist`, the embedded `ring` marks and `chunk`
    (a rank's K and V per sample): each rank replays its 1/size of every sequence, and at each
    attention core K and V go round the ring (size - 1 steps), in flight while the core's first
    layer computes, as ring attention overlaps them; twice in backward (K and V again, then their
    gradients), and again when recomputation reruns the core. `fused`: per layer entry, whether it
    is in an attention core the replay runs as one scaled_dot_product_attention call (its first entry,
    the scores matmul, stands for the core: its marks and counts hold for it; the others add nothing)."""
    from torch.utils.checkpoint import checkpoint  # noqa: PLC0415
    modules, inputs, checkpointed = nn.ModuleList(), [], []
    copies = 0  # weights of tied heads this stage holds a copy of (their table is on another stage)
    exchanges = expert_exchanges(layers) if ep else [None] * len(layers)
    if ep:
        class AllToAll(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return exchange(x)

            @staticmethod
            def backward(ctx, g):
                return exchange(g)

        def exchange(x):
            # Equal shares to every rank of the group (what the data are does not change the time);
            # a remainder of the flattened tensor that does not split evenly stays.
            flat = on_wire(ep["dist"], ep["group"], x.detach().reshape(-1))
            n = flat.numel() - flat.numel() % ep["size"]
            out = flat.clone()
            ep["dist"].all_to_all_single(out[:n], flat[:n].contiguous(), group=ep["group"])
            return out.to(x.dtype).view_as(x)

        class Exchanged(nn.Module):
            def __init__(self, op, mark, layer):
                super().__init__()
                self.op, self.mark = op, mark
                tokens = layer.get("tokens", 1)
                # Per sample, what each of its all-to-alls moves (forward; the same again backward).
                self.moves = [tokens * layer["inFeatures"]] * (mark in ("dispatch", "both")) + \
                    [tokens * layer["outFeatures"]] * (mark in ("combine", "both"))

            def forward(self, x):
                if self.mark in ("dispatch", "both"):
                    x = AllToAll.apply(x)
                y = self.op(x)
                return AllToAll.apply(y) if self.mark in ("combine", "both") else y
    if tp:
        dist, group = tp["dist"], tp["group"]

        class AllReduce(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = on_wire(dist, group, x).clone()
                dist.all_reduce(y, group=group)
                return y.to(x.dtype)

            @staticmethod
            def backward(ctx, g):
                y = on_wire(dist, group, g).clone()
                dist.all_reduce(y, group=group)
                return y.to(g.dtype)

        class RowParallel(nn.Module):
            def __init__(self, op, elements):
                super().__init__()
                self.op = op
                self.elements = elements  # per sample: what the all-reduce moves

            def forward(self, x):
                return AllReduce.apply(self.op(x))
    if cp:
        def ring(n, passes):
            """Post `passes` trips of n elements round the ring, each of size - 1 steps of a send to
            the next rank and a receive from the previous one, all at once (what they carry does not
            change the time; each link carries the ring's bytes); the handles, to wait on."""
            dist, ranks = cp["dist"], cp["ranks"]
            me = ranks.index(dist.get_rank())
            out = torch.zeros(n, device=cp["device"], dtype=cp["dtype"])
            back = torch.empty_like(out)
            return [h for _ in range(passes * (cp["size"] - 1)) for h in (
                dist.isend(out, dst=ranks[(me + 1) % len(ranks)], group=cp["group"]),
                dist.irecv(back, src=ranks[(me - 1) % len(ranks)], group=cp["group"]))]

        class RingStart(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, slot):
                ctx.slot = slot
                slot["forward"] = ring(x.shape[0] * cp["chunk"], 1)  # K and V round the ring
                return x.view_as(x)

            @staticmethod
            def backward(ctx, g):
                for h in ctx.slot.pop("backward"):
                    h.wait()
                return g, None

        class RingEnd(torch.autograd.Function):
            @staticmethod
            def forward(ctx, y, slot):
                ctx.slot = slot
                for h in slot.pop("forward"):
                    h.wait()
                return y.view_as(y)

            @staticmethod
            def backward(ctx, g):
                # K and V again, and their gradients, while the core's backward computes.
                ctx.slot["backward"] = ring(g.shape[0] * cp["chunk"], 2)
                return g, None

        class Ring(nn.Module):
            def __init__(self, op, elements):
                super().__init__()
                self.op = op
                self.elements = elements  # per sample, what each ring step moves

            def forward(self, x):
                slot = {}
                return RingEnd.apply(self.op(RingStart.apply(x, slot)), slot)
    tables = []  # embeddings, for a tied head to share its weight with

    def share(i):
        """Layer entry i as this rank runs it (its tensor- and context-parallel share)."""
        layer = layers[i]
        if tp and tp["split"][i]:
            layer = tensor_parallel_share(layer, tp["size"], bool(tp["row"][i]))
        return context_parallel_share(layer, cp["size"]) if cp else layer
    for i, layer in enumerate(layers):
        row = bool(tp and tp["row"][i])
        in_core = bool(fused and fused[i])
        if in_core and i > 0 and fused[i - 1]:
            continue  # replayed by the core's first entry
        layer = share(i)
        if ep and layer.get("experts", 1) > 1:
            # This rank's experts, each with the group's tokens routed to it: the same rows in all.
            layer = {**layer, "experts": layer["experts"] // ep["size"]}
        if in_core:
            end = i
            while end + 1 < len(layers) and fused[end + 1]:
                end += 1
            core = [layers[j] for j in range(i, end + 1)]
            dropout = any(x.get("kind") == "dropout" for x in core)
        for _ in range(stage_count(layer, i, stage)):
            if in_core:
                m, spec = fused_attention_module(torch, nn, layer, share(end), dropout)
            else:
                m, spec = layer_module(torch, nn, layer)
            if isinstance(m, nn.Embedding):
                tables.append(m)
            elif layer.get("tied") and stage and not tables:
                # The last stage keeps a copy of the first stage's table for its head, as Megatron
                # does (it also all-reduces the two copies' gradients, which is not replayed here).
                copies += m.weight.numel()
            elif layer.get("tied"):
                m = tied_linear(torch, nn, m, tables, i)
            if row:
                m = RowParallel(m, layer.get("tokens", 1) * layer["outFeatures"])
            if exchanges[i]:
                m = Exchanged(m, exchanges[i], layer)
            if cp and cp["ring"][i]:
                m = Ring(m, cp["chunk"])
            modules.append(m)
            inputs.append(spec)
            checkpointed.append(bool(rerun and rerun[i]))

    class Replay(nn.Module):
        def __init__(self):
            super().__init__()
            self.ops = modules
            self.tied_copies = copies

        def forward(self, xs):
            total = 0
            for op, x, again in zip(self.ops, xs, checkpointed):
                # Non-reentrant: a checkpointed op's weights get their gradients even where its
                # input needs none.
                y = checkpoint(op, x, use_reentrant=False) if again else op(x)
                total = total + y.float().mean()
            return total

    def batched(batch, shape):
        # A per-sample count can be an expected value (an adaptive softmax's tail cluster sees 4.8
        # of a sequence's tokens): whole only over the batch, so the batch's rows are one dimension.
        if float(shape[0]).is_integer():
            return (batch, *(int(d) for d in shape))
        return (1, max(1, round(batch * shape[0])), *(int(d) for d in shape[1:]))

    def make_batch(batch, device, dtype):
        xs = []
        for spec in inputs:
            if spec[0] == "index":
                xs.append(torch.randint(0, spec[2], batched(batch, spec[1]), device=device))
            else:
                xs.append(torch.randn(batched(batch, spec[1]), device=device, dtype=dtype, requires_grad=True))
        return xs

    return Replay(), make_batch, lambda model, batch: model(batch)


def torchvision_model(torch, name, image):
    import torchvision  # noqa: PLC0415 (optional dependency)
    kwargs = {"weights": None}
    if name == "inception_v3":
        kwargs["aux_logits"] = False
        kwargs["init_weights"] = False
    if name.startswith("vit_"):
        # Its position embeddings are sized for the image: the default (224) fails on any other.
        kwargs["image_size"] = image
    model = getattr(torchvision.models, name)(**kwargs)
    if name.startswith("vit_"):
        # Its encoder calls nn.MultiheadAttention with need_weights=False, which runs
        # scaled_dot_product_attention from PyTorch 2.0 on and op by op before.
        model.attention_ran = attention_ran(torch, True)

    def make_batch(batch, device, dtype):
        return (torch.randn(batch, 3, image, image, device=device, dtype=dtype), torch.randint(0, 1000, (batch,), device=device))

    def loss(model, b):
        return torch.nn.functional.cross_entropy(model(b[0]).float(), b[1])
    return model, make_batch, loss


# The model class per Hugging Face model_type, the head trainplan's config importer costs
# (predictor/import/huggingface.ts): decoders as causal LMs, T5 as encoder-decoder with the target as
# long as the input, ViT as an image classifier, BERT by its `architectures` entry (masked LM when
# there is none). test/harness-transformers.test.ts compares the weights and forward FLOPs of each
# against the importer's.
BERT_HEADS = [("QuestionAnswering", "AutoModelForQuestionAnswering"), ("PreTraining", "BertForPreTraining"),
              ("SequenceClassification", "AutoModelForSequenceClassification")]


def transformers_model(torch, config_path, seq_len, recompute="none", attention=None):
    """(model, make_batch, loss, length): length is the sequence length or image size it runs at.
    `attention` (fused or eager) asks transformers for that attention implementation (sdpa or eager);
    None keeps its default for the model type. The model says which ran (attention_ran)."""
    if recompute == "selective":
        fail("--recompute selective: a Hugging Face model checkpoints whole blocks only (full); selective "
             "needs a zoo model's layer replay (trainplan harness --model ID)")
    try:
        import transformers  # noqa: PLC0415 (optional dependency)
    except ImportError:
        fail("--hf-config needs Hugging Face transformers (pip install transformers)")
    config = transformers.AutoConfig.from_pretrained(config_path)
    kind = config.model_type
    impl = {"fused": "sdpa", "eager": "eager"}.get(attention)

    def build(cls):
        """`cls` built from the config, with the attention implementation asked for (if any)."""
        try:
            if hasattr(cls, "from_config"):
                return cls.from_config(config, **({"attn_implementation": impl} if impl else {}))
            if impl:
                config._attn_implementation = impl  # what from_config's argument sets
            return cls(config)
        except (ValueError, TypeError) as e:
            # ValueError: no such implementation for the type; TypeError: a transformers before 4.36,
            # which had none to choose.
            if impl:
                fail(f"--attention {attention}: transformers {transformers.__version__} does not run {kind} "
                     f"with attn_implementation=\"{impl}\": {e}")
            raise

    def ran(model):
        # transformers before 4.36 had no attention implementations: its models wrote the scores.
        return "EAGER" if getattr(model.config, "_attn_implementation", None) in (None, "eager") else "FUSED"
    if kind == "vit":
        image = seq_len or config.image_size
        model = build(transformers.AutoModelForImageClassification)
        model.attention_ran = ran(model)
        classes = config.num_labels

        def vit_batch(batch, device, dtype):
            return (torch.randn(batch, config.num_channels, image, image, device=device, dtype=dtype),
                    torch.randint(0, classes, (batch,), device=device))

        def vit_loss(model, b):
            # Another image size than the configured one interpolates the position table, as fine-tuning does.
            return model(pixel_values=b[0], labels=b[1], interpolate_pos_encoding=image != config.image_size).loss
        return model, vit_batch, vit_loss, image
    # Default 1024 tokens, or fewer where learned position tables end sooner (GPT-2, BERT, OPT).
    positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    seq = seq_len or min(1024, positions or 1024)
    vocab = config.vocab_size
    extra = {}
    if kind == "t5":
        if getattr(config, "decoder_start_token_id", None) is None:
            # Labels are shifted right behind this token; T5's own configs set it to the pad id, 0.
            config.decoder_start_token_id = config.pad_token_id or 0
        model = build(transformers.AutoModelForSeq2SeqLM)
    elif kind == "bert":
        arch = (config.architectures or [""])[0]
        name = next((cls for key, cls in BERT_HEADS if key in arch), "AutoModelForMaskedLM")
        model = build(getattr(transformers, name))
        extra = {"AutoModelForQuestionAnswering": ("start_positions", "end_positions"),
                 "BertForPreTraining": ("next_sentence_label",),
                 "AutoModelForSequenceClassification": ("labels",)}.get(name, ())
    else:
        model = build(transformers.AutoModelForCausalLM)
    model.attention_ran = ran(model)
    if recompute == "full":
        if not getattr(model, "supports_gradient_checkpointing", False):
            fail(f"--recompute full: transformers has no gradient checkpointing for {type(model).__name__}")
        # Training keeps no key/value cache: said here, transformers need not warn that it drops it.
        model.config.use_cache = False
        model.gradient_checkpointing_enable()

    def make_batch(batch, device, dtype):
        return torch.randint(0, vocab, (batch, seq), device=device)

    def loss(model, ids):
        if extra:
            # Heads whose targets are one class (or position) per sequence: class 0 for every sequence.
            zeros = torch.zeros(ids.shape[0], dtype=torch.long, device=ids.device)
            kwargs = {k: zeros for k in extra}
            if "next_sentence_label" in kwargs:
                kwargs["labels"] = ids
            return model(input_ids=ids, **kwargs).loss
        return model(input_ids=ids, labels=ids).loss
    return model, make_batch, loss, seq


def layer_spec(a):
    """The layer list the replay runs: the embedded zoo model, or --layers FILE; None when neither."""
    if not a.layers:
        return EMBEDDED_MODEL
    try:
        with open(a.layers) as f:
            spec = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"--layers {a.layers}: {e}")
    return {"layers": spec, "name": os.path.basename(a.layers)} if isinstance(spec, list) else spec


def sliced_heads(layers):
    """Whether a tied head reads a slice of its embedding table (an adaptive softmax's clusters),
    as tied_linear finds its table: the first embedding before it of its width with enough rows."""
    tables = []
    for layer in layers:
        if layer["type"] == "embedding":
            tables.append(layer)
        elif layer["type"] == "linear" and layer.get("tied"):
            table = next((e for e in tables if e["dim"] == layer["inFeatures"] and e["vocab"] >= layer["outFeatures"]), None)
            if table and table["vocab"] > layer["outFeatures"]:
                return True
    return False


def check_replay(a):
    """What only the layer list can say against the flags, said before any process starts: every
    process would fail alike, and one failing inside torch's spawn prints a traceback per process."""
    if a.hf_config or a.builder in ("torchvision", "transformers"):
        return
    spec = layer_spec(a)
    if not spec or "layers" not in spec:
        return  # build_workload says so
    model_id = a.model or a.layers or spec.get("id") or spec.get("name")
    if a.pipeline_parallel > 1:
        blocks, pipeline = (spec.get("recompute") or {}).get("full"), spec.get("pipeline")
        if blocks is None or pipeline is None:
            fail("--pipeline-parallel: the layer list does not mark its transformer blocks; "
                 "write the script with `trainplan harness --model ID` (a zoo model is marked)")
        stages, chunks = a.pipeline_parallel, a.virtual_pipeline_stages
        if pipeline["blocks"] < stages * chunks or not any(blocks):
            fail(f"--pipeline-parallel {stages}{f' x --virtual-pipeline-stages {chunks}' if chunks > 1 else ''}: "
                 f"{model_id} has {pipeline['blocks']} transformer block(s), and every model chunk needs at least one")
    if a.context_parallel > 1:
        ring = (spec.get("contextParallel") or {}).get("ring")
        if ring is None or spec.get("pipeline") is None:
            fail("--context-parallel: the layer list does not mark its attention cores; "
                 "write the script with `trainplan harness --model ID` (a zoo model is marked)")
        if not any(ring):
            fail(f"--context-parallel: {model_id} has no attention to split sequences over")
    if a.expert_parallel > 1:
        counts = sorted({layer["experts"] for layer in spec["layers"] if layer.get("experts", 1) > 1})
        if not counts or not any(layer.get("router") for layer in spec["layers"]):
            fail(f"--expert-parallel: {model_id} has no routed expert layers (not a mixture of experts)")
        if any(n % a.expert_parallel for n in counts):
            fail(f"--expert-parallel {a.expert_parallel}: must divide the experts of every expert layer "
                 f"({', '.join(str(n) for n in counts)})")
    if a.zero_stage >= 2 and sliced_heads(spec["layers"]):
        fail(f"--zero-stage {a.zero_stage}: {model_id}'s output head reads a slice of its embedding table "
             "(an adaptive softmax), which FullyShardedDataParallel's units do not share here")


def build_workload(torch, nn, a, tp=None, stage=None, ep=None, cp=None):
    """(model id, model, make_batch, loss_fn, builder name). `tp`: this process's tensor-parallel
    group ({"size", "group", "dist"}) when --tensor-parallel > 1; `stage`: its pipeline stage
    ({"index", "stages", "chunks"}) when --pipeline-parallel > 1: then the model is the stage's
    model chunks (`.chunks`), a batch one per chunk, and the loss function takes (chunk, its batch).
    `ep`: its expert-parallel group ({"size", "group", "dist"}) when --expert-parallel > 1; `cp`: its
    context-parallel ring ({"size", "group", "dist", "ranks"}) when --context-parallel > 1."""
    spec = layer_spec(a)
    # A layer-list file is the model: its path is what trainplan reads back (relative to the CSV).
    model_id = a.model or a.layers or (spec or {}).get("id") or (spec or {}).get("name")
    if a.hf_config and a.builder in ("auto", "transformers"):
        m, mb, lf, length = transformers_model(torch, a.hf_config, a.seq_len, a.recompute, a.attention)
        # The run says the length it ran at: trainplan's default for the config may be another.
        a.seq_len = length
        return a.hf_config, m, mb, lf, "transformers"
    if a.recompute != "none" and a.builder == "torchvision":
        fail("--recompute: torchvision's models are not checkpointed here; --builder auto replays the layer list")
    # Recomputation checkpoints the layers the zoo marks: the replay, not torchvision's build.
    # torchvision's ViT runs its attention fused (PyTorch 2): eager attention replays the layer list.
    eager_vit = a.attention == "eager" and TORCHVISION.get(model_id, "").startswith("vit_")
    if a.builder == "torchvision" and eager_vit:
        fail("--attention eager: torchvision's ViT runs scaled_dot_product_attention; --builder auto replays "
             "the layer list op by op")
    if a.builder in ("auto", "torchvision") and model_id in TORCHVISION and a.recompute == "none" and not tp \
            and not stage and not ep and not cp and not eager_vit:
        try:
            image = a.seq_len or (spec or {}).get("imageSize") or 224
            m, mb, lf = torchvision_model(torch, TORCHVISION[model_id], image)
            # The run says the size it ran at: a script embedded at another size than the zoo's
            # default would otherwise be read back at the default.
            a.seq_len = image
            return model_id, m, mb, lf, "torchvision"
        except ImportError:
            if a.builder == "torchvision":
                fail("torchvision is not installed")
    if a.builder == "torchvision":
        fail(f"torchvision does not build {model_id} as the zoo defines it (its builders: "
             f"{', '.join(sorted(TORCHVISION))}); --builder auto replays the layer list")
    if a.builder == "transformers":
        fail("--builder transformers needs --hf-config")
    if not spec or "layers" not in spec:
        fail("no layers: run `trainplan harness --model ID --out measure.py`, or pass --layers FILE.json")
    built_at = spec.get("seqLen") or spec.get("imageSize")
    if a.seq_len and a.seq_len != built_at:
        fail(f"the layer list was written for sequence length / image size {built_at}: "
             "write the script again with `trainplan harness --seq-len N`")
    # Attention cores as one fused kernel (scaled_dot_product_attention), as trainplan costs them by
    # default; a layer list without the marks (--layers) replays them op by op.
    fused = (spec.get("attention") or {}).get("fused")
    # The attention cores (what selective recomputation reruns), where the layer list marks them.
    cores = (spec.get("recompute") or {}).get("selective")
    if a.attention == "eager":
        fused = None
    elif a.attention == "fused":
        if cores is None:
            fail("--attention fused: the layer list does not mark its attention cores; "
                 "write the script with `trainplan harness --model ID` (a zoo model is marked)")
        fused = cores
    rerun = None
    if a.recompute != "none":
        rerun = (spec.get("recompute") or {}).get(a.recompute)
        if rerun is None:
            fail(f"--recompute {a.recompute}: the layer list does not mark the layers recomputation reruns; "
                 "write the script with `trainplan harness --model ID` (a zoo model is marked)")
        if not any(rerun):
            fail(f"--recompute {a.recompute}: {model_id} has no layers it reruns (no transformer blocks)")
    split = None
    if tp:
        split = spec.get("tensorParallel")
        if split is None:
            fail("--tensor-parallel: the layer list does not mark what tensor parallelism splits; "
                 "write the script with `trainplan harness --model ID` (a zoo model is marked)")
        if not any(split["row"]):
            fail(f"--tensor-parallel: {model_id} has no row-parallel linears (trainplan's predictor does not split it)")
        split = {**split, **tp}
    if cp:
        # (parse_args checked the marks) A rank's K and V of a sample: each the residual stream's
        # size (multi-head attention) over the ring and the tensor-parallel ranks.
        tensor = tp["size"] if tp else 1
        cp.update(ring=spec["contextParallel"]["ring"],
                  chunk=max(1, -(-2 * spec["pipeline"]["residualElements"] // (cp["size"] * tensor))))
    if stage:
        # (parse_args checked the marks and the blocks)
        blocks, pipeline = spec["recompute"]["full"], spec["pipeline"]
        stages, chunks = stage["stages"], stage["chunks"]
        # Model chunk c of stage k is the (c x P + k)-th of the P x V chunks the blocks are split into
        # (Megatron's interleaving: a stage's chunks are P apart); one chunk per stage without it.
        parts = [layer_replay(torch, nn, spec["layers"], rerun, split,
                              {"index": c * stages + stage["index"], "stages": stages * chunks, "blocks": blocks}, ep,
                              cp, fused)
                 for c in range(chunks)]

        class Chunks(nn.Module):
            def __init__(self):
                super().__init__()
                self.chunks = nn.ModuleList([part[0] for part in parts])
                self.tied_copies = sum(c.tied_copies for c in self.chunks)
                self.residual = pipeline["residualElements"]  # per sample, what crosses a stage boundary

        def mb(batch, device, dtype):  # a batch per chunk
            return [part[1](batch, device, dtype) for part in parts]

        def lf(model, chunk_batch):  # (chunk, its batch)
            return model.chunks[chunk_batch[0]](chunk_batch[1])
        m = Chunks()
    else:
        m, mb, lf = layer_replay(torch, nn, spec["layers"], rerun, split, ep=ep, cp=cp, fused=fused)
    # The length the layer list was written for is the one the run ran at (`trainplan harness --seq-len`).
    a.seq_len = a.seq_len or built_at
    m.attention_note = attention_note(torch, fused)
    # Unmarked, a layer list's products without weights (attention scores and context) run op by op.
    has_cores = any(cores) if cores is not None else any(layer["type"] == "matmul" for layer in spec["layers"])
    m.attention_ran = attention_ran(torch, fused and any(fused)) if has_cores else None
    return model_id, m, mb, lf, "layer-replay"


# ---- precision modes ------------------------------------------------------------------------------

class Trainer:
    """One optimizer step of `model` under a precision mode, as the frameworks run it."""

    def __init__(self, torch, model, loss_fn, precision, device, optimizer_kind, zero_stage=0, shard=None,
                 dp_group=None, pipe=None, experts=None, expert_group=None):
        """`shard(model, dtype)`: the model under FullyShardedDataParallel (ZeRO 2 and 3), computing in
        `dtype` over fp32 shards when given. `dp_group`: the data-parallel processes ZeRO stage 1
        shards over (default: all). `pipe`: this rank's pipeline stage and its neighbours (measure).
        `experts`: the ids of the expert weights, which ZeRO stage 1 shards over `expert_group`."""
        self.torch, self.loss_fn, self.precision, self.device = torch, loss_fn, precision, device
        self.pipe = pipe
        self.reductions, self.dist = [], None  # set by measure where it averages the gradients itself
        cuda = device.type == "cuda"
        torch.backends.cuda.matmul.allow_tf32 = precision == "TF32"
        torch.backends.cudnn.allow_tf32 = precision == "TF32"
        half = {"FP16": torch.float16, "FP16_PURE": torch.float16, "BF16": torch.bfloat16}.get(precision)
        self.autocast = {"AMP_FP16": torch.float16, "AMP_BF16": torch.bfloat16, "FP8": torch.bfloat16}.get(precision)
        if precision == "FP8":
            model = self.fp8_linears(model)
        model = model.to(device)
        # FP16 and BF16 keep fp32 master weights the optimizer updates (apex O2, Megatron bf16): under
        # FullyShardedDataParallel those are its fp32 shards, cast to the half type for compute.
        masters = precision in ("FP16", "BF16")
        if shard:
            # Under AMP, FSDP's mixed precision gathers 16-bit copies of the fp32 shards (torchtitan's
            # and accelerate's FSDP do), which autocast then uses as they are, and reduce-scatters the
            # gradients in fp32 (torchtitan's default): as trainplan costs it (precision.ts fsdpGatherType).
            self.model = shard(model.to(half) if half and not masters else model, half if masters else None) \
                if precision not in ("AMP_FP16", "AMP_BF16") else shard(model, self.autocast, torch.float32)
        else:
            self.model = model.to(half) if half else model
        self.input_dtype = half or torch.float32
        self.master = None
        params = [p for p in self.model.parameters() if p.requires_grad]
        if masters and not shard:
            self.master = [p.detach().float().clone().requires_grad_(True) for p in params]
            opt_params = self.master
        else:
            opt_params = params
        eps = 1e-4 if precision == "FP16_PURE" else 1e-8
        kind, settings = (torch.optim.SGD, {"lr": 1e-3, "momentum": 0.9}) if optimizer_kind == "sgd" else (
            torch.optim.AdamW, {"lr": 1e-4, "eps": eps})
        if zero_stage == 1:
            # Each process keeps and updates its share of the states, then broadcasts its weights:
            # the experts' over the ranks holding the same experts, the rest over the data-parallel
            # ones (Megatron's distributed optimizer with expert parallelism).
            from torch.distributed.optim import ZeroRedundancyOptimizer  # noqa: PLC0415
            held = [q for p, q in zip(params, opt_params) if id(p) in (experts or ())]
            dense = [q for p, q in zip(params, opt_params) if id(p) not in (experts or ())]
            self.opts = [ZeroRedundancyOptimizer(ps, optimizer_class=kind, process_group=g, **settings)
                         for ps, g in ((dense, dp_group), (held, expert_group)) if ps]
        else:
            self.opts = [kind(opt_params, **settings)]
        self.params = params
        self.sharded = shard is not None  # FullyShardedDataParallel (ZeRO 2 and 3)
        self.loss_scale = 1024.0 if precision in ("AMP_FP16", "FP16", "FP16_PURE") else None
        # torch.amp.GradScaler("cuda") since PyTorch 2.3 (torch.cuda.amp's is deprecated there);
        # Debian's 1.13 has only torch.cuda.amp's.
        scaler = torch.amp.GradScaler if hasattr(torch.amp, "GradScaler") else (lambda _: torch.cuda.amp.GradScaler())
        self.scaler = scaler("cuda") if precision == "AMP_FP16" and cuda else None
        if self.scaler and shard:
            # Gradients are sharded: the scaler must reduce its inf checks over the processes.
            from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler  # noqa: PLC0415
            self.scaler = ShardedGradScaler()
        self.cuda = cuda

    def fp8_linears(self, model):
        try:
            import transformer_engine.pytorch as te  # noqa: PLC0415
        except ImportError:
            fail("FP8 needs Transformer Engine (transformer_engine) installed: NVIDIA's, or on AMD GPUs its ROCm build (ROCm/TransformerEngine)")
        self.te = te
        nn = self.torch.nn
        for name, child in model.named_children():
            if isinstance(child, nn.Linear) and child.in_features % 16 == 0 and child.out_features % 16 == 0:
                setattr(model, name, te.Linear(child.in_features, child.out_features, bias=child.bias is not None))
            else:
                self.fp8_linears(child)
        return model

    def step(self, batch, accumulate=1):
        """One optimizer step over `accumulate` micro-batches, each `batch` (forward and backward each)."""
        for opt in self.opts:
            opt.zero_grad(set_to_none=True)
        if self.master:
            for p in self.params:
                p.grad = None
        if self.pipe:
            self.pipeline(batch, accumulate)
        else:
            for i in range(accumulate):
                # Under DistributedDataParallel the gradients are all-reduced once, with the last
                # micro-batch's backward, as accumulating code does (no_sync): not once per micro-batch.
                # Not under FullyShardedDataParallel (ZeRO 2 and 3): its no_sync would keep whole
                # gradients until the last micro-batch, undoing the sharding ZeRO 2 and 3 are for;
                # each micro-batch's backward reduce-scatters them, as DeepSpeed and torchtitan do.
                last = i == accumulate - 1
                quiet = self.model.no_sync() if not last and not self.sharded and hasattr(self.model, "no_sync") \
                    else contextlib.nullcontext()
                with quiet:
                    loss = self.forward(batch)
                    self.backward(loss / accumulate if accumulate > 1 else loss)
        self.reduce()
        self.update()

    def reduce(self):
        """Where DistributedDataParallel does not average the gradients (a pipeline, expert
        parallelism), each group of weights is averaged over the ranks that hold it, after the last
        micro-batch's backward as Megatron does: `reductions`, (weights, group, ranks)."""
        for params, group, ranks in self.reductions:
            grads = [p.grad for p in params if p.grad is not None]
            for dtype in sorted({g.dtype for g in grads}, key=str):
                same = [g for g in grads if g.dtype == dtype]
                flat = on_wire(self.dist, group, self.torch.cat([g.reshape(-1) for g in same]))
                self.dist.all_reduce(flat, group=group)
                flat /= ranks
                offset = 0
                for g in same:
                    g.copy_(flat[offset:offset + g.numel()].view_as(g))
                    offset += g.numel()

    def pipeline(self, batch, micro):
        """One step's micro-batches through this rank's pipeline stage, as Megatron schedules them.
        1F1B (PipeDream-Flush): stage k of P runs P - k - 1 forwards first, then a forward and a
        backward in turn, then the backwards left. Interleaved (V model chunks per stage, Narayanan
        et al. 2021): the micro-batches go through the chunks in groups of P (chunk 0 of each, then
        chunk 1, ...), backwards in the reverse chunk order, with 2 (P - k - 1) + (V - 1) P forwards
        first (all of them when there are only P micro-batches). A forward waits for the activations
        of the chunk before (the previous stage's, or the last stage's previous chunk) and sends its
        own on; a backward waits for the gradient of the chunk after and sends one back: the
        residual stream's size each way, what the predictor costs per boundary. Sends do not wait
        (the order alone cannot deadlock); receives do, which is the bubble. Then the gradients are
        averaged (reduce)."""
        pipe, dist = self.pipe, self.pipe["dist"]
        k, stages, chunks, group = pipe["stage"], pipe["stages"], pipe["chunks"], pipe["group"]
        total = micro * chunks
        if chunks == 1:
            warm = min(stages - k - 1, micro)
        elif micro == stages:
            warm = total
        else:
            warm = min(2 * (stages - k - 1) + (chunks - 1) * stages, total)
        sends, in_flight = [], [[] for _ in range(chunks)]

        def chunk_of(j, forward):
            c = j % (stages * chunks) // stages
            return c if forward else chunks - 1 - c

        def first(c):  # the model's first chunk: nothing comes before it
            return k == 0 and c == 0

        def last(c):  # the model's last chunk (head and loss): nothing comes after it
            return k == stages - 1 and c == chunks - 1

        def forward(j):
            c = chunk_of(j, True)
            if not first(c):
                dist.recv(pipe["inbox"], src=pipe["prev"], group=group)
            in_flight[c].append(self.forward((c, batch[c])))
            if not last(c):
                sends.append(dist.isend(pipe["outbox"], dst=pipe["next"], group=group))

        backwards = [0] * chunks

        def backward(j):
            c = chunk_of(j, False)
            if not last(c):
                dist.recv(pipe["inbox"], src=pipe["next"], group=group)
            loss = in_flight[c].pop(0)
            if pipe.get("sharded"):
                # ZeRO-3 under the pipeline (FSDP2): as torch.distributed.pipelining runs it, the
                # chunk's gradients stay whole and its weights gathered until its last micro-batch,
                # whose backward reduce-scatters them and reshards.
                backwards[c] += 1
                final = backwards[c] == micro
                part = self.model.chunks[c]
                part.set_is_last_backward(final)
                part.set_reshard_after_backward(final)
                part.set_requires_gradient_sync(final)
            self.backward(loss / micro if micro > 1 else loss)
            if not first(c):
                sends.append(dist.isend(pipe["outbox"], dst=pipe["prev"], group=group))
        for j in range(warm):
            forward(j)
        for i in range(total - warm):
            forward(warm + i)
            backward(i)
        for j in range(total - warm, total):
            backward(j)
        for s in sends:
            s.wait()

    def forward(self, batch):
        torch = self.torch
        if self.autocast is not None:
            with torch.autocast(device_type=self.device.type, dtype=self.autocast):
                if self.precision == "FP8":
                    with self.te.fp8_autocast(enabled=True):
                        return self.loss_fn(self.model, batch)
                return self.loss_fn(self.model, batch)
        return self.loss_fn(self.model, batch)

    def backward(self, loss):
        if self.scaler:
            self.scaler.scale(loss).backward()
        else:
            (loss * self.loss_scale if self.loss_scale else loss).backward()

    def update(self):
        torch = self.torch
        if self.scaler:
            for opt in self.opts:
                self.scaler.step(opt)
            self.scaler.update()
            return
        if self.master:
            # Half-precision gradients -> fp32 master gradients, unscaled, and the updated masters back.
            for p, m in zip(self.params, self.master):
                m.grad = None if p.grad is None else p.grad.float() / (self.loss_scale or 1.0)
            for opt in self.opts:
                opt.step()
            with torch.no_grad():
                for p, m in zip(self.params, self.master):
                    p.copy_(m)
        else:
            if self.loss_scale:
                for p in self.params:
                    if p.grad is not None:
                        p.grad.div_(self.loss_scale)
            for opt in self.opts:
                opt.step()


# ---- the run --------------------------------------------------------------------------------------

def environment(torch, device):
    env = {"torch": torch.__version__, "cuda": torch.version.cuda or "none", "python": platform.python_version()}
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        env["gpu_name"] = props.name
        env["gpu_memory_gb"] = round(props.total_memory / 2**30, 2)
        try:
            env["driver"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", f"--id={device.index or 0}"],
                capture_output=True, text=True, timeout=20).stdout.strip() or "unknown"
        except (OSError, subprocess.SubprocessError):
            env["driver"] = "unknown"
    else:
        env["gpu_name"] = "cpu"
        env["cpu"] = platform.processor() or platform.machine()
        env["threads"] = torch.get_num_threads()
    return env


def measure(a, group=None):
    """One run: its row (on the group's first process), or None on the other processes."""
    nodes = group["world"] // group["local_world"] if group else 1
    try:
        import torch  # noqa: PLC0415
        import torch.nn as nn  # noqa: PLC0415
    except ImportError:
        fail(NO_TORCH)
    if group and a.device != "cpu" and (a.device == "cuda" or torch.cuda.is_available()):
        if torch.cuda.device_count() < group["local_world"]:
            fail(f"{group['local_world']} processes per node, {torch.cuda.device_count()} GPUs visible")
        device = torch.device("cuda", group["local_rank"])
        torch.cuda.set_device(device)
    else:
        device = torch.device("cuda" if a.device == "auto" and torch.cuda.is_available() else
                              ("cpu" if a.device == "auto" else a.device))
    if device.type == "cpu" and a.precision in ("AMP_FP16", "FP16", "FP16_PURE", "FP8"):
        fail(f"{a.precision} needs a GPU (PyTorch's CPU kernels do not run fp16 training or fp8)")
    dist = None
    if group:
        import torch.distributed as dist  # noqa: PLC0415
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo", init_method=group["init"],
                                rank=group["rank"], world_size=group["world"])
    tp, dp_group, pipe, stage, ep, expert_dp_group, cp = None, None, None, None, None, None, None
    size, contexts, stages, experts = a.tensor_parallel, a.context_parallel, a.pipeline_parallel, a.expert_parallel
    data_parallel = group["world"] // (size * contexts * stages) if group else 1
    replicas = contexts * data_parallel  # ranks holding the same weights (ZeRO and averaging span them)
    span = size * replicas  # ranks per pipeline stage
    if dist and size * contexts * stages * experts > 1:
        # Megatron's order: rank = t + T x (c + C x (d + D x s)) for tensor-parallel rank t,
        # context-parallel rank c, data-parallel rank d and pipeline stage s. A tensor-parallel group
        # is consecutive ranks (GPUs of one machine, as parse_args checked), then the context ring,
        # data parallelism across those, the stages outermost (across machines first). Every
        # process creates every group, in the same order, as torch.distributed requires.
        rank = group["rank"]
        T, C, D, P = size, contexts, data_parallel, stages

        def rank_of(t, c, d, s):
            return t + T * (c + C * (d + D * s))
        groups = (
            ("tensor", [[rank_of(t, c, d, s) for t in range(T)]
                        for s in range(P) for d in range(D) for c in range(C)]),
            ("context", [[rank_of(t, c, d, s) for c in range(C)]
                         for s in range(P) for d in range(D) for t in range(T)] if C > 1 else []),
            # The weights' replicas: data- and context-parallel ranks (Megatron's group with CP).
            ("data", [[rank_of(t, c, d, s) for d in range(D) for c in range(C)]
                      for s in range(P) for t in range(T)]),
            ("pipeline", [[rank_of(t, c, d, s) for s in range(P)]
                          for d in range(D) for c in range(C) for t in range(T)]),
            # Expert parallelism: consecutive ranks of a stage (Megatron-Core's expert order, expert
            # TP 1), and the ranks holding the same experts, over which their gradients are averaged.
            ("expert", [[s * span + j * experts + i for i in range(experts)]
                        for s in range(P) for j in range(span // experts)] if experts > 1 else []),
            ("expert-data", [[s * span + j * experts + i for j in range(span // experts)]
                             for s in range(P) for i in range(experts)] if experts > 1 else []),
        )
        for kind, lists in groups:
            for members in lists:
                g = dist.new_group(members)
                if rank not in members:
                    continue
                if kind == "tensor" and size > 1:
                    tp = {"size": size, "group": g, "dist": dist}
                elif kind == "context":
                    cp = {"size": contexts, "group": g, "dist": dist, "ranks": members}
                elif kind == "data":
                    dp_group = g
                elif kind == "expert":
                    ep = {"size": experts, "group": g, "dist": dist}
                elif kind == "expert-data":
                    expert_dp_group = g
                elif kind == "pipeline" and stages > 1:
                    k = rank // span
                    # Interleaved, the first stage's later chunks follow the last stage's earlier ones.
                    pipe = {"stage": k, "stages": stages, "chunks": a.virtual_pipeline_stages, "group": g,
                            "dist": dist, "prev": members[(k - 1) % stages], "next": members[(k + 1) % stages]}
        if pipe:
            stage = {"index": pipe["stage"], "stages": stages, "chunks": pipe["chunks"]}
    torch.manual_seed(0)
    model_id, model, make_batch, loss_fn, builder = build_workload(torch, nn, a, tp, stage, ep, cp)
    attention_words = getattr(model, "attention_note", None)
    attention_kind = getattr(model, "attention_ran", None)  # (read before any wrapper hides it)
    optimizer = (EMBEDDED_MODEL or {}).get("optimizer", "adam") if builder == "layer-replay" else (
        "sgd" if builder == "torchvision" else "adam")
    # What was trained, counted before FullyShardedDataParallel flattens and shards the weights.
    trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
    shard, sharding = None, "ZeroRedundancyOptimizer"
    if a.zero_stage >= 2 and pipe:
        # ZeRO-3 under a pipeline, as torchtitan runs it (parse_args checked stage 3 and
        # fully_shard): FSDP2 on each model chunk, its own root, one unit per layer with weights
        # (each expert layer's experts over the ranks holding them), not resharded after forward,
        # so the stage's weights stay gathered from its first micro-batch to its last; under AMP
        # the gradients reduce in fp32 (torchtitan's mixed_precision_reduce default), under FP16
        # and BF16 in the half type, as the FSDP1 policy below does and trainplan costs. Trainer.pipeline
        # keeps them whole until each chunk's last backward, as torch.distributed.pipelining does.
        from torch.distributed.device_mesh import DeviceMesh  # noqa: PLC0415
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard  # noqa: PLC0415
        # FSDP2 warns of every unit whose output is a view, lest an in-place op on it skip the
        # gradient's all-gather: the replay reads each op's output once, out of place.
        warnings.filterwarnings("ignore", message="FSDP2-wrapped module .* returned a view tensor")
        meshes = {}
        pipe["sharded"] = True
        held_by = ", each expert layer's experts over the ranks holding them" if ep else ""
        sharding = (f"FSDP2 (fully_shard) per model chunk, one unit per layer with weights{held_by}, kept "
                    "gathered through the step and reduce-scattered at each chunk's last micro-batch "
                    "(torchtitan's FSDP under a pipeline)")

        def mesh(g):
            if g not in meshes:
                meshes[g] = DeviceMesh.from_group(g, device.type)
            return meshes[g]

        def shard(m, dtype, reduce_dtype=None):
            # (reduce_dtype None reduces in param_dtype, as FSDP1's policy below does without one.)
            policy = MixedPrecisionPolicy(param_dtype=dtype, reduce_dtype=reduce_dtype) if dtype else \
                MixedPrecisionPolicy()
            settings = dict(reshard_after_forward=False, mp_policy=policy)
            for part in m.chunks:
                for op in part.ops:
                    held = experts_of(op)
                    if held is not None:
                        fully_shard(held, mesh=mesh(expert_dp_group), **settings)
                    elif any(True for _ in op.parameters()):
                        fully_shard(op, mesh=mesh(dp_group), **settings)
                fully_shard(part, mesh=mesh(dp_group), **settings)
            return m
    elif a.zero_stage >= 2:
        # (parse_args checked that it imports)
        from torch.distributed.fsdp import FullyShardedDataParallel, MixedPrecision, ShardingStrategy  # noqa: PLC0415
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy  # noqa: PLC0415
        # One unit per transformer block (what Hugging Face says not to split) or replayed layer with weights.
        names = set(getattr(model, "_no_split_modules", None) or [])
        blocks = [m for m in model.modules() if type(m).__name__ in names] if names else \
            [m for m in getattr(model, "ops", []) if any(True for _ in m.parameters())]
        units = sorted({type(m) for m in blocks}, key=lambda c: c.__name__)
        strategy = "FULL_SHARD" if a.zero_stage == 3 else "SHARD_GRAD_OP"
        unit_names = sorted({c.__name__ for c in units})  # (a replayed RMSNorm is a class of its own per layer)
        sharding = f"{strategy}, " + (
            "one unit per layer with weights, each expert layer's experts over the ranks holding them" if ep else
            f"one unit per {', '.join(unit_names)}" if units else "the model one unit")

        def shard(m, dtype, reduce_dtype=None):
            mixed = None if not dtype else \
                MixedPrecision(param_dtype=dtype, reduce_dtype=reduce_dtype) if reduce_dtype else \
                MixedPrecision(param_dtype=dtype, reduce_dtype=dtype, buffer_dtype=dtype)
            settings = dict(sharding_strategy=getattr(ShardingStrategy, strategy), device_id=device,
                            mixed_precision=mixed)
            if ep:
                # The units wrapped by hand, as auto-wrapping cannot give them different groups: each
                # expert layer's experts sharded over the ranks that hold the same experts (Megatron's
                # expert data-parallel group), every other layer with weights over the data-parallel ones.
                for i, op in enumerate(m.ops):
                    held = experts_of(op)
                    if held is not None:
                        op.op = FullyShardedDataParallel(held, process_group=expert_dp_group, **settings)
                    elif any(True for _ in op.parameters()):
                        m.ops[i] = FullyShardedDataParallel(op, process_group=dp_group, **settings)
                return FullyShardedDataParallel(m, process_group=dp_group, **settings)
            # Over the data-parallel (and context-parallel) ranks: with tensor parallelism each
            # shards its tensor-parallel share of the weights (ZeRO across the groups).
            return FullyShardedDataParallel(
                m, process_group=dp_group, auto_wrap_policy=ModuleWrapPolicy(set(units)) if units else None,
                **settings)
    if pipe:
        # The pipeline's weights, one tensor-parallel rank's share of every stage (a tied head's copy
        # of the first stage's table counted once): what calibrate import checks the model by.
        held = torch.zeros(stages + 1, dtype=torch.float64, device=device)
        held[pipe["stage"]] = trained
        held[stages] = model.tied_copies
        dist.all_reduce(held, group=pipe["group"])
        *pipe["weights"], pipe["copies"] = [round(x) for x in held.tolist()]  # per stage, for the note
        trained = sum(pipe["weights"]) - pipe["copies"]
    # The expert weights (under expert parallelism): averaged and ZeRO-sharded over their own group.
    expert_params = {id(p) for m in model.modules() if is_kind(m, "Experts")
                     for p in m.parameters()} if ep else set()
    trainer = Trainer(torch, model, loss_fn, a.precision, device, optimizer, a.zero_stage, shard, dp_group, pipe,
                      expert_params, expert_dp_group)
    if cp:
        cp["device"], cp["dtype"] = device, trainer.autocast or trainer.input_dtype  # what goes round the ring
    if pipe:
        # The residual stream of a micro-batch, each tensor-parallel rank its 1/T (sequence
        # parallelism) of its 1/C of the sequence, in the activations' type: sent forward, and its
        # gradient backward.
        boundary = max(1, math.ceil(a.batch_size * model.residual / (size * contexts)))
        dtype = trainer.autocast or trainer.input_dtype
        pipe["inbox"] = torch.zeros(boundary, device=device, dtype=dtype)
        pipe["outbox"] = torch.randn(boundary, device=device, dtype=dtype)
        pipe["boundary"] = boundary
    batch = make_batch(a.batch_size, device, trainer.input_dtype)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    # Data parallel, the first warm-up step runs on the bare model (below) and the next is the first
    # under DistributedDataParallel, which rebuilds its gradient buckets then: at least two are run.
    # Tensor parallel alone (one group): no replica to average gradients with. A pipeline averages
    # its gradients itself (Trainer.pipeline), after the last micro-batch's backward.
    ddp = dist and a.zero_stage < 2 and replicas > 1 and not pipe and not ep
    if dist and (pipe or ep) and not shard:
        # Averaged by Trainer.reduce (FullyShardedDataParallel reduces its own): the weights every replica holds over the data-parallel group,
        # the experts over the ranks holding the same ones (a stage's ranks / expert parallelism).
        dense = [p for p in trainer.params if id(p) not in expert_params]
        held = [p for p in trainer.params if id(p) in expert_params]
        trainer.dist = dist
        trainer.reductions = [(params, g, n) for params, g, n in (
            (dense, dp_group, replicas), (held, expert_dp_group, span // experts)) if params and n > 1]
    warmed = max(a.warmup, 2) if ddp else a.warmup
    warmup = warmed
    if ddp:
        # One step on the bare model first (a warm-up step): the weights it leaves without a gradient
        # are ones the loss never reads, which DistributedDataParallel must be told to expect.
        trainer.step(batch, a.grad_accum_steps)
        warmup -= 1
        unused = any(p.grad is None for p in trainer.params)
        trainer.model = torch.nn.parallel.DistributedDataParallel(
            trainer.model, device_ids=[device.index] if device.type == "cuda" else None,
            find_unused_parameters=unused, process_group=dp_group)
    for _ in range(warmup):
        trainer.step(batch, a.grad_accum_steps)
    sync()
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    if dist:
        dist.barrier()
    times = []
    for _ in range(a.steps):
        start = time.perf_counter()
        trainer.step(batch, a.grad_accum_steps)
        sync()
        times.append((time.perf_counter() - start) * 1000)
    env = environment(torch, device)
    peak = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None
    processes = ""
    if dist:
        # Each step of a data-parallel run ends when its slowest process has its gradients: the
        # step time is, step by step, the slowest process's; the peak memory the fullest GPU's.
        gathered = torch.tensor(times + [peak or 0.0], dtype=torch.float64,
                                device=device if device.type == "cuda" else "cpu")
        dist.all_reduce(gathered, op=dist.ReduceOp.MAX)
        times, peak = gathered[:-1].tolist(), (gathered[-1].item() if peak is not None else None)
        # The row-parallel all-reduces of a tensor-parallel rank, over every stage of its pipeline.
        rows = [m for m in model.modules() if is_kind(m, "RowParallel")]
        moves = [x for m in model.modules() if is_kind(m, "Exchanged") for x in m.moves]
        rings = [m for m in model.modules() if is_kind(m, "Ring")]
        reduces = torch.tensor([len(rows), sum(m.elements for m in rows), len(moves), sum(moves), len(rings)],
                               dtype=torch.float64, device=device if device.type == "cuda" else "cpu")
        if pipe:
            dist.all_reduce(reduces, group=pipe["group"])
        reduces = [round(x) for x in reduces.tolist()]
        backend = dist.get_backend()
        dist.destroy_process_group()
        if group["rank"] != 0:
            return None
        wrapper = "DistributedDataParallel" if ddp else "FullyShardedDataParallel"
        layout = (f"{group['world']} processes ({group['local_world']} per node x "
                  f"{nodes} node{'s' if nodes > 1 else ''})")
        tp_words = f"{reduces[0]} row-parallel all-reduces per pass, {reduces[1]} elements per sample in all"
        ep_words = (f"expert parallel {experts}: {reduces[2]} all-to-alls per pass, {reduces[3]} elements per "
                    f"sample in all" + (f", the experts' gradients averaged over the {span // experts} ranks holding them"
                                        if span // experts > 1 else "")
                    if experts > 1 else "")
        ring_chunk = cp["chunk"] if cp else 0
        averaged = any(g is dp_group for _, g, _ in trainer.reductions)  # the dense weights, by Trainer.reduce
        cp_words = (f"K and V round the ring at {reduces[4]} attention cores per pass, {contexts - 1} "
                    f"step{'s' if contexts > 2 else ''} of {ring_chunk} elements per sample each, in flight while "
                    "the scores compute" if contexts > 1 else "")
        # The layout, outermost first, as plans write it (data parallel always named).
        splits = " x ".join([*([f"pipeline parallel {stages}"] if pipe else []),
                             *([f"tensor parallel {size}"] if size > 1 or pipe else []),
                             *([f"context parallel {contexts}"] if contexts > 1 else []),
                             f"data parallel {data_parallel}"])
        chunks = a.virtual_pipeline_stages
        schedule = f"interleaved 1F1B, {chunks} model chunks per stage," if chunks > 1 else "1F1B"
        boundaries = stages * chunks - 1
        crossings = (f"each of its {boundaries} {'chunk' if chunks > 1 else 'stage'} boundaries" if boundaries > 1
                     else "its stage boundary")
        copies = pipe["copies"] if pipe else 0
        copy_words = f" (the last with its copy of the tied embedding table, {copies})" if copies else ""
        if pipe:
            processes = ", ".join([
                f"{splits} over {layout}: "
                f"{schedule} over {a.grad_accum_steps} micro-batch{'es' if a.grad_accum_steps > 1 else ''}, "
                f"{pipe['boundary']} elements each way per micro-batch at {crossings}",
                f"weights per stage {' / '.join(str(w) for w in pipe['weights'])}{copy_words}",
                *([tp_words] if size > 1 else []),
                *([cp_words] if cp_words else []),
                *([ep_words] if ep_words else []),
                *(["gradients all-reduced across the replicas after the last micro-batch"] if averaged else []),
                f"on {backend}, each step the slowest process's",
            ])
        elif size > 1 or ep_words or cp_words:
            processes = ", ".join([
                f"{splits} over {layout}{f': {tp_words}' if size > 1 else ''}",
                *([cp_words] if cp_words else []),
                *([ep_words] if ep_words else []),
                *([f"{wrapper} across the groups"] if ddp else []),
                *(["gradients all-reduced across the replicas after the last micro-batch"] if averaged else []),
                f"on {backend}, each step the slowest process's",
            ])
        else:
            processes = (f"data parallel over {layout}, {wrapper} on {backend}, "
                         "each step the slowest process's")
    step_ms = statistics.median(times)
    note = "; ".join([
        f"median of {a.steps} steps after {warmed} warm-up (min {min(times):.3f} ms, max {max(times):.3f} ms)",
        *([f"each step {a.grad_accum_steps} micro-batches of {a.batch_size} accumulated"
           # (FullyShardedDataParallel outside a pipeline reduces every micro-batch's: Trainer.step)
           + (", each one's gradients reduce-scattered" if a.zero_stage >= 2 and a.pipeline_parallel == 1 else "")]
          if a.grad_accum_steps > 1 else []),
        *([processes] if processes else []),
        *([f"{a.recompute} recomputation"] if a.recompute != "none" else []),
        *([f"ZeRO stage {a.zero_stage}: {sharding}"
           + (", 16-bit copies of the fp32 shards gathered, gradients reduced in fp32 (mixed precision)"
              if a.zero_stage >= 2 and a.precision in ("AMP_FP16", "AMP_BF16") else
              f", {a.precision.lower()} copies of the fp32 master shards gathered, gradients reduced in "
              f"{a.precision.lower()}" if a.zero_stage >= 2 and a.precision in ("FP16", "BF16") else "")]
          if a.zero_stage else []),
        f"builder {builder}",
        *([attention_words] if attention_words else []),
        # What was trained, to check against the model the run is recorded for.
        f"parameters {trained}",
        *[f"{k} {v}" for k, v in env.items()],
    ])
    return {
        "model": model_id,
        "seq_len": a.seq_len or "",  # empty: the model's default
        "gpu": a.gpu or env["gpu_name"],
        # What CUDA gave this process (GiB): trainplan fits plans on this GPU in it.
        "gpu_memory_gb": env.get("gpu_memory_gb", ""),
        "nodes": nodes,
        "gpus_per_node": group["local_world"] if group else 1,
        "batch_size_per_gpu": a.batch_size,
        "grad_accum_steps": a.grad_accum_steps,
        "precision": a.precision,
        "framework": "PyTorch",
        "step_time_ms": round(step_ms, 4),
        "peak_memory_gb": "" if peak is None else round(peak, 4),
        "source": a.source,
        "note": note,
        "inter_node_gbps": a.inter_node_gbps if nodes > 1 else "",
        "inter_node_transport": (a.inter_node_transport or "RDMA") if nodes > 1 else "",
        "recompute": a.recompute if a.recompute != "none" else "",  # empty: none
        "zero_stage": a.zero_stage or "",  # empty: 0
        "tensor_parallel": a.tensor_parallel if a.tensor_parallel > 1 else "",  # empty: 1
        "pipeline_parallel": stages if stages > 1 else "",  # empty: 1
        "virtual_pipeline_stages": a.virtual_pipeline_stages if a.virtual_pipeline_stages > 1 else "",  # empty: 1
        "expert_parallel": experts if experts > 1 else "",  # empty: 1
        "context_parallel": contexts if contexts > 1 else "",  # empty: 1
        "attention": attention_kind or "",  # empty: no attention cores
    }


def spawned(index, a, init):
    """A process of `--gpus N` on this machine (torch.multiprocessing.spawn calls it)."""
    run = measure(a, {"rank": index, "local_rank": index, "world": a.gpus, "local_world": a.gpus, "init": init})
    if run:
        write(run, a)
    leave()


def leave():
    """End a process of a distributed run, its run written, without Python's teardown: PyTorch's
    distributed threads (the store's client, gloo's workers) could still be joinable when their
    objects are destroyed at exit, and the process then aborted ("terminate called without an
    active exception"), which failed the whole run although every step had been timed (seen on
    CPU, gloo, FullyShardedDataParallel, under load)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def free_port():
    import socket  # noqa: PLC0415
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write(run, a):
    fmt = a.format or ("json" if a.out and a.out.endswith(".json") else "csv")
    if fmt == "json":
        runs = []
        if a.out and os.path.exists(a.out):
            with open(a.out) as f:
                runs = json.load(f)
        runs.append(run)
        text = json.dumps(runs, indent=2) + "\n"
        if a.out:
            with open(a.out, "w") as f:
                f.write(text)
        else:
            sys.stdout.write(text)
        return
    exists = bool(a.out) and os.path.exists(a.out) and os.path.getsize(a.out) > 0
    columns = CSV_COLUMNS
    if exists:
        # Appending to a file an earlier harness wrote: its header decides the columns, so the
        # rows stay under their names. A value it has no column for (a column a later harness
        # added, such as `attention`) gets one: the file is rewritten with it, its earlier rows
        # empty there, which every reader takes as "not stated", as that harness left it.
        with open(a.out, newline="") as f:
            columns = next(csv.reader(f), CSV_COLUMNS)
        missing = [k for k, v in run.items() if v not in ("", None) and k not in columns]
        if missing:
            # Only then is the file read whole (an append reads its header alone).
            with open(a.out, newline="") as f:
                rows = list(csv.reader(f))[1:]
            columns = [*columns, *missing]
            partial = a.out + ".partial"
            with open(partial, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(columns)
                w.writerows([*r, *([""] * len(missing))] for r in rows)
            os.replace(partial, a.out)  # the old file stays whole until the new one is
            print(f"{a.out}: added the column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                  "(an earlier harness wrote the file; its rows leave them empty)", file=sys.stderr)
    f = open(a.out, "a", newline="") if a.out else sys.stdout
    w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
    if not exists:
        w.writeheader()
    w.writerow(run)
    if a.out:
        f.close()


if __name__ == "__main__":
    args = parse_args(sys.argv[1:])
    launched = launcher_group()
    if launched:
        run = measure(args, launched)
        if run:
            write(run, args)
        leave()
    elif args.gpus > 1:
        try:
            import torch.multiprocessing as mp  # noqa: PLC0415
        except ImportError:
            fail(NO_TORCH)
        mp.spawn(spawned, args=(args, f"tcp://127.0.0.1:{free_port()}"), nprocs=args.gpus, join=True)
    else:
        write(measure(args), args)
