#!/usr/bin/python3
"""Reads the accessibility tree of every application with pyatspi, the
plain alternative Proctor's tree benchmark compares with: per node the role,
name, states, screen box and text, as Proctor reads them.

Usage: bench/pyatspi_tree.py ITERATIONS
Prints one JSON line: {"nodes": N, "ms": [each read's milliseconds]}.
Run it with the desktop's DBUS_SESSION_BUS_ADDRESS (or AT_SPI_BUS_ADDRESS).
"""
import json
import sys
import time

import pyatspi


def read(node, depth, out):
    if depth > 40:
        return
    rec = {"role": node.getRoleName(), "name": node.name,
           "states": [pyatspi.stateToString(s) for s in node.getState().getStates()]}
    try:
        e = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        rec["box"] = [e.x, e.y, e.width, e.height]
    except NotImplementedError:
        pass
    try:
        rec["text"] = node.queryText().getText(0, -1)
    except NotImplementedError:
        pass
    out.append(rec)
    if pyatspi.STATE_MANAGES_DESCENDANTS in node.getState().getStates():
        return
    for i in range(node.childCount):
        child = node.getChildAtIndex(i)
        if child is not None:
            read(child, depth + 1, out)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    desktop = pyatspi.Registry.getDesktop(0)
    times, count = [], 0
    for _ in range(n):
        start = time.perf_counter()
        out = []
        for app in desktop:
            if app is not None:
                read(app, 0, out)
        times.append((time.perf_counter() - start) * 1000)
        count = len(out)
    print(json.dumps({"nodes": count, "ms": times}))


if __name__ == "__main__":
    main()
