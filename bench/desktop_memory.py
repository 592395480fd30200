"""PSS of every process of one desktop (bench/desktop-memory.sh).

    python3 bench/desktop_memory.py DAEMON_PID

The desktop's processes: the daemon, its watchdog (the daemon's binary
run again with PROCTOR_DESKTOP_WATCHDOG naming the desktop's folder), and
every process whose environment carries the desktop's marker
(PROCTOR_DESKTOP=ID), the ID read from a child of the daemon. Prints one
JSON object: each process's PSS in kB, the total, and the daemon's with
its watchdog's.
"""

import json
import os
import sys


def environ(pid):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            return dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
    except OSError:
        return {}


def pss_kb(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return "?"


def ppid(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def main():
    daemon = int(sys.argv[1])
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    marker = None
    for p in pids:
        if ppid(p) == daemon and b"PROCTOR_DESKTOP" in environ(p):
            marker = environ(p)[b"PROCTOR_DESKTOP"]
            break
    if marker is None:
        sys.exit("no process of the daemon %d carries a desktop's marker" % daemon)
    watchdogs, desktop = [], []
    for p in pids:
        env = environ(p)
        if p == daemon:
            continue
        if env.get(b"PROCTOR_DESKTOP") == marker:
            desktop.append(p)
        elif env.get(b"PROCTOR_DESKTOP_WATCHDOG", b"").endswith(marker):
            watchdogs.append(p)
    procs = [{"pid": p, "comm": comm(p) + (" (watchdog)" if p in watchdogs else " (daemon)" if p == daemon else ""), "pss_kb": pss_kb(p)}
             for p in [daemon] + watchdogs + sorted(desktop)]
    daemon_kb = sum(p["pss_kb"] for p in procs[: 1 + len(watchdogs)])
    print(json.dumps({"marker": marker.decode(), "processes": procs, "total_kb": sum(p["pss_kb"] for p in procs), "daemon_kb": daemon_kb}))


if __name__ == "__main__":
    main()
