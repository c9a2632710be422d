"""The machine's load before a run, and the CPU of the server and of the driver during it.

BENCHMARKS.md gives every figure the load average before its run and the CPU of the server
and of the load generator beside it, in % of one core (the two share the machine's cores).
The Python drivers that start their own server measure both with a `Meter`:

    meter = runcpu.Meter(server_pid)     # once the server is up, before the load
    ...                                  # the run
    result.update(meter.read())          # before the server is stopped

The driver's CPU is this process's and that of the children it has waited for (curl, a
helper); the server, a child too, is waited for only after `read`, so it is not counted
twice.
"""
import os
import resource
import sys
import time

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def load_average():
    """The 1-, 5- and 15-minute load averages, as /proc/loadavg gives them."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def process_cpu_seconds(pid):
    """utime + stime of a process, from /proc/<pid>/stat (fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_SECOND


def driver_cpu_seconds():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class Meter:
    def __init__(self, server_pid):
        self.server_pid = server_pid
        self.load_before = load_average()
        self.started = time.monotonic()
        self.server_start = process_cpu_seconds(server_pid)
        self.driver_start = driver_cpu_seconds()

    def read(self):
        """The load before, the seconds since, and both CPUs in % of one core over them."""
        seconds = time.monotonic() - self.started
        server = process_cpu_seconds(self.server_pid) - self.server_start
        driver = driver_cpu_seconds() - self.driver_start
        return {"load_before": self.load_before, "metered_seconds": round(seconds, 1),
                "server_cpu_s": round(server, 2), "driver_cpu_s": round(driver, 2),
                "server_cpu_pct": round(100 * server / seconds, 1), "driver_cpu_pct": round(100 * driver / seconds, 1)}


def each_binary(run, usage):
    """`run(binary, label)` for each binary named on the command line, in order (LABELS=a,b
    names them; by default each binary's file name): their results. No binary: `usage`."""
    binaries = sys.argv[1:]
    if not binaries:
        raise SystemExit(usage)
    labels = os.environ.get("LABELS", ",".join(os.path.basename(b) for b in binaries)).split(",")
    return [run(binary, label) for binary, label in zip(binaries, labels)]
