#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""parity.py - one round of the parity harness: generate, record, compare.

Generates N random configs (gen.py; the seed is printed, --seed repeats a
round), records each with our tracebox and upstream's (record.py; 2N traces),
then compares every core table of every trace between our trace processor
and upstream's (compare.py). Prints the seed, the recordings, every (trace,
table) verdict and a last line `N equal, N differ, N known`.

usage: parity.py [--n N] [--seed S] [--work DIR] [--recorders ours,up]
                 [--jobs J]
Exit status: 0 when no unlisted pair differs, 1 when some does, 2 when the
round cannot run here (the reason is printed).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument('--n', type=int, default=3)
  ap.add_argument('--seed', type=int)
  ap.add_argument('--work', help='keep configs and traces here')
  ap.add_argument('--recorders', default='ours,up')
  ap.add_argument('--jobs', type=int, default=2)
  ap.add_argument('--duration-ms', type=int, default=2500)
  a = ap.parse_args()
  work = a.work or tempfile.mkdtemp(prefix='pfc-parity-')
  cfgs = os.path.join(work, 'configs')
  traces = os.path.join(work, 'traces')
  py = sys.executable
  try:
    gen = [py, os.path.join(HERE, 'gen.py'), '--n', str(a.n), '--out', cfgs,
           '--duration-ms', str(a.duration_ms)]
    if a.seed is not None:
      gen += ['--seed', str(a.seed)]
    if subprocess.call(gen) != 0:
      return 2
    rc = subprocess.call([py, os.path.join(HERE, 'record.py'), '--configs',
                          cfgs, '--out', traces, '--recorders', a.recorders])
    if rc == 2:
      return 2
    if not os.path.isdir(traces) or not any(
        f.endswith('.pftrace') and os.path.getsize(os.path.join(traces, f))
        for f in os.listdir(traces)):
      print('parity.py: no trace was recorded', file=sys.stderr)
      return 2
    # A recording that failed leaves no trace or an empty one: compare the rest.
    good = [os.path.join(traces, f) for f in sorted(os.listdir(traces))
            if f.endswith('.pftrace') and os.path.getsize(os.path.join(traces, f))]
    rc = subprocess.call([py, os.path.join(HERE, 'compare.py'), '--jobs',
                          str(a.jobs), '--report',
                          os.path.join(work, 'report.json')] + good)
    return 1 if rc else 0
  finally:
    if not a.work:
      shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
  sys.exit(main())
