#!/usr/bin/env python3
"""GPU ops launched, and host wall time spent, per nn.Module instance of a Kineto trace recorded with
with_modules=True (python_function events named 'nn.Module: <Class>_<index>').

Analysis helper for docs/host-model.md; not part of the build; Python stdlib only.
For every module class it prints: instances, launches per instance (kernels + memcpy + memset, split), host wall µs
per instance (the span of the module's python_function event: Python + dispatch + launch for everything inside it),
and host µs per launch. Nested modules are counted in their parents too (a decoder layer includes its attention).

Usage: python3 tools/kernels_per_module.py TRACE.json.gz [--json OUT]
"""
import argparse
import bisect
import collections
import gzip
import json
import re
import statistics
import sys

sys.path.insert(0, __file__.rsplit('/', 1)[0])
from host_trace_analysis import LAUNCH_APIS, KERNEL_LAUNCH_APIS  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('trace')
    ap.add_argument('--json')
    a = ap.parse_args()
    raw = json.load(gzip.open(a.trace))
    ev = raw['traceEvents']
    launches = sorted([e for e in ev if e.get('cat') in ('cuda_runtime', 'cuda_driver') and e['name'] in LAUNCH_APIS
                       and 'ts' in e], key=lambda e: float(e['ts']))
    lts = [float(e['ts']) for e in launches]
    mods = [e for e in ev if e.get('cat') == 'python_function' and e['name'].startswith('nn.Module: ')]
    per = collections.defaultdict(lambda: {'n': 0, 'kernels': [], 'copies': [], 'host_us': []})
    for m in mods:
        cls = re.sub(r'_\d+$', '', m['name'][len('nn.Module: '):])
        t0, t1 = float(m['ts']), float(m['ts']) + float(m['dur'])
        i0, i1 = bisect.bisect_left(lts, t0), bisect.bisect_right(lts, t1)
        inside = [l for l in launches[i0:i1] if l['pid'] == m['pid'] and l['tid'] == m['tid']]
        k = sum(1 for l in inside if l['name'] in KERNEL_LAUNCH_APIS)
        r = per[cls]
        r['n'] += 1
        r['kernels'].append(k)
        r['copies'].append(len(inside) - k)
        r['host_us'].append(float(m['dur']))
    rows = []
    for cls, r in sorted(per.items(), key=lambda kv: -sum(kv[1]['host_us'])):
        tot = [k + c for k, c in zip(r['kernels'], r['copies'])]
        rows.append({'module': cls, 'instances': r['n'],
                     'kernels_per_instance': round(statistics.fmean(r['kernels']), 2),
                     'memcpy_memset_per_instance': round(statistics.fmean(r['copies']), 2),
                     'host_us_per_instance_median': round(statistics.median(r['host_us']), 1),
                     'host_us_per_launch': round(sum(r['host_us']) / max(1, sum(tot)), 2)})
    out = {'trace': a.trace, 'modules': rows}
    txt = json.dumps(out, indent=1)
    if a.json:
        open(a.json, 'w').write(txt + '\n')
    else:
        print(txt)


if __name__ == '__main__':
    main()
