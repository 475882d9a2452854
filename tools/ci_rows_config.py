#!/usr/bin/env python3
"""Per-row configuration of the Megatron-LM CI validation rows (tests/data/validation/megatron_ci_small.csv, source
S53) joined with the test's model_config.yaml, for the host-model back-of-envelope of docs/host-model.md.

Analysis helper; not part of the build; Python stdlib only. Needs a local git mirror of NVIDIA/Megatron-LM that
contains commit d98e8a64dd (the commit the validation README read the configs at):
    python3 tools/ci_rows_config.py /path/to/Megatron-LM.git > tests/data/host/megatron_ci_configs.csv
Columns: row, platform, test, layers, hidden, ffn, heads, seq, tp, pp, vp, cp, dp, mbs, gbs, microbatches
(= gbs / (mbs * dp)), layers_per_stage (= layers / pp), impl (transformer_engine|local), attention_backend,
precision, dist_opt, recompute, swiglu, rope, seq_parallel, overlap_grad, overlap_param, log_interval,
log_num_zeros, log_params_norm, deterministic, measured_s.
"""
import csv
import re
import subprocess
import sys

MIRROR = sys.argv[1] if len(sys.argv) > 1 else '/work/.mirror/NVIDIA+Megatron-LM/repo'
COMMIT = 'd98e8a64dd'


def cfg(test):
    y = subprocess.run(['git', '-C', MIRROR, 'show', '%s:tests/functional_tests/test_cases/gpt/%s/model_config.yaml'
                        % (COMMIT, test)], capture_output=True, text=True, check=True).stdout
    out = {}
    for line in y.splitlines():
        m = re.match(r'\s+(--[\w-]+):\s*(.*?)\s*(#.*)?$', line)
        if m:
            out[m.group(1)] = m.group(2).strip().strip('"')
    return out


def main():
    rows = list(csv.DictReader(open('tests/data/validation/megatron_ci_small.csv')))
    w = csv.writer(sys.stdout, lineterminator='\n')
    w.writerow(['row', 'platform', 'test', 'layers', 'hidden', 'ffn', 'heads', 'seq', 'tp', 'pp', 'vp', 'cp', 'dp', 'mbs',
                'gbs', 'microbatches', 'layers_per_stage', 'impl', 'attention_backend', 'precision', 'dist_opt',
                'recompute', 'swiglu', 'rope', 'seq_parallel', 'overlap_grad', 'overlap_param', 'log_interval',
                'log_num_zeros', 'log_params_norm', 'deterministic', 'measured_s'])
    for r in rows:
        m = re.search(r'test_cases/gpt/([^/]+)/golden_values_dev_dgx_(\w+)\.json', r['source_locator'])
        test, plat = m.group(1), m.group(2)
        c = cfg(test)
        g = lambda k, d='': c.get(k, d)
        layers, hidden = int(g('--num-layers')), int(g('--hidden-size'))
        tp, pp = int(g('--tensor-model-parallel-size', 1)), int(g('--pipeline-model-parallel-size', 1))
        cp = int(g('--context-parallel-size', 1))
        vpl = g('--num-layers-per-virtual-pipeline-stage')
        vp = (layers // pp) // int(vpl) if vpl else 1
        world = int(r['num_gpus'])
        dp = world // (tp * pp * cp)
        mbs, gbs = int(g('--micro-batch-size')), int(g('--global-batch-size'))
        prec = 'fp8' if g('--fp8-format') else ('fp16' if g('--fp16') else ('bf16' if g('--bf16') else 'fp32'))
        rec = g('--recompute-granularity', 'none')
        if rec == 'full':
            rec = 'full/%s/%s' % (g('--recompute-method'), g('--recompute-num-layers'))
        w.writerow([r['row_id'], plat, test, layers, hidden, g('--ffn-hidden-size', 4 * hidden),
                    g('--num-attention-heads'), g('--seq-length'), tp, pp, vp, cp, dp, mbs, gbs, gbs // (mbs * dp),
                    layers // pp, g('--transformer-impl', 'transformer_engine'), g('--attention-backend', 'auto'), prec,
                    int('--use-distributed-optimizer' in c), rec, int('--swiglu' in c),
                    int(g('--position-embedding-type') == 'rope'), int('--sequence-parallel' in c),
                    int('--overlap-grad-reduce' in c), int('--overlap-param-gather' in c), g('--log-interval'),
                    int('--log-num-zeros-in-grad' in c), int('--log-params-norm' in c),
                    int('--deterministic-mode' in c), r['derived_step_time_s']])


if __name__ == '__main__':
    main()
