"""Process-level promises that run_cases.sh cannot express (issue 31, items 6, 7).

Closed pipes and full disks on the commands that print help:
The manual (docs/commands.md) promises that a closed pipe or a full disk is an error (exit 1,
one line on stderr), never a silent success or a death by SIGPIPE (141).
Each case starts llmplan with its stdout on a pipe whose read end is already
closed (so every write fails with EPIPE, with no race against a reader), or
on /dev/full. And control bytes in a path (a newline, an escape sequence)
are written as \\xNN in the one-line error, never echoed raw.
Usage: process_test.py LLMPLAN
"""
import os
import subprocess
import sys

llmplan = sys.argv[1]
cases = [["presets"], ["presets", "--format", "json"], ["--help"], ["--version"],
         ["simulate", "--help"], [], ["optimal", "--flops", "1e24"]]
failed = 0


def check(args, where, stdout):
    global failed
    proc = subprocess.run([llmplan] + args, stdout=stdout, stderr=subprocess.PIPE, timeout=60)
    err = proc.stderr.decode(errors="replace")
    lines = err.splitlines()
    ok = (proc.returncode == 1 and len(lines) == 1 and
          lines[0].startswith("llmplan: error: cannot write to standard output"))
    print(("ok   " if ok else "FAIL ") + where + ": llmplan " + " ".join(args) +
          " -> exit %d, stderr %r" % (proc.returncode, err))
    failed += not ok


for args in cases:
    read_end, write_end = os.pipe()
    os.close(read_end)
    with os.fdopen(write_end, "wb") as pipe:
        check(args, "closed pipe", pipe)
    with open("/dev/full", "wb") as full:
        check(args, "/dev/full", full)
total = 2 * len(cases)
for path in ["a\nb.json", "x\x1b[31mred.json", "tab\there.json"]:
    total += 1
    proc = subprocess.run([llmplan, "simulate", "--config", path], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=60)
    err = proc.stderr.decode(errors="replace")
    shown = "".join(c if 0x20 <= ord(c) != 0x7F else "\\x%02X" % ord(c) for c in path)
    ok = (proc.returncode == 1 and err.count("\n") == 1 and shown in err and
          not any(ord(c) < 0x20 and c != "\n" or ord(c) == 0x7F for c in err))
    print(("ok   " if ok else "FAIL ") + "control bytes in %r -> exit %d, stderr %r" %
          (path, proc.returncode, err))
    failed += not ok
print("%d passed, %d failed" % (total - failed, failed))
sys.exit(1 if failed else 0)
