#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""record.py - records parity configs with our tracebox and upstream's.

For every config JSON in --configs (from gen.py) and every recorder asked
for, it starts the recorder (private socket names, so no other tracing
service is involved), starts workload.sh 0.6 s later and waits for the
recorder to end (its duration is in the config). Writes
<out>/<recorder>_<config>.pftrace and a .log beside it.

Recorders: ours = $OURS_TRACEBOX (default out/tracebox), up =
$UPSTREAM_TRACEBOX (default $SHARED/upstream/bin/tracebox, SHARED defaulting
to ../shared beside the repository).

Needs root and tracefs: it takes the tracefs lock the way
tests/integration/lib.sh's require_tracefs does (tools/tracefs_lock.sh), by
re-running itself under a shell that sourced it, unless the caller holds it.

usage: record.py --configs DIR --out DIR [--recorders ours,up] [--timeout S]
Exit status: 0 when every recording produced a non-empty trace; 2 when
recording is impossible here (no root, no tracefs, no recorder) with the
reason on stderr; 1 otherwise.
"""
import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def shared_dir():
  return os.environ.get('SHARED') or os.path.join(TOP, '..', 'shared')


def recorder_paths():
  return {
      'ours': os.environ.get('OURS_TRACEBOX') or os.path.join(
          TOP, os.environ.get('OUT', 'out'), 'tracebox'),
      'up': os.environ.get('UPSTREAM_TRACEBOX') or os.path.join(
          shared_dir(), 'upstream', 'bin', 'tracebox'),
  }


def tracefs_ready():
  tfs = '/sys/kernel/tracing'
  if os.geteuid() != 0:
    return 'needs root to drive ftrace'
  if not os.path.exists(tfs + '/trace_clock'):
    subprocess.call(['mount', '-t', 'tracefs', 'nodev', tfs],
                    stderr=subprocess.DEVNULL)
  if not os.path.exists(tfs + '/trace_clock'):
    return 'tracefs is not available at ' + tfs
  return None


def take_lock_and_rerun():
  """Re-executes this script under sh with the tracefs lock held."""
  lock = os.path.join(TOP, 'tools', 'tracefs_lock.sh')
  script = '. "$1"; tracefs_lock; shift; exec "$@"'
  argv = ['sh', '-c', script, 'sh', lock, sys.executable] + sys.argv
  os.execvp('sh', argv)


def stop(p):
  try:
    os.killpg(p.pid, signal.SIGKILL)
  except OSError:
    pass
  p.wait()


def record_one(cfg, cfg_dir, rec, tb, out_dir, timeout):
  trace = os.path.join(out_dir, '%s_%s.pftrace' % (rec, cfg['name']))
  log = trace[:-len('.pftrace')] + '.log'
  if os.path.exists(trace):
    os.unlink(trace)
  if cfg['kind'] == 'light':
    cmd = [tb, '-o', trace] + cfg['args']
  else:
    cmd = [tb, '--txt', '-c', os.path.join(cfg_dir, cfg['name'] + '.pbtxt'),
           '-o', trace]
  env = dict(os.environ)
  tag = 'pfc-parity-%d' % os.getpid()
  env['PERFETTO_PRODUCER_SOCK_NAME'] = '@%s-p' % tag
  env['PERFETTO_CONSUMER_SOCK_NAME'] = '@%s-c' % tag
  with open(log, 'w') as lf:
    lf.write('+ %s\n' % ' '.join(cmd))
    lf.flush()
    p = subprocess.Popen(cmd, stdout=lf, stderr=subprocess.STDOUT, env=env,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    # Setup of the recording, not a check: the service needs a moment to
    # configure ftrace before the workload is worth running.
    time.sleep(0.6)
    w = subprocess.Popen(['sh', os.path.join(HERE, 'workload.sh')] +
                         cfg['workload'], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    ok = True
    try:
      rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
      stop(p)
      rc = 'timeout'
      ok = False
    try:
      w.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
      stop(w)
    lf.write('recorder rc=%s\n' % rc)
  if rc != 0 or not os.path.exists(trace) or os.path.getsize(trace) == 0:
    ok = False
  return trace, ok, rc


def main():
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument('--configs', required=True)
  ap.add_argument('--out', required=True)
  ap.add_argument('--recorders', default='ours,up')
  ap.add_argument('--timeout', type=float, default=60.0)
  a = ap.parse_args()
  why = tracefs_ready()
  if why:
    print('record.py: ' + why, file=sys.stderr)
    return 2
  if not os.environ.get('PFC_TRACEFS_LOCKED'):
    take_lock_and_rerun()
  paths = recorder_paths()
  recs = [r for r in a.recorders.split(',') if r]
  for r in recs:
    if r not in paths:
      print('record.py: unknown recorder %s' % r, file=sys.stderr)
      return 2
    if not os.access(paths[r], os.X_OK):
      print('record.py: no %s tracebox at %s' % (r, paths[r]), file=sys.stderr)
      return 2
  os.makedirs(a.out, exist_ok=True)
  bad = 0
  for path in sorted(glob.glob(os.path.join(a.configs, '*.json'))):
    with open(path) as f:
      cfg = json.load(f)
    for r in recs:
      trace, ok, rc = record_one(cfg, a.configs, r, paths[r], a.out, a.timeout)
      size = os.path.getsize(trace) if os.path.exists(trace) else 0
      print('%s %s %s (%d bytes, rc=%s)' % ('recorded' if ok else 'FAILED',
                                            os.path.basename(trace),
                                            cfg['kind'], size, rc), flush=True)
      bad += 0 if ok else 1
  return 1 if bad else 0


if __name__ == '__main__':
  sys.exit(main())
