#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_layers.py - holds the #include lines of src/ against tools/layers.rules.

Every .c and .h file under src/ belongs to one layer (the longest path of
the rules that holds it). A layer may use the layers the rules name for it
and, transitively, every layer those may use. Each `#include "..."` resolves to a file of src/
(as written from src/, or next to the including file) or to a generated
header (matched as gen/<name>); its layer must be the file's own, or one
the rules let the file's layer use, and when the rules name the files a
layer exports, one of those. `#include <...>` is checked only for the
system headers the rules restrict. Files must not include each other in a
cycle. With --objects, the objects built from the sources under an
`acyclic` path of the rules must not call each other in a cycle either:
a file's object refers to a symbol another object of the path defines
(nm), and such references must form no loop, which #include lines alone
do not show (two .c files sharing one header). Every violation is printed
as `file:line: ...`; the exit status is 1 if there was one. Run by `make
check` and .ci/run; Python 3 stdlib only (and binutils' nm for --objects).

usage: check_layers.py [--rules FILE] [--root DIR] [--graph] [--objects DIR]
  --graph    also print the include graph: files per layer and every
             include between two layers (to measure, not to check)
  --objects  the object tree of a build (out/obj: src/x/y.c -> DIR/src/x/y.o);
             objects not built yet are skipped
"""
import argparse
import fnmatch
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


class Rules:
    def __init__(self):
        self.paths = []       # (path or gen/ pattern, layer), longest first
        self.uses = {}        # layer -> set of layers
        self.exports = {}     # layer -> set of paths (relative to the root)
        self.system = {}      # '<header>' -> set of layers allowed to include it
        self.order = []       # layers in the order the rules define them
        self.acyclic = []     # paths whose objects must not call in a cycle


def parse_rules(path):
    r = Rules()
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            words = line.split()
            kind, rest = words[0], words[1:]
            where = '%s:%d' % (path, n)
            if kind == 'layer' and len(rest) >= 2:
                name = rest[0]
                if name in r.uses:
                    sys.exit('%s: layer %s defined twice' % (where, name))
                r.uses[name] = set()
                r.order.append(name)
                for p in rest[1:]:
                    r.paths.append((p.rstrip('/'), name))
            elif kind in ('uses', 'export') and rest and rest[0].endswith(':'):
                name = rest[0][:-1]
                if name not in r.uses:
                    sys.exit('%s: unknown layer %s' % (where, name))
                if kind == 'uses':
                    for u in rest[1:]:
                        if u not in r.uses:
                            sys.exit('%s: unknown layer %s' % (where, u))
                        r.uses[name].add(u)
                else:
                    r.exports.setdefault(name, set()).update(rest[1:])
            elif kind == 'acyclic' and rest:
                r.acyclic.extend(p.rstrip('/') for p in rest)
            elif kind == 'system' and len(rest) >= 1 and rest[0].startswith('<'):
                for u in rest[1:]:
                    if u not in r.uses:
                        sys.exit('%s: unknown layer %s' % (where, u))
                r.system[rest[0]] = set(rest[1:])
            else:
                sys.exit('%s: cannot parse: %s' % (where, line))
    r.paths.sort(key=lambda e: -len(e[0]))
    # A layer may use what the layers it uses may use: dependencies point down.
    changed = True
    while changed:
        changed = False
        for name, used in r.uses.items():
            more = set().union(*(r.uses[u] for u in used)) - used - {name}
            if more:
                used.update(more)
                changed = True
    return r


def layer_of(rules, path):
    """The layer of a path relative to the root (src/x/y.c or gen/name)."""
    for p, name in rules.paths:
        if '*' in p or '?' in p:
            if fnmatch.fnmatchcase(path, p):
                return name
        elif path == p or path.startswith(p + '/'):
            return name
    return None


def source_files(root):
    out = []
    for dp, dn, fn in os.walk(os.path.join(root, 'src')):
        dn.sort()
        for f in sorted(fn):
            if f.endswith(('.c', '.h')):
                out.append(os.path.relpath(os.path.join(dp, f), root))
    return out


def resolve(root, src, inc):
    """The included file relative to root, searched as the compiler does (the
    including file's folder, include/, src/), or gen/<inc> if in none."""
    for cand in (os.path.join(os.path.dirname(src), inc), os.path.join('include', inc),
                 os.path.join('src', inc)):
        cand = os.path.normpath(cand)
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return 'gen/' + inc


def find_cycles(edges):
    """Strongly connected components of more than one file (or a self-include)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        work = [(v, iter(sorted(edges.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1 or node in edges.get(node, ()):
                    out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def symbols(obj):
    """(defined, undefined) global symbols of an object file, from nm."""
    out = subprocess.run(['nm', obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in 'TDBRCVWG':
            defined.add(f[2])
        elif len(f) == 2 and f[0] == 'U':
            undefined.add(f[1])
    return defined, undefined


def link_edges(root, objects, sources):
    """Source -> sources whose objects define a symbol its object uses."""
    syms = {}
    for src in sources:
        obj = os.path.join(objects, src[:-2] + '.o')
        if os.path.isfile(obj):
            syms[src] = symbols(obj)
    owner = {}
    for src, (defined, _) in syms.items():
        for s in defined:
            owner[s] = src
    edges = {}
    for src, (_, undefined) in syms.items():
        for s in undefined:
            if s in owner and owner[s] != src:
                edges.setdefault(src, set()).add(owner[s])
    return edges, len(syms)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument('--rules', default=os.path.join(here, 'layers.rules'))
    ap.add_argument('--root', default=os.path.dirname(here))
    ap.add_argument('--graph', action='store_true')
    ap.add_argument('--objects')
    a = ap.parse_args()
    rules = parse_rules(a.rules)
    errors = 0
    edges = {}
    n_includes = 0
    between = {}
    per_layer = {}

    def fail(msg):
        nonlocal errors
        errors += 1
        print(msg)

    for src in source_files(a.root):
        mine = layer_of(rules, src)
        if mine is None:
            fail('%s:1: in no layer of %s' % (src, os.path.relpath(a.rules, a.root)))
            continue
        per_layer[mine] = per_layer.get(mine, 0) + 1
        with open(os.path.join(a.root, src), errors='replace') as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                if m.group(1) == '<':
                    hdr = '<%s>' % m.group(2)
                    if hdr in rules.system and mine not in rules.system[hdr]:
                        fail('%s:%d: includes %s: only %s may' %
                             (src, n, hdr, ', '.join(sorted(rules.system[hdr]))))
                    continue
                n_includes += 1
                dst = resolve(a.root, src, m.group(2))
                theirs = layer_of(rules, dst)
                if theirs is None:
                    fail('%s:%d: includes "%s": no such file in src/ and no generated '
                         'header of the rules' % (src, n, m.group(2)))
                    continue
                if not dst.startswith('gen/'):
                    edges.setdefault(src, set()).add(dst)
                if theirs == mine:
                    continue
                between[(mine, theirs)] = between.get((mine, theirs), 0) + 1
                if theirs not in rules.uses[mine]:
                    fail('%s:%d: includes "%s": layer %s may not use layer %s' %
                         (src, n, m.group(2), mine, theirs))
                elif theirs in rules.exports and \
                        os.path.basename(dst) not in rules.exports[theirs] and \
                        dst not in rules.exports[theirs]:
                    fail('%s:%d: includes "%s": layer %s offers only %s' %
                         (src, n, m.group(2), theirs,
                          ', '.join(sorted(rules.exports[theirs]))))
    for comp in find_cycles(edges):
        fail('%s:1: include cycle: %s' % (comp[0], ' -> '.join(comp + [comp[0]])))
    n_objects = 0
    if a.objects:
        for path in rules.acyclic:
            srcs = [f for f in source_files(a.root)
                    if f.endswith('.c') and (f == path or f.startswith(path + '/'))]
            calls, n = link_edges(a.root, a.objects, srcs)
            n_objects += n
            for comp in find_cycles(calls):
                fail('%s:1: call cycle between objects: %s' %
                     (comp[0], ' -> '.join(comp + [comp[0]])))
    if a.graph:
        for name in rules.order:
            if name in per_layer:
                print('files %-28s %d' % (name, per_layer[name]))
        for (x, y), k in sorted(between.items()):
            print('uses  %-28s %-28s %d' % (x, y, k))
    print('check_layers: %d files, %d includes, %d objects, %d violation%s' %
          (sum(per_layer.values()), n_includes, n_objects, errors,
           '' if errors == 1 else 's'))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
