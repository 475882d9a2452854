#!/usr/bin/env python3
"""Back-of-envelope of the proposed host model (docs/host-model.md §6) against the Megatron-LM CI rows (source S53).

Analysis helper; not part of the build; Python stdlib only. It is NOT the event engine: it adds up the host issue
time along one rank's critical path, which is what the engine will produce in the fully host-bound regime (every
GPU op shorter than its issue cost; every device->host sync drains a GPU queue that is already nearly empty).

Inputs: tests/data/host/megatron_ci_configs.csv (tools/ci_rows_config.py) and, optionally, parsim's GPU-only
prediction per row (a CSV 'row,pred_s' from build/tests/parsim_accuracy), combined as max(host, gpu).
Unit costs (µs on the reference host, an x86 server CPU of 2023-25 with PyTorch 2.x and no profiler) are the
sourced values of docs/host-model.md §2-§3; the counts are §4-§5. ONE factor per platform (host speed relative to
the reference) is set on the tp1pp1 Transformer-Engine rows of that platform and used unchanged for every other
row: printed as 'calib' rows; everything else is out of that one-row family.

Usage: python3 tools/ci_host_estimate.py [parsim_pred.csv] > tests/data/host/ci_host_estimate.csv
"""
import csv
import math
import statistics
import sys

sys.path.insert(0, __file__.rsplit('/', 1)[0])
from multi_tensor_launches import gpt_params, launches, shard  # noqa: E402

# ---- unit costs, µs on the reference host (docs/host-model.md §2-3 give the sources) ----
C_OP = 8.0          # one ATen op: Python binding + dispatcher + autograd record + cudaLaunchKernel
C_LIN = 13.5        # torch linear forward (TE issue #2053, H100 DGX Xeon 8480C: 13.48 µs)
C_TE = 36.0         # Transformer Engine module forward, BF16 (TE #2053: TE/torch = 2.7x on GB200 -> 2.7 x 13.5)
C_COMPILED = 39.0   # call of a torch.compile'd function with requires_grad inputs (pytorch #122029)
BWD = 2.0           # backward host time / forward host time of a module (traces: AddmmBackward0 / linear 2.1,
                    # NativeLayerNormBackward0 / layer_norm 1.7 on A100, hta-trace-diff control_rank3)
C_HOOK = 20.0       # Megatron DDP per-parameter grad hook incl. main_grad.add_ (traces: AccumulateGrad 22-40 µs)
C_COLL = 25.0       # issuing one c10d collective (torch-level 8xH200 all_reduce floor 38-40 µs vs NCCL ~14 µs)
C_SYNC = 20.0       # device->host sync round trip once the queue is drained (.item(): D2H copy + sync)
C_P2P = 50.0        # batch_isend_irecv of a send+recv pair (2 ops + group start/end)
C_TB = 20.0         # one TensorBoard add_scalar (protobuf + queue), CPU only
C_DATA = 300.0      # next(data_iterator) + 5 pinned H2D copies of one micro-batch (estimate, no source: §6.4)


def layer_host_us(r):
    """Host µs of one layer, forward + backward, one micro-batch (reference host)."""
    te = r['impl'] == 'transformer_engine'
    unfused = r['attention_backend'] == 'unfused' or not te
    attn_f = (10 * C_OP + 20) if unfused else 60.0
    if te:
        mods_f = 2 * (C_TE + 4) + 2 * C_TE           # LayerNormLinear x2 (QKV, FC1), Linear x2 (proj, FC2)
    else:
        mods_f = 2 * (C_OP + 5) + 4 * (C_LIN + 10)   # fused LayerNorm x2, Megatron Column/RowParallelLinear x4
    fused_f = 3 * C_COMPILED                          # bias-dropout-add x2, bias-GeLU/SwiGLU x1 (torch.compile)
    glue_f = 10 * 2.0 + 30                            # views/splits of QKV and TransformerLayer Python
    fwd = mods_f + attn_f + fused_f + glue_f
    nparam = 12 - (4 if r['test'].find('disable_bias_linear') >= 0 else 0) + (2 if 'qk_layernorm' in r['test'] else 0)
    bwd = BWD * (mods_f + attn_f + fused_f) + nparam * C_HOOK
    tp, cp = int(r['tp']), int(r['cp'])
    coll = 0
    if tp > 1:
        coll += 8 if r['seq_parallel'] == '1' else 4   # SP: AG+RS x2 fwd, x2 bwd; else AR x2 fwd, x2 bwd
    extra = 0.0
    if cp > 1:                                         # TE p2p ring attention: per step a send/recv pair
        coll += 4 * (cp - 1) * 2                       # fwd and bwd (x2 ops each)
        extra += 12 * C_OP * (cp - 1)                  # softmax-lse / output corrections
    if r['precision'] == 'fp8':                        # per GEMM: amax, scale, cast (+ amax all-reduce with TP)
        extra += 4 * (4 * C_OP + (C_COLL if tp > 1 else 0)) * (1 + BWD)
    return fwd + bwd + coll * C_COLL + extra


def microbatch_host_us(r, stage, p):
    """Non-layer host µs of one micro-batch on pipeline stage `stage` of p (reference host)."""
    tp = int(r['tp'])
    us = 0.0
    if stage in (0, p - 1):
        us += C_DATA + (5 * C_COLL + C_SYNC if tp > 1 else 0)        # get_batch (+ broadcast_data over TP)
    if stage == 0:
        us += 6 * C_OP                                                # embedding fwd + bwd
    if stage == p - 1:
        us += C_LIN * (1 + BWD) + (15 + 6) * C_OP + (3 * C_COLL if tp > 1 else 0)  # LM head + vocab-parallel CE
        us += 8 * C_OP + 2 * C_SYNC                                   # loss_func + NaN/Inf validate_result syncs
    if p > 1:
        v = int(r['vp'])
        us += 2 * (C_P2P + C_SYNC) if v == 1 else 2 * v * C_COLL      # batched p2p + cuda.synchronize / async p2p
    return us


def fixed_step_host_us(r):
    """Per-step work outside the micro-batches (Megatron train_step / training_log with the CI flags)."""
    tp, dp = int(r['tp']), int(r['dp'])
    params = gpt_params(int(r['layers']), int(r['hidden']), int(r['ffn']), 50257, int(r['seq']), tp=tp,
                        bias='disable_bias_linear' not in r['test'], swiglu=r['swiglu'] == '1')
    n_all = len(params)
    local = max((shard(params, dp, k) for k in range(dp)), key=len) if r['dist_opt'] == '1' else params
    l2 = launches([n for n, _ in local], 1) + 1
    adam = launches([n for n, wd in local if wd], 4) + launches([n for n, wd in local if not wd], 4)
    us = 300.0                                                          # zero_grad_buffer
    us += 2 * (C_COLL + C_OP + C_SYNC)                                  # DDP grad sync, ~2 buckets, NaN check each
    us += 4 * 3.0 * n_all                                               # Python loops over params (norm, zeros, ...)
    us += (l2 + 3) * C_OP + C_COLL + C_SYNC                             # grad norm (clip)
    us += 4 * C_OP * len(local) + C_COLL + C_SYNC                       # --log-num-zeros-in-grad
    us += adam * C_OP + 100                                             # FusedAdam, 2 param groups
    us += (len(local) * C_OP + 2 * C_COLL) if r['dist_opt'] == '1' else launches([n for n, _ in local], 2) * C_OP
    us += 3 * (2 * C_OP + C_COLL + C_SYNC)                              # update_successful / grad_norm / zeros max
    us += 3 * C_OP + C_COLL + C_SYNC                                    # loss all-reduce + loss_scale.item()
    us += l2 * C_OP + C_COLL + C_SYNC                                   # --log-params-norm
    us += 30 * C_TB + 300 + C_SYNC + 2 * (C_COLL + C_SYNC) + 200        # training_log: TB, memory_stats, barrier, timers
    if r['precision'] == 'fp16':                                        # loss scaling: grads .float(), unscale, found_inf
        us += n_all * C_OP + launches([n for n, _ in local], 1) * C_OP + C_COLL + C_SYNC + 3 * C_OP
    return us


def host_step_ms(r):
    p, v, m = int(r['pp']), int(r['vp']), int(r['microbatches'])
    L = int(r['layers_per_stage'])
    rec = 1.0 + (0.5 if r['recompute'].startswith('full') else 0.0)    # recompute repeats the forward (~1/3 of fwd+bwd)
    h_layer = layer_host_us(r) * rec
    stage_mb = max(L * h_layer + microbatch_host_us(r, s, p) for s in range(p))
    pipe = (m + (p - 1) / v) * stage_mb
    return (pipe + fixed_step_host_us(r)) / 1e3


def main():
    rows = list(csv.DictReader(open('tests/data/host/megatron_ci_configs.csv')))
    gpu = {}
    if len(sys.argv) > 1:
        gpu = {x['row']: float(x['pred_s']) * 1e3 for x in csv.DictReader(open(sys.argv[1]))}
    calib_rows = {'h100': ['C0041'], 'a100': ['C0002'], 'gb200': ['C0064']}
    factor = {}
    for plat, ids in calib_rows.items():
        fs = [float(r['measured_s']) * 1e3 / host_step_ms(r) for r in rows if r['row'] in ids]
        factor[plat] = statistics.fmean(fs)
    w = csv.writer(sys.stdout, lineterminator='\n')
    w.writerow(['row', 'platform', 'layout', 'impl', 'precision', 'role', 'host_ref_ms', 'factor', 'gpu_ms',
                'pred_ms', 'measured_ms', 'err_pct'])
    errs = {}
    for r in rows:
        h = host_step_ms(r)
        f = factor[r['platform']]
        g = gpu.get(r['row'], 0.0)
        pred = max(f * h, g)
        meas = float(r['measured_s']) * 1e3
        role = 'calib' if r['row'] in calib_rows[r['platform']] else 'predict'
        e = 100 * (pred - meas) / meas
        if role == 'predict':
            errs.setdefault(r['platform'], []).append(e)
        layout = 'tp%spp%svp%scp%s m%s' % (r['tp'], r['pp'], r['vp'], r['cp'], r['microbatches'])
        w.writerow([r['row'], r['platform'], layout, r['impl'], r['precision'], role, round(h, 2), round(f, 3),
                    round(g, 1), round(pred, 1), round(meas, 1), round(e, 1)])
    for plat, es in errs.items():
        sys.stderr.write('%s: factor %.2f, %d predicted rows, mean |err| %.1f %%, mean signed %.1f %%, max |err| %.1f %%\n'
                         % (plat, factor[plat], len(es), statistics.fmean(abs(x) for x in es), statistics.fmean(es),
                            max(abs(x) for x in es)))


if __name__ == '__main__':
    main()
