#!/usr/bin/env python3
"""Host-side (CPU) cost of issuing GPU work, measured from real Kineto (PyTorch profiler) traces.

Analysis helper for docs/host-model.md (issue 9 item 1). Not part of the build; Python stdlib only.

For each trace it reports, per ProfilerStep window (or the whole trace when it has none):
  * launch-API cost: duration of every kernel/memcpy/memset launch call (cudaLaunchKernel, cudaLaunchKernelExC,
    cuLaunchKernel(Ex), hipLaunchKernel, ...), by API name;
  * host time per launched GPU op on each issuing thread: the thread's busy time (union of its top-level cpu_ops,
    i.e. ATen dispatch + autograd + launch) and its wall time outside blocking syncs, divided by its launches;
  * per top-level op name: instances, launches, mean host µs per instance and per launch;
  * autograd nodes (top-level 'autograd::engine::evaluate_function: …' ops on the backward thread);
  * NCCL collective calls: host duration of the c10d op that issues one, and of its launch API call;
  * GPU side: busy time (union of kernels/memcpys/memsets over all streams), idle gaps between consecutive GPU
    activities, and the part of each gap during which the GPU waited for the host (the next op's launch call had
    not returned when the previous GPU activity ended: HTA's 'host_wait' idea);
  * host run-ahead: per GPU op, (GPU start) - (end of its launch call); and the launch-queue depth (ops launched
    but not yet started) sampled at every launch;
  * blocking calls (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, cudaMemcpy, long
    cudaMemcpyAsync D2H, hipDeviceSynchronize, …) with the top-level cpu_op that made them (aten::item, …);
  * kernel inventory per step by kind (GEMM, elementwise, reduction, norm, attention, NCCL, multi_tensor_apply,
    memcpy/memset) and by phase (inside Optimizer.step / Optimizer.zero_grad annotations, on the autograd thread,
    elsewhere).

Usage:  python3 tools/host_trace_analysis.py TRACE.json.gz [...] [--json OUT.json]
Kineto format notes: shared/data/profiles/README.md. Times are µs as in the trace.
"""
import argparse
import bisect
import collections
import gzip
import json
import statistics
import sys

LAUNCH_APIS = {
    'cudaLaunchKernel', 'cudaLaunchKernelExC', 'cuLaunchKernel', 'cuLaunchKernelEx', 'cudaLaunchCooperativeKernel',
    'cudaLaunchCooperativeKernelMultiDevice', 'cudaMemcpyAsync', 'cudaMemsetAsync', 'cudaMemcpy2DAsync',
    'cudaGraphLaunch', 'hipLaunchKernel', 'hipExtModuleLaunchKernel', 'hipModuleLaunchKernel', 'hipMemcpyAsync',
    'hipMemsetAsync', 'hipMemcpyWithStream', 'hipExtLaunchKernel', 'hipGraphLaunch',
}
KERNEL_LAUNCH_APIS = {a for a in LAUNCH_APIS if 'Memcpy' not in a and 'Memset' not in a}
SYNC_APIS = {
    'cudaStreamSynchronize', 'cudaDeviceSynchronize', 'cudaEventSynchronize', 'cudaMemcpy', 'cudaMemcpy2D',
    'hipDeviceSynchronize', 'hipStreamSynchronize', 'hipEventSynchronize', 'hipMemcpy', 'hipMemcpyWithStream',
}
GPU_CATS = {'kernel', 'gpu_memcpy', 'gpu_memset'}


def pct(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    k = (len(xs) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def summary(xs):
    if not xs:
        return {'n': 0}
    return {'n': len(xs), 'mean': round(statistics.fmean(xs), 3), 'p10': round(pct(xs, 10), 3),
            'median': round(pct(xs, 50), 3), 'p90': round(pct(xs, 90), 3), 'max': round(max(xs), 3),
            'sum': round(sum(xs), 3)}


def kernel_kind(name):
    n = name.lower()
    if n.startswith('nccl') or 'rccl' in n or 'all_reduce' in n or 'allreduce' in n or 'cross_device_reduce' in n:
        return 'nccl/comm'
    if 'multi_tensor_apply' in n or 'multi_tensor' in n:
        return 'multi_tensor_apply'
    if ('gemm' in n or 'sgemm' in n or 'hgemm' in n or 'nvjet' in n or n.startswith('cijk_') or 'xmma' in n
            or 'cutlass' in n or 'splitkreduce' in n or 'bmm_' in n or 'matmul' in n or 'cublas' in n
            or 'wgrad' in n or 'implicit_gemm' in n or 'winograd' in n or 'conv' in n or 'dgrad' in n):
        return 'gemm/conv'
    if 'flash' in n or 'fmha' in n or 'attention' in n or 'softmax' in n or 'attn' in n:
        return 'attention/softmax'
    if 'norm' in n or 'bn_fw' in n or 'bn_bw' in n or 'gammabeta' in n:
        return 'norm'
    if 'reduce_kernel' in n or 'reduce' in n or 'scan' in n:
        return 'reduction'
    if 'elementwise' in n or 'copy' in n or 'fill' in n or 'cat' in n or 'index' in n or 'embedding' in n:
        return 'elementwise/copy'
    return 'other'


class Trace:
    def __init__(self, path):
        self.path = path
        raw = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
        self.meta = raw if isinstance(raw, dict) else {}
        self.events = raw['traceEvents'] if isinstance(raw, dict) else raw
        ev = [e for e in self.events if e.get('ph') == 'X' and 'dur' in e and 'ts' in e]
        for e in ev:
            e['ts'] = float(e['ts'])
            e['dur'] = float(e['dur'])
        self.cpu_ops = [e for e in ev if e.get('cat') in ('cpu_op', 'operator')]
        self.runtime = [e for e in ev if e.get('cat') in ('cuda_runtime', 'cuda_driver', 'runtime', 'driver')]
        self.gpu = sorted([e for e in ev if e.get('cat') in GPU_CATS], key=lambda e: e['ts'])
        self.user = [e for e in ev if e.get('cat') == 'user_annotation']
        self.cuda_sync = [e for e in ev if e.get('cat') == 'cuda_sync']
        self.gpu_by_corr = {}
        for g in self.gpu:
            c = g.get('args', {}).get('correlation')
            if c is not None:
                self.gpu_by_corr[c] = g
        self.launches = [r for r in self.runtime if r['name'] in LAUNCH_APIS]
        # top-level cpu ops per thread (outermost cpu_op; user annotations are not ops)
        self.top = collections.defaultdict(list)
        by_thread = collections.defaultdict(list)
        for o in self.cpu_ops:
            by_thread[(o['pid'], o['tid'])].append(o)
        for key, ops in by_thread.items():
            ops.sort(key=lambda o: (o['ts'], -o['dur']))
            end = -1e300
            for o in ops:
                if o['ts'] >= end:
                    self.top[key].append(o)
                    end = o['ts'] + o['dur']
        self.top_starts = {k: [o['ts'] for o in v] for k, v in self.top.items()}

    def enclosing_top(self, e):
        key = (e['pid'], e['tid'])
        starts = self.top_starts.get(key)
        if not starts:
            return None
        i = bisect.bisect_right(starts, e['ts']) - 1
        if i < 0:
            return None
        o = self.top[key][i]
        return o if e['ts'] <= o['ts'] + o['dur'] + 1e-6 else None

    def windows(self):
        steps = sorted([u for u in self.user if u['name'].startswith('ProfilerStep#')], key=lambda u: u['ts'])
        if steps:
            return [(s['name'], s['ts'], s['ts'] + s['dur']) for s in steps]
        t0 = min(e['ts'] for e in self.cpu_ops + self.runtime + self.gpu)
        t1 = max(e['ts'] + e['dur'] for e in self.cpu_ops + self.runtime + self.gpu)
        return [('whole-trace', t0, t1)]


def union_len(intervals):
    tot = 0.0
    cur_s = cur_e = None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                tot += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        tot += cur_e - cur_s
    return tot


def analyse(path, skip_first_step=False):
    t = Trace(path)
    out = {'trace': path}
    dev = t.meta.get('deviceProperties') or []
    out['device'] = dev[0].get('name') if dev else None
    for k in ('cuda_runtime_version', 'cuda_driver_version', 'cupti_version', 'with_stack', 'record_shapes',
              'profile_memory', 'with_modules'):
        if k in t.meta:
            out[k] = t.meta[k]
    di = t.meta.get('distributedInfo')
    if di:
        out['distributed'] = {k: di.get(k) for k in ('backend', 'rank', 'world_size', 'nccl_version') if k in di}
    wins = t.windows()
    if skip_first_step and len(wins) > 1:
        wins = wins[1:]
    out['windows'] = [{'name': n, 'dur_us': round(b - a, 1)} for n, a, b in wins]
    in_win = lambda e: any(a <= e['ts'] < b for _, a, b in wins)
    # GPU events belong to the window of their launch (the GPU may run after the CPU window closed)
    launches = [l for l in t.launches if in_win(l)]
    out['n_windows'] = len(wins)

    # 1. launch-API cost
    by_api = collections.defaultdict(list)
    for l in launches:
        by_api[l['name']].append(l['dur'])
    out['launch_api_us'] = {k: summary(v) for k, v in sorted(by_api.items())}

    # 2. per-thread host time per launch
    threads = collections.defaultdict(list)
    for l in launches:
        threads[(l['pid'], l['tid'])].append(l)
    syncs = [r for r in t.runtime if (r['name'] in SYNC_APIS or (r['name'] in ('cudaMemcpyAsync', 'hipMemcpyAsync')
                                                                   and r['dur'] > 50)) and in_win(r)]
    thr_out = {}
    for key, ls in sorted(threads.items(), key=lambda kv: -len(kv[1])):
        tops = [o for o in t.top.get(key, []) if in_win(o)]
        busy = union_len([(o['ts'], o['ts'] + o['dur']) for o in tops])
        # sync time inside this thread
        s_time = sum(s['dur'] for s in syncs if (s['pid'], s['tid']) == key)
        first = min(l['ts'] for l in ls)
        last = max(l['ts'] + l['dur'] for l in ls)
        span = last - first
        s_in_span = sum(s['dur'] for s in syncs if (s['pid'], s['tid']) == key and first <= s['ts'] < last)
        n_k = sum(1 for l in ls if l['name'] in KERNEL_LAUNCH_APIS)
        thr_out['%s/%s' % key] = {
            'launches': len(ls), 'kernel_launches': n_k,
            'top_level_ops': len(tops),
            'busy_us_in_top_ops': round(busy, 1),
            'busy_us_per_launch': round(busy / len(ls), 2),
            'sync_us': round(s_time, 1),
            'launch_span_us': round(span, 1),
            'span_minus_sync_per_launch_us': round((span - s_in_span) / len(ls), 2),
            'launch_api_share_of_busy': round(sum(l['dur'] for l in ls) / busy, 3) if busy else None,
        }
    out['threads'] = thr_out

    # 3. per top-level op name: instances, launches, host µs per instance / per launch
    per_op = collections.defaultdict(lambda: {'n': 0, 'us': 0.0, 'launches': 0, 'launch_api_us': 0.0})
    op_launch = collections.Counter()
    for l in launches:
        o = t.enclosing_top(l)
        if o is not None:
            op_launch[id(o)] += 1
    for key, tops in t.top.items():
        for o in tops:
            if not in_win(o):
                continue
            nm = o['name']
            if nm.startswith('autograd::engine::evaluate_function: '):
                nm = 'autograd node: ' + nm.split(': ', 1)[1]
            r = per_op[nm]
            r['n'] += 1
            r['us'] += o['dur']
            r['launches'] += op_launch.get(id(o), 0)
    rows = []
    for nm, r in per_op.items():
        rows.append({'op': nm, 'n': r['n'], 'mean_us': round(r['us'] / r['n'], 2),
                     'launches_per_op': round(r['launches'] / r['n'], 2),
                     'us_per_launch': round(r['us'] / r['launches'], 2) if r['launches'] else None,
                     'total_us': round(r['us'], 1)})
    rows.sort(key=lambda r: -r['total_us'])
    out['top_level_ops'] = rows[:40]
    # aggregate: ops that launch exactly one GPU op (the unfused-eager unit cost)
    one = [o['dur'] for key, tops in t.top.items() for o in tops if in_win(o) and op_launch.get(id(o), 0) == 1
           and not o['name'].startswith(('autograd::engine', 'record_param_comms', 'c10d::', 'nccl:'))]
    out['top_ops_with_exactly_one_launch_us'] = summary(one)
    zero = [o['dur'] for key, tops in t.top.items() for o in tops if in_win(o) and op_launch.get(id(o), 0) == 0]
    out['top_ops_with_no_launch_us'] = summary(zero)
    ag = [(o['dur'], op_launch.get(id(o), 0)) for key, tops in t.top.items() for o in tops
          if in_win(o) and o['name'].startswith('autograd::engine::evaluate_function')]
    if ag:
        out['autograd_nodes'] = {'n': len(ag), 'mean_us': round(statistics.fmean(d for d, _ in ag), 2),
                                 'median_us': round(pct([d for d, _ in ag], 50), 2),
                                 'launches_per_node': round(sum(k for _, k in ag) / len(ag), 2),
                                 'nodes_without_launch': sum(1 for _, k in ag if k == 0),
                                 'us_per_launch': round(sum(d for d, _ in ag) / max(1, sum(k for _, k in ag)), 2)}

    # 4. NCCL collective calls: host cost of the issuing op and of the launch call
    coll = collections.defaultdict(list)
    for o in t.cpu_ops:
        if in_win(o) and (o['name'].startswith('c10d::') or o['name'].startswith('nccl:')):
            coll[o['name']].append(o['dur'])
    out['collective_ops_host_us'] = {k: summary(v) for k, v in coll.items()}
    nccl_launch = []
    for l in launches:
        g = t.gpu_by_corr.get(l.get('args', {}).get('correlation'))
        if g is not None and kernel_kind(g['name']) == 'nccl/comm':
            nccl_launch.append(l['dur'])
    out['nccl_kernel_launch_api_us'] = summary(nccl_launch)

    # 5. GPU busy / gaps / host-wait
    gwin = []
    for l in launches:
        g = t.gpu_by_corr.get(l.get('args', {}).get('correlation'))
        if g is not None:
            gwin.append((g, l))
    gwin.sort(key=lambda gl: gl[0]['ts'])
    if gwin:
        busy = union_len([(g['ts'], g['ts'] + g['dur']) for g, _ in gwin])
        g0 = gwin[0][0]['ts']
        g1 = max(g['ts'] + g['dur'] for g, _ in gwin)
        gaps, host_wait, gaps_hw = [], 0.0, []
        cur_end = gwin[0][0]['ts'] + gwin[0][0]['dur']
        for g, l in gwin[1:]:
            if g['ts'] > cur_end:
                gap = g['ts'] - cur_end
                gaps.append(gap)
                lend = l['ts'] + l['dur']
                hw = max(0.0, min(g['ts'], lend) - cur_end)
                host_wait += hw
                if hw > 0:
                    gaps_hw.append(gap)
            cur_end = max(cur_end, g['ts'] + g['dur'])
        # gaps during which the next op was already queued (its launch call had returned before the previous GPU
        # activity ended): the device-side dispatch gap between back-to-back kernels, no host wait in it
        dev_gaps = []
        cur_end = gwin[0][0]['ts'] + gwin[0][0]['dur']
        for g, l in gwin[1:]:
            if g['ts'] > cur_end and l['ts'] + l['dur'] <= cur_end:
                dev_gaps.append(g['ts'] - cur_end)
            elif g['ts'] <= cur_end and l['ts'] + l['dur'] <= cur_end:
                dev_gaps.append(0.0)
            cur_end = max(cur_end, g['ts'] + g['dur'])
        qdelay = [g['ts'] - (l['ts'] + l['dur']) for g, l in gwin]
        # launch queue depth sampled at each launch: launched earlier (or now) but not started yet
        gstarts = sorted(g['ts'] for g, _ in gwin)
        lts = sorted(l['ts'] for _, l in gwin)
        depth = []
        for x in lts:
            launched = bisect.bisect_right(lts, x)
            started = bisect.bisect_right(gstarts, x)
            depth.append(launched - started)
        kdur = [g['dur'] for g, _ in gwin if g.get('cat') == 'kernel']
        out['gpu'] = {
            'ops': len(gwin), 'kernels': len(kdur), 'span_us': round(g1 - g0, 1), 'busy_us': round(busy, 1),
            'busy_fraction': round(busy / (g1 - g0), 3) if g1 > g0 else None,
            'kernel_dur_us': summary(kdur),
            'kernels_shorter_than_5us': sum(1 for x in kdur if x < 5),
            'idle_gaps_us': summary(gaps),
            'idle_total_us': round(sum(gaps), 1),
            'host_wait_us': round(host_wait, 1),
            'host_wait_fraction_of_idle': round(host_wait / sum(gaps), 3) if gaps else None,
            'queued_gaps_us': summary(dev_gaps),
            'queue_delay_us': summary(qdelay),
            'ops_started_within_10us_of_launch_return': round(sum(1 for q in qdelay if q < 10) / len(qdelay), 3),
            'launch_queue_depth': summary(depth),
        }

    # 6. blocking calls and who made them
    sync_rows = collections.defaultdict(list)
    for s in syncs:
        o = t.enclosing_top(s)
        sync_rows[(s['name'], o['name'] if o else '(python / no op)')].append(s['dur'])
    for s in t.cuda_sync:
        if in_win(s):
            sync_rows[('cuda_sync:' + s['name'], '(gpu-side event)')].append(s['dur'])
    out['blocking_calls'] = [{'api': a, 'caller': c, **summary(v)} for (a, c), v in
                             sorted(sync_rows.items(), key=lambda kv: -sum(kv[1]))]

    # 7. kernel inventory per step by kind and phase
    ann = [u for u in t.user if u['name'].startswith(('Optimizer.step', 'Optimizer.zero_grad'))]
    # the main (Python) thread is the one that carries the ProfilerStep annotations; otherwise the busiest launcher
    stepth = collections.Counter((u['pid'], u['tid']) for u in t.user if u['name'].startswith('ProfilerStep#'))
    if stepth:
        main_thread = stepth.most_common(1)[0][0]
    else:
        main_thread = max(threads.items(), key=lambda kv: len(kv[1]))[0] if threads else None
    out['main_thread'] = '%s/%s' % main_thread if main_thread else None
    inv = collections.Counter()
    phase = collections.Counter()
    mta = collections.Counter()
    for g, l in gwin:
        k = kernel_kind(g['name']) if g.get('cat') == 'kernel' else g['cat']
        inv[k] += 1
        ph = 'other thread (autograd engine: backward)' if (l['pid'], l['tid']) != main_thread else 'main thread'
        for a in ann:
            if a['ts'] <= l['ts'] < a['ts'] + a['dur']:
                ph = a['name'].split('#')[0]
        phase[ph] += 1
        if k == 'multi_tensor_apply':
            mta[g['name'][:120]] += 1
    nw = len(wins)
    out['gpu_ops_per_window_by_kind'] = {k: round(v / nw, 2) for k, v in inv.most_common()}
    out['gpu_ops_per_window_by_phase'] = {k: round(v / nw, 2) for k, v in phase.most_common()}
    out['multi_tensor_apply_per_window'] = {k: round(v / nw, 2) for k, v in mta.most_common()}
    return out


CSV_COLUMNS = [
    ('trace', lambda r: r['trace']),
    ('device', lambda r: r['device']),
    ('windows', lambda r: r['n_windows']),
    ('window_ms', lambda r: round(sum(w['dur_us'] for w in r['windows']) / r['n_windows'] / 1e3, 3)),
    ('gpu_ops_per_window', lambda r: round(r['gpu']['ops'] / r['n_windows'], 1)),
    ('cudaLaunchKernel_median_us', lambda r: (r['launch_api_us'].get('cudaLaunchKernel')
                                              or r['launch_api_us'].get('hipLaunchKernel') or {}).get('median')),
    ('cudaLaunchKernel_p90_us', lambda r: (r['launch_api_us'].get('cudaLaunchKernel')
                                           or r['launch_api_us'].get('hipLaunchKernel') or {}).get('p90')),
    ('main_thread_busy_us_per_launch', lambda r: r['threads'].get(r['main_thread'], {}).get('busy_us_per_launch')),
    ('main_thread_wall_us_per_launch', lambda r: r['threads'].get(r['main_thread'], {})
     .get('span_minus_sync_per_launch_us')),
    ('bwd_thread_busy_us_per_launch', lambda r: next((v['busy_us_per_launch'] for k, v in r['threads'].items()
                                                      if k != r['main_thread']), None)),
    ('top_op_one_launch_median_us', lambda r: r['top_ops_with_exactly_one_launch_us'].get('median')),
    ('autograd_node_median_us', lambda r: (r.get('autograd_nodes') or {}).get('median_us')),
    ('autograd_us_per_launch', lambda r: (r.get('autograd_nodes') or {}).get('us_per_launch')),
    ('c10d_collective_host_median_us', lambda r: (r['collective_ops_host_us'].get('c10d::allreduce_')
                                                  or next(iter(r['collective_ops_host_us'].values()), {}))
     .get('median')),
    ('nccl_launch_api_median_us', lambda r: r['nccl_kernel_launch_api_us'].get('median')),
    ('gpu_busy_fraction', lambda r: r['gpu']['busy_fraction']),
    ('kernel_median_us', lambda r: r['gpu']['kernel_dur_us'].get('median')),
    ('idle_gap_median_us', lambda r: r['gpu']['idle_gaps_us'].get('median')),
    ('host_wait_fraction_of_idle', lambda r: r['gpu']['host_wait_fraction_of_idle']),
    ('queued_gap_median_us', lambda r: r['gpu']['queued_gaps_us'].get('median')),
    ('queue_delay_median_us', lambda r: r['gpu']['queue_delay_us'].get('median')),
    ('queue_depth_median', lambda r: r['gpu']['launch_queue_depth'].get('median')),
    ('queue_depth_max', lambda r: r['gpu']['launch_queue_depth'].get('max')),
    ('blocking_us_per_window', lambda r: round(sum(b['sum'] for b in r['blocking_calls']
                                                   if not b['api'].startswith('cuda_sync')) / r['n_windows'], 1)),
    ('multi_tensor_apply_per_window', lambda r: round(sum(r['multi_tensor_apply_per_window'].values()), 2)),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('traces', nargs='+')
    ap.add_argument('--json', help='write the full results to this file')
    ap.add_argument('--csv', help='write one summary row per trace to this file')
    ap.add_argument('--skip-first-step', action='store_true')
    a = ap.parse_args()
    res = [analyse(p, a.skip_first_step) for p in a.traces]
    txt = json.dumps(res, indent=1)
    if a.json:
        open(a.json, 'w').write(txt + '\n')
    if a.csv:
        import csv
        with open(a.csv, 'w', newline='') as f:
            w = csv.writer(f, lineterminator='\n')
            w.writerow([c for c, _ in CSV_COLUMNS])
            for r in res:
                w.writerow([fn(r) for _, fn in CSV_COLUMNS])
    if not a.json and not a.csv:
        sys.stdout.write(txt + '\n')


if __name__ == '__main__':
    main()
