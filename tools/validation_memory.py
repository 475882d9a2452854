#!/usr/bin/env python3
# Measured vs predicted memory of the validation rows that publish memory (tests/data/validation/*.csv, column
# meas_memory_gb_per_gpu, GB = 1e9 B). Each row runs through `parsim --format json`; the prediction compared follows
# the row's memory_definition: 'reserved' → memory.peak_gib (allocator + context + NCCL), allocated on the last rank
# (Megatron-LM CI, S53) → stages[-1].allocated_peak_gib, other allocated → memory.allocated_peak_gib.
# Prints one line per row and mean/max |error| per (source, kind). Standard library only.
# usage: tools/validation_memory.py build/parsim tests/data/validation/megatron_ci_small.csv [more.csv …]
import csv, json, subprocess, sys, tempfile, os, shlex, statistics
binary = sys.argv[1]
out = []
for path in sys.argv[2:]:
    for r in csv.DictReader(open(path)):
        if not r.get('meas_memory_gb_per_gpu'): continue
        meas_gib = float(r['meas_memory_gb_per_gpu']) * 1e9 / 2**30
        args = shlex.split(r['parsim_args'])
        mj = r['parsim_model_json']
        if mj:
            f = tempfile.NamedTemporaryFile('w', suffix='.json', delete=False); f.write(mj); f.close()
            args = ['--model', f.name] + args
        p = subprocess.run([binary] + args + ['--format', 'json'], capture_output=True, text=True)
        if p.returncode != 0:
            print(r['row_id'], 'ERROR', p.stderr.strip()[:200]); continue
        j = json.loads(p.stdout)
        defn = r['memory_definition'].lower()
        last = j['stages'][-1] if 'stages' in j else None
        reserved = 'reserved' in defn.split('=')[0] or 'reserved' in defn[:60]
        lastrank = 'last rank' in defn
        if reserved:
            pred = j['memory']['peak_gib']; kind = 'device'
        elif lastrank and last:
            pred = last['allocated_peak_gib']; kind = 'alloc-last'
        else:
            pred = j['memory']['allocated_peak_gib']; kind = 'alloc'
        err = (pred - meas_gib) / meas_gib
        out.append((r['row_id'], r['source_id'], meas_gib, pred, err, kind, j['memory']['fits']))
        print(f"{r['row_id']} {r['source_id']} {kind:10s} meas {meas_gib:8.3f} GiB pred {pred:8.3f} GiB err {100*err:+6.1f}%  fits={j['memory']['fits']}  {r['parsim_args'][:70]}")
by = {}
for o in out: by.setdefault((o[1], o[5]), []).append(abs(o[4]))
for k, v in sorted(by.items()): print(f"{k[0]} {k[1]}: {len(v)} rows mean |err| {100*statistics.mean(v):.1f}% max {100*max(v):.1f}%")
