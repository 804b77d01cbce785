#!/usr/bin/env python3
"""What the intent log's 1 MiB preallocation buys (docs/performance.md).

Replays the log's file pattern (rust/godot-mcp-journal/src/intent_log.rs) in a fresh
temporary folder, preallocated (zero-filled 1 MiB, fsynced, folder fsynced) against
grown (an empty file, fsynced, folder fsynced; extended to the next power of two as
records need it), interleaved, and prints the medians: the creation, and the
`fdatasync` of each of a fresh log's first 64 records (a 4 KiB pre-image and its
head each). The log restarts at offset 0 after every 64 records (a durable fold), so
from the second pass on both write blocks already allocated: the first pass is all
the preallocation can change. Not a test: nothing is asserted.

  scripts/bench-intent-log-prealloc.py [ROUNDS]    # TMPDIR picks the disk
"""
import os, statistics, sys, tempfile, time
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 15
REC = 4096 + 400  # a 4 KiB pre-image and its head
def run(prealloc, d):
    path = os.path.join(d, "intents.log")
    t0 = time.perf_counter()
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    cap = 0
    if prealloc:
        os.write(fd, bytes(1 << 20)); cap = 1 << 20
    os.fsync(fd)
    dfd = os.open(d, os.O_RDONLY); os.fsync(dfd); os.close(dfd)
    create = time.perf_counter() - t0
    lat = []
    tail = 0
    for i in range(64):
        end = tail + REC
        if end > cap:
            cap = 1 << (end - 1).bit_length()
            os.ftruncate(fd, cap)
        t = time.perf_counter()
        os.pwrite(fd, os.urandom(REC), tail)
        os.fdatasync(fd)
        lat.append(time.perf_counter() - t)
        tail = end
    os.close(fd); os.unlink(path)
    return create, lat
res = {True: ([], []), False: ([], [])}
base = os.environ.get("TMPDIR", "/tmp")
for r in range(ROUNDS):
    for p in (True, False) if r % 2 == 0 else (False, True):
        with tempfile.TemporaryDirectory(dir=base) as d:
            c, lat = run(p, d)
            res[p][0].append(c); res[p][1].extend(lat)
for p in (True, False):
    c, lat = res[p]
    print(f"{'preallocated' if p else 'grown       '}: create+fsyncs median {statistics.median(c)*1e3:.2f} ms; "
          f"64 appends: fdatasync median {statistics.median(lat)*1e3:.3f} ms, mean {statistics.mean(lat)*1e3:.3f} ms, "
          f"sum per fresh log {sum(lat)/ROUNDS*1e3:.1f} ms")
