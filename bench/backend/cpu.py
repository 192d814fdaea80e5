"""Print the CPU seconds (user + system) used so far by the given processes and all their
descendants, read from /proc. Used by run.sh to turn measured rates into CPU cost per request."""

import os
import sys

TICK = os.sysconf("SC_CLK_TCK")


def table() -> dict[int, tuple[int, float]]:
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ppid = int(fields[1])
        cpu = (int(fields[11]) + int(fields[12])) / TICK  # utime + stime
        out[int(name)] = (ppid, cpu)
    return out


def tree_cpu(roots: list[int]) -> float:
    procs = table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    total, stack, seen = 0.0, list(roots), set()
    while stack:
        pid = stack.pop()
        if pid in seen or pid not in procs:
            continue
        seen.add(pid)
        total += procs[pid][1]
        stack.extend(children.get(pid, []))
    return total


if __name__ == "__main__":
    print(f"{tree_cpu([int(p) for p in sys.argv[1:]]):.2f}")
