#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gen.py - seeded random trace configs for the parity harness.

Each config is one JSON file (name, kind, what to pass the recorder, which
workload pieces to run) in --out. `kind` is "light" (tracebox light mode:
categories on the command line) or "pbtxt" (a text TraceConfig written beside
the JSON). The space covered: light-mode categories; ftrace groups (sched
with and without compact_sched, irq, workqueue, kmem, block, power,
syscalls, signal, task, oom, ftrace/print); process_stats with and without
polling; sys_stats (meminfo, vmstat, stat, cpufreq, buddyinfo, disk); RING
vs DISCARD; write_into_file; one and two buffers.

usage: gen.py [--seed S] [--n N] --out DIR [--duration-ms MS]
Prints the seed first, then one line per config.
"""
import argparse
import json
import os
import random
import sys

LIGHT_CATEGORIES = ['sched', 'freq', 'idle', 'irq', 'disk', 'sync', 'workq',
                    'memreclaim', 'regulators', 'pagecache', 'thermal']

# ftrace groups -> events (all exist in a stock Linux 6.x tracefs).
FTRACE_GROUPS = {
    'sched': ['sched/sched_switch', 'sched/sched_waking',
              'sched/sched_wakeup', 'sched/sched_wakeup_new',
              'sched/sched_process_fork', 'sched/sched_process_exec',
              'sched/sched_process_exit', 'sched/sched_process_free'],
    'irq': ['irq/irq_handler_entry', 'irq/irq_handler_exit',
            'irq/softirq_entry', 'irq/softirq_exit', 'irq/softirq_raise'],
    'workqueue': ['workqueue/workqueue_execute_start',
                  'workqueue/workqueue_execute_end',
                  'workqueue/workqueue_queue_work',
                  'workqueue/workqueue_activate_work'],
    'kmem': ['kmem/kmalloc', 'kmem/kfree', 'kmem/mm_page_alloc',
             'kmem/mm_page_free', 'kmem/rss_stat'],
    'block': ['block/block_rq_insert', 'block/block_rq_issue',
              'block/block_rq_complete', 'block/block_bio_queue'],
    'power': ['power/cpu_frequency', 'power/cpu_idle',
              'power/suspend_resume', 'power/clock_set_rate'],
    'syscalls': ['raw_syscalls/sys_enter', 'raw_syscalls/sys_exit'],
    'signal': ['signal/signal_generate', 'signal/signal_deliver'],
    'task': ['task/task_newtask', 'task/task_rename'],
    'oom': ['oom/oom_score_adj_update', 'oom/mark_victim'],
    'print': ['ftrace/print'],
}

MEMINFO = ['MEMINFO_MEM_TOTAL', 'MEMINFO_MEM_FREE', 'MEMINFO_MEM_AVAILABLE',
           'MEMINFO_BUFFERS', 'MEMINFO_CACHED', 'MEMINFO_SWAP_FREE',
           'MEMINFO_ACTIVE', 'MEMINFO_INACTIVE', 'MEMINFO_DIRTY',
           'MEMINFO_SLAB']
VMSTAT = ['VMSTAT_NR_FREE_PAGES', 'VMSTAT_NR_DIRTY', 'VMSTAT_PGFAULT',
          'VMSTAT_PGMAJFAULT', 'VMSTAT_NR_FILE_PAGES', 'VMSTAT_PGPGIN',
          'VMSTAT_PGPGOUT']
STAT = ['STAT_CPU_TIMES', 'STAT_IRQ_COUNTS', 'STAT_SOFTIRQ_COUNTS',
        'STAT_FORK_COUNT']


def pick(rng, items, lo, hi):
  k = rng.randint(lo, min(hi, len(items)))
  return sorted(rng.sample(items, k), key=items.index)


def ftrace_ds(rng, groups, buf):
  lines = ['data_sources {', '  config {', '    name: "linux.ftrace"']
  if buf:
    lines.append('    target_buffer: %d' % buf)
  lines.append('    ftrace_config {')
  events = []
  for g in groups:
    evs = FTRACE_GROUPS[g]
    events += evs if g in ('sched', 'syscalls', 'print') else pick(rng, evs, 1, len(evs))
  for e in events:
    lines.append('      ftrace_events: "%s"' % e)
  if 'sched' in groups and rng.random() < 0.5:
    lines.append('      compact_sched { enabled: true }')
  if 'print' in groups and rng.random() < 0.5:
    lines.append('      atrace_apps: "*"')
  lines += ['    }', '  }', '}']
  return lines


def process_ds(rng, buf):
  lines = ['data_sources {', '  config {', '    name: "linux.process_stats"']
  if buf:
    lines.append('    target_buffer: %d' % buf)
  lines.append('    process_stats_config {')
  if rng.random() < 0.7:
    lines.append('      scan_all_processes_on_start: true')
  if rng.random() < 0.5:
    lines.append('      record_thread_names: true')
  if rng.random() < 0.5:
    lines.append('      proc_stats_poll_ms: %d' % rng.choice([100, 250, 500]))
  lines += ['    }', '  }', '}']
  return lines


def sys_stats_ds(rng, buf):
  lines = ['data_sources {', '  config {', '    name: "linux.sys_stats"']
  if buf:
    lines.append('    target_buffer: %d' % buf)
  lines.append('    sys_stats_config {')
  parts = pick(rng, ['meminfo', 'vmstat', 'stat', 'cpufreq', 'buddyinfo',
                     'disk'], 1, 6)
  period = lambda: rng.choice([100, 200, 500])
  if 'meminfo' in parts:
    lines.append('      meminfo_period_ms: %d' % period())
    for c in pick(rng, MEMINFO, 1, 6):
      lines.append('      meminfo_counters: %s' % c)
  if 'vmstat' in parts:
    lines.append('      vmstat_period_ms: %d' % period())
    for c in pick(rng, VMSTAT, 1, 5):
      lines.append('      vmstat_counters: %s' % c)
  if 'stat' in parts:
    lines.append('      stat_period_ms: %d' % period())
    for c in pick(rng, STAT, 1, 4):
      lines.append('      stat_counters: %s' % c)
  if 'cpufreq' in parts:
    lines.append('      cpufreq_period_ms: %d' % period())
  if 'buddyinfo' in parts:
    lines.append('      buddyinfo_period_ms: %d' % period())
  if 'disk' in parts:
    lines.append('      diskstat_period_ms: %d' % period())
  lines += ['    }', '  }', '}']
  return lines


def make_config(rng, idx, duration_ms):
  name = 'cfg%03d' % idx
  work = pick(rng, ['sleepers', 'forks', 'markers', 'io', 'signals',
                    'threads'], 2, 6)
  if rng.random() < 0.2:
    cats = pick(rng, LIGHT_CATEGORIES, 1, 5)
    return {'name': name, 'kind': 'light', 'workload': work,
            'args': ['-t', '%dms' % duration_ms, '-b',
                     rng.choice(['8mb', '16mb'])] + cats}
  two = rng.random() < 0.35
  lines = []
  for _ in range(2 if two else 1):
    lines += ['buffers {', '  size_kb: %d' % rng.choice([4096, 8192, 16384]),
              '  fill_policy: %s' % rng.choice(['RING_BUFFER', 'DISCARD']),
              '}']
  sources = pick(rng, ['ftrace', 'process', 'sys_stats'], 1, 3)
  if 'ftrace' not in sources and rng.random() < 0.6:
    sources.insert(0, 'ftrace')
  for s in sources:
    buf = rng.randint(0, 1) if two else 0
    if s == 'ftrace':
      groups = pick(rng, list(FTRACE_GROUPS), 1, 5)
      lines += ftrace_ds(rng, groups, buf)
    elif s == 'process':
      lines += process_ds(rng, buf)
    else:
      lines += sys_stats_ds(rng, buf)
  lines.append('duration_ms: %d' % duration_ms)
  if rng.random() < 0.4:
    lines.append('write_into_file: true')
    lines.append('file_write_period_ms: %d' % rng.choice([250, 500, 1000]))
  return {'name': name, 'kind': 'pbtxt', 'workload': work,
          'pbtxt': '\n'.join(lines) + '\n'}


def main():
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument('--seed', type=int, default=None)
  ap.add_argument('--n', type=int, default=10)
  ap.add_argument('--out', required=True)
  ap.add_argument('--duration-ms', type=int, default=2500)
  a = ap.parse_args()
  seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 31)
  print('seed %d' % seed, flush=True)
  rng = random.Random(seed)
  os.makedirs(a.out, exist_ok=True)
  for i in range(a.n):
    c = make_config(rng, i, a.duration_ms)
    c['seed'] = seed
    base = os.path.join(a.out, c['name'])
    if c['kind'] == 'pbtxt':
      with open(base + '.pbtxt', 'w') as f:
        f.write(c['pbtxt'])
    with open(base + '.json', 'w') as f:
      json.dump(c, f, indent=1)
    desc = ' '.join(c['args']) if c['kind'] == 'light' else '%d lines' % len(c['pbtxt'].splitlines())
    print('%s %s [%s] %s' % (c['name'], c['kind'], ','.join(c['workload']), desc))
  return 0


if __name__ == '__main__':
  sys.exit(main())
