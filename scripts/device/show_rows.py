#!/usr/bin/env python3
"""Prints one line per measured row of every $OUT/*.jsonl (run ON the GPU machine at the end of a
call, or here on a fetched folder with OUT=...): file, provider, batch, KV length, status, median
us, TFLOP/s, GB/s, % of the bandwidth ceiling, the verified relative L2 error."""
import json, sys, glob, os
for f in sorted(glob.glob(os.environ['OUT'] + '/*.jsonl')):
    for l in open(f):
        r = json.loads(l)
        if 'spec' not in r: continue
        s = r['spec']; t = r.get('timing', {}); v = r.get('verify', {})
        print(os.path.basename(f), r.get('provider'), s.get('batch'), s.get('kv_len'), r.get('status'), round(t.get('median_us', 0), 1), round(r.get('tflops', 0), 1), round(r.get('gbps', 0)), r.get('pct_peak_bw'), v.get('rel_l2_err'))
