#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""data_loader.py - a training loop's data loader, traced with perfetto_c.

A loader thread reads batches into a bounded queue; a trainer thread takes
them and runs a training step on each. The trace shows, per thread, the
slices load_batch (with read_batch inside, a decorated function) and
train_step, annotated with the batch and step numbers; a flow from each
batch's load_batch to the train_step that consumed it; and counters for
the queue's depth and the loss.

In-process (no daemon; the trace is written to the file):
    PYTHONPATH=out/python python3 examples/python/data_loader.py --out loader.pftrace
    out/trace_processor_shell -q examples/python/data_loader.sql loader.pftrace

With traced (the system backend): start a session whose track_event
config enables "data" and "train" (or "*"), then run it without --out; it
waits up to --wait-s seconds for the session to enable the categories.
"""
import argparse
import queue
import sys
import threading
import time

import perfetto_c as pfc

DATA = pfc.Category("data", "reading batches")
TRAIN = pfc.Category("train", "the training loop")


@pfc.traced("read_batch", DATA)
def read_batch(index, size, read_us):
    # Stands for decoding files: some CPU work, then waiting for I/O.
    checksum = sum((index * size + j) % 251 for j in range(size))
    time.sleep(read_us / 1e6)
    return [checksum] * size


def loader(q, n_batches, size, read_us):
    for i in range(n_batches):
        flow = pfc.new_flow_id()
        with pfc.slice("load_batch", DATA, flow=flow, batch=i, size=size):
            batch = read_batch(i, size, read_us)
        q.put((i, flow, batch))
        pfc.counter("queue_depth", q.qsize(), DATA)
    q.put(None)


def trainer(q, step_us):
    step = 0
    while True:
        item = q.get()
        pfc.counter("queue_depth", q.qsize(), DATA)
        if item is None:
            break
        index, flow, batch = item
        with pfc.slice("train_step", TRAIN, terminating_flow=flow, step=step, batch=index):
            # Stands for the accelerator's work, which releases the GIL.
            time.sleep(step_us / 1e6)
            loss = 1.0 / (step + 1) + (batch[0] % 7) / 1000.0
            pfc.counter("loss", loss, TRAIN)
        step += 1
    pfc.instant("epoch_end", TRAIN, steps=step)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="record in-process into this trace file")
    ap.add_argument("--batches", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--queue", type=int, default=8, help="queue capacity")
    ap.add_argument("--read-us", type=int, default=200, help="I/O wait per batch")
    ap.add_argument("--step-us", type=int, default=2000, help="time per training step")
    ap.add_argument("--wait-s", type=float, default=10.0,
                    help="system backend: how long to wait for a session")
    args = ap.parse_args()

    if args.out:
        pfc.init("in_process", "data_loader", output=args.out)
    else:
        pfc.init("system", "data_loader")
        deadline = time.monotonic() + args.wait_s
        while not (DATA.enabled and TRAIN.enabled):
            if time.monotonic() > deadline:
                print("data_loader: no session enabled 'data' and 'train'", file=sys.stderr)
                return 1
            time.sleep(0.01)

    q = queue.Queue(maxsize=args.queue)
    threads = [
        threading.Thread(target=loader, name="loader",
                         args=(q, args.batches, args.batch_size, args.read_us)),
        threading.Thread(target=trainer, name="trainer", args=(q, args.step_us)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    pfc.shutdown()
    st = pfc.stats()
    print("batches=%d events_written=%d events_dropped=%d"
          % (args.batches, st["events_written"], st["events_dropped"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
