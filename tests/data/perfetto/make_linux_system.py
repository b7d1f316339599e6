"""Write ``linux_system.pftrace``: a synthetic Linux system trace of a training job, what no
real sample shows (a trainer and a data loader on four CPUs): sched_switch with each thread's
state and sched_waking, atrace ``B``/``E``/``C`` lines, cpu_frequency, cpu_idle,
process_stats, sys_stats and log lines (on the realtime clock, tied to the boot clock by a
ClockSnapshot). Built with the ``perfetto`` package's trace builder from a fixed
seed, so running it again writes the same bytes::

    python tests/data/perfetto/make_linux_system.py   # from the repository root
"""

from __future__ import annotations

import random
from pathlib import Path

from perfetto.trace_builder.proto_builder import TraceProtoBuilder

SEED = 34
CPUS = 4
PROCESSES = {100: "/usr/bin/python3 train.py", 200: "loader"}
THREADS = {101: (100, "pt_main"), 102: (100, "pt_autograd"), 103: (100, "pt_nccl"),
           201: (200, "worker0"), 202: (200, "worker1")}
STEPS = 160
STATES = (0, 1, 1, 2, 0x800)   # runnable, sleeping (more often), uninterruptible, preempted
SLICE_NAMES = ("forward", "backward", "read_batch", "collate", "allreduce")
LOG_LINES = 6
REALTIME_AT_START = 1_790_000_000_000_000_000   # the wall clock when the boot clock reads 1 ms
FILE = Path(__file__).with_name("linux_system.pftrace")


def build() -> bytes:
    """The trace's bytes."""
    rng = random.Random(SEED)
    builder = TraceProtoBuilder()
    tree = builder.add_packet()
    tree.timestamp = 1
    for pid, cmdline in PROCESSES.items():
        process = tree.process_tree.processes.add()
        process.pid, process.ppid = pid, 1
        process.cmdline.extend(cmdline.split())
    for tid, (tgid, name) in THREADS.items():
        thread = tree.process_tree.threads.add()
        thread.tid, thread.tgid, thread.name = tid, tgid, name
    bundles = {cpu: builder.add_packet().ftrace_events for cpu in range(CPUS)}
    for cpu, bundle in bundles.items():
        bundle.cpu = cpu
    running = dict.fromkeys(range(CPUS), 0)
    depth = dict.fromkeys(THREADS, 0)
    ts = 1_000_000

    def event(cpu: int, pid: int):
        added = bundles[cpu].event.add()
        added.timestamp, added.pid = ts, pid
        return added

    for _ in range(STEPS):
        ts += rng.randint(1_000, 50_000)
        cpu = rng.randrange(CPUS)
        current = running[cpu]
        roll = rng.random()
        if roll < 0.35:   # a switch to another thread (or idle) not running elsewhere
            free = [0] + [t for t in THREADS if t not in running.values()]
            following = rng.choice([t for t in free if t != current] or [0])
            if following == current:
                continue
            switch = event(cpu, current).sched_switch
            switch.prev_pid, switch.prev_state = current, rng.choice(STATES)
            switch.prev_comm = THREADS[current][1] if current else f"swapper/{cpu}"
            switch.next_pid = following
            switch.next_comm = THREADS[following][1] if following else f"swapper/{cpu}"
            running[cpu] = following
        elif roll < 0.5:   # a wakeup of a thread, by whatever runs on this CPU
            waking = event(cpu, current).sched_waking
            waking.pid = rng.choice(list(THREADS))
            waking.comm, waking.target_cpu = THREADS[waking.pid][1], cpu
        elif roll < 0.8 and current:   # atrace lines of the running thread
            tgid = THREADS[current][0]
            if depth[current] and rng.random() < 0.5:
                text, depth[current] = f"E|{tgid}", depth[current] - 1
            elif rng.random() < 0.8:
                text, depth[current] = f"B|{tgid}|{rng.choice(SLICE_NAMES)}", depth[current] + 1
            else:
                text = f"C|{tgid}|queue_depth|{rng.randint(0, 8)}"
            event(cpu, current).print.buf = text + "\n"
        elif roll < 0.9:
            frequency = event(cpu, 0).cpu_frequency
            frequency.cpu_id, frequency.state = cpu, rng.choice((1_200_000, 2_400_000, 3_000_000))
        else:
            idle = event(cpu, 0).cpu_idle
            idle.cpu_id, idle.state = cpu, rng.choice((0, 1, 2, 4294967295))
    for k in range(3):
        stats = builder.add_packet()
        stats.timestamp = 1_000_000 + k * 2_000_000
        for pid in PROCESSES:
            memory = stats.process_stats.processes.add()
            memory.pid, memory.vm_rss_kb = pid, rng.randint(100_000, 900_000)
        system = builder.add_packet()
        system.timestamp = 1_500_000 + k * 2_000_000
        meminfo = system.sys_stats.meminfo.add()
        meminfo.key, meminfo.value = 2, rng.randint(1_000_000, 8_000_000)   # MEMINFO_MEM_FREE
    snapshot = builder.add_packet()
    snapshot.timestamp = 1_000_000
    for clock_id, reading in ((6, 1_000_000), (1, REALTIME_AT_START)):   # BOOTTIME, REALTIME
        clock = snapshot.clock_snapshot.clocks.add()
        clock.clock_id, clock.timestamp = clock_id, reading
    logs = builder.add_packet()
    logs.timestamp = ts
    for k in range(LOG_LINES):
        line = logs.android_log.events.add()
        line.tid = rng.choice(list(THREADS))
        line.pid = THREADS[line.tid][0]
        line.timestamp = REALTIME_AT_START + rng.randint(0, ts - 1_000_000)
        line.prio, line.tag = rng.choice((3, 4, 5, 6)), "train"
        line.message = f"step {k} loss {rng.uniform(0.5, 2.0):.3f}"
    return builder.serialize()


if __name__ == "__main__":
    FILE.write_bytes(build())
