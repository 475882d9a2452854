#!/usr/bin/env python3
"""Evidence for the depth of CUDA's launch queue: launch-call duration against the number of GPU ops already queued
(launched, not yet started) at the moment of the call, per Kineto trace.

Analysis helper for docs/host-model.md; not part of the build; Python stdlib only. When the queue is full, a launch
call blocks until the GPU retires an op, so its duration jumps from a few µs to the length of a kernel.
Usage: python3 tools/launch_queue_depth.py TRACE.json.gz [...] > tests/data/host/launch_queue_depth.csv
Columns: trace, stream_count, depth_bin, launches, median_launch_us, mean_launch_us, p90_launch_us, max_depth.
"""
import bisect
import collections
import csv
import statistics
import sys

sys.path.insert(0, __file__.rsplit('/', 1)[0])
from host_trace_analysis import Trace, pct  # noqa: E402

BINS = [(0, 256), (256, 512), (512, 768), (768, 960), (960, 1000), (1000, 1010), (1010, 1020), (1020, 1030)]


def main():
    w = csv.writer(sys.stdout, lineterminator='\n')
    w.writerow(['trace', 'stream_count', 'depth_bin', 'launches', 'median_launch_us', 'mean_launch_us',
                'p90_launch_us', 'max_depth'])
    for path in sys.argv[1:]:
        t = Trace(path)
        pairs = [(l, t.gpu_by_corr[l['args']['correlation']]) for l in t.launches
                 if l.get('args', {}).get('correlation') in t.gpu_by_corr]
        streams = {g.get('args', {}).get('stream') for _, g in pairs}
        gst = sorted(g['ts'] for _, g in pairs)
        lts = sorted(l['ts'] for l, _ in pairs)
        by = collections.defaultdict(list)
        maxd = 0
        for l, _ in pairs:
            d = bisect.bisect_right(lts, l['ts']) - bisect.bisect_right(gst, l['ts'])
            maxd = max(maxd, d)
            for lo, hi in BINS:
                if lo <= d < hi:
                    by[(lo, hi)].append(l['dur'])
        for lo, hi in BINS:
            v = by.get((lo, hi))
            if v:
                w.writerow([path, len(streams), '%d-%d' % (lo, hi - 1), len(v), round(statistics.median(v), 2),
                            round(statistics.fmean(v), 2), round(pct(v, 90), 2), maxd])


if __name__ == '__main__':
    main()
