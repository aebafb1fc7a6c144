"""CPU spent watching for a drain request while calls wait, against the bare wait, same run.

    uv run python benchmarks/bench_drain_poll.py [--calls 1000] [--seconds 2] [--repeats 5]

Every tool call inside a graph run watches the run's ``RunControl`` (LangGraph offers no signal
to wait on, so it is polled every 100 ms) and is cancelled if the run is asked to drain. This
times the package's internal watcher (``langgraph_mcp._call.runner._cancel_on_drain``) around
``--calls`` concurrent ``asyncio.sleep(--seconds)``, and subtracts the CPU time of the same
sleeps awaited directly in the same repeat. Prints the median and the spread. Results:
RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
from types import SimpleNamespace

from _common import load_average
from langgraph.errors import GraphDrained
from langgraph.runtime import RunControl

from langgraph_mcp._call.runner import _cancel_on_drain


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=5)
    ns = parser.parse_args()
    runtime = SimpleNamespace(control=RunControl())
    extra = []
    for _ in range(ns.repeats):
        start = cpu()
        await asyncio.gather(*(_cancel_on_drain(asyncio.sleep(ns.seconds), runtime) for _ in range(ns.calls)))  # type: ignore[arg-type]
        watched = cpu() - start
        start = cpu()
        await asyncio.gather(*(asyncio.sleep(ns.seconds) for _ in range(ns.calls)))
        extra.append(watched - (cpu() - start))
    # The watcher still does its job: a drain request cancels the call.
    control = RunControl()
    call = asyncio.ensure_future(_cancel_on_drain(asyncio.sleep(5), SimpleNamespace(control=control)))  # type: ignore[arg-type]
    await asyncio.sleep(0.05)
    control.request_drain("check")
    try:
        await call
        raise AssertionError("the drained call was not cancelled")
    except GraphDrained:
        pass
    polls = ns.calls * ns.seconds / 0.1
    print(
        f"{ns.calls} calls waiting {ns.seconds} s each (~{polls:.0f} polls): watching cost "
        f"{statistics.median(extra):.3f} s CPU (median of {ns.repeats}; "
        f"{min(extra):.3f}-{max(extra):.3f}); {load_average()}"
    )


if __name__ == "__main__":
    asyncio.run(main())
