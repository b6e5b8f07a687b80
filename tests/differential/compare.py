#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compare.py - every core table of each trace, our trace processor vs upstream's.

For every trace given (files or folders of *.pftrace) and every core table
it runs `TP -Q "SELECT * FROM <table> ORDER BY <order>" TRACE` with our
trace_processor_shell ($OUT/trace_processor_shell, or --tp) and upstream's
($UPSTREAM_TP, default $SHARED/upstream/bin/trace_processor_shell), and
compares the two outputs line by line (every column, every row; lines
stripped, leading newlines dropped). For `stats`, rows named in
volatile_stats.txt are dropped from both sides first.

Prints one line per (trace, table): `equal`, `differs (N of M lines; ...)`
with up to --diff-lines differing lines (upstream `-`, ours `+`), or
`known: reason` when known.txt lists the pair (by table, or trace-kind
pattern) as a knowing difference. Ends with `N equal, N differ, N known`.

usage: compare.py [--tp OURS] [--up UPSTREAM] [--table T]... [--jobs N]
                  [--report FILE] [--diff-lines N] TRACE_OR_DIR...
Exit status: 0 when nothing unlisted differs, 1 otherwise, 2 when a trace
processor is missing.
"""
import argparse
import concurrent.futures
import csv
import fnmatch
import json
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

# table -> ORDER BY clause (id where the table has one).
TABLES = {
    'args': 'id', 'clock_snapshot': 'id', 'counter': 'id',
    'counter_track': 'id', 'cpu': 'id', 'cpu_counter_track': 'id',
    'cpu_track': 'id', 'ftrace_event': 'id', 'flow': 'id',
    'instant': 'ts, track_id, name, arg_set_id', 'machine': 'id',
    'metadata': 'id', 'process': 'id', 'process_counter_track': 'id',
    'process_track': 'id', 'sched': 'id', 'slice': 'id', 'stats': 'id',
    'thread': 'id', 'thread_counter_track': 'id', 'thread_state': 'id',
    'thread_track': 'id', 'trace_bounds': 'start_ts, end_ts', 'track': 'id',
}


def shared_dir():
  return os.environ.get('SHARED') or os.path.join(TOP, '..', 'shared')


def default_up():
  return os.environ.get('UPSTREAM_TP') or os.path.join(
      shared_dir(), 'upstream', 'bin', 'trace_processor_shell')


def default_ours():
  return os.path.join(TOP, os.environ.get('OUT', 'out'), 'trace_processor_shell')


def read_lines(path):
  out = []
  if os.path.exists(path):
    with open(path) as f:
      for line in f:
        line = line.strip()
        if line and not line.startswith('#'):
          out.append(line)
  return out


def load_known(path):
  """known.txt: `<trace glob>/<table> <reason>` per line."""
  known = []
  for line in read_lines(path):
    key, _, reason = line.partition(' ')
    pat, _, table = key.rpartition('/')
    known.append((pat or '*', table, reason.strip()))
  return known


def known_reason(known, trace, table):
  for pat, t, reason in known:
    if fnmatch.fnmatchcase(table, t) and fnmatch.fnmatchcase(trace, pat):
      return reason
  return None


def normalize(text):
  text = text.lstrip('\n')
  return [s.strip() for s in text.replace('\r\n', '\n').split('\n')]


def drop_volatile(lines, volatile):
  if not lines or not volatile:
    return lines
  hdr = next(csv.reader([lines[0]]), [])
  idx = hdr.index('"name"') if '"name"' in hdr else (
      hdr.index('name') if 'name' in hdr else None)
  out = [lines[0]]
  for line in lines[1:]:
    try:
      row = next(csv.reader([line]))
    except (csv.Error, StopIteration):
      row = None
    if row and idx is not None and idx < len(row) and row[idx] in volatile:
      continue
    out.append(line)
  return out


def run_tp(tp, query, trace, timeout):
  try:
    p = subprocess.Popen([tp, '-Q', query, trace], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                         start_new_session=True)
  except OSError as e:
    return None, 'cannot run %s: %s' % (tp, e)
  try:
    out, err = p.communicate(timeout=timeout)
  except subprocess.TimeoutExpired:
    try:
      os.killpg(p.pid, signal.SIGKILL)
    except OSError:
      p.kill()
    p.communicate()
    return None, 'timeout after %ss' % timeout
  if p.returncode != 0:
    tail = err.decode('utf-8', 'replace').strip().split('\n')[-1:]
    return None, 'exit %d: %s' % (p.returncode, ' '.join(tail)[:200])
  return out.decode('utf-8', 'replace'), None


def compare_one(a, trace, table, volatile):
  q = 'SELECT * FROM %s ORDER BY %s' % (table, TABLES[table])
  up, up_err = run_tp(a.up, q, trace, a.timeout)
  ours, our_err = run_tp(a.tp, q, trace, a.timeout)
  name = os.path.basename(trace)
  if name.endswith('.pftrace'):
    name = name[:-len('.pftrace')]
  res = {'trace': name, 'table': table, 'path': trace}
  if up_err and our_err:
    res.update(state='equal', what='both fail')
    return res
  if up_err or our_err:
    res.update(state='differs', what='upstream: %s; ours: %s' % (
        up_err or 'ok', our_err or 'ok'), diffs=[])
    return res
  e = normalize(up)
  o = normalize(ours)
  if table == 'stats':
    e = drop_volatile(e, volatile)
    o = drop_volatile(o, volatile)
  diffs = []
  for i in range(max(len(e), len(o))):
    x = e[i] if i < len(e) else None
    y = o[i] if i < len(o) else None
    if x != y:
      diffs.append((i + 1, x, y))
  if not diffs:
    res.update(state='equal', what='%d lines' % len(e))
  else:
    res.update(state='differs', what='%d of %d lines differ; rows %d vs %d' % (
        len(diffs), len(e), len(e) - 1, len(o) - 1), diffs=diffs[:a.diff_lines])
  return res


def collect(paths):
  out = []
  for p in paths:
    if os.path.isdir(p):
      out += sorted(os.path.join(p, f) for f in os.listdir(p)
                    if f.endswith('.pftrace'))
    else:
      out.append(p)
  return out


def main():
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument('--tp', default=default_ours())
  ap.add_argument('--up', default=default_up())
  ap.add_argument('--table', action='append')
  ap.add_argument('--jobs', '-j', type=int, default=2)
  ap.add_argument('--timeout', type=float, default=120.0)
  ap.add_argument('--report')
  ap.add_argument('--diff-lines', type=int, default=3)
  ap.add_argument('--known', default=os.path.join(HERE, 'known.txt'))
  ap.add_argument('--volatile', default=os.path.join(HERE, 'volatile_stats.txt'))
  ap.add_argument('traces', nargs='+')
  a = ap.parse_args()
  for tp in (a.tp, a.up):
    if not os.access(tp, os.X_OK):
      print('compare.py: no trace processor at %s' % tp, file=sys.stderr)
      return 2
  tables = a.table or sorted(TABLES)
  for t in tables:
    if t not in TABLES:
      print('compare.py: unknown table %s' % t, file=sys.stderr)
      return 2
  volatile = set(read_lines(a.volatile))
  known = load_known(a.known)
  traces = collect(a.traces)
  jobs = [(tr, t) for tr in traces for t in tables]
  results = []
  with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as ex:
    futs = [ex.submit(compare_one, a, tr, t, volatile) for tr, t in jobs]
    for f in futs:
      r = f.result()
      if r['state'] == 'differs':
        reason = known_reason(known, r['trace'], r['table'])
        if reason:
          r.update(state='known', reason=reason)
      results.append(r)
      line = '%s/%s: %s' % (r['trace'], r['table'], r['state'])
      if r['state'] == 'differs':
        line += ' (%s)' % r['what']
      elif r['state'] == 'known':
        line += ' (%s): %s' % (r['what'], r['reason'])
      print(line, flush=True)
      if r['state'] == 'differs':
        for ln, x, y in r.get('diffs', []):
          print('    line %d\n      - %s\n      + %s' % (
              ln, (x or '<none>')[:300], (y or '<none>')[:300]))
  n = {s: sum(1 for r in results if r['state'] == s)
       for s in ('equal', 'differs', 'known')}
  if a.report:
    with open(a.report, 'w') as f:
      json.dump({'results': results}, f, indent=1)
  print('%d equal, %d differ, %d known' % (n['equal'], n['differs'], n['known']))
  return 1 if n['differs'] else 0


if __name__ == '__main__':
  sys.exit(main())
