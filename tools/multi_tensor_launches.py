#!/usr/bin/env python3
"""Kernel launches of one multi_tensor_apply call (fused Adam, multi_tensor_l2norm, multi_tensor_scale,
torch._foreach_* and fused torch.optim.Adam), for the optimizer part of the host model in docs/host-model.md.

Analysis helper; not part of the build; Python stdlib only.

The launch rule is the one of PyTorch's aten/src/ATen/native/cuda/MultiTensorApply.cuh (multi_tensor_apply, same
in apex csrc/multi_tensor_apply.cuh and Transformer Engine's copy of it): walk the tensors in order, split each into
chunks of CHUNK elements (65,536 = 2048 * 32: kChunkSize in PyTorch, MultiTensorApply(2048 * 32) in apex, DeepSpeed
and TE), one CUDA block per chunk; launch a kernel whenever the block list is full (depth_to_max_blocks = 320) or the
tensor list is full (depth_to_max_tensors[depth-1] = 110, 64, 48, 36, 30) at the last chunk of a tensor; launch the
remainder at the end. Empty tensors are skipped. With PyTorch's 32 KB kernel-argument path (CUDA >= 12.1 on Volta+ in
recent PyTorch: DepthToMaxConfig<true>) the limits are 770/448/336/252/210 tensors and 2,240 blocks.

Usage: python3 tools/multi_tensor_launches.py            # prints the table used in docs/host-model.md
"""
import math
import sys

CHUNK = 65536
MAX_TENSORS = {False: [110, 64, 48, 36, 30], True: [770, 448, 336, 252, 210]}
MAX_BLOCKS = {False: 320, True: 2240}


def launches(sizes, depth, large_args=False):
    """Kernel launches of one multi_tensor_apply over tensors of the given element counts."""
    max_t, max_b = MAX_TENSORS[large_args][depth - 1], MAX_BLOCKS[large_args]
    n, blocks, tensors = 0, 0, 0
    for numel in sizes:
        if numel == 0:
            continue
        tensors += 1
        chunks = math.ceil(numel / CHUNK)
        for c in range(chunks):
            blocks += 1
            if (tensors == max_t and c == chunks - 1) or blocks == max_b:
                n += 1
                blocks = 0
                tensors = 0 if c == chunks - 1 else 1
    return n + (1 if blocks else 0)


def gpt_params(layers, hidden, ffn, vocab, seq, tp=1, bias=True, tied=True, learned_pos=True, swiglu=False):
    """Megatron-Core GPT parameter tensors of one TP rank (pp = 1), as (numel, weight_decay) pairs, in module order.
    Per layer with the TE spec: linear_qkv (weight, bias, layer_norm_weight, layer_norm_bias), linear_proj (weight,
    bias), linear_fc1 (weight, bias, layer_norm_weight, layer_norm_bias), linear_fc2 (weight, bias). The vocabulary is
    padded to a multiple of 128 * tp (Megatron --make-vocab-size-divisible-by 128)."""
    pv = math.ceil(vocab / (128 * tp)) * 128 * tp
    out = [(pv // tp * hidden, True)]
    if learned_pos:
        out.append((seq * hidden, True))
    f1 = (2 if swiglu else 1) * ffn
    for _ in range(layers):
        out += [(3 * hidden * hidden // tp, True)] + ([(3 * hidden // tp, False)] if bias else [])
        out += [(hidden, False), (hidden, False)]
        out += [(hidden * hidden // tp, True)] + ([(hidden, False)] if bias else [])
        out += [(f1 * hidden // tp, True)] + ([(f1 // tp, False)] if bias else [])
        out += [(hidden, False), (hidden, False)]
        out += [(hidden * ffn // tp, True)] + ([(hidden, False)] if bias else [])
    out += [(hidden, False), (hidden, False)]
    if not tied:
        out.append((pv // tp * hidden, True))
    return out


def shard(params, dp, rank):
    """Distributed-optimizer shard of one DP rank: the rank owns a contiguous 1/dp slice of the flat gradient buffer
    (Megatron DistributedOptimizer); each parameter contributes the part of its range that falls into the slice."""
    total = sum(n for n, _ in params)
    lo, hi = total * rank // dp, total * (rank + 1) // dp
    out, off = [], 0
    for n, wd in params:
        a, b = max(off, lo), min(off + n, hi)
        if b > a:
            out.append((b - a, wd))
        off += n
    return out


def megatron_optimizer_launches(params, large_args=False):
    """Kernels of Megatron's optimizer.step() on these (fp32 main) tensors: TE/apex FusedAdam per param group
    (weight decay / no weight decay; depth 4: param, grad, exp_avg, exp_avg_sq), multi_tensor_l2norm for the grad
    norm (depth 1; apex/TE launch one more 'cleanup' kernel to reduce the per-block partial norms), and
    multi_tensor_scale for clipping (depth 2, only when the norm exceeds --clip-grad)."""
    g_wd = [n for n, wd in params if wd]
    g_nwd = [n for n, wd in params if not wd]
    adam = launches(g_wd, 4, large_args) + launches(g_nwd, 4, large_args)
    l2 = launches([n for n, _ in params], 1, large_args) + 1
    scale = launches([n for n, _ in params], 2, large_args)
    return {'tensors': len(params), 'elements': sum(n for n, _ in params), 'adam': adam, 'l2norm': l2,
            'clip_scale': scale}


def main():
    rows = []
    ci = dict(layers=12, hidden=512, ffn=2048, vocab=50257, seq=1024)
    for tp in (1, 2, 4):
        p = gpt_params(tp=tp, **ci)
        rows.append(('GPT 12x512 (Megatron CI), tp%d, no dist-opt' % tp, megatron_optimizer_launches(p)))
    p = gpt_params(**ci)
    for dp in (2, 8):
        worst = max((megatron_optimizer_launches(shard(p, dp, r)) for r in range(dp)), key=lambda d: d['adam'])
        rows.append(('GPT 12x512, tp1, dist-opt dp%d (busiest rank)' % dp, worst))
    p7 = gpt_params(layers=32, hidden=4096, ffn=16384, vocab=50257, seq=8192, tp=4)
    rows.append(('GPT 32x4096 (CI 7B), tp4, no dist-opt', megatron_optimizer_launches(p7)))
    rows.append(('GPT 32x4096 (CI 7B), tp4, dist-opt dp2 (busiest rank)',
                 max((megatron_optimizer_launches(shard(p7, 2, r)) for r in range(2)), key=lambda d: d['adam'])))
    p15 = gpt_params(layers=48, hidden=1600, ffn=6400, vocab=50257, seq=1024)
    rows.append(('GPT-2 1.5B (48x1600), tp1, no dist-opt', megatron_optimizer_launches(p15)))
    rows.append(('GPT-2 1.5B, same, 32 KB kernel-arg path', megatron_optimizer_launches(p15, large_args=True)))
    w = sys.stdout.write
    w('case,tensors,elements,adam_launches,l2norm_launches,clip_scale_launches\n')
    for name, d in rows:
        w('"%s",%d,%d,%d,%d,%d\n' % (name, d['tensors'], d['elements'], d['adam'], d['l2norm'], d['clip_scale']))


if __name__ == '__main__':
    main()
