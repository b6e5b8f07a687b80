#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tp_stdlib_diff.py - the standard library's modules, ours against upstream's.

For every module of ours (src/trace_processor/sql/modules, the prelude
left out) and every public table or view it creates, runs

  INCLUDE PERFETTO MODULE <module>; SELECT * FROM <table> ORDER BY 1, ..., n

(n: the table's column count in our engine) on every trace of a folder,
with our trace_processor_shell and with upstream's, and compares the
printed text. Functions and macros are called with the queries listed in
tests/data/stdlib_diff/calls.txt (one line each: module, a label, the
SQL; module "builtin" for the built-in functions the modules stand on,
called with no INCLUDE). Private tables (a name starting with '_') are compared when
tests/data/stdlib_diff/private.txt names them: Perfetto's UI reads them. One result line per (module, object, trace):

  ok   <module>/<object>/<trace>
  FAIL <module>/<object>/<trace>: <first differing line, or the error>
  skip <module>/<object>/<trace>: <why>

and last "N passed, N failed, N skipped". A pair named in the known file
(tests/data/stdlib_diff/known.txt: "<module>/<object>[/<trace>] reason")
is reported as skipped with its reason when it differs, and noted when it
matches again.

Each engine runs once per trace over all the modules (the queries are
split again by marker rows); where ours stops on an error, the module it
stopped in fails and the run goes on after it. Upstream's output is cached
under --cache, keyed by its binary, the trace and the query, so a rerun
runs only ours. Python 3 standard library only.
"""

import argparse
import hashlib
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
MODULES_DIR = os.path.join(ROOT, 'src', 'trace_processor', 'sql', 'modules')
DATA_DIR = os.path.join(ROOT, 'tests', 'data', 'stdlib_diff')
MARK = '@@stdlib_diff'
MARK_COL = 'stdlib_diff_mark'
# calls.txt's module name for calls of built-in functions (no INCLUDE).
BUILTIN = 'builtin'
CREATE_RE = re.compile(
    r'^\s*CREATE\s+(?:OR\s+REPLACE\s+)?PERFETTO\s+(TABLE|VIEW)\s+(\w+)',
    re.I | re.M)


def read_private():
  """Private tables and views compared all the same: Perfetto's UI reads them."""
  names = set()
  path = os.path.join(DATA_DIR, 'private.txt')
  if os.path.exists(path):
    with open(path) as fh:
      for line in fh:
        line = line.split('#', 1)[0].strip()
        if line:
          names.add(line)
  return names


def our_modules(only):
  """[(module, [public tables and views])], by module name."""
  private = read_private()
  mods = []
  for dp, _, fn in os.walk(MODULES_DIR):
    for f in fn:
      if not f.endswith('.sql'):
        continue
      rel = os.path.relpath(os.path.join(dp, f[:-4]), MODULES_DIR)
      name = rel.replace(os.sep, '.')
      if name.startswith('prelude.'):
        continue
      if only and not any(name == o or name.startswith(o + '.') for o in only):
        continue
      with open(os.path.join(dp, f)) as fh:
        text = fh.read()
      objs = []
      for _, obj in CREATE_RE.findall(text):
        if obj.startswith('_') and obj not in private:
          continue
        if obj not in objs:
          objs.append(obj)
      mods.append((name, objs))
  mods.sort()
  mods.append((BUILTIN, []))
  return mods


def read_calls():
  """{module: [(label, sql)]} from calls.txt."""
  calls = {}
  path = os.path.join(DATA_DIR, 'calls.txt')
  if not os.path.exists(path):
    return calls
  with open(path) as fh:
    for line in fh:
      line = line.rstrip('\n')
      if not line.strip() or line.lstrip().startswith('#'):
        continue
      parts = line.split('\t', 2)
      if len(parts) != 3:
        sys.exit('%s: want "module<TAB>label<TAB>SQL": %s' % (path, line))
      calls.setdefault(parts[0], []).append((parts[1], parts[2].rstrip(' ;')))
  return calls


def read_known(path):
  known = {}
  if path and os.path.exists(path):
    with open(path) as fh:
      for line in fh:
        line = line.strip()
        if line and not line.startswith('#'):
          key, _, why = line.partition(' ')
          known[key] = why.strip()
  return known


def run_shell(tp, sql, trace, timeout):
  try:
    p = subprocess.run([tp, '-Q', sql, trace], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
  except subprocess.TimeoutExpired:
    return 124, '', 'timed out after %d s' % timeout
  except OSError as e:
    return 127, '', str(e)
  return (p.returncode, p.stdout.decode('utf-8', 'replace'),
          p.stderr.decode('utf-8', 'replace'))


def split_marked(out):
  """{key: text} from output holding marker rows ("<MARK> key")."""
  parts, key, buf = {}, None, []
  for line in out.split('\n'):
    s = line.strip()
    if s.startswith('"' + MARK + ' ') and s.endswith('"'):
      if key is not None:
        parts[key] = buf
      key, buf = s[len(MARK) + 2:-1], []
      continue
    buf.append(line)
  if key is not None:
    parts[key] = buf
  return {k: normalize(v) for k, v in parts.items()}


def normalize(lines):
  """A part's lines stripped, as upstream's diff tests compare them, without
  the blank lines around it and the next marker's header line."""
  out = [l.strip() for l in lines]
  while out and out[-1] == '':
    out.pop()
  if out and out[-1] == '"%s"' % MARK_COL:
    out.pop()
  while out and out[-1] == '':
    out.pop()
  while out and out[0] == '':
    out.pop(0)
  return out


def error_text(err):
  """The message of a failed run: its last line (after any traceback), with
  the module and line of the traceback's last frame."""
  lines = [l for l in err.split('\n') if l.strip() and 'Loading trace' not in l and
           'Trace loaded' not in l and 'Query execution time' not in l]
  if not lines:
    return ''
  where = [l.strip() for l in lines if l.lstrip().startswith(('Module include', 'File '))]
  msg = lines[-1].strip()
  if where:
    msg = '%s (at %s)' % (msg, where[-1])
  return msg[:300]


class Unit:
  """One comparable query: a table's rows or a call's result."""

  def __init__(self, module, obj, sql):
    self.module, self.obj, self.sql = module, obj, sql
    self.key = module + '/' + obj


def run_units(tp, units, trace, timeout):
  """Runs units in as few invocations as it can: {key: (lines | None, error)}."""
  res = {}
  todo = list(units)
  while todo:
    included, stmts = set(), []
    for u in todo:
      if u.module not in included and u.module != BUILTIN:
        stmts.append('INCLUDE PERFETTO MODULE %s' % u.module)
        included.add(u.module)
      stmts.append("SELECT '%s %s' AS %s" % (MARK, u.key, MARK_COL))
      stmts.append(u.sql)
    rc, out, err = run_shell(tp, ';\n'.join(stmts) + ';', trace, timeout)
    parts = split_marked(out)
    if rc == 0:
      for u in todo:
        res[u.key] = (parts.get(u.key), None if u.key in parts else 'no output')
      break
    # Stopped on an error. A unit whose marker printed and then its header
    # is done; the statement after the last one done failed: the next
    # unit's SELECT (its marker printed, no header) or the INCLUDE of the
    # next unit's module (then every unit of that module fails).
    done = [u for u in todo if u.key in parts]
    msg = error_text(err) or 'exit %d' % rc
    if done and not parts[done[-1].key]:
      bad = [done[-1]]
      done = done[:-1]
    else:
      nxt = todo[len(done)] if len(done) < len(todo) else None
      if nxt is None:
        for u in done:
          res[u.key] = (parts[u.key], None)
        break
      bad = [u for u in todo[len(done):] if u.module == nxt.module]
    for u in done:
      res[u.key] = (parts[u.key], None)
    for u in bad:
      res[u.key] = (None, msg)
    rest = todo[len(done):]
    todo = [u for u in rest if u.key not in res]
  return res


def file_hash(path):
  h = hashlib.sha256()
  with open(path, 'rb') as fh:
    for b in iter(lambda: fh.read(1 << 20), b''):
      h.update(b)
  return h.hexdigest()


def upstream_results(up, units, trace, cache, timeout):
  """Upstream's output per unit, from the cache or a run."""
  tag = hashlib.sha256((file_hash(up) + file_hash(trace)).encode()).hexdigest()
  res, missing = {}, []
  for u in units:
    k = hashlib.sha256((tag + u.module + '\0' + u.sql).encode()).hexdigest()
    path = os.path.join(cache, k[:2], k)
    if os.path.exists(path):
      with open(path) as fh:
        text = fh.read()
      if text.startswith('ERR '):
        res[u.key] = (None, text[4:])
      else:
        res[u.key] = (text.split('\n') if text else [], None)
    else:
      missing.append((u, path))
  if missing:
    got = run_units(up, [u for u, _ in missing], trace, timeout)
    for u, path in missing:
      lines, err = got[u.key]
      res[u.key] = (lines, err)
      os.makedirs(os.path.dirname(path), exist_ok=True)
      with open(path + '.tmp', 'w') as fh:
        fh.write('ERR ' + err if lines is None else '\n'.join(lines))
      os.replace(path + '.tmp', path)
  return res


def first_diff(want, got):
  for i in range(max(len(want), len(got))):
    a = want[i] if i < len(want) else '<end>'
    b = got[i] if i < len(got) else '<end>'
    if a != b:
      return 'line %d: upstream %s, ours %s (%d vs %d lines)' % (
          i + 1, a[:200], b[:200], len(want), len(got))
  return 'equal'


def main():
  ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  ap.add_argument('--tp', required=True, help='our trace_processor_shell')
  ap.add_argument('--upstream', required=True, help="upstream's trace_processor_shell")
  ap.add_argument('--traces', required=True, help='folder of .pftrace files')
  ap.add_argument('--cache', default=None, help="upstream outputs' cache folder")
  ap.add_argument('--known', default=os.path.join(DATA_DIR, 'known.txt'))
  ap.add_argument('--module', action='append', default=[],
                  help='only this module (or package prefix); repeatable')
  ap.add_argument('--trace', action='append', default=[],
                  help='only this trace (file name without .pftrace); repeatable')
  ap.add_argument('--timeout', type=int, default=600)
  ap.add_argument('-v', action='store_true', help='print both outputs of a failure')
  a = ap.parse_args()

  mods = our_modules(a.module)
  calls = read_calls()
  known = read_known(a.known)
  traces = sorted(f for f in os.listdir(a.traces) if f.endswith(('.pftrace', '.pb')))
  if a.trace:
    traces = [t for t in traces if os.path.splitext(t)[0] in a.trace]
  if not traces:
    print('skip stdlib_diff/all: no traces in %s' % a.traces)
    print('0 passed, 0 failed, 1 skipped')
    return 0
  cache = a.cache or os.path.join(ROOT, 'out', 'stdlib_diff_cache')

  # Column counts come from our engine (a module that fails to include
  # still gets its tables compared: ordered by the first column only).
  probe = [Unit(m, o, 'SELECT * FROM %s LIMIT 0' % o) for m, objs in mods for o in objs]
  heads = run_units(a.tp, probe, os.path.join(a.traces, traces[0]), a.timeout)
  units = []
  for m, objs in mods:
    for o in objs:
      lines, _ = heads.get(m + '/' + o, (None, None))
      n = len(lines[0].split(',')) if lines else 1
      units.append(Unit(m, o, 'SELECT * FROM %s ORDER BY %s' % (
          o, ', '.join(str(i + 1) for i in range(n)))))
    for label, sql in calls.get(m, []):
      units.append(Unit(m, label, sql))

  passed = failed = skipped = with_rows = 0
  empty, seen_fail, first_fail = {}, {}, {}
  for t in traces:
    tname = os.path.splitext(t)[0]
    path = os.path.join(a.traces, t)
    up = upstream_results(a.upstream, units, path, cache, a.timeout)
    ours = run_units(a.tp, units, path, a.timeout)
    for u in units:
      name = '%s/%s' % (u.key, tname)
      ul, ue = up[u.key]
      ol, oe = ours[u.key]
      if ul is None:
        # A query upstream cannot run checks nothing: fix the call.
        verdict, ok = 'upstream fails (a wrong call?): %s' % ue, False
      elif ol is None:
        verdict, ok = 'ours fails: %s' % oe, False
      else:
        ok = ul == ol
        verdict = first_diff(ul, ol)
      why = known.get(name) or known.get(u.key)
      if ok:
        print('ok   %s' % name)
        passed += 1
        if ul and len(ul) > 1:
          with_rows += 1
        else:
          empty[u.key] = empty.get(u.key, 0) + 1
        if why:
          print('# %s now matches upstream: take it out of %s' % (name, a.known))
      elif why:
        print('skip %s: known difference (%s): %s' % (name, verdict, why))
        skipped += 1
      else:
        # The same failure on several traces is spelled out once.
        if seen_fail.get(u.key) == verdict:
          print('FAIL %s: as on %s' % (name, first_fail[u.key]))
        else:
          print('FAIL %s: %s' % (name, verdict))
          seen_fail[u.key], first_fail[u.key] = verdict, tname
        failed += 1
        if a.v and ul is not None and ol is not None:
          print('  upstream:\n    ' + '\n    '.join(ul[:40]))
          print('  ours:\n    ' + '\n    '.join(ol[:40]))
  # What the traces exercise: equal and empty on every trace proves little.
  never = sorted(k for k, n in empty.items() if n == len(traces))
  print('# %d of %d equal pairs have rows; empty on every trace: %s' % (
      with_rows, passed, ', '.join(never) if never else 'none'))
  print('%d passed, %d failed, %d skipped' % (passed, failed, skipped))
  return 1 if failed else 0


if __name__ == '__main__':
  sys.exit(main())
