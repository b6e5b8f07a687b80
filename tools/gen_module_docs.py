#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gen_module_docs.py - writes the list of PerfettoSQL modules into
docs/trace-processor.md, between the lines

    <!-- modules:begin (tools/gen_module_docs.py) -->
    <!-- modules:end -->

as a table of each module and its one-line summary, from what the built
shell says (`trace_processor_shell --list-modules`: name, tab, summary,
the first sentence of each module's header comment). With --check it
writes nothing and exits 1 if the docs differ (tests run it, so the list
cannot fall behind the modules).

usage: gen_module_docs.py --tp out/trace_processor_shell [--docs FILE] [--check]
"""
import argparse
import os
import subprocess
import sys

BEGIN = '<!-- modules:begin (tools/gen_module_docs.py) -->'
END = '<!-- modules:end -->'


def table(tp):
    out = subprocess.run([tp, '--list-modules'], capture_output=True, text=True,
                         check=True).stdout
    lines = ['| module | what it gives |', '|--------|---------------|']
    for line in out.splitlines():
        name, _, summary = line.partition('\t')
        summary = summary.replace('|', '\\|')
        lines.append('| `%s` | %s |' % (name, summary))
    return '\n'.join(lines)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument('--tp', required=True)
    ap.add_argument('--docs', default=os.path.join(here, '..', 'docs', 'trace-processor.md'))
    ap.add_argument('--check', action='store_true')
    a = ap.parse_args()
    with open(a.docs) as f:
        text = f.read()
    b, e = text.find(BEGIN), text.find(END)
    if b < 0 or e < b:
        sys.exit('%s: no %s ... %s section' % (a.docs, BEGIN, END))
    new = text[:b + len(BEGIN)] + '\n' + table(a.tp) + '\n' + text[e:]
    if a.check:
        if new != text:
            print('%s: the module list is not what %s lists; run '
                  'tools/gen_module_docs.py --tp %s' % (a.docs, a.tp, a.tp))
            return 1
        return 0
    if new != text:
        with open(a.docs, 'w') as f:
            f.write(new)
    return 0


if __name__ == '__main__':
    sys.exit(main())
