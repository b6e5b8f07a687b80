#!/usr/bin/env python3
"""Runs Perfetto's own trace processor diff tests against our shell.

Reads the diff tests of a Perfetto checkout (a git dir such as a bare
mirror, or a work tree), keeps the cases our tools can run -- the trace is
an inline TextProto or a .textproto file in the checkout, the query is SQL
that includes no stdlib module but ours (src/trace_processor/sql/modules),
the expected output is CSV (or an expected
error) -- encodes each trace with pfc_pbtxt, runs

  <tp> --analyze-trace-proto-content --crop-track-events --extra-checks \
       -q query.sql trace.pb

and compares stdout with the expected output the way upstream's runner
does (leading newlines dropped, every line stripped, CRLF -> LF, exit 0).
Prints a per-area table and the first differing line of every failure.
Always exits 0 unless the arguments are wrong.

Nothing is written into the checkout; work files go to a temporary
directory (or --work-dir).

Examples:
  tools/upstream_difftests.py --perfetto /path/to/perfetto/.git \
      --tp out/trace_processor_shell
  tools/upstream_difftests.py --perfetto ~/perfetto --tp out/trace_processor_shell \
      --area parser/sched --filter cpu_freq -v
  tools/upstream_difftests.py ... --peer-tests ../shared/peer-tests
      (cases already in that suite's cases/index.json are counted, not run)

  tools/upstream_difftests.py ... --encoder protoc --python /usr/bin/python3
      (also the python-generated traces: a Python with google.protobuf
      runs each generator with the checkout's test/synth_common.py, given
      descriptor sets protoc makes from the checkout)

Python 3 standard library only (--python names another interpreter).
"""

import argparse
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import types

DIFF_DIR = 'test/trace_processor/diff_tests'
# Set by --python: python-generated traces (test/synth_common.py) are run.
PYTHON_TRACES = False
# The PerfettoSQL modules our trace processor provides: a query that
# includes only these is in scope.
OUR_MODULES_DIR = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), '..', 'src', 'trace_processor',
    'sql', 'modules')


def our_modules():
  names = set()
  for dp, _, fn in os.walk(OUR_MODULES_DIR):
    for f in fn:
      if f.endswith('.sql'):
        rel = os.path.relpath(os.path.join(dp, f[:-4]), OUR_MODULES_DIR)
        names.add(rel.replace(os.sep, '.'))
  return names


OUR_MODULES = our_modules()
DEFAULT_AREAS = [
    'parser/atrace', 'parser/fs', 'parser/ftrace', 'parser/generic_kernel',
    'parser/linux', 'parser/memory', 'parser/parsing', 'parser/power',
    'parser/profiling',
    'parser/process_tracking', 'parser/sched', 'parser/track_event',
    'parser/translated_args', 'parser/ufs'
]
PROTOC_FILES = [
    'protos/perfetto/trace/trace.proto',
    'protos/perfetto/trace/test_extensions.proto',
    'protos/third_party/chromium/chrome_track_event.proto',
    'protos/perfetto/trace/android/android_track_event.proto',
]


def proto_files(root):
  """PROTOC_FILES present under root, plus every third-party file that
  extends TracePacket (ART heap graphs, frame timeline, ...)."""
  files = [f for f in PROTOC_FILES if os.path.isfile(os.path.join(root, f))]
  tp = os.path.join(root, 'protos', 'third_party')
  for dp, _, fn in sorted(os.walk(tp)):
    for f in sorted(fn):
      if not f.endswith('.proto'):
        continue
      path = os.path.join(dp, f)
      with open(path, encoding='utf-8', errors='replace') as fh:
        if re.search(r'^\s*extend\s+[\w.]*TracePacket\b', fh.read(), re.M):
          files.append(os.path.relpath(path, root))
  return files


SHELL_FLAGS = [
    '--analyze-trace-proto-content', '--crop-track-events', '--extra-checks'
]

# ---------------------------------------------------------------- checkout


class Checkout:
  """Read-only access to a Perfetto work tree or git dir."""

  def __init__(self, path, rev):
    self.path = os.path.abspath(path)
    self.rev = rev
    self.git_dir = None
    if os.path.isdir(os.path.join(self.path, DIFF_DIR)):
      self.kind = 'tree'
    else:
      self.kind = 'git'
      self.git_dir = self.path
      r = subprocess.run(['git', '--git-dir', self.git_dir, 'rev-parse', rev],
                         capture_output=True, text=True)
      if r.returncode != 0:
        sys.exit(f'{path}: neither a work tree with {DIFF_DIR} nor a git dir '
                 f'with revision {rev}: {r.stderr.strip()}')
    self.commit = self._commit()

  def _git(self, *args):
    r = subprocess.run(['git', '--git-dir', self.git_dir] + list(args),
                       capture_output=True)
    if r.returncode != 0:
      return None
    return r.stdout

  def _commit(self):
    if self.kind == 'git':
      out = self._git('rev-parse', self.rev)
    else:
      r = subprocess.run(['git', '-C', self.path, 'rev-parse', 'HEAD'],
                         capture_output=True)
      out = r.stdout if r.returncode == 0 else None
    return out.decode().strip() if out else 'unknown'

  def read(self, rel):
    """Bytes of file rel, or None if absent."""
    if self.kind == 'git':
      return self._git('show', f'{self.rev}:{rel}')
    p = os.path.join(self.path, rel)
    if not os.path.isfile(p):
      return None
    with open(p, 'rb') as f:
      return f.read()

  def export_protos(self, dest):
    """Copies the checkout's .proto files (for protoc) under dest."""
    if self.kind == 'tree':
      return self.path
    for rel in self.list_files('protos'):
      if rel.endswith('.proto'):
        data = self.read(rel)
        if data is not None:
          os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
          with open(os.path.join(dest, rel), 'wb') as f:
            f.write(data)
    return dest

  def list_files(self, rel_dir):
    if self.kind == 'git':
      out = self._git('ls-tree', '-r', '--name-only', self.rev, rel_dir + '/')
      return out.decode().split() if out else []
    res = []
    base = os.path.join(self.path, rel_dir)
    for root, _, files in os.walk(base):
      for f in files:
        res.append(os.path.relpath(os.path.join(root, f), self.path))
    return sorted(res)


# ------------------------------------------------- stand-in testing module


def make_testing_module():
  """A stand-in for python.generators.diff_tests.testing: plain records."""
  m = types.ModuleType('python.generators.diff_tests.testing')

  def record(name, fields, defaults=None):
    defaults = defaults or {}

    def init(self, *args, **kw):
      for i, f in enumerate(fields):
        if i < len(args):
          setattr(self, f, args[i])
        elif f in kw:
          setattr(self, f, kw[f])
        else:
          setattr(self, f, defaults.get(f))

    return type(name, (), {'__init__': init, '_fields': fields})

  m.Path = record('Path', ['filename'])
  m.DataPath = type('DataPath', (m.Path,), {})
  for name, fields in [
      ('Metric', ['name']), ('MetricV2SpecTextproto', ['contents']),
      ('StructuredQuery', ['query_id', 'spec_file', 'spec_textproto']),
      ('Json', ['contents']), ('Csv', ['contents']),
      ('RawText', ['contents']), ('TextProto', ['contents']),
      ('BinaryProto', ['message_type', 'contents', 'post_processing']),
      ('Zip', ['members']), ('Tar', ['members', 'macos_style']),
      ('ExpectedError', ['contains']), ('SimpleperfProto', ['records']),
      ('PprofTextproto', ['contents']), ('Systrace', ['contents']),
      ('TraceInjector', ['packet_data_types', 'injected_fields'])
  ]:
    setattr(m, name, record(name, fields))
  m.DiffTestBlueprint = record('DiffTestBlueprint', [
      'trace', 'query', 'out', 'trace_modifier', 'register_files_dir',
      'module_dependencies'
  ])
  m.PrintProfileProto = lambda *a, **k: ''

  class TestSuite:
    pass

  m.TestSuite = TestSuite
  return m


class _Anything(types.ModuleType):
  """Module whose every attribute exists (for unrelated imports)."""

  def __getattr__(self, name):
    if name.startswith('__'):
      raise AttributeError(name)
    return name


def load_suites(checkout, rel_file):
  """Returns [(suite_name, test_name, blueprint)] of one tests .py file."""
  testing = make_testing_module()
  saved = dict(sys.modules)
  for name in ('python', 'python.generators', 'python.generators.diff_tests'):
    sys.modules[name] = types.ModuleType(name)
  sys.modules['python.generators.diff_tests.testing'] = testing

  class Finder:
    """Stubs any other project import (src.*, python.*)."""

    def find_module(self, name, path=None):
      return self if name.split('.')[0] in ('src', 'python') else None

    def find_spec(self, name, path=None, target=None):
      import importlib.util
      if name.split('.')[0] in ('src', 'python') and name not in sys.modules:
        return importlib.util.spec_from_loader(name, self)
      return None

    def create_module(self, spec):
      mod = _Anything(spec.name)
      mod.__path__ = []
      return mod

    def exec_module(self, module):
      pass

  finder = Finder()
  sys.meta_path.insert(0, finder)
  try:
    src = checkout.read(rel_file).decode('utf-8')
    glb = {'__name__': 'difftest_' + re.sub(r'\W', '_', rel_file)}
    exec(compile(src, rel_file, 'exec'), glb)
  finally:
    sys.meta_path.remove(finder)
    for k in list(sys.modules):
      if k not in saved:
        del sys.modules[k]
    sys.modules.update(saved)
  res = []
  for obj in glb.values():
    if (isinstance(obj, type) and issubclass(obj, testing.TestSuite) and
        obj is not testing.TestSuite):
      inst = obj.__new__(obj)
      for attr in sorted(dir(obj)):
        if attr.startswith('test_') and callable(getattr(obj, attr)):
          try:
            bp = getattr(inst, attr)()
          except Exception as e:  # pylint: disable=broad-except
            bp = e
          res.append((obj.__name__, attr[len('test_'):], bp))
  return res, testing


# ------------------------------------------------------- textproto helpers


def _packets(text):
  """Splits a Trace textproto into (prefix, [(start, end)] of 'packet {}')."""
  spans = []
  i, n, depth = 0, len(text), 0
  start = None
  while i < n:
    c = text[i]
    if c == '#':
      j = text.find('\n', i)
      i = n if j < 0 else j + 1
      continue
    if c in '"\'':
      j = i + 1
      while j < n and text[j] != c:
        j += 2 if text[j] == '\\' else 1
      i = j + 1
      continue
    if c in '{<':
      if depth == 0:
        start = i
      depth += 1
    elif c in '}>':
      depth -= 1
      if depth == 0 and start is not None:
        spans.append((start, i))
    i += 1
  return spans


def _direct_fields(body):
  """Names of the top-level fields inside a message body."""
  names = set()
  i, n, depth = 0, len(body), 0
  for m in re.finditer(r'#[^\n]*|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|'
                       r'[{}<>]|\b([A-Za-z_][\w.]*)\s*[:{<]', body):
    tok = m.group(0)
    if tok in ('{', '<'):
      depth += 1
    elif tok in ('}', '>'):
      depth -= 1
    elif m.group(1) and depth == 0:
      names.add(m.group(1))
  return names


def inject(text, injector):
  """Applies a TraceInjector to a Trace textproto (as upstream does)."""
  out, last = [], 0
  for s, e in _packets(text):
    body = text[s + 1:e]
    if _direct_fields(body) & set(injector.packet_data_types):
      extra = ''.join(f' {k}: {json.dumps(v) if isinstance(v, str) else v}'
                      for k, v in injector.injected_fields.items())
      out.append(text[last:e])
      out.append(extra + ' ')
      last = e
  out.append(text[last:])
  return ''.join(out)


# -------------------------------------------------------------- the cases


def normalize(text):
  text = text.lstrip('\n')
  return '\n'.join(s.strip() for s in text.split('\n')).replace('\r\n', '\n')


def classify(checkout, area, rel_dir, bp, testing):
  """Returns (case dict) or (None, reason) for out-of-scope cases."""
  if isinstance(bp, Exception):
    return None, f'blueprint error: {bp}'
  t, q, o = bp.trace, bp.query, bp.out
  case = {}
  # trace
  if isinstance(t, testing.TextProto):
    case['textproto'] = t.contents
  elif isinstance(t, testing.DataPath):
    return None, 'trace: binary test/data file (not in checkout)'
  elif isinstance(t, testing.Path):
    ext = t.filename.rsplit('.', 1)[-1]
    if ext not in ('textproto', 'py'):
      return None, f'trace: {ext} file'
    if ext == 'py' and not PYTHON_TRACES:
      return None, 'trace: python-generated file (no --python)'
    data = checkout.read(f'{rel_dir}/{t.filename}')
    if data is None:
      return None, 'trace: file missing'
    case['py' if ext == 'py' else 'textproto'] = data.decode('utf-8')
  else:
    return None, f'trace: {type(t).__name__}'
  if bp.trace_modifier is not None:
    if 'py' in case:
      return None, 'trace: python-generated file with a trace modifier'
    case['textproto'] = inject(case['textproto'], bp.trace_modifier)
  if bp.register_files_dir is not None:
    return None, 'register_files_dir'
  # query
  if isinstance(q, str):
    sql = q
  elif isinstance(q, testing.Path) and not isinstance(q, testing.DataPath):
    data = checkout.read(f'{rel_dir}/{q.filename}')
    if data is None:
      return None, 'query: file missing'
    sql = data.decode('utf-8')
  else:
    return None, f'query: {type(q).__name__} (metric)'
  included = re.findall(r'\bINCLUDE\s+PERFETTO\s+MODULE\s+([\w.*]+)', sql,
                        re.I)
  if any(m not in OUR_MODULES for m in included):
    return None, 'query: stdlib module'
  if re.search(r'\bRUN_METRIC\b|\btrace_metrics?\b|\btrace_summary\b', sql,
               re.I):
    return None, 'query: metric'
  case['sql'] = sql
  # expected output
  if isinstance(o, testing.Csv):
    case['expected'] = o.contents
  elif isinstance(o, testing.ExpectedError):
    case['error'] = o.contains
  elif isinstance(o, testing.Path) and not isinstance(o, testing.DataPath):
    data = checkout.read(f'{rel_dir}/{o.filename}')
    if data is None:
      return None, 'out: file missing'
    case['expected'] = data.decode('utf-8')
  else:
    return None, f'out: {type(o).__name__}'
  return case, None


def collect(checkout, areas):
  """Returns (cases, skipped) with skipped: [(area, name, reason)]."""
  cases, skipped = [], []
  for area in areas:
    rel_dir = f'{DIFF_DIR}/{area}'
    files = [
        f for f in checkout.list_files(rel_dir)
        if re.search(r'/(tests[^/]*|[^/]*_tests)\.py$', f)
    ]
    for rel_file in files:
      file_dir = os.path.dirname(rel_file)
      try:
        suites, testing = load_suites(checkout, rel_file)
      except Exception as e:  # pylint: disable=broad-except
        skipped.append((area, rel_file, f'cannot load: {e}'))
        continue
      for suite, test, bp in suites:
        name = f'{suite}:{test}'
        case, why = classify(checkout, area, file_dir, bp, testing)
        if case is None:
          skipped.append((area, name, why))
          continue
        case.update(area=area, name=name)
        cases.append(case)
  return cases, skipped


def run_case(case, args, work):
  d = os.path.join(work, case['name'].replace(':', '__'))
  os.makedirs(d, exist_ok=True)
  tp_txt = os.path.join(d, 'trace.textproto')
  with open(tp_txt, 'w') as f:
    f.write(case.get('textproto', ''))
  pb = os.path.join(d, 'trace.pb')
  sql = os.path.join(d, 'query.sql')
  with open(sql, 'w') as f:
    f.write(case['sql'])
  res = dict(name=case['name'], area=case['area'])
  with open(pb, 'wb') as f:
    if 'py' in case:
      # As upstream's runner: the script gets the descriptor sets as
      # arguments, finds synth_common on PYTHONPATH, writes the trace.
      gen = os.path.join(d, 'trace_gen.py')
      with open(gen, 'w') as g:
        g.write(case['py'])
      env = dict(os.environ, PYTHONPATH=args.synth_dir)
      r = subprocess.run([args.python, gen] + args.descriptors, stdout=f,
                         stderr=subprocess.PIPE, env=env)
    elif args.encoder == 'protoc':
      with open(tp_txt, 'rb') as inp:
        r = subprocess.run([
            args.protoc, '--encode=perfetto.protos.Trace', '-I',
            args.proto_root
        ] + args.proto_files, stdin=inp, stdout=f, stderr=subprocess.PIPE, cwd=args.proto_root)
    else:
      r = subprocess.run([args.pbtxt, '--type', 'Trace', 'encode', tp_txt],
                         stdout=f, stderr=subprocess.PIPE)
  if r.returncode != 0:
    err = r.stderr.decode('utf-8', 'replace').strip().splitlines()
    first = (err or ['?'])[0]
    m = re.search(r"unknown field '\w+' in \w+|no field named \"?\w+", first)
    res.update(ok=False, cause='encode', first=first,
               group='encoder: ' + (m.group(0) if m else first))
    return res
  cmd = [args.tp] + SHELL_FLAGS + ['-q', sql, pb]
  try:
    p = subprocess.run(cmd, capture_output=True, timeout=args.timeout,
                       stdin=subprocess.DEVNULL)
  except subprocess.TimeoutExpired:
    res.update(ok=False, cause='timeout', first=f'timeout {args.timeout}s')
    return res
  out = p.stdout.decode('utf-8', 'replace')
  err = p.stderr.decode('utf-8', 'replace')
  if 'error' in case:
    ok = p.returncode != 0 and case['error'] in err
    res.update(ok=ok, cause='expected-error',
               first=f'expected failure containing {case["error"]!r}, got '
               f'exit {p.returncode}')
    return res
  if p.returncode != 0:
    lines = [l for l in err.strip().splitlines() if l.strip()]
    msg = next((l for l in lines if 'rror' in l), lines[0] if lines else '')
    res.update(ok=False, cause='exit',
               first=f'exit {p.returncode}: {msg.strip()}',
               group='query error: ' + re.sub(r'^.*?rror:\s*', '',
                                              msg.strip()).lower())
    return res
  exp, act = normalize(case['expected']), normalize(out)
  if exp == act:
    res.update(ok=True)
    return res
  el, al = exp.split('\n'), act.split('\n')
  i = 0
  while i < min(len(el), len(al)) and el[i] == al[i]:
    i += 1
  e = el[i] if i < len(el) else '<end>'
  a = al[i] if i < len(al) else '<end>'
  cause = 'header' if i == 0 else 'rows'
  res.update(ok=False, cause=cause,
             first=f'line {i + 1}: expected {e!r} got {a!r}',
             group=('wrong header' if i == 0 else
                    'rows missing (output ends early)' if a in ('', '<end>')
                    else 'different values'))
  return res


def main():
  ap = argparse.ArgumentParser(
      description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument('--perfetto', required=True,
                  help='Perfetto work tree or git dir')
  ap.add_argument('--rev', default='HEAD', help='revision (git dir only)')
  ap.add_argument('--tp', required=True, help='our trace_processor_shell')
  ap.add_argument('--pbtxt', help='pfc_pbtxt (default: next to --tp)')
  ap.add_argument('--encoder', choices=('pbtxt', 'protoc'), default='pbtxt',
                  help='textproto encoder: our pfc_pbtxt (default) or protoc '
                  "with the checkout's own protos (all upstream fields)")
  ap.add_argument('--protoc', default='protoc', help='protoc binary')
  ap.add_argument('--python',
                  help='a Python with google.protobuf (e.g. /usr/bin/python3 '
                  'with python3-protobuf): also runs the python-generated '
                  'traces (needs --protoc for the descriptor sets)')
  ap.add_argument('--area', action='append',
                  help='diff_tests sub-directory, e.g. parser/sched '
                  '(repeatable; default: the Linux parser areas)')
  ap.add_argument('--filter', action='append', help='substring of Suite:test')
  ap.add_argument('--peer-tests',
                  help='peer-tests dir; its cases are counted, not run')
  ap.add_argument('--jobs', type=int, default=2)
  ap.add_argument('--timeout', type=float, default=60)
  ap.add_argument('--work-dir', help='keep work files here')
  ap.add_argument('--json', help='write the per-case results here')
  ap.add_argument('-v', '--verbose', action='store_true',
                  help='also list out-of-scope cases with the reason')
  args = ap.parse_args()
  args.pbtxt = args.pbtxt or os.path.join(
      os.path.dirname(os.path.abspath(args.tp)), 'pfc_pbtxt')
  areas = args.area or DEFAULT_AREAS
  checkout = Checkout(args.perfetto, args.rev)
  global PYTHON_TRACES
  PYTHON_TRACES = bool(args.python)

  cases, skipped = collect(checkout, areas)
  if args.filter:
    keep = lambda n: any(f in n for f in args.filter)
    cases = [c for c in cases if keep(c['name'])]
    skipped = [s for s in skipped if keep(s[1])]
  peer = set()
  if args.peer_tests:
    with open(os.path.join(args.peer_tests, 'cases', 'index.json')) as f:
      peer = {c['name'] for c in json.load(f)['cases']}
  known = [c for c in cases if c['name'] in peer]
  todo = [c for c in cases if c['name'] not in peer]

  work = args.work_dir or tempfile.mkdtemp(prefix='upstream_difftests.')
  os.makedirs(work, exist_ok=True)
  if args.encoder == 'protoc':
    args.proto_root = checkout.export_protos(os.path.join(work, 'proto_root'))
    # The trace plus the extensions upstream's diff tests use.
    args.proto_files = proto_files(args.proto_root)
  if args.python:
    args.proto_root = getattr(args, 'proto_root', None) or \
        checkout.export_protos(os.path.join(work, 'proto_root'))
    args.synth_dir = os.path.join(work, 'synth')
    os.makedirs(args.synth_dir, exist_ok=True)
    with open(os.path.join(args.synth_dir, 'synth_common.py'), 'wb') as f:
      f.write(checkout.read('test/synth_common.py') or b'')
    args.descriptors = []
    # synth_common also looks up the Chrome enums, a file of their own.
    for rel in proto_files(args.proto_root) + [
        'protos/third_party/chromium/chrome_enums.proto']:
      out = os.path.join(work, os.path.basename(rel) + '.descriptor')
      subprocess.run([args.protoc, '--include_imports',
                      f'--descriptor_set_out={out}', '-I', args.proto_root,
                      rel], check=True, cwd=args.proto_root)
      args.descriptors.append(out)
  with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
    results = list(ex.map(lambda c: run_case(c, args, work), todo))

  print(f'upstream: {checkout.commit} ({checkout.path})')
  print(f'tp: {args.tp}')
  print(f'encoder: {args.protoc if args.encoder == "protoc" else args.pbtxt}')
  rows = collections.OrderedDict((a, collections.Counter()) for a in areas)
  for a, _, _ in skipped:
    rows[a]['extracted'] += 1
    rows[a]['out_of_scope'] += 1
  for c in known:
    rows[c['area']]['extracted'] += 1
    rows[c['area']]['peer'] += 1
  for r in results:
    rows[r['area']]['extracted'] += 1
    rows[r['area']]['in_scope'] += 1
    rows[r['area']]['passed' if r['ok'] else 'failed'] += 1
  cols = ['extracted', 'out_of_scope', 'peer', 'in_scope', 'passed', 'failed']
  hdr = f'{"area":<26}' + ''.join(f'{c:>13}' for c in cols)
  print()
  print(hdr)
  print('-' * len(hdr))
  tot = collections.Counter()
  for a, cnt in rows.items():
    tot.update(cnt)
    print(f'{a:<26}' + ''.join(f'{cnt[c]:>13}' for c in cols))
  print('-' * len(hdr))
  print(f'{"total":<26}' + ''.join(f'{tot[c]:>13}' for c in cols))
  print('\n(peer: already in --peer-tests, not run; in_scope = run here)')

  why = collections.Counter(r for _, _, r in skipped)
  print('\nOut of scope, by reason:')
  for r, n in why.most_common():
    print(f'  {n:4}  {r}')
  if args.verbose:
    for a, n, r in skipped:
      print(f'    {a}  {n}: {r}')

  fails = [r for r in results if not r['ok']]
  print(f'\nFailures ({len(fails)}):')
  for r in sorted(fails, key=lambda r: (r['area'], r['cause'], r['name'])):
    print(f'  [{r["area"]}] {r["name"]} ({r["cause"]}): {r["first"][:200]}')
  groups = collections.defaultdict(list)
  for r in fails:
    groups[r.get('group', r['cause'])].append(r['name'])
  print('\nFailures by cause (most frequent first):')
  for g, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
    print(f'  {len(names):4}  {g}: {", ".join(sorted(names))}')
  if args.json:
    with open(args.json, 'w') as f:
      json.dump(dict(commit=checkout.commit, results=results,
                     skipped=skipped), f, indent=1)
  return 0


if __name__ == '__main__':
  sys.exit(main())
