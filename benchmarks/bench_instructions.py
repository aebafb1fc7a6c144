"""Instructions per call under load: the ``node`` and ``toolnode`` cases of ``bench_load.py``,
counted by valgrind's callgrind, so the comparison does not depend on what else the machine runs.

    uv run python benchmarks/bench_instructions.py [--threads 20] [--invokes 5]
        [--transports stdio,http] [--paths node,toolnode] [--protocol auto]

Each case runs ``bench_load.py --case PATH:TRANSPORT:PROTOCOL`` in a fresh process under
``valgrind --tool=callgrind --instr-atstart=no``; a small C library built here with ``gcc`` (from
valgrind's ``callgrind.h``) starts the count when the load starts and stops it when the load ends,
so start-up, imports, the server's start and the warm-up call are not counted, and neither is
the server (a child process, not traced). Printed: instructions of the client process per call,
and each path over ``toolnode`` of the same transport. Counts move by about 1% between runs of
the same code (the event loop's order of work varies); wall-clock time is not measured (the
process runs about 50 times slower under callgrind).

Needs Debian's ``valgrind`` (its ``callgrind.h`` included) and ``gcc``. Results: RESULTS.md.
"""

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

_COUNTER_C = """
#include <valgrind/callgrind.h>
void count_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void count_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS_AT("load"); }
"""


def build_counter(folder: Path) -> Path:
    source, library = folder / "counter.c", folder / "libcounter.so"
    source.write_text(_COUNTER_C)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(library), str(source)], check=True)
    return library


def count(
    case: str, threads: int, invokes: int, counter: Path, folder: Path
) -> tuple[int, dict[str, object]]:
    """Instructions of the load of ``case`` (and the case's own JSON result)."""
    out = folder / (case.replace(":", "-") + ".callgrind")
    argv = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}",
        sys.executable,
        str(HERE / "bench_load.py"),
        "--case",
        case,
        "--threads",
        str(threads),
        "--invokes",
        str(invokes),
        "--instructions",
        str(counter),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"{case} failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    dumps = sorted(folder.glob(out.name + ".*"))  # the dump made when the load ended
    if not dumps:
        raise RuntimeError(f"{case}: callgrind wrote no dump of the load")
    totals = re.search(r"^totals: (\d+)", dumps[0].read_text(), re.MULTILINE)
    if totals is None:
        raise RuntimeError(f"{case}: no totals in {dumps[0]}")
    return int(totals.group(1)), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=20)
    parser.add_argument("--invokes", type=int, default=5)
    parser.add_argument("--transports", default="stdio")
    parser.add_argument("--paths", default="node,toolnode")
    parser.add_argument("--protocol", default="auto", help="the protocol era of every case: auto or legacy")
    parser.add_argument("--repeats", type=int, default=1, help="each case this many times (median, range)")
    ns = parser.parse_args()
    for tool in ("valgrind", "gcc"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is needed (Debian: apt-get install valgrind gcc)")
    calls = ns.threads * ns.invokes
    print(f"{ns.threads} concurrent threads x {ns.invokes} calls = {calls} calls per case (callgrind)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        counter = build_counter(folder)
        for transport in ns.transports.split(","):
            per_call: dict[str, list[float]] = {}
            for _ in range(ns.repeats):
                for path in ns.paths.split(","):
                    case = f"{path}:{transport}:{ns.protocol}"
                    instructions, result = count(case, ns.threads, ns.invokes, counter, folder)
                    if result["misrouted"] or result["lost"]:
                        raise RuntimeError(f"{case}: misrouted {result['misrouted']}, lost {result['lost']}")
                    per_call.setdefault(path, []).append(instructions / calls)
            base = statistics.median(per_call["toolnode"]) if "toolnode" in per_call else None
            for path, values in per_call.items():
                middle = statistics.median(values)
                ratio = f" {middle / base:.3f}x toolnode" if base else ""
                spread = f" (runs: {', '.join(f'{v / 1e6:.3f}' for v in values)})" if len(values) > 1 else ""
                print(f"  {transport} {path}: {middle / 1e6:.3f} M instructions per call{ratio}{spread}")


if __name__ == "__main__":
    main()
