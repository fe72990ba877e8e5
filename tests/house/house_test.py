#!/usr/bin/env python3
"""The house, checked (CTest `house.layers`, tests/CMakeLists.txt).

Reads every `#include "FOLDER/..."` of the tracked sources (C++ and CUDA,
tests and data excluded), maps each file to its room (the folders below) and
checks DESIGN.md section 2's picture:
  - no arrow up: a room includes only rooms listed below it in ROOMS;
  - no circle: the folder graph has no cycle (implied by the order, checked
    on its own so that a wrong order is reported as such);
  - every include names a file that exists.
Usage: house_test.py SOURCE_DIR [--print]   (--print draws the arrows)
Exit 0 when the house holds, 1 with one line per offending include.
"""
import os
import re
import subprocess
import sys

# Lowest first. A room may include itself and any room before it.
ROOMS = [
    "base",              # status, strict JSON, CSV, input files, version, threads
    "simulator",         # domain values, layers, lowering, engine, memory
    "scaling",           # loss laws, FLOPs, optimal budgets, fits (uses base only)
    "presets",           # the built-in JSON and its loader
    "reports",           # Markdown/CSV/JSON/SVG writers of the tables they define
    "profiler",          # CUDA profiler: writes the profiles the simulator reads
    "planner/search",    # the search, plan space, shapes; fills the reports' tables
    "planner/accuracy",  # validate, calibrate, runs files
    "planner/study",     # frontier, schedule, the MPI process group
    "planner/cli",       # main, commands, flags: the only CLI11 code
]
# Rooms that must not use a room below them in ROOMS even though the order
# would allow it (the issue: scaling/ and profiler/ not above what they do
# not use).
FORBIDDEN = {
    "scaling": {"simulator"},
    "profiler": {"scaling", "presets", "reports"},
}
SOURCE = re.compile(r"\.(cc|h|cu|cuh)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def room_of(path):
    best = None
    for r in ROOMS:
        if path == r or path.startswith(r + "/"):
            if best is None or len(r) > len(best):
                best = r
    return best


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    src = sys.argv[1]
    draw = "--print" in sys.argv[2:]
    files = subprocess.run(["git", "-C", src, "ls-files"], check=True, capture_output=True,
                           text=True).stdout.split()
    rank = {r: i for i, r in enumerate(ROOMS)}
    edges = {}
    bad = []
    for f in files:
        if not SOURCE.search(f) or f.startswith(("tests/", "data/")):
            continue
        here = room_of(f)
        if here is None:
            bad.append(f"{f}: a source file outside every room of the house ({', '.join(ROOMS)})")
            continue
        with open(os.path.join(src, f), encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                there = room_of(target)
                if there is None:
                    continue  # generated headers, same-folder includes without a path
                if not os.path.exists(os.path.join(src, target)):
                    bad.append(f"{f}:{n}: includes {target}, which does not exist")
                    continue
                if there != here:
                    edges.setdefault((here, there), []).append(f"{f}:{n}")
                if rank[there] > rank[here]:
                    bad.append(f"{f}:{n}: arrow up: {here}/ includes {target} ({there}/ is above it)")
                elif there in FORBIDDEN.get(here, ()):
                    bad.append(f"{f}:{n}: {here}/ must not use {there}/ (includes {target})")
    # Circles, independently of the order.
    graph = {}
    for (a, b) in edges:
        graph.setdefault(a, set()).add(b)
    state = {}

    def visit(node, stack):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cyc = stack[stack.index(nxt):] + [nxt] if nxt in stack else [node, nxt]
                bad.append("circle: " + " -> ".join(cyc))
            elif state.get(nxt) is None:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if state.get(node) is None:
            visit(node, [node])
    circles = [b for b in bad if b.startswith("circle: ")]
    if len(circles) > 5:  # one arrow up closes many circles: the first few say it
        bad = [b for b in bad if not b.startswith("circle: ")] + circles[:5] + [
            f"circle: ... and {len(circles) - 5} more"]
    if draw:
        for (a, b), where in sorted(edges.items(), key=lambda e: (rank[e[0][0]], rank[e[0][1]])):
            print(f"{a} -> {b}  ({len(where)} includes)")
    for line in bad:
        print(line)
    if bad:
        return 1
    print(f"house holds: {len(edges)} arrows between {len(ROOMS)} rooms, none up, no circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
