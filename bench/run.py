#!/usr/bin/env python3
"""toroid benchmark suite.

Runs toroid-perf (each figure beside raw DPDK on the same ports, measured in the same run),
UCX's ucx_perftest over TCP loopback and kernel UDP with sockperf, NetPIPE (NPopenmpi)
between two Open MPI ranks over toroid (the libfabric provider) and over TCP, fi_pingpong
over toroid beside libfabric's tcp and udp providers, takes the median of several runs, and
writes docs/benchmarks.md with the machine, the commands and the project's performance
targets.

    bench/run.py [--build DIR] [--runs N] [--out FILE] [--quick] [--only SECTION]

--only netpipe|mpi|fi_pingpong|collectives|veth|shares runs that one section and prints its text, targets and commands
to stdout instead of writing the file (exit 1 when a measurement gave no figure).
Needs root to install ucx-utils, sockperf, netpipe-openmpi and libfabric-bin when they are
missing (apt-get), and for the veth section (af_packet and AF_XDP on a veth pair it makes and
deletes); without root that section says it was not measured.
The file is written only when every measurement gave its figures: a partial run writes
nothing and exits 1, an interrupted one (SIGINT, SIGTERM, SIGHUP) writes nothing and exits
128 + the signal. Every program it starts (toroid-perf, its --memif server, ucx_perftest,
sockperf, toroid-node, fi_pingpong, their clients) runs in its own process group, killed
whatever happens; every client run is bounded by a timeout.
"""
import argparse
import datetime
import json
import os
import platform
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Measured by hand (before/after in alternating turns, and callgrind), kept across runs.
LOCAL_COPY = """## Local completion and buffer reuse

A local reflection completion now means the source buffer may be reused: `trd_inject_reflect()`
in local mode sets `TRD_DF_COPY` on the data, so its packets are built from a copy in the
engine's mbufs instead of zero-copy from the application's memory, and what reliability resends
after the completion is that copy ([completion.md](completion.md#the-source-buffer)). Messages
up to `inline_max` (256 B) were already copied when posted and are unchanged; delivery mode and
plain puts still go zero-copy. Measured before (`ee8e451`) and after this change, both builds
release without LTO, on a shared machine (load average 8 to 18 on its 2 CPUs, so `put_bw`
reached about 18 Gbit/s here, a third of the table above):

| measure | before | after | change |
|---|---:|---:|---|
| instructions per 64 KiB put, `put_bw --inline` (callgrind, N and 2N) | 66 436 (zero-copy) | 87 692 (`--copy`) | +21 256 (+32%, 0.32 per byte): the copy |
| instructions per 64 KiB put + local completion, `reflect_lat --mode local --inline` | 74 163 | 95 445 | +21 282, the same copy |
| instructions per 64 B put + local completion | 9 967 | 9 910 | none (already copied when posted; idle polls vary) |
| `reflect_lat --mode local` 64 KiB p50, 10 alternating turns | 8.32 us | 8.21 us | -3% (faster in 10 of 10 turns) |
| `reflect_lat --mode local` 64 B p50 | 2.24 us | 2.23 us | none |
| `reflect_lat --mode delivery` 64 KiB p50 (unchanged path) | 8.46 us | 8.38 us | none |
| `put_bw` 64 KiB (unchanged path), 10 turns | 18.3 Gbit/s | 17.8 Gbit/s | none (turn-to-turn spread is +-40%) |
| `put_bw --inline` 64 KiB, `--copy` against zero-copy, 7 turns | 32.9 Gbit/s | 34.1 Gbit/s | +8% |

The copy costs instructions and no time here: a zero-copy packet takes two mbufs (header and
an external-buffer segment with its own reference count and free callback), a copied one takes
one, and the receiver then reads bytes that were just written into the mbuf rather than the
application's buffer. A held packet also occupies one mbuf of the pool instead of two. The cost
would show where memory bandwidth, not per-packet work, bounds the engine (NICs at line rate
with large messages); there, delivery mode or plain puts with injection counters keep
zero-copy. Commands: `toroid-perf -- -t reflect_lat -s 64K --mode local`, `-t put_bw -s 64K
[--copy] [--inline]`, the instruction counts with `valgrind --tool=callgrind
--toggle-collect='stream*'` (or `'reflect_loop*'`) on `toroid-perf --no-huge --no-pci
--no-shconf -l 0 -m 512 -- ... -n 200 --inline` and `-n 400`, the difference divided by the
220 messages added.
"""

IPM_NOTE = """Measured with `bench/ipm.py --build build-rel` (the defaults: `put_rate,fifo_rate,get_lat,put_lat,fifo_lat,reflect_lat`, `-n 20000`) on an LTO release build (`meson setup build-rel --buildtype=release`). The same command on a23d340, before the session tokens of #25, gave 605, 747 and 6 846; the tokens cost a few instructions per frame, paid for on the same paths (the loss prior and probe timer work out nothing when nothing is lost, the poll's round robin takes no division, the put's region lookup checks one flag, a bundle's puts and FIFO messages make no call each). The ping-pongs (`put_lat`, `fifo_lat`: a put or memory-FIFO message each way) and `reflect_lat` (a put with local reflection completion into a doorbell) are round trips like the remote get, beside the same raw ping-pong. Before the latency work of #27 item 3 (same method, `-n 5000`): put ping-pong 6 981, FIFO ping-pong 6 994, remote get 6 724, reflection 9 693 ([below](#what-bounds-the-unmet-targets))."""

ANALYSIS = """## What bounds the unmet targets

From the instructions-per-message table above (`bench/ipm.py`, callgrind on
`toroid-perf -- -t put_rate -s 64 --inline`: one thread, repeatable where seconds are not):

* **Message rate (one lcore, net_ring).** A raw loop moves a 64 B frame in 87 instructions
  (allocate, fill, tx, rx, free). Before coalescing the engine spent about 1 500 per 64 B put,
  most of it per frame: the header codec and checksums (~265), the packet build (~255: mbuf,
  Ethernet header, hand-over accounting), reliability (~205: a sequence number, a reference held
  for retransmission, acks), the engine loop (~145). Small messages queued for one node now
  share a frame (bundles, [wire-format.md](wire-format.md#bundles): 16 messages of 64 B per
  1514-byte frame, 32 of 8 B), so those costs are paid once per 16 messages, and a burst's
  destination is checked once at post. Then (#27) what was the same for every message of a
  burst or a frame went to once per burst or frame, 600 to 489 instructions per put (FIFO
  message 595 to 538): a posted descriptor that matches the previous one of its burst in its
  first 16 bytes (op, flags, FIFO, destination, counters, length) is checked only in its own
  fields (post 85 to 57); the bundle builder admits the next descriptor by one masked compare
  against the first, writes the entry header in place, and counts message ids and statistics
  once per frame (engine loop 180 to 103); the receiver looks a region key up, and checks a
  counter, only where it differs from the previous entry's, still checks every entry's
  bounds, counts the counter down once per run of entries (before any FIFO message, remote get
  or event, and at the end of the frame) and reads entry headers in place. The round trips did
  not grow (remote get 6 012 to 5 994, put ping-pong 7 079 to 7 043, FIFO ping-pong 7 098 to
  7 062, reflection 7 006 to 6 970). In seconds the change is inside the noise of a loaded
  machine: `toroid-perf --baseline -t put_rate -s 64 --inline`, six runs each at a load of 7
  to 9 on 2 CPUs, gave 0.28 .. 0.47 x the raw frame rate before and 0.32 .. 0.57 after
  (`fifo_rate`: 0.32 .. 0.52 before, 0.27 .. 0.46 after). Then (#27, second round) the
  ring crossing and the decode went, 492 to 400 instructions per put (FIFO message 540 to
  467): the engine reads a FIFO's descriptors where they lie in its ring (DPDK's zero-copy
  dequeue, which the ring's one consumer allows; the slots go back per burst, and a burst that
  wraps the ring is copied), so DPDK's ring went from 48 to 4; a bundle entry is checked as
  before but decoded into its own fields only (24 bytes, host order) instead of a 56-byte
  `struct trd_pkt` each (header codec 92 to 76, receive 81 to 66); and what was asked per
  message but holds for a burst or a frame is asked once (whether a posted descriptor may be
  checked in its own fields only, the statistics by op, whether the frame is contiguous), the
  engine loop 103 to 88 and the post 60 to 56. The round trips did not grow (`-n 5000`:
  remote get 6 064 to 6 056, put ping-pong 7 184 to 7 168, FIFO ping-pong 7 207 to 7 195,
  reflection 7 045 to 6 995). In seconds, `toroid-perf --baseline --raw-frame 64 -t put_rate
  -s 64 --inline`, three runs each alternating before and after at a load of 9.7 to 9.9 on 2
  CPUs: 0.52, 0.69, 0.52 x the raw frame rate before, 0.63, 0.63, 0.60 after (`fifo_rate`:
  0.48, 0.48, 0.50 before, 0.58, 0.47, 0.62 after). What is left per message (~400): the
  post (~56: its checks and the 64-byte descriptor and 64-byte inline slot written into the
  ring), the bundle loop (~88: admitting the next descriptor, the entry header written, the
  stage walked), the header codec (~76: the entry header written and checked, and the
  frame's header and checksum shared by 16), the receive checks (~66: key, bounds, counter),
  the copies into the slot, the frame and the region (~64), reliability (~17). Further down
  would take a post that builds the wire entry itself, so that the engine only frames it (the
  descriptor's checks, its write into the ring and the entry's encode in one pass).
* **Memory-FIFO messages.** Each message of a bundle used to reach the application in a buffer
  reference of its own (an indirect mbuf attached to the bundle, from the pool, three cache
  lines, a mempool get and put and an atomic reference count per message): 742 instructions
  per message and 0.1 x the raw frame rate, though near the put's count, because of the memory
  those references touched. Now a bundle's messages are read in place in its frame: a message
  block (up to 16 message headers, from a mempool of its own, one per frame) holds one
  reference to the frame for all of them, `trd_rec_fifo_poll()` still hands them out one by
  one, and `trd_msg_free_bulk()` lets go of a block's messages with one count. 583
  instructions per message (the mbuf and mempool stage from 157 to 11), and 3.5 to 4 times the
  rate on one lcore (measured side by side on a loaded machine, `toroid-perf --baseline -t
  fifo_rate -s 64 --inline`: 1.4 .. 2.0 Mmsg/s before, 5.9 .. 7.1 after, 0.68 .. 0.97 x the
  raw rate of frames of the same size). What is left is the put's per-message path and the
  message's own: a message header filled and put in its reception FIFO's ring one by one
  (receive ~136, DPDK's ring ~26), 467 instructions in all.
* **Application thread + engine lcore (0.35 x raw two threads).** The engine lcore does the
  packet work of both nodes while the application only posts; raw DPDK with two threads splits
  a much smaller per-frame cost. Since the last round the two-thread rate went from 6.6 to 22.9
  Mpps with coalescing; the cache lines posters read and the engine writes live apart.
* **Latency over memif (1.9 x raw, reflection 1.9 x).** A message crosses the application/engine
  boundary twice per direction (post, then the poll that builds and sends it; receive, then the
  application's next check), and each side runs a full poll round between those steps; a lone
  message gains nothing from coalescing. Counted with `bench/ipm.py --tests
  put_lat,fifo_lat,get_lat,reflect_lat` (`--inline`: one thread polls node a, then node b, so
  a round trip is a whole number of rounds of both): a put or FIFO ping-pong takes three rounds
  (six node polls: a sends and b receives; b sends; a receives), what the application's two
  crossings need. A remote get took three rounds and a reflection four, more than a put and one
  hop back: the origin built a reflection's `ORDERED` remote get only in the round after its
  data had been flushed, and a target served a received remote get from its engine FIFO only
  in its next round. Both now go in the round they can (the FIFO service flushes the links when
  an ordered descriptor waits for earlier packets; the poll serves the engine FIFO again after
  a receive): two rounds each, checked by `test_reflect` (a, b, a). (Running the reliability
  timers only every fourth idle round saved another ~450 per ping-pong, but a late ack then
  brought a spurious resend on a 27-node torus served by one lcore: taken out again.)
  Instructions per round trip, before and after (callgrind, N and 2N; before with `-n 5000`,
  after with `-n 20000`):

  | round trip (64 B) | before | after | node polls | raw ping-pong |
  |---|---:|---:|---:|---:|
  | put ping-pong | 6 981 | 7 102 | 6 | 553 |
  | FIFO ping-pong | 6 994 | 7 121 | 6 | 553 |
  | remote get | 6 724 | 5 920 | 6 -> 4 | 553 |
  | put + local reflection | 9 693 | 7 931 | 8 -> 4 | 553 |

  The engine loop of the reflection fell from 2 408 to 1 613 (rounds); the reliability stage
  stays at 1 030 .. 1 300 a round trip. What is left is per frame, not per
  round: a round trip carries two frames, and each pays the header codec and checksums
  (~280), the packet build (~250), the link taps (~245), reliability (~375: a sequence number,
  a reference held for retransmission, the ack taken) and DPDK's ring and mbuf work, against
  raw's 277 per frame, and the two idle node polls (five FIFOs checked, two links polled)
  cost a few hundred more. As a sanity check in wall-clock time, one run each on the loaded
  machine (`toroid-perf -- -t TEST -s 64 -n 20000 --inline --baseline`, net_ring, p50):
  remote get 0.72 -> 0.60 us, reflection 1.04 -> 0.79 us, put ping-pong 0.37 -> 0.37 us.
  Wall-clock ratios over memif need two busy processes on 2 CPUs and were not measured in
  this round (the machine was shared by seven builds); the Done-when figures of #27 are
  `make bench`'s to give.

  A reflection still paid one frame more than a remote get: its put and its `ORDERED` remote
  get went as two frames to the same node, each with its header, sequence number, mbuf,
  taps and ack. When the reflection node is the put's target and the put is one copied
  packet, the remote get now follows the put into one bundle (the target acts on the entries
  in order, which is what the ordering asks for; [completion.md](completion.md)). Same
  command, main and this change side by side (`bench/ipm.py --build build-rel --tests
  get_lat,reflect_lat,put_lat -n 5000`, both builds at once on the loaded machine): the
  reflection from 7 955 to 6 998 instructions per round trip (header codec 873 -> 749,
  packet build 717 -> 388, reliability 1 269 -> 1 001, mbuf 313 -> 209), now one
  put-entry (~1 000) above the remote get; the remote get 5 918 -> 6 004 and the put
  ping-pong 7 075 -> 7 071, the same paths within the few percent the idle polls vary by
  (the get's difference is all in the engine loop). `toroid-perf -- -t TEST -s 64 -n 20000
  --inline --baseline`, p50 of two runs each: reflection 0.79 / 0.80 us -> 0.72 / 0.72 us,
  remote get 0.61 / 0.62 us -> 0.62 / 0.62 us. A lone remote get already takes the fewest
  rounds (two frames, four node polls, as a put and its answer); what it pays beyond a put
  and a hop back is the target's side: the carried descriptor checked, queued on the engine
  FIFO's ring and taken off it again before the reply is built, and its source region looked
  up. This round did not cut that further; what is left is per frame, as for the
  ping-pongs.

  What a lone put pays, item by item (#27 item 3: `bench/ipm.py` per function and by reading
  the path; put ping-pong, 7 180 instructions per round trip, 12 node polls). From the post to
  the frame leaving: the post (`trd_inject_bulk`, ~200 a post, a quarter of it zeroing a
  512-entry table of slot counts of which a lone post uses one), the round's start (the
  protocol clock's TSC read, the `in_poll` flag), the links' flush check, the five injection
  FIFOs checked, the FIFO service that builds the frame (~640: the descriptor off the ring,
  route, bundle entry, header and checksum, sequence number, a reference kept for
  retransmission), then the flush right after the service. A lone message waits for no flush
  timer and no next round: there is no flush timer, the bundle closes when the FIFO runs
  empty, and the round flushes the links right after serving the FIFOs. From the frame
  arriving to the counter the peer polls: the receive burst, the header parse and checks
  (~180), reliability (the piggybacked ack taken and the frame it acknowledges freed, ~140;
  the sequence checked, ~120), the delivery and copy (~110 and ~40), the frame freed. No ack
  goes out alone on the way: the receiver's ack waits `ack_delay_us` (20 us) and rides on the
  answer, which comes much sooner (no `send_ack` in the count). What counts while waiting,
  not per message, is the idle node poll, ~300 instructions: the clock, three flush checks
  (two now), five FIFO checks, the links' (and the loopback's) empty receive, and a scan of
  the active peers' timers (~40 a poll, 472 a round trip). In two processes an idle poll is
  not on the path, but a frame that arrives just after the receive check waits for the rest
  of it. The
  timers now run by the protocol clock, every eighth of `ack_delay_us`, and at once for what
  is due at once (an ack for a duplicate or a hole, a challenge, a new session's probe;
  [reliability.md](reliability.md#retransmission-timer)): a round that moves a lone message
  and the idle rounds around it skip them. `bench/ipm.py` could not show it (under valgrind
  2.5 us pass in every poll, so the timers still ran in each; see below); in seconds, alternating runs
  at a load of 7 to 12 on 2 CPUs: `toroid-perf --inline -n 20000` p50 put ping-pong 0.390 /
  0.393 -> 0.382 / 0.383 us, reflection 0.744 / 0.742 -> 0.729 / 0.727 us; over memif
  (two processes, `--baseline`, three alternating runs, ratio to raw) put 1.93 / 1.80 / 1.94
  -> 1.80 / 1.98 / 1.85, reflection 1.84 / 1.98 / 2.06 -> 1.72 / 2.21 / 1.85, the spread of
  the load larger than the change. The round also no longer starts with a flush of every
  link (what a full port left goes first in the flush after the FIFOs): `bench/ipm.py
  --build build-rel -n 5000`, put ping-pong 7 180 -> 7 048 instructions, FIFO ping-pong
  7 203 -> 7 075, remote get 6 064 -> 5 976, reflection 7 044 -> 6 955, the 64 B put stream
  unchanged (491.6 and 491.5 per message, callgrind with 20 000 and 40 000). What is left
  for 1.3 x is per frame, as above: a round trip is two frames of ~3 500 instructions each
  against raw's 277, and a raw memif round trip is about 1.07 us, so what the engine adds to
  it must lose about two thirds; the idle poll's five FIFO checks and the post's table of
  slots are the next small items on the path.

  What a round trip pays while it waits, and what per message (#27 item 3, next round). With
  `--inline` the node polls of a round trip are fixed, not a matter of timing: callgrind's
  call counts, which `bench/ipm.py` now prints, give 6.00 for a put ping-pong and 4.00 for a
  remote get and for a reflection in every run. The idle polls among them (two of the
  ping-pong's six, one of the get's four; about 270 instructions each: the clock, five FIFO
  checks, the flush check, two empty receives) are therefore per message. Only the
  reliability timers followed the clock: they ran every eighth of `ack_delay_us`, and under
  callgrind a poll takes longer than that, so they ran in every poll (463 instructions of a
  remote get, 632 of a put ping-pong, ~115 a poll, with nothing due in any of them). They
  now run when an active peer's earliest deadline comes: each scan works out when that is
  (an ack delay, a tail loss probe, a timeout, a probe), a packet held brings the next scan
  no nearer than its tail loss probe (80 us by default), a frame received no nearer than its
  ack delay (20 us), and a scan runs at least every quarter of `rto_us` while a peer is
  active ([reliability.md](reliability.md#retransmission-timer)). And a round whose FIFOs
  moved nothing no longer flushes the links after them (the flush at its end sends what a
  full port left, in the same order). `bench/ipm.py --build build-rel --tests
  get_lat,put_lat,reflect_lat -n 5000`, which now shows the timers as a stage of their own,
  before and after:

  | round trip (64 B) | before | timers | without timers | after | timers | without timers | node polls |
  |---|---:|---:|---:|---:|---:|---:|---:|
  | remote get | 5 974 | 463 | 5 511 | 5 700 | 184 | 5 516 | 4 |
  | put ping-pong | 7 010 | 632 | 6 378 | 6 691 | 344 | 6 347 | 6 |
  | put + local reflection | 6 914 | 463 | 6 451 | 6 640 | 185 | 6 455 | 4 |

  The cut is in the timers: what a lone message itself pays did not change (the flush
  skipped is ~30 a ping-pong). At full speed a poll is a fraction of a microsecond and the
  timers now scan about once an ack delay instead of every 2.5 us; under callgrind they still
  scan a few times a round trip (an ack delay passes in a few polls there), which is the
  remaining "timers" figure. The rates did not move (`--tests put_rate,fifo_rate -n 20000`:
  397.4 -> 397.6 and 474.8 -> 475.0 instructions per message), nor did the round trips in seconds
  (`toroid-perf -- -t TEST -s 64 -n 20000 --inline --baseline`, two runs each at a load of
  8 on 2 CPUs, p50: put ping-pong 0.36 / 0.36 -> 0.36 / 0.37 us, remote get 0.58 / 0.59 ->
  0.58 / 0.81 us, reflection 1.16 / 0.71 -> 1.11 / 0.70 us, the spread of the load larger
  than any change). What is left without the timers, 5 500 .. 6 450 a round trip against
  raw's 553, is per frame and per node poll and spread thin: outside the poll round itself
  (~115 a node poll in `share_poll`, ~45 in the five FIFO checks) and the header checksum
  (~90 a frame) the largest are the descriptor's start at the sender (~120 a frame: route,
  peer, checks), the entry's encode and the parse (~90 each). The next cuts are
  structural: a remote get's reply built by the receive path instead of going through the
  engine FIFO's ring (its enqueue, dequeue and second check), and a poll that learns which
  injection FIFOs were posted to without reading every ring.
* **Remote gets in a stream.** A remote get was a frame of its own, and so was the put it
  made its target send back. Remote gets queued for one node now share bundles (an entry of
  type 3 carrying the descriptors, [wire-format.md](wire-format.md#bundles)), and so do the
  puts and memory-FIFO messages they make the target send back: `test_bundle` counts 5 000
  gets of 1 to 3 descriptors in 1 077 frames (5 299 before) and their 9 981 replies in 1 064
  (9 997 before). `toroid-perf -- -t get_rate -s 64 --inline -n 200000` (one lcore, net_ring):
  1.33 .. 1.65 M gets/s in about 0.09 M frames/s, against 0.37 M gets/s, one frame each way,
  with remote gets kept out of bundles (two runs each, same build otherwise).
* **64 KiB over memif (0.73 .. 0.79 x raw in the last runs)**: the per-packet work on 1 444-byte packets (a 64 KiB put is
  46 frames, each with its header, sequence number and copy) and the acknowledgements coming
  back. This figure also swings between runs (3 to 55 Gbit/s seen): both busy-polling
  processes must hold a CPU at the same moment, and on 2 shared CPUs other work takes one away
  for milliseconds (measured in [toroid-perf.md](toroid-perf.md#figures-that-vary-between-runs));
  the results table gives its range.
* **One node on 2 lcores (>= 1.6 x one lcore's 64 B put rate): met in some quiet runs, not
  reliably** (two runs of `make bench` on 2026-11-27 with nothing else running: 1.92 x with
  raw DPDK at 1.83 x, then 1.37 x, per-run 1.20 .. 2.02, with raw at 2.01 x; the targets
  above give this run's figure), and not while other work holds a CPU (below). A node splits in two shares (lanes, [architecture.md](architecture.md#threading)),
  and `toroid-perf -- --shares 2 --baseline` measures two such nodes over a net_ring pair of
  two queue pairs, on one lcore, then on two (each lcore posts into its lane's FIFO and polls
  its share of both nodes: two busy threads in all), with raw DPDK on the same queues and
  lcores right before; the table's `put_shares` rows and the target give the median of the
  per-run ratios, raw's beside it (`bench/run.py --only shares` runs that alone, about 2 s a
  run). On this 2-CPU machine shared with other builds, raw DPDK itself does not scale:
  `--only shares --runs 5` at a load average of 8.6 .. 9.1 gave 1 lcore 7.7 Mpps, 2 lcores
  11.1 Mpps, 1.42 x, raw 16.2 and 21.0 Mpps, 1.29 x; single runs at loads of 6 to 7.6 gave
  0.48 .. 1.95 x for the engine and 0.79 .. 1.78 x for raw, the two moving together. Two busy
  threads need two free CPUs, which this machine does not have while others build: the
  1.6 x is for an idle host, and a figure above raw's scaling is as much as this machine can
  show. What the two lanes still shared was looked for and, on the path, found once: DPDK's
  net_ring keeps each queue's packet counts in 24-byte entries of one array and writes them
  on every burst, an empty one too, so queues 0 and 1 shared a cache line both lcores wrote in
  every poll (the store is in the installed driver's receive burst: its disassembly adds the
  burst's count, 0 or not, to the queue's entry); the lanes now use queues 0 and 4
  (`test_bundle` checks the lines apart). Two lcores doing nothing but empty
  `rte_eth_rx_burst()` calls on two queues of one net_ring port (a scratch loop, four
  alternating runs at a load of 7 .. 8) made 58 .. 69 M polls/s each on queues 0 and 1, 78 ..
  85 M on queues 0 and 4. In the put rate that is under the noise here (five alternating runs
  at a load of 6.8 .. 7.4, 2 lcores over 1: 0.85 .. 1.49 before, 1.03 .. 1.48 after; the VM
  has no PMU, so perf counts no cache events). Nothing else is written by both lanes: each share is its own node
  copy, FIFO engine side, links, peers and statistics, each lcore frees the mbufs it allocated
  through its own mempool cache, and each lane counts down its own counter on a cache line of
  its own. On a bigger host what stays shared per packet is what the application shares
  (one counter, reception FIFO or posting thread for several lanes), so N lanes scale with N
  lcores up to the port's queues, as long as RSS or a flow rule per lane brings lane *k* to
  queue *k*; one FIFO towards one peer stays on one lcore. Over memif (`toroid-perf --memif
  server|client --shares 2`, two processes, a port of two queue pairs) both queues carry
  traffic and every put lands once (the `perf_shares` test); with two lcores in each process
  that is four busy threads on 2 CPUs, so no figure of it is given here. Before shares,
  `--cores` gave one lcore per *node* only: one process, net_ring, `toroid-perf --no-huge
  --no-pci --lcores '(0-2)@(0-1)' -- -t put_rate -s 64 -n 2000000 --cores N`, three runs each
  at a load average of 1.5 .. 4: `--cores 1` 14.5 .. 17.6 Mmsg/s, `--cores 2` 0.04 .. 0.09
  Mmsg/s (two engine lcores and the application on 2 CPUs).
* **512-node torus within 5 %**: the two figures differ by 8.5 % the other way (the large torus
  ran faster): the spread between runs of one figure (19.3 .. 23.7 Mpps) is wider than the
  difference; the route and peer lookups do not depend on the torus size.
* **An attached process (#24: a 64 B put at most 1.2 x the instructions of the same put in one
  process; at least 0.7 x the two-process memif put rate).** Instructions (`bench/ipm.py
  --tests attached`, the row `make ipm` prints: `test_vni_mu measure attached|inproc` under
  callgrind, every node acking at every round so that the count does not follow the
  machine's speed, the service's socket look and the reliability timers counted apart):
  3 790 against 3 453 in one process, **1.098 x**, met (4 043 with the clock-driven work,
  1.106 x). Before the service's quiet round, in the same run: 3 980, 1.153 x (the service's
  round 346 instructions a poll with nothing to do, now 155; its socket look walked 256 empty
  connection slots, 1 500 instructions, now 52). Left above the in-process put: the library's
  post (174) and the core's checked copy of the untrusted descriptor (297), the service's
  quiet round (155), less the in-process post (271). Rate (`test_vni_mu measure rate2
  200000`: A posts in batches of 32, B on a second engine over ring links in the test's
  process, not memif; beside `toroid-perf --memif` `put_rate`, alternating rounds, load
  average 5 .. 7): 1.72, 0.94, 1.66 Mput/s against 3.30, 1.85, 4.72 Mmsg/s, 0.35 .. 0.52 x, not
  met. The engine found nothing to do in 98 .. 99% of its rounds: A, which the harness had
  pinned to the engine's CPU until this change (0.33 .. 0.45 Mput/s then), gets too little of
  the other CPU on a loaded 2-CPU machine; the path is not the bound ([vni.md](vni.md#messaging-unit-objects)).
"""


def run_ratio(r, key_fig, key_raw):
    """One run's toroid figure over its raw figure, the two columns the table shows (a rate
    at 64 B: messages per second over raw 64-byte frames per second, `--raw-frame 64`)."""
    f, b = r.get(key_fig), r.get(key_raw) if key_raw else None
    return f / b if f and b else None


class Interrupted(Exception):
    """SIGINT, SIGTERM or SIGHUP: stop at once, kill what we started, write nothing."""


STOPPING = False


def on_signal(signum, _frame):
    global STOPPING
    if not STOPPING:
        STOPPING = True
        raise Interrupted(signal.Signals(signum).name)


LIVE = []  # every process group started, for a last sweep


def spawn(cmd, **kw):
    p = subprocess.Popen(cmd, shell=True, cwd=ROOT, start_new_session=True, **kw)
    LIVE.append(p)
    return p


def _killpg(p):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            break
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            continue
    # the group may outlive its leader
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    if p in LIVE:
        LIVE.remove(p)


def kill_group(p, grace):
    """Wait up to GRACE seconds for P to end by itself (not when interrupted), then kill its
    process group (a shell may have forked the command, so ending the shell alone could leave
    it running). A signal meanwhile does not stop the killing: it is raised after."""
    pending = None
    try:
        if not STOPPING and grace > 0:
            p.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    except Interrupted as e:
        pending = e
    while True:
        try:
            _killpg(p)
            break
        except Interrupted as e:  # the first signal only; STOPPING is set from then on
            pending = e
    if pending is not None:
        raise pending


def kill_all():
    for p in list(LIVE):
        _killpg(p)


LAST_ERR = [""]  # the end of the last sh() command's stderr: why a run gave no figure


def sh(cmd, timeout=300, env=None):
    """Run a command in its own process group, return its stdout; the end of its stderr is kept
    in LAST_ERR (why() reports it). The group is killed when the command ends, outlives
    TIMEOUT, or we are interrupted."""
    p = spawn(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
              env={**os.environ, **(env or {})})
    out, err = "", ""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        err = f"(still running after {timeout} s: killed)"
    finally:
        kill_group(p, 0)
    LAST_ERR[0] = (err or "").strip()
    return out or ""


def why():
    """The last lines of the last sh() command's stderr, to print beside a missing figure."""
    lines = [ln for ln in LAST_ERR[0].splitlines() if ln.strip()][-6:]
    return "".join("\n      | " + ln[:200] for ln in lines)


def sock_live(path):
    """Whether an engine accepts connections on the VNI socket PATH."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def start_engine(cmd, sock, wait=30.0):
    """Start toroid-node (CMD) serving SOCK and wait until it accepts connections: a socket
    file left by an engine that was killed, or one bound but not yet listening, is not enough
    (a client started then is refused). Returns (process, None) or (process, reason)."""
    if os.path.exists(sock) and not sock_live(sock):
        os.unlink(sock)
    p = start_server(cmd)
    end = time.monotonic() + wait
    while time.monotonic() < end:
        if p.poll() is not None:
            return p, f" (toroid-node ended, exit {p.returncode})"
        if sock_live(sock):
            return p, None
        time.sleep(0.05)
    return p, f" (toroid-node not listening within {wait:.0f} s)"


def start_server(cmd, env=None):
    """A server in its own process group: stop_server() ends it and all it started."""
    return spawn(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                 env={**os.environ, **(env or {})})


def interrupt_group(p):
    """SIGINT to P's process group, as Ctrl-C would send it: the shell that spawn() runs the
    command in waits for the command and does not pass a signal on, so SIGINT to the shell
    alone leaves the engine running until stop_server()'s grace is over."""
    try:
        os.killpg(p.pid, signal.SIGINT)
    except ProcessLookupError:
        pass


def stop_server(p, grace=10):
    """Wait up to GRACE seconds for the server to end by itself (none when interrupted), then
    kill its group."""
    kill_group(p, grace)


def spread(values):
    """(min, median, max) of the figures that were given, or None."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    return (min(values), statistics.median(values), max(values))


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def json_lines(out):
    res = []
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                res.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return res


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


class Suite:
    def __init__(self, args):
        self.args = args
        self.perf = os.path.join(args.build, "apps", "toroid-perf", "toroid-perf")
        self.rows = []      # (section, test, size, figure, unit, raw, ratio, command, spread)
        self.cpu_share = {}  # memif client command: CPU time of server + client / (2 x wall)
        self.commands = []
        self.missing = []   # commands that gave no figure: the run is incomplete

    def perf_runs(self, section, opts, key_fig, unit, key_raw=None, label=None):
        """Run toroid-perf RUNS times; record medians of figure, raw and ratio per test."""
        cmd = f"{self.perf} -- {opts} --json"
        self.commands.append(cmd)
        per = {}
        for _ in range(self.args.runs):
            got = json_lines(sh(cmd))
            if not got:
                self.missing.append(cmd)
            for r in got:
                k = (r["test"], r["size"])
                per.setdefault(k, []).append(r)
        for (test, size), rs in sorted(per.items()):
            figs = [r.get(key_fig) for r in rs]
            raw = med([r.get(key_raw) for r in rs]) if key_raw else None
            ratio = med([run_ratio(r, key_fig, key_raw) for r in rs]) if key_raw else None
            self.rows.append((section, label or test, size, med(figs), unit, raw, ratio, cmd,
                              spread(figs)))
        return per

    def shares_runs(self, opts):
        """toroid-perf --shares 2 --baseline RUNS times: two nodes of two shares over a net_ring
        pair of two queue pairs, on one lcore, then one lcore per share, raw DPDK on the same
        queues first. Rows for 1 and 2 lcores (each against raw on as many lcores); returns
        the per-run (scale, raw_scale): 2 lcores over 1, the engine's and raw's."""
        cmd = f"{self.perf} -- --shares 2 --baseline {opts} --json"
        self.commands.append(cmd)
        per, scales = {}, []
        for _ in range(self.args.runs):
            got = [r for r in json_lines(sh(cmd)) if r.get("test") == "put_shares"]
            if len(got) != 2:
                self.missing.append(cmd)
                continue
            for r in got:
                per.setdefault(r["lcores"], []).append(r)
            two = next(r for r in got if r["lcores"] == 2)
            scales.append((two.get("scale"), two.get("raw_scale")))
        for lc, rs in sorted(per.items()):
            figs = [r.get("mpps") for r in rs]
            self.rows.append(("net_ring", f"put_shares, 2 shares on {lc} lcore{'s' if lc > 1 else ''}",
                              64, med(figs), "Mpps", med([r.get("raw_mpps") for r in rs]),
                              med([run_ratio(r, "mpps", "raw_mpps") for r in rs]), cmd,
                              spread(figs)))
        return scales

    def memif_runs(self, opts):
        sock = f"/tmp/toroid-bench-{os.getpid()}.sock"
        tag = os.getpid()
        srv = (f"{self.perf} --no-huge --no-pci --no-shconf --file-prefix tb-srv-{tag} -m 512 -l 0 "
               f"--log-level lib.eal:error -- --memif server --one-off --memif-socket {sock} -t all")
        cli = (f"{self.perf} --no-huge --no-pci --no-shconf --file-prefix tb-cli-{tag} -m 512 -l 1 "
               f"--log-level lib.eal:error -- --memif client --memif-socket {sock} "
               f"{opts} --baseline --json")
        self.commands.append(srv + " &")
        self.commands.append(cli)
        per = {}
        for _ in range(self.args.runs):
            if os.path.exists(sock):
                os.unlink(sock)
            cpu0, t0 = children_cpu(), time.monotonic()
            p = start_server(srv)
            try:
                time.sleep(0.5)
                out = sh(cli, timeout=300)
            finally:
                stop_server(p, grace=20)
            # two busy-polling processes: how much of the time did they get the CPU?
            self.cpu_share.setdefault(cli, []).append(
                (children_cpu() - cpu0) / (2 * (time.monotonic() - t0)))
            got = json_lines(out)
            if not got:
                self.missing.append(cli + why())
            for r in got:
                per.setdefault((r["test"], r["size"]), []).append(r)
        for (test, size), rs in sorted(per.items()):
            if test.endswith("_ratio"):
                continue  # allreduce_ratio: a figure of two tests, not a row of its own
            lat = "p50" in rs[0]
            kf = "p50" if lat else ("gbps_l2" if "_bw" in test else "mpps")
            kr = "raw_p50" if lat else ("raw_gbps_l2" if "_bw" in test else "raw_mpps")
            figs = [r.get(kf) for r in rs]
            raw = med([r.get(kr) for r in rs])
            ratio = med([run_ratio(r, kf, kr) for r in rs])
            unit = "us p50" if lat else ("Gbit/s L2" if "_bw" in test else "Mpps")
            self.rows.append(("memif", test, size, med(figs), unit, raw, ratio, cli,
                              spread(figs)))
        return per

    def ucx(self):
        if shutil.which("ucx_perftest") is None:
            return None
        env = {"UCX_TLS": "tcp", "UCX_NET_DEVICES": "lo"}
        res = {}
        for test, n in (("ucp_put_bw", 200000), ("tag_lat", 20000)):
            vals = []
            cmd = f"ucx_perftest 127.0.0.1 -t {test} -s 64 -n {n} -c 1"
            self.commands.append(f"UCX_TLS=tcp UCX_NET_DEVICES=lo ucx_perftest -c 0 & {cmd}")
            for _ in range(self.args.runs):
                srv = start_server("ucx_perftest -c 0", env=env)
                try:
                    time.sleep(1)
                    out = sh(cmd, timeout=120, env=env)
                finally:
                    stop_server(srv, grace=30)
                n_before = len(vals)
                for line in out.splitlines():
                    if line.startswith("Final:"):
                        f = line.split()
                        # Final: iters p50 avg overall bw_avg bw_overall rate_avg rate_overall
                        vals.append(float(f[8]) / 1e6 if test.endswith("_bw") else float(f[2]))
                if len(vals) == n_before:
                    self.missing.append(cmd)
            res[test] = med(vals)
        return res

    def sockperf(self):
        if shutil.which("sockperf") is None:
            return None
        lat, rate = [], []
        srv_cmd = "taskset -c 0 sockperf sr -i 127.0.0.1 -p 11111"
        pp = "taskset -c 1 sockperf ping-pong -i 127.0.0.1 -p 11111 -m 64 -t 3"
        tp = "taskset -c 1 sockperf throughput -i 127.0.0.1 -p 11111 -m 64 -t 3"
        self.commands += [srv_cmd + " &", pp, tp]
        for _ in range(self.args.runs):
            srv = start_server(srv_cmd)
            n_lat, n_rate = len(lat), len(rate)
            try:
                time.sleep(0.5)
                for line in sh(pp, timeout=60).splitlines():
                    if "percentile 50.000" in line:
                        lat.append(float(line.split("=")[-1]))
                for line in sh(tp, timeout=60).splitlines():
                    if "Message Rate is" in line:
                        rate.append(float(line.split("Message Rate is")[1].split()[0]) / 1e6)
            finally:
                stop_server(srv, grace=0)
            if len(lat) == n_lat:
                self.missing.append(pp)
            if len(rate) == n_rate:
                self.missing.append(tp)
        return {"p50_us": med(lat), "mpps": med(rate)}


def spread_note(s, bw, runs):
    """What the min .. max column says, with the 64 KiB memif figure's spread and the CPU
    share the memif processes got (docs/toroid-perf.md#figures-that-vary-between-runs)."""
    lines = [f"`toroid` is the median of {runs} runs, `min .. max` their range. "]
    if bw and bw[8]:
        lo, mid, hi = bw[8]
        lines[0] += (f"The 64 KiB put bandwidth over memif spread over {fmt(lo)} .. {fmt(mid)} .. "
                     f"{fmt(hi)} Gbit/s (min .. median .. max)")
        if s.cpu_share.get(bw[7]):
            c = sorted(s.cpu_share[bw[7]])
            lines[0] += (f"; the two busy-polling memif processes ran {100 * c[0]:.0f}% .. "
                         f"{100 * c[-1]:.0f}% of the wall time of their runs (CPU time of "
                         "server and client over twice the wall time)")
        lines[0] += (". Over memif the figures follow the CPU time the two processes get at "
                     "the same moment: on a machine with 2 CPUs any other work deschedules "
                     "one of them and the other waits for its acknowledgements (the cause, "
                     "measured: [toroid-perf.md](toroid-perf.md#figures-that-vary-between-runs)).")
    return lines + [""]


LR_SIZES = (8, 64, 256, 1024, 1444, 4096, 16384, 65536)
NIC_SPEEDS = (1, 10, 25, 40, 50, 100, 200, 400)


def line_rate_table(lr):
    """The line-rate table: per payload size, the frame on the wire and what one lcore moves."""
    out = ["## Line rate, one lcore\n",
           "`toroid-perf -t put_rate -s SIZE --inline` (one lcore posts, packetizes, sends over "
           "a net_ring pair, receives and checks; medians): per payload size the frame on the "
           "wire with toroid's headers (14 + 56 + payload, or 24 more per message in a bundle; "
           "averaged over the frames the link carried), messages and frames per second, the "
           "rate at L2 (frames + FCS) and L1 (+ preamble and gap), and the fastest standard "
           "Ethernet speed one lcore fills at that size. A NIC adds its own per-frame cost: "
           "these figures bound what the engine can give it, not what a port takes.\n",
           "| payload B | frame B on the wire | messages per frame | Mmsg/s | Mframes/s | "
           "Gbit/s L2 | Gbit/s L1 | fills |",
           "|---:|---:|---:|---:|---:|---:|---:|---|"]
    for size, rs in lr:
        mmsg = med([r["mpps"] for r in rs])
        per = med([r["msgs"] / r["frames"] for r in rs])
        l2 = med([r["gbps_l2"] for r in rs])
        l1 = med([r["gbps_l1"] for r in rs])
        mfr = mmsg / per if per else 0
        fb = l2 * 1e3 / 8 / mfr - 4 if mfr else 0
        fills = [v for v in NIC_SPEEDS if v <= l1]
        out.append(f"| {size} | {fb:.0f} | {per:.2f} | {fmt(mmsg)} | {fmt(mfr)} | {l2:.2f} | "
                   f"{l1:.2f} | {str(fills[-1]) + ' GbE' if fills else '< 1 GbE'} |")
    out.append("")
    return out


NP_TOPO = """[torus]
dims = 1x1x1
mode = switched
[node 0]
mac = 02:00:00:00:00:01
procs = 1:0, 1:1
"""


def np_parse(path):
    """NetPIPE's -o file: one line per size, 'bytes Mbit/s seconds' (one-way time)."""
    res = {}
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) >= 3:
                    res[int(p[0])] = (float(p[1]), float(p[2]))
    except (OSError, ValueError):
        pass
    return res


def npmpi(suite):
    """NetPIPE between two Open MPI ranks on this host: over toroid (the OFI MTL with
    libtoroid-fi.so, one toroid-node) and over TCP loopback (ob1 with the tcp BTL). Returns
    {transport: {"lat64_us", "bw_gbps"}} or None when Open MPI or NetPIPE is missing."""
    if shutil.which("NPopenmpi") is None or shutil.which("mpirun") is None:
        return None
    build = suite.args.build
    prov = os.path.join(build, "libfabric")
    node = os.path.join(build, "apps", "toroid-node", "toroid-node")
    upper = 65536 if suite.args.quick else 1 << 20
    mpirun = "mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2"
    res = {}
    with tempfile.TemporaryDirectory(prefix="toroid-np.") as tmp:
        with open(os.path.join(tmp, "np.ini"), "w") as f:
            f.write(NP_TOPO)
        sock = os.path.join(tmp, "np.sock")
        out = os.path.join(tmp, "np.out")
        node_cmd = (f"{node} --no-huge --no-pci -m 512 -l 0 --file-prefix toroid-np -- "
                    f"--topo {tmp}/np.ini --node 0 --vni-socket {sock} -q")
        kinds = {
            "toroid": f"{mpirun} --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "
                      f"toroid -x FI_PROVIDER_PATH={prov} -x TOROID_VNI_SOCKET={sock} "
                      f"NPopenmpi -u {upper} -p 0 -o {out}",
            "tcp": f"{mpirun} --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo "
                   f"NPopenmpi -u {upper} -p 0 -o {out}",
        }
        suite.commands.append(node_cmd.replace(tmp, "/tmp/np") + " &")
        for kind, cmd in kinds.items():
            suite.commands.append(cmd.replace(tmp, "/tmp/np"))
            lat, bw = [], []
            for _ in range(max(1, min(suite.args.runs, 3))):
                srv, bad = start_engine(node_cmd, sock) if kind == "toroid" else (None, None)
                try:
                    if os.path.exists(out):
                        os.unlink(out)
                    if bad is None:
                        sh(cmd, timeout=600)
                finally:
                    if srv is not None:
                        interrupt_group(srv)
                        stop_server(srv, grace=10)
                r = np_parse(out)
                if 64 in r and upper in r:
                    lat.append(r[64][1] * 1e6)
                    bw.append(r[upper][0] / 1000)
                else:
                    suite.missing.append(cmd + (bad or why()))
            res[kind] = {"lat64_us": med(lat), "bw_gbps": med(bw), "upper": upper}
    return res


MPI_PROGS = ("mpi_bw", "mpi_transpose", "mpi_allreduce", "mpi_lat", "mpi_halo", "mpi_halo2d",
             "mpi_self")
MPI_SELF_SIZES = (8, 1048576)  # the sizes of mpi_self the table shows
MPI_LAT_SIZES = (8, 1024, 65536, 1048576)  # the sizes of mpi_lat the table shows
MPI_TOPO = NP_TOPO.replace("procs = 1:0, 1:1", "procs = 1:0, 1:1, 1:2, 1:3")


def mpi_programs(suite):
    """The MPI programs of bench/mpi (ping-pong bandwidth, MPI_Alltoall transpose, MPI_Allreduce
    loop, ping-pong latency of 8 B .. 1 MiB, a halo exchange between compute steps), built with mpicc, with 2 and 4 ranks over toroid (OFI MTL, one toroid-node) and over
    TCP loopback, taking turns. Returns {(prog, ranks, kind): [json, ...]} or None when Open
    MPI is missing."""
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        return None
    build = suite.args.build
    prov = os.path.join(build, "libfabric")
    node = os.path.join(build, "apps", "toroid-node", "toroid-node")
    src = os.path.join(ROOT, "bench", "mpi")
    quick = suite.args.quick
    args = {"mpi_bw": "1048576 " + ("20" if quick else "200"),
            "mpi_transpose": "1024 " + ("4" if quick else "20"),
            "mpi_allreduce": "1024 " + ("200" if quick else "2000"),
            "mpi_lat": "1048576 " + ("100" if quick else "1000"),
            "mpi_halo": "512 " + ("100" if quick else "1000"),
            "mpi_halo2d": "256 " + ("200" if quick else "2000"),
            "mpi_self": "1048576 " + ("1000" if quick else "10000")}
    res = {}
    with tempfile.TemporaryDirectory(prefix="toroid-mpi.") as tmp:
        for prog in MPI_PROGS:
            sh(f"mpicc -O2 -o {tmp}/{prog} {src}/{prog}.c")
            if not os.access(f"{tmp}/{prog}", os.X_OK):
                suite.missing.append(f"mpicc {src}/{prog}.c")
                return None
        with open(os.path.join(tmp, "mpi.ini"), "w") as f:
            f.write(MPI_TOPO)
        sock = os.path.join(tmp, "mpi.sock")
        node_cmd = (f"{node} --no-huge --no-pci -m 512 -l 0 --file-prefix toroid-mpi -- "
                    f"--topo {tmp}/mpi.ini --node 0 --vni-socket {sock} -q")
        suite.commands.append(node_cmd.replace(tmp, "/tmp/mpi") + " &")
        for ranks in (2, 4):
            mpirun = f"mpirun --allow-run-as-root --oversubscribe --bind-to none -np {ranks}"
            kinds = {
                "toroid": f"{mpirun} --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "
                          f"toroid -x FI_PROVIDER_PATH={prov} -x TOROID_VNI_SOCKET={sock}",
                "tcp": f"{mpirun} --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo",
            }
            for prog in MPI_PROGS:
                for kind, run in kinds.items():
                    cmd = f"{run} {tmp}/{prog} {args[prog]}"
                    suite.commands.append(cmd.replace(tmp, "/tmp/mpi"))
                    srv, bad = (start_engine(node_cmd, sock) if kind == "toroid"
                                else (None, None))
                    try:
                        out = sh(cmd, timeout=300) if bad is None else ""
                    finally:
                        if srv is not None:
                            interrupt_group(srv)
                            stop_server(srv, grace=10)
                    got = [r for r in json_lines(out) if r.get("errors") == 0]
                    if not got:
                        suite.missing.append(cmd + (bad or why()))
                    res.setdefault((prog, ranks, kind), []).extend(got)
    return res


def mpi_section(res, load):
    """The MPI programs section of docs/benchmarks.md."""
    out = ["## MPI programs over toroid and over TCP\n",
           "Seven small MPI programs (`bench/mpi/`, built with `mpicc -O2`): `mpi_bw`, a "
           "ping-pong of 1 MiB messages between ranks 0 and 1 (bandwidth of one direction); "
           "`mpi_transpose`, an `MPI_Alltoall` of a 1024 x 1024 matrix of doubles (8 MiB) "
           "split by rows, every element checked; `mpi_allreduce`, `MPI_Allreduce` of 1024 "
           "doubles in a loop, every result checked; `mpi_lat`, a ping-pong of 8 B .. 1 MiB "
           "messages between ranks 0 and 1 (one-way latency, half a round trip; first and "
           "last bytes of every message and every byte of a last round trip checked); "
           "`mpi_halo`, a Jacobi stencil on a 512 x 512 grid split over the ranks, edges "
           "exchanged with `MPI_Irecv`/`MPI_Isend` while the interior is computed, then "
           "`MPI_Waitall` (compute-bound: the ranks compute on every CPU while the messages "
           "move; the grid's sum checked against a serial run); `mpi_halo2d`, a periodic 2-D "
           "halo exchange of 256 x 256 doubles per rank with `MPI_Sendrecv` (columns an "
           "`MPI_Type_vector`) and a stencil per step, every ghost cell checked (with 2 ranks "
           "the grid is 2 x 1: each rank is its own neighbour along the second dimension, so "
           "half its messages go to itself); `mpi_self`, every rank's `MPI_Sendrecv` to itself, "
           "received from itself by name and from `MPI_ANY_SOURCE` (first and last bytes of "
           "every message, every byte of a last one checked). "
           "With 2 and 4 ranks (4 ranks and the engine "
           "oversubscribe the 2 CPUs), over toroid (the OFI MTL, one `toroid-node` on lcore 0, "
           "the topology placing 1:0 .. 1:3) and over TCP loopback (`--mca pml ob1 --mca btl "
           "tcp,self`), one run each, taking turns, with `--bind-to none` (so the provider "
           "moves the toroid ranks off the engine's CPU: docs/libfabric.md, \"Where the "
           "process runs\"); 1-minute load "
           f"average {load[0]:.1f} .. {load[1]:.1f} while this section ran.\n",
           "| program | ranks | toroid | TCP | toroid / TCP |",
           "|---|---:|---:|---:|---:|"]
    if not res:
        out.append("| (Open MPI not installed) | - | - | - | - |")
        out.append("")
        return out
    for prog, key, unit, higher in (("mpi_bw", "gbytes_per_s", "GB/s", True),
                                    ("mpi_transpose", "gbytes_per_s", "GB/s", True),
                                    ("mpi_allreduce", "us_per_call", "us per call", False),
                                    ("mpi_halo", "us_per_step", "us per step", False),
                                    ("mpi_halo2d", "us_per_step", "us per step", False)):
        for ranks in (2, 4):
            t = res.get((prog, ranks, "toroid"), [])
            c = res.get((prog, ranks, "tcp"), [])
            tv = med([r[key] for r in t]) if t else None
            cv = med([r[key] for r in c]) if c else None
            ratio = (tv / cv if higher else cv / tv) if tv and cv else None
            out.append(f"| `{prog}` ({unit}) | {ranks} | {fmt(tv)} | {fmt(cv)} | "
                       f"{fmt(ratio, 2)} x |")
    for size in MPI_LAT_SIZES:
        for ranks in (2, 4):
            t = [r for r in res.get(("mpi_lat", ranks, "toroid"), []) if r.get("size") == size]
            c = [r for r in res.get(("mpi_lat", ranks, "tcp"), []) if r.get("size") == size]
            tv = med([r["us_one_way"] for r in t]) if t else None
            cv = med([r["us_one_way"] for r in c]) if c else None
            ratio = cv / tv if tv and cv else None
            out.append(f"| `mpi_lat` {size} B (us one way) | {ranks} | {fmt(tv)} | {fmt(cv)} | "
                       f"{fmt(ratio, 2)} x |")
    for size in MPI_SELF_SIZES:
        for src in ("self", "any"):
            for ranks in (2, 4):
                pick = lambda kind: [r["us_per_call"] for r in res.get(("mpi_self", ranks, kind), [])
                                     if r.get("size") == size and r.get("source") == src]
                t, c = pick("toroid"), pick("tcp")
                tv = med(t) if t else None
                cv = med(c) if c else None
                ratio = cv / tv if tv and cv else None
                out.append(f"| `mpi_self` {size} B from {src} (us per call) | {ranks} | {fmt(tv)} | "
                           f"{fmt(cv)} | {fmt(ratio, 2)} x |")
    out.append("")
    out.append("The last column is toroid's speed as a multiple of TCP's (above 1: faster).\n")
    return out


def load_avg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError):
        return 0.0


def mpi_run(s):
    lo = load_avg()
    res = mpi_programs(s)
    hi = load_avg()
    return mpi_section(res, (min(lo, hi), max(lo, hi)))


FI_SIZES = (64, 4096, 65536, 1 << 20)
FI_PROVIDERS = ("toroid", "tcp", "udp")
# libfabric's own providers over loopback: without these their first fabric is eth0's address
FI_ENV = {"tcp": {"FI_TCP_IFACE": "lo"}, "udp": {"FI_UDP_IFACE": "lo"}}
FI_PORT0 = 47600  # fi_pingpong's control ports: a fresh one per run (no TIME_WAIT reuse)


def fi_iters(size, quick):
    n = 3000 if size <= 4096 else (1000 if size <= 65536 else 100)
    return max(10, n // 10) if quick else n


def tcp_ports(state):
    """Local TCP ports of this host's sockets in STATE (hex, '0A' LISTEN) or any (None)."""
    ports = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                next(f, None)
                for line in f:
                    p = line.split()
                    if len(p) > 3 and (state is None or p[3] == state):
                        ports.add(int(p[1].rsplit(":", 1)[1], 16))
        except OSError:
            pass
    return ports


def fi_parse(out, size):
    """fi_pingpong's result line ('bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec')
    for one size: (usec_per_xfer, mb_per_s) or None."""
    head = False
    for line in out.splitlines():
        f = line.split()
        if f[:1] == ["bytes"]:
            head = True
            continue
        if head and len(f) >= 8:
            want = {64: "64", 4096: "4k", 65536: "64k", 1 << 20: "1m"}.get(size, str(size))
            if f[0] != want:
                return None
            try:
                return float(f[6]), float(f[5])
            except ValueError:
                return None
    return None


def fi_pingpong(suite):
    """fi_pingpong -e rdm over toroid (libtoroid-fi.so, one toroid-node), libfabric's tcp
    (ofi_rxm) and udp (ofi_rxd) providers over loopback, for FI_SIZES, plus toroid-vni-perf's
    64 B latency on the same engine. Returns {"pp": {(prov, size): {"us": spread, "mbs":
    spread}}, "vni": {"avg": spread, "p50": spread}, "runs": n}; a run without its figure is
    in suite.missing (the section fails loudly, no table is written)."""
    build = suite.args.build
    quick = suite.args.quick
    runs = max(1, min(suite.args.runs, 3))
    prov_dir = os.path.join(build, "libfabric")
    node = os.path.join(build, "apps", "toroid-node", "toroid-node")
    vni_perf = os.path.join(build, "apps", "toroid-vni-perf", "toroid-vni-perf")
    res = {"pp": {}, "vni": {}, "runs": runs, "quick": quick, "load": [os.getloadavg()[0]]}
    for what, path in (("fi_pingpong (libfabric-bin)", shutil.which("fi_pingpong")),
                       ("the toroid provider", os.path.join(prov_dir, "libtoroid-fi.so")),
                       ("toroid-node", node), ("toroid-vni-perf", vni_perf)):
        if not path or not os.path.exists(path):
            suite.missing.append(f"fi_pingpong section: no {what}")
            return res
    used = tcp_ports(None)
    ports = (p for p in range(FI_PORT0, FI_PORT0 + 1000) if p not in used)

    def measure(prov, size, env, eng, label=None):
        """RUNS server + client pairs of one provider and size: True, or False when the engine
        ENG (toroid) has ended or no control port is free (the section stops). LABEL: the
        result's name (default the provider)."""
        it = fi_iters(size, quick)
        base = f"fi_pingpong -p {prov} -e rdm -S {size} -I {it}"
        pre = " ".join(f"{k}={v}" for k, v in FI_ENV.get(prov, {}).items())
        tor = eng is not None and prov == "toroid"
        srv_pre, cli_pre = ((pre, pre) if not tor else
                            ("FI_TOROID_PROC=0", "FI_TOROID_PROC=1"))
        suite.commands.append(f"{srv_pre} {base} -B PORT & {cli_pre} {base} -P PORT 127.0.0.1")
        us, mbs = [], []
        for _ in range(runs):
            fails = []
            got = None
            # a run whose server could not set up (exit 98: a port of the provider's own still
            # in use) is tried again on a fresh control port, at most 3 times; each failure
            # is printed, and a run that never gave a figure leaves the section incomplete
            while got is None and len(fails) < 3:
                if eng is not None and eng.poll() is not None:
                    suite.missing.append(f"toroid-node ended (exit {eng.returncode})")
                    return False
                port = next(ports, None)
                if port is None:
                    suite.missing.append("fi_pingpong: no free control port")
                    return False
                senv = {**env, "FI_TOROID_PROC": "0"} if tor else env
                cenv = {**env, "FI_TOROID_PROC": "1"} if tor else env
                srv = start_server(f"{base} -B {port}", env=senv)
                try:
                    for _ in range(300):  # its control port listens: start the client
                        if port in tcp_ports("0A") or srv.poll() is not None:
                            break
                        time.sleep(0.1)
                    if port in tcp_ports("0A"):
                        got = fi_parse(sh(f"{base} -P {port} 127.0.0.1", timeout=180,
                                          env=cenv), size)
                finally:
                    stop_server(srv, grace=10)
                # the server ends by itself after the last round trip: 0, or the run failed
                if got is None or srv.returncode != 0:
                    fails.append(f"{cli_pre} {base} -P {port} 127.0.0.1 (client "
                                 f"{'no figure' if got is None else 'ok'}, server exit "
                                 f"{srv.returncode}){why()}")
                    print("bench: again after " + fails[-1], file=sys.stderr)
                    got = None
            if got is None:
                suite.missing.extend(fails)
                continue
            us.append(got[0])
            mbs.append(got[1])
        res["pp"][(label or prov, size)] = {"us": spread(us), "mbs": spread(mbs)}
        return True

    # libfabric's providers first, alone: no engine running beside them
    for prov in FI_PROVIDERS:
        if prov != "toroid":
            for size in FI_SIZES:
                if not measure(prov, size, dict(FI_ENV.get(prov, {})), None):
                    return res
    with tempfile.TemporaryDirectory(prefix="toroid-fi.") as tmp:
        with open(os.path.join(tmp, "fi.ini"), "w") as f:
            f.write(NP_TOPO)
        sock = os.path.join(tmp, "fi.sock")
        # --idle-us 0: the engine polls its lcore as a DPDK engine does on its own core (the
        # default naps after 1 ms without work); the tcp runs beside it then have the CPUs a
        # deployment leaves them
        node_cmd = (f"{node} --no-huge --no-pci -m 512 -l 0 --file-prefix toroid-fi -- "
                    f"--topo {tmp}/fi.ini --node 0 --vni-socket {sock} -q --idle-us 0")
        tor = {"FI_PROVIDER_PATH": prov_dir, "TOROID_VNI_SOCKET": sock}
        suite.commands.append(node_cmd.replace(tmp, "/tmp/fi") + " &")
        suite.commands.append(f"export FI_PROVIDER_PATH={prov_dir} "
                              "TOROID_VNI_SOCKET=/tmp/fi/fi.sock")
        eng, bad = start_engine(node_cmd, sock)
        try:
            if bad is not None:
                suite.missing.append(node_cmd + bad)
                return res
            for size in FI_SIZES:
                if not measure("toroid", size, tor, eng):
                    return res
            # the tcp provider again, with the engine's lcore busy: the same CPUs for both
            for size in FI_SIZES:
                if not measure("tcp", size, dict(FI_ENV["tcp"]), eng, label="tcp-busy"):
                    return res
            vcmd = (f"{vni_perf} --mode vni --socket {sock} --iters {fi_iters(64, quick)} "
                    "--wait block --sizes 64 --json")
            suite.commands.append(vcmd.replace(tmp, "/tmp/fi"))
            avg, p50 = [], []
            for _ in range(runs):
                got = [r for r in json_lines(sh(vcmd, timeout=120)) if r.get("size") == 64]
                if not got:
                    suite.missing.append(vcmd + why())
                    continue
                avg.append(got[0]["avg"])
                p50.append(got[0]["p50"])
            res["vni"] = {"avg": spread(avg), "p50": spread(p50)}
        finally:
            interrupt_group(eng)
            stop_server(eng, grace=10)
            res["load"].append(os.getloadavg()[0])
    return res

def fi_targets(fi):
    """(description, measured, met) of the issue's two fi_pingpong targets, when measured."""
    out = []
    t = fi["pp"].get(("toroid", 64), {}).get("us")
    c = fi["pp"].get(("tcp", 64), {}).get("us")
    v = fi["vni"].get("avg")
    if t and c:
        x = t[1] / c[1]
        out.append(("fi_pingpong 64 B over toroid <= 1/3 of libfabric's tcp provider",
                    f"{fmt(t[1], 1)} vs {fmt(c[1], 1)} us = {x:.2f}", x <= 1 / 3))
    cb = fi["pp"].get(("tcp-busy", 64), {}).get("us")
    if t and cb:
        x = t[1] / cb[1]
        out.append(("(the same, the tcp provider with the engine's lcore busy beside it)",
                    f"{fmt(t[1], 1)} vs {fmt(cb[1], 1)} us = {x:.2f}", x <= 1 / 3))
    if t and v:
        x = t[1] / v[1]
        out.append(("fi_pingpong 64 B over toroid <= 2 x toroid-vni-perf on the same engine",
                    f"{fmt(t[1], 1)} vs {fmt(v[1], 1)} us (avg) = {x:.2f} x", x <= 2))
    return out


def fi_section(fi):
    """The fi_pingpong section of docs/benchmarks.md."""
    sz = {64: "64 B", 4096: "4 KiB", 65536: "64 KiB", 1 << 20: "1 MiB"}
    its = ", ".join(f"{fi_iters(s, fi['quick'])} for {sz[s]}" for s in FI_SIZES)
    out = ["## libfabric: fi_pingpong over toroid, tcp and udp\n",
           "`fi_pingpong -e rdm` (package libfabric-bin) between two processes on this host, the "
           "same command for each provider: `toroid` through one `toroid-node` on lcore 0 "
           "(the provider `libtoroid-fi.so` loaded with `FI_PROVIDER_PATH`, "
           "[libfabric.md](libfabric.md#fi_pingpong-on-one-host)), libfabric's `tcp` provider "
           "under `ofi_rxm` and its `udp` provider under `ofi_rxd`, both on loopback "
           "(`FI_TCP_IFACE=lo`, `FI_UDP_IFACE=lo`), measured before the engine starts, and the "
           "`tcp` provider once more while the engine polls its lcore (`--idle-us 0`, as on a "
           "core of its own in a deployment): on this 2-CPU machine that row has the CPU "
           "the toroid processes had. The "
           "figure is fi_pingpong's `usec/xfer` "
           "(average one-way time: half the round trips' total) and its `MB/sec` (bytes of both "
           f"directions over the time, 10^6 B/s); median of {fi['runs']} runs, min .. max "
           f"their range; iterations: {its}. `toroid-vni-perf --wait block` gives the same "
           "engine's latency without libfabric (the VNI API, its average and p50).\n",
           "| provider | " + " | ".join(f"{sz[s]} us/xfer (min .. max)" for s in FI_SIZES) +
           " | 1 MiB MB/s |",
           "|---|" + "---:|" * (len(FI_SIZES) + 1)]
    names = {"toroid": "`toroid`", "tcp": "`tcp` (`ofi_rxm`)", "udp": "`udp` (`ofi_rxd`)",
             "tcp-busy": "`tcp` (`ofi_rxm`), beside the engine polling lcore 0"}
    for prov in FI_PROVIDERS + ("tcp-busy",):
        cells = []
        for s in FI_SIZES:
            u = fi["pp"].get((prov, s), {}).get("us")
            cells.append(f"{fmt(u[1], 1)} ({fmt(u[0], 1)} .. {fmt(u[2], 1)})" if u else "-")
        b = fi["pp"].get((prov, 1 << 20), {}).get("mbs")
        out.append(f"| {names[prov]} | " + " | ".join(cells) + f" | {fmt(b[1], 0) if b else '-'} |")
    a, p = fi["vni"].get("avg"), fi["vni"].get("p50")
    out.append("| `toroid-vni-perf`, same engine (avg / p50) | " +
               (f"{fmt(a[1], 1)} / {fmt(p[1], 1)} ({fmt(a[0], 1)} .. {fmt(a[2], 1)} avg)"
                if a and p else "-") + " | - | - | - | - |")
    out.append("")
    tg = fi_targets(fi)
    if tg:
        out.append("Targets: " + "; ".join(
            f"{d}: {m}, {'met' if ok else 'unmet'}" for d, m, ok in tg) + ".")
        out.append("")
        out.append(fi_analysis(fi))
    out.append("")
    return out


def fi_analysis(fi):
    """One paragraph from the figures: toroid against each peer, where it leads and lags."""
    def us(prov, size):
        u = fi["pp"].get((prov, size), {}).get("us")
        return u[1] if u else None
    sz = {64: "64 B", 4096: "4 KiB", 65536: "64 KiB", 1 << 20: "1 MiB"}
    t, c, u = us("toroid", 64), us("tcp", 64), us("udp", 64)
    v = fi["vni"].get("avg")
    parts = []
    if t and c and u:
        parts.append(f"At 64 B a message over toroid takes {t / c:.2f} x the `tcp` provider's "
                     f"time and {t / u:.2f} x the `udp` provider's")
    if t and v:
        parts.append(f"{t / v[1]:.2f} x the average of the VNI alone on the same engine" +
                     (" (the difference is the provider: its completion queue and matching)"
                      if t > v[1] else ""))
    cb = us("tcp-busy", 64)
    if t and cb:
        parts.append(f"with the engine's lcore busy beside it the `tcp` provider takes "
                     f"{fmt(cb, 1)} us at 64 B, and toroid {t / cb:.2f} x that: on 2 CPUs the "
                     "engine's polling core is what the kernel's TCP path does not need")
    lead = [sz[s] for s in FI_SIZES
            if us("toroid", s) and all(us(p, s) and us("toroid", s) < us(p, s)
                                       for p in FI_PROVIDERS if p != "toroid")]
    text = ", ".join(parts) + ". " if parts else ""
    text += (f"toroid is the fastest of the three at {', '.join(lead)}. " if lead else
             "toroid is the fastest of the three at no size here. ")
    lo, hi = min(fi["load"]), max(fi["load"])
    return text + ("Every figure follows the CPU time its processes get: `fi_pingpong` polls "
                   "its completion queue with each provider and toroid adds the engine's "
                   "lcore, so on a shared 2-CPU machine (1-minute load average "
                   f"{lo:.1f} .. {hi:.1f} while this section ran) other work stretches the "
                   "round trips of all three; the min .. max range shows how far.")


VETH_KINDS = ("af_packet", "af_xdp")
VETH_UNITS = {"put_rate": ("mpps", "Mmsg/s", "raw_mpps"), "put_bw": ("gbps_l2", "Gbit/s L2",
              "raw_gbps_l2"), "put_lat": ("p50", "us p50", "raw_p50"),
              "get_lat": ("p50", "us p50", "raw_p50")}


def veth_ports(suite):
    """toroid-perf --server and --client on the two ends of a veth pair, over net_af_packet and
    net_af_xdp (the kernel's interfaces, nothing unbound): {kind: {(test, size): [result]}}, or
    None without root (no veth pair can be made)."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return None
    tag = os.getpid()
    va, vb = f"tbv{tag}a", f"tbv{tag}b"
    if subprocess.run(["ip", "link", "add", va, "type", "veth", "peer", "name", vb],
                      stderr=subprocess.DEVNULL).returncode != 0:
        return None
    res = {}
    q = suite.args.quick
    try:
        for dev in (va, vb):
            subprocess.run(["ip", "link", "set", dev, "up"], check=True)
        for kind in VETH_KINDS:
            eal = (f"{suite.perf} --no-huge --no-pci --no-shconf -m 512 --log-level lib.eal:error "
                   f"--log-level pmd.net.af_xdp:error")
            srv = f"{eal} -l 0 --file-prefix tb-vs-{tag} --vdev net_{kind}0,iface={va} -- --server"
            cli = f"{eal} -l 1 --file-prefix tb-vc-{tag} --vdev net_{kind}0,iface={vb} -- --client"
            per = res.setdefault(kind, {})
            cmds = [f"{cli} -t put_rate -s 64 -n {20000 if q else 200000} --baseline "
                    "--raw-frame 64 --json",
                    f"{cli} -t put_lat,get_lat -s 64 -n {2000 if q else 20000} --baseline --json",
                    f"{cli} -t put_bw -s 64K -n {2000 if q else 20000} --baseline --json"]
            suite.commands.append(srv + " &")
            suite.commands.extend(cmds)
            p = start_server(srv)
            try:
                time.sleep(1.0)
                for _ in range(suite.args.runs):
                    for cmd in cmds:
                        # af_packet's fanout group may clash with the server's: again
                        got = []
                        for _try in range(3):
                            got = json_lines(sh(cmd, timeout=300))
                            if got:
                                break
                        if not got:
                            suite.missing.append(cmd + why())
                        for r in got:
                            per.setdefault((r["test"], r["size"]), []).append(r)
            finally:
                try:
                    os.killpg(p.pid, signal.SIGTERM)  # the server ends cleanly on it
                except ProcessLookupError:
                    pass
                stop_server(p, grace=10)
    finally:
        subprocess.run(["ip", "link", "del", va], stderr=subprocess.DEVNULL)
    return res


def veth_section(res, runs):
    """The kernel-interface section of docs/benchmarks.md."""
    out = ["## Kernel interfaces: af_packet and AF_XDP on a veth\n",
           "`toroid-perf --server` and `--client` in two processes (lcores 0 and 1) on the two "
           "ends of a veth pair, over `net_af_packet` and over `net_af_xdp` (XDP in the veth's "
           "native mode, copy mode: a veth does no zero-copy): what a kernel interface gives "
           "without unbinding it ([deploying.md](deploying.md#on-a-kernel-interface-af_packet-"
           f"and-af_xdp)). Medians of {runs} runs, each beside raw DPDK on the same ports in the "
           "same run; the rates are counted at the port (`put_rate` in messages: 16 puts of "
           "64 B share a frame). The memif rows of the table above are the same two processes "
           "over shared memory.\n",
           "| port | test | size | toroid | min .. max | unit | raw DPDK | ratio |",
           "|---|---|---|---|---|---|---|---|"]
    if res is None:
        out.append("| (not measured: a veth pair needs root) | - | - | - | - | - | - | - |")
    else:
        for kind in VETH_KINDS:
            for (test, size), rs in sorted(res.get(kind, {}).items(),
                                          key=lambda kv: (list(VETH_UNITS).index(kv[0][0])
                                                          if kv[0][0] in VETH_UNITS else 99,
                                                          kv[0][1])):
                if test not in VETH_UNITS:
                    continue
                key, unit, rkey = VETH_UNITS[test]
                figs = [r.get(key) for r in rs]
                spr = spread(figs)
                rng = f"{fmt(spr[0])} .. {fmt(spr[2])}" if spr else "-"
                out.append(f"| {kind} | {test} | {size} | {fmt(med(figs))} | {rng} | {unit} | "
                           f"{fmt(med([r.get(rkey) for r in rs]))} | "
                           f"{fmt(med([run_ratio(r, key, rkey) for r in rs]))} |")
    out.append("")
    return out


def np_section(np_res):
    """The NetPIPE section of docs/benchmarks.md."""
    out = []
    out.append("## MPI: NetPIPE over toroid and over TCP\n")
    out.append("NetPIPE (`NPopenmpi`, package netpipe-openmpi) between two Open MPI ranks on "
               "this host: over toroid (`--mca pml cm --mca mtl ofi` with the libfabric "
               "provider, docs/libfabric.md, one `toroid-node` on lcore 0) and over TCP "
               "loopback (`--mca pml ob1 --mca btl tcp,self`). Latency is NetPIPE's one-way "
               "time (half a round trip).\n")
    out.append("| transport | 64 B latency | bandwidth at the largest size |")
    out.append("|---|---|---|")
    if np_res:
        for kind, label in (("toroid", "Open MPI over toroid (OFI MTL)"),
                            ("tcp", "Open MPI over TCP loopback")):
            r = np_res.get(kind, {})
            out.append(f"| {label} | {fmt(r.get('lat64_us'), 1)} us | "
                       f"{fmt(r.get('bw_gbps'), 2)} Gbit/s at {r.get('upper', 0) >> 10} KiB |")
    else:
        out.append("| (Open MPI or NetPIPE not installed) | - | - |")
    out.append("")
    return out


# engine collectives against the software ones (docs/collectives.md): sizes of the allreduce
COLL_SIZES = (8, 65536, 1 << 20)


def comb_piece():
    """TRD_COMB_PIECE of include/toroid/wire.h: the bytes of one engine-collective frame."""
    with open(os.path.join(ROOT, "include", "toroid", "wire.h")) as f:
        for line in f:
            if line.startswith("#define TRD_COMB_PIECE "):
                return int(line.split()[2].rstrip("u"))
    raise RuntimeError("no TRD_COMB_PIECE in include/toroid/wire.h")


def coll_runs(suite):
    """toroid-perf allreduce_lat (8 B, 64 KiB, 1 MiB) and barrier_lat, RUNS times each: per
    (test, size) the p50 of every run, and of every ratio line its fields."""
    quick = suite.args.quick
    cmds = [f"{suite.perf} -- -t allreduce_lat -s 8,64K -n {20 if quick else 100} --json",
            f"{suite.perf} -- -t allreduce_lat -s 1M -n {5 if quick else 20} --json",
            f"{suite.perf} -- -t barrier_lat -n {50 if quick else 500} --json"]
    res = {"p50": {}, "ratio": {}, "load": [], "runs": suite.args.runs}
    for cmd in cmds:
        suite.commands.append(cmd)
        for _ in range(suite.args.runs):
            res["load"].append(os.getloadavg()[0])
            got = json_lines(sh(cmd, timeout=900))
            if not any(r["test"].endswith("_ratio") for r in got):
                suite.missing.append(cmd + why())
            for r in got:
                k = (r["test"], r["size"])
                if r["test"].endswith("_ratio"):
                    res["ratio"].setdefault(k, []).append(r)
                elif "p50" in r:
                    res["p50"].setdefault(k, []).append(r["p50"])
    return res


def coll_med(res, test, size):
    v = res["p50"].get((test, size))
    return med(v) if v else None


def coll_targets(res):
    """(description, measured, met) of issue 29's two speed targets, when measured."""
    out = []
    e, w = coll_med(res, "allreduce_eng64", 8), coll_med(res, "allreduce_lat64", 8)
    if e and w:
        x = e / w
        out.append(("engine allreduce of 8 B on 4x4x4 <= 1/3 of the software allreduce",
                    f"{fmt(e, 1)} vs {fmt(w, 1)} us = {x:.3f}", x <= 1 / 3))
    e, ln = coll_med(res, "allreduce_eng", 1 << 20), coll_med(res, "put_link", 1 << 20)
    if e and ln:
        x = ln / e
        out.append(("engine allreduce of 1 MiB on 2x2x2 >= 0.8 x one link's put bandwidth",
                    f"{(1 << 20) / e:.1f} vs {(1 << 20) / ln:.1f} MB/s = {x:.3f}", x >= 0.8))
    return out


def coll_section(res):
    """The engine collectives section of docs/benchmarks.md."""
    sz = {0: "-", 8: "8 B", 65536: "64 KiB", 1 << 20: "1 MiB"}
    out = ["## Collectives: the engines' against the software ones\n",
           "`toroid-perf -t allreduce_lat` and `-t barrier_lat` "
           "([collectives.md](collectives.md#figures)): in one process, the software "
           "collectives (`coll.h`, the main lcore advancing every task's context) and the "
           "engine collectives (`comb.h`, every node posts, the engines combine; the main lcore "
           "only reads the counters) on the same nets, 8 nodes (2x2x2) and 64 (4x4x4), one "
           "engine lcore serving every node of the net; `put_link` is one put of the same size "
           "over one link of the 2x2x2 net, timed the same way (post to the target's counter). "
           f"p50 in microseconds, median of {res['runs']} runs; the ratios are of those medians; "
           "MB/s is the size over the p50.\n",
           "| collective | nodes | size | software us | engine us | engine / software | "
           "engine MB/s | link put MB/s | engine / link |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for test, soft, eng, sizes in (("allreduce", "allreduce_lat", "allreduce_eng", COLL_SIZES),
                                   ("barrier", "barrier_lat", "barrier_eng", (0,))):
        for nodes, suf in ((8, ""), (64, "64")):
            for size in sizes:
                a, b = coll_med(res, soft + suf, size), coll_med(res, eng + suf, size)
                ln = coll_med(res, "put_link", size) if test == "allreduce" else None
                bw = size / b if b and size else None
                lbw = size / ln if ln and size else None
                out.append(f"| {test} | {nodes} | {sz[size]} | {fmt(a, 1)} | {fmt(b, 1)} | "
                           f"{fmt(b / a if a and b else None)} | {fmt(bw, 1)} | "
                           f"{fmt(lbw, 1)} | {fmt(bw / lbw if bw and lbw else None, 4)} |")
    out.append("")
    tg = coll_targets(res)
    if tg:
        out.append("Targets: " + "; ".join(
            f"{d}: {m}, {'met' if ok else 'unmet'}" for d, m, ok in tg) + ".")
        out.append("")
    lo, hi = (min(res["load"]), max(res["load"])) if res["load"] else (0, 0)
    pieces = -(-(1 << 20) // comb_piece())
    out.append("One lcore moves every frame of every node here: a 1 MiB allreduce on 2x2x2 is "
               f"{pieces} pieces up and {pieces} down each of the 7 tree edges "
               f"({14 * pieces} frames, plus their acks) where `put_link` is about 730 frames "
               "(`put_link` is the bandwidth of one link with the lcore doing nothing else), "
               "so the engine allreduce "
               "cannot reach a link's bandwidth in one process; with an engine per node the "
               "edges run in parallel: `toroid-perf --client -t put_bw,allreduce_lat` "
               "measures that with two processes, one engine each, over net_memif, and prints "
               "the allreduce's MB/s against `put_bw`'s (`allreduce_ratio`; about 1.0 at 1 MiB "
               "in one run on this machine, not yet a row of this table: "
               "[collectives.md](collectives.md#figures)). "
               f"1-minute load average {lo:.1f} .. {hi:.1f} while this section ran (2 CPUs).\n")
    return out


def shares_section(s):
    """bench/run.py --only shares: the two put_shares rows and the 2-lcore target."""
    scales = s.shares_runs("-n 4000000")
    out = ["## One node on 2 lcores\n", "| test | toroid | min .. max | raw DPDK | ratio |",
           "|---|---|---|---|---|"]
    for r in s.rows:
        out.append(f"| {r[1]} | {fmt(r[3])} Mpps | "
                   f"{f'{fmt(r[8][0])} .. {fmt(r[8][2])}' if r[8] else '-'} | {fmt(r[5])} Mpps | "
                   f"{fmt(r[6])} |")
    out.append("")
    sc, rs = spread([a for a, _ in scales]), spread([b for _, b in scales])
    tg = [("64 B put, one node on 2 lcores >= 1.6 x one lcore",
           f"{sc[1]:.2f} x (raw {rs[1]:.2f} x)" if sc and rs else "-", bool(sc) and sc[1] >= 1.6)]
    return out, tg


def fmt(v, nd=3):
    return "-" if v is None else f"{v:.{nd}f}"


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    dpdk = sh("pkg-config --modversion libdpdk").strip()
    return (f"{cpu}, {os.cpu_count()} CPUs, Linux {platform.release()}, DPDK {dpdk}, "
            f"{datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC')}")


# bench/run.py --only NAME: one section, printed (a check of that section, not a table to keep)
SECTIONS = {
    "netpipe": lambda s: (np_section(npmpi(s)), []),
    "mpi": lambda s: (mpi_run(s), []),
    "fi_pingpong": lambda s: (lambda r: (fi_section(r), fi_targets(r)))(fi_pingpong(s)),
    "collectives": lambda s: (lambda r: (coll_section(r), coll_targets(r)))(coll_runs(s)),
    "veth": lambda s: (veth_section(veth_ports(s), s.args.runs), []),
    "shares": shares_section,
}


def only(s, name, t0):
    """Run one section; print its text, its targets and its commands; 0, or 1 when a
    measurement gave no figure (the text is printed all the same, marked incomplete)."""
    text, targets = SECTIONS[name](s)
    rel = os.path.relpath(s.args.build, ROOT)
    lines = text + (["| target | measured | met |", "|---|---|---|"] +
                    [f"| {d} | {v} | {'yes' if ok else 'no'} |" for d, v, ok in targets] + [""]
                    if targets else []) + ["```"] + s.commands + ["```"]
    print("\n".join(line.replace(s.args.build.rstrip("/") + "/", "./" + rel + "/")
                    for line in lines))
    print(f"bench: section {name} in {time.time() - t0:.0f} s", file=sys.stderr)
    if s.missing:
        print(f"bench: {len(s.missing)} measurement(s) gave no figure (INCOMPLETE):",
              file=sys.stderr)
        for cmd in s.missing:
            print(f"  {cmd}", file=sys.stderr)
        return 1
    return 0


def check_text(path):
    """0 if the sections this script writes from its own text (ANALYSIS, LOCAL_COPY,
    IPM_NOTE) are in @p path as they are here, else 1 with the first that is not."""
    md = open(path).read()
    bad = [name for name, text in (("ANALYSIS", ANALYSIS), ("LOCAL_COPY", LOCAL_COPY),
                                   ("IPM_NOTE", IPM_NOTE)) if text.strip() not in md]
    for name in bad:
        print(f"bench: {path}: the {name} text of bench/run.py is not there as written: "
              "change both, or the next make bench undoes the edit", file=sys.stderr)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    ap.add_argument("--only", choices=sorted(SECTIONS),
                    help="run one section, print its text (and targets) to stdout, write "
                    "nothing; exit 1 when a measurement gave no figure")
    ap.add_argument("--check-text", action="store_true",
                    help="measure nothing: exit 1 if the analysis text of --out differs "
                    "from the one this script writes (edit both, or the next run undoes it)")
    args = ap.parse_args()
    if args.check_text:
        sys.exit(check_text(args.out))
    if not os.access(os.path.join(args.build, "apps", "toroid-perf", "toroid-perf"), os.X_OK):
        sys.exit(f"bench: build first (no toroid-perf in {args.build})")
    missing = [p for p, b in (("ucx-utils", "ucx_perftest"), ("sockperf", "sockperf"),
                              ("netpipe-openmpi", "NPopenmpi"), ("libfabric-bin", "fi_pingpong"))
               if shutil.which(b) is None]
    if missing and os.geteuid() == 0:
        subprocess.run("apt-get install -y -q " + " ".join(missing), shell=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    t0 = time.time()
    s = Suite(args)
    if args.only:
        sys.exit(only(s, args.only, t0))
    n = "-n 20000" if args.quick else ""
    nr = "-n 200000" if args.quick else ""
    # one process, net_ring pair: the engine on lcore 1, the application on lcore 0
    s.perf_runs("net_ring", f"-t put_rate -s 64 --baseline --raw-frame 64 {nr}", "mpps", "Mpps", "raw_mpps")
    s.perf_runs("net_ring", f"-t put_rate -s 64 --baseline --raw-frame 64 --inline {nr}", "mpps", "Mpps",
                "raw_mpps", label="put_rate (one lcore)")
    # memory-FIFO messages: small ones share frames (bundles), compared with raw 64 B frames
    s.perf_runs("net_ring", f"-t fifo_rate -s 64 --baseline --raw-frame 64 {nr}", "mpps", "Mmsg/s", "raw_mpps")
    s.perf_runs("net_ring", f"-t fifo_rate -s 64 --baseline --raw-frame 64 --inline {nr}", "mpps", "Mmsg/s",
                "raw_mpps", label="fifo_rate (one lcore)")
    s.perf_runs("net_ring", f"-t put_bw -s 64K --baseline {n}", "gbps_l2", "Gbit/s L2",
                "raw_gbps_l2")
    for t in ("put_lat", "fifo_lat", "get_lat", "fence_lat", "atomic_lat"):
        s.perf_runs("net_ring", f"-t {t} -s 64 {n}", "p50", "us p50")
    s.perf_runs("net_ring", f"-t reflect_lat -s 64 --mode local {n}", "p50", "us p50",
                label="reflect_lat local")
    s.perf_runs("net_ring", f"-t reflect_lat -s 64 --mode delivery {n}", "p50", "us p50",
                label="reflect_lat delivery")
    s.perf_runs("net_ring", f"-t get_bw -s 64K {n}", "gbps_l2", "Gbit/s L2")
    # one node on 2 lcores: two shares over a 2-queue net_ring pair, 1 lcore then 2 (a second
    # each; raw DPDK on the same queues and lcores in the same run)
    shares = s.shares_runs(f"-n {'400000' if args.quick else '4000000'}")
    # per-packet cost against torus size
    s.perf_runs("torus", f"-t put_rate -s 64 --torus 2x1x1 {nr}", "mpps", "Mpps",
                        label="put_rate 2x1x1")
    s.perf_runs("torus", f"-t put_rate -s 64 --torus 8x8x8 {nr}", "mpps", "Mpps",
                      label="put_rate 8x8x8 (512 nodes)")
    # two processes over net_memif
    # latencies from 10 000 round trips; the 64 B rates from 2 000 000 messages (10 000
    # are over before the stream is under way: a third of the rate)
    s.memif_runs(f"-t put_lat,fifo_lat,get_lat,reflect_lat,allreduce_lat -s 64 "
                 f"{n if args.quick else '-n 10000'}")
    s.memif_runs(f"-t put_rate,put_bw -s 64 --raw-frame 64 "
                 f"{n if args.quick else '-n 2000000'}")
    s.memif_runs(f"-t put_bw -s 64K {'-n 2000' if args.quick else '-n 20000'}")
    ucx = s.ucx()
    sp = s.sockperf()
    # the line-rate table: one lcore (--inline), puts of 8 B .. 64 KiB
    lr = []
    for size in LR_SIZES:
        cnt = 200000 if size <= 1444 else 20000
        if args.quick:
            cnt //= 10
        cmd = f"{s.perf} -- -t put_rate -s {size} --inline -n {cnt} --json"
        s.commands.append(cmd)
        got = [r for _ in range(args.runs) for r in json_lines(sh(cmd)) if r.get("frames")]
        if not got:
            s.missing.append(cmd)
            continue
        lr.append((size, got))


    veth_res = veth_ports(s)
    np_res = npmpi(s)
    mpi_text = mpi_run(s)
    fi_res = fi_pingpong(s)
    coll_res = coll_runs(s)
    # instructions per message by stage (callgrind: repeatable where seconds are not)
    ipm_rows, ipm_att = [], None
    if shutil.which("valgrind") is None:
        s.missing.append("bench/ipm.py (valgrind not installed)")
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import ipm
        import tempfile
        with tempfile.TemporaryDirectory(prefix="toroid-ipm.") as tmp:
            tests = ("put_rate", "fifo_rate", "get_lat", "put_lat", "fifo_lat", "reflect_lat")
            for i, t in enumerate(tests):
                try:
                    ipm_rows.append(ipm.measure(s.perf, t, 2000 if args.quick else 20000, tmp))
                except (RuntimeError, subprocess.SubprocessError) as e:
                    print(f"bench: ipm {t}: {e}", file=sys.stderr)
                    s.missing.append(f"bench/ipm.py --tests {t}")
                    if not ipm_rows:
                        # the first failed: toroid-perf does not run under valgrind here, the
                        # others would fail the same way (six of them took minutes)
                        s.missing += [f"bench/ipm.py --tests {u}" for u in tests[i + 1:]]
                        break
            # the attached process's put beside the same put in one process (#24)
            vni = os.path.join(args.build, "pmd-test", "vni", "test_vni_mu")
            if ipm_rows and os.access(vni, os.X_OK):
                try:
                    ipm_att = ipm.measure_attached(vni, 2000 if args.quick else 20000, tmp)
                except (RuntimeError, subprocess.SubprocessError) as e:
                    print(f"bench: ipm attached: {e}", file=sys.stderr)
                    s.missing.append("bench/ipm.py --tests attached")
        s.commands.append("bench/ipm.py --tests put_rate,fifo_rate,get_lat,put_lat,fifo_lat,"
                          "reflect_lat,attached -n "
                          f"{2000 if args.quick else 20000}")

    def row(sec, test, size):
        for r in s.rows:
            if r[0] == sec and r[1] == test and r[2] == size:
                return r
        return None

    out = []
    out.append("# Benchmarks\n")
    out.append("Written by `bench/run.py` (do not edit by hand). Every toroid figure is the "
               f"median of {args.runs} runs; each run measures raw DPDK "
               "(`rte_eth_tx_burst`/`rte_eth_rx_burst`, no engine) on the same ports right "
               "before the engine, so a ratio comes from one run: the toroid column over the raw one "
               "(the 64 B rates against raw 64-byte frames, `--raw-frame 64`: messages per "
               "second over frames per second; bandwidths at L2 against frames of the size the "
               "engine's had on average). Reliability (sequence "
               "numbers, acks) is on. Latencies are p50 in microseconds; `put_lat` and "
               "`fifo_lat` are half a round trip, the others are post-to-completion. "
               "`bench/run.py --only netpipe` (or `mpi`, `fi_pingpong`, `collectives`, `veth`, `shares`) runs one section and prints "
               "it without writing this file.\n")
    out.append(f"Machine: {machine()}.\n")
    out.append(f"Suite time: {time.time() - t0:.0f} s.\n")
    out.append("## Results\n")
    out.append("| where | test | size | toroid | min .. max | unit | raw DPDK | ratio |")
    out.append("|---|---|---|---|---|---|---|---|")
    for sec, test, size, fig, unit, raw, ratio, _, spr in s.rows:
        rng = f"{fmt(spr[0])} .. {fmt(spr[2])}" if spr else "-"
        out.append(f"| {sec} | {test} | {size} | {fmt(fig)} | {rng} | {unit} | {fmt(raw)} | "
                   f"{fmt(ratio)} |")
    out.append("")
    out.extend(spread_note(s, row("memif", "put_bw", 65536), args.runs))
    out.append("## Instructions per message\n")
    out.append("`bench/ipm.py` (also `make ipm`): `toroid-perf --inline` under callgrind with N "
               "and 2N messages, the difference divided by the messages added, counted only "
               "inside the measured loop, toroid's and the raw baseline's (same ports, same "
               "run). The rate figures repeat to 0.01% whatever else the machine does; the round trips vary by a few percent between runs (the reliability timers follow the clock; the node polls of a round trip do not, and `bench/ipm.py` prints them and the count without the timers). Each "
               "source line's instructions go to the stage of the function that holds it, so "
               "inlined code counts where it was written. The remote get is one round trip "
               "(request and reply, with the idle polls in between), and so are the ping-pongs "
               "(a put or memory-FIFO message each way) and the reflection (a put with local "
               "reflection completion into a doorbell); raw is a raw ping-pong.\n")
    if ipm_rows:
        stages = []
        for r in ipm_rows:
            stages += [k for k in r["stages"] if k not in stages]
        out.append("| message | toroid instr/msg | raw DPDK instr/frame | ratio | " +
                   " | ".join(stages) + " |")
        out.append("|---|---:|---:|---:|" + "---:|" * len(stages))
        for r in ipm_rows:
            out.append(f"| {r['what']} | {r['toroid_instr']:.0f} | {r['raw_instr']:.0f} | "
                       f"{r['ratio']:.1f} x | " +
                       " | ".join(f"{r['stages'].get(k, 0):.0f}" for k in stages) + " |")
        out.append("")
        out.append(IPM_NOTE)
    if ipm_att is not None:
        out.append("")
        out.append("A 64 B put from a process attached to the VNI service beside the same put "
                   "in one process (`bench/ipm.py --tests attached`: `test_vni_mu measure "
                   "attached|inproc`, the engines, the service and the poster in one thread; "
                   "the ratio leaves out the service's socket look and the reliability timers, "
                   "which follow the clock):\n")
        out.extend(ipm.attached_markdown(ipm_att))
    out.append("")
    out.extend(line_rate_table(lr))
    out.append("## Peers on the same machine, same run\n")
    out.append("| system | test | 64 B figure |")
    out.append("|---|---|---|")
    if ucx:
        ver = sh("ucx_info -v | head -1").strip().lstrip("# ")
        out.append(f"| UCX ({ver}) over TCP loopback | "
                   f"ucp_put_bw message rate | {fmt(ucx.get('ucp_put_bw'))} Mmsg/s |")
        out.append(f"| UCX over TCP loopback | tag_lat p50 | {fmt(ucx.get('tag_lat'))} us |")
    if sp:
        out.append(f"| kernel UDP (sockperf) | ping-pong p50 (one way) | {fmt(sp['p50_us'])} us |")
        out.append(f"| kernel UDP (sockperf) | throughput | {fmt(sp['mpps'])} Mmsg/s |")
    out.append("")
    out.extend(veth_section(veth_res, args.runs))
    out.extend(np_section(np_res))
    out.extend(mpi_text)
    out.extend(fi_section(fi_res))
    out.extend(coll_section(coll_res))
    # targets
    out.append("## Targets\n")
    out.append("| target | measured | met |")
    out.append("|---|---|---|")

    def target(desc, value, ok):
        out.append(f"| {desc} | {value} | {'yes' if ok else 'no'} |")

    r = row("net_ring", "put_rate (one lcore)", 64)
    if r:
        target("64 B put rate, one DMA lcore, net_ring >= 0.5 x raw (stretch 0.8)",
               f"{fmt(r[3])} Mpps vs {fmt(r[5])} raw = {fmt(r[6])}", (r[6] or 0) >= 0.5)
    for ir in ipm_rows:
        if ir["what"] == "64 B put":
            target("64 B put, instructions per message <= 400 (#27)",
                   f"{ir['toroid_instr']:.0f}", ir["toroid_instr"] <= 400)
            target("64 B put, instructions per message <= 300",
                   f"{ir['toroid_instr']:.0f}", ir["toroid_instr"] <= 300)
    r = row("net_ring", "put_rate", 64)
    if r:
        target("64 B put, application thread + engine lcore >= 0.5 x raw two threads",
               f"{fmt(r[3])} Mpps vs {fmt(r[5])} raw = {fmt(r[6])}", (r[6] or 0) >= 0.5)
    for label in ("fifo_rate (one lcore)", "fifo_rate"):
        r = row("net_ring", label, 64)
        if r:
            target(f"64 B memory-FIFO messages per second ({label}) >= 1.0 x raw 64 B frames",
                   f"{fmt(r[3])} Mmsg/s vs {fmt(r[5])} Mpps raw = {fmt(r[6])}",
                   (r[6] or 0) >= 1.0)
    sc = spread([a for a, _ in shares])
    if sc:
        rs = spread([b for _, b in shares])
        target("64 B put, one node on 2 lcores (2 shares, 2-queue net_ring) >= 1.6 x one lcore",
               f"{sc[1]:.2f} x ({sc[0]:.2f} .. {sc[2]:.2f}; raw DPDK on the same queues "
               f"{rs[1]:.2f} x)" if rs else f"{sc[1]:.2f} x", sc[1] >= 1.6)
    for test, lim in (("put_lat", 1.3), ("fifo_lat", 1.3), ("reflect_lat", 1.8)):
        r = row("memif", test, 64)
        if r:
            target(f"{test} over memif <= {lim} x raw",
                   f"{fmt(r[3])} us vs {fmt(r[5])} us = {fmt(r[6])}", (r[6] or 99) <= lim)
    r = row("memif", "put_bw", 65536)
    if r:
        target("64 KiB put bandwidth over memif >= 0.95 x raw",
               f"{fmt(r[3])} vs {fmt(r[5])} Gbit/s = {fmt(r[6])}", (r[6] or 0) >= 0.95)
    r = row("memif", "put_rate", 64)
    if r and ucx and ucx.get("ucp_put_bw"):
        x = r[3] / ucx["ucp_put_bw"]
        target(">= 20 x the message rate of UCX over TCP loopback",
               f"{fmt(r[3])} vs {fmt(ucx['ucp_put_bw'])} Mmsg/s = {x:.1f} x", x >= 20)
    r = row("memif", "fifo_lat", 64)
    if r and sp and sp["p50_us"]:
        x = r[3] / sp["p50_us"]
        target("<= 1/5 of kernel UDP ping-pong latency",
               f"{fmt(r[3])} vs {fmt(sp['p50_us'])} us = {x:.2f}", x <= 0.2)
    a = row("torus", "put_rate 2x1x1", 64)
    b = row("torus", "put_rate 8x8x8 (512 nodes)", 64)
    if a and b and a[3]:
        d = abs(b[3] - a[3]) / a[3]
        target("64 B put rate on a 512-node torus within 5% of the small one",
               f"{fmt(b[3])} vs {fmt(a[3])} Mpps ({d * 100:.1f}%)", d <= 0.05)
    for desc, value, ok in fi_targets(fi_res) + coll_targets(coll_res):
        target(desc, value, ok)
    out.append("")
    out.append(ANALYSIS)
    out.append(LOCAL_COPY)
    out.append("## Commands\n")
    out.append("```")
    out.extend(s.commands)
    out.append("```")
    rel = os.path.relpath(args.build, ROOT)
    out = [line.replace(args.build.rstrip("/") + "/", "./" + rel + "/") for line in out]
    if s.missing:
        # a partial table would replace a complete one: keep the old file
        print(f"bench: {len(s.missing)} measurement(s) gave no figure, {args.out} not written:",
              file=sys.stderr)
        for cmd in s.missing:
            print(f"  {cmd}", file=sys.stderr)
        sys.exit(1)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(out) + "\n")
    os.replace(tmp, args.out)
    print(f"bench: wrote {args.out} in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        main()
    except Interrupted as e:
        kill_all()  # what the finally clauses did not reach
        print(f"bench: interrupted ({e}): nothing written", file=sys.stderr)
        sys.exit(128 + getattr(signal, str(e)).value)
