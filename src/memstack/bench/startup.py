"""``memstack bench startup``: how long ``memstack --help`` takes as a whole process, and what it imports.

Each run is a new interpreter (``python -m memstack --help``), timed from start to exit, so the figure includes
the interpreter's own start; the median of the runs is the figure. The modules that make a command slow to start
(the engine, numpy, the embedding runtime, the web server and its clients) must not be among those it imports:
the help screen is built without importing any command (:mod:`memstack.cli`).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from typing import Any

__all__ = ["HEAVY", "heavy_imports", "measure_startup"]

#: Modules a help screen has no use for, each costing tens to hundreds of milliseconds to import.
HEAVY = (
    "numpy",
    "onnxruntime",
    "tokenizers",
    "uvicorn",
    "fastapi",
    "starlette",
    "httpx",
    "openai",
    "psycopg",
    "mcp",
    "rich",
    "yaml",
    "memstack.engine",
    "memstack.store",
    "memstack.server",
)

_PROBE = (
    "import sys\n"
    "from memstack.cli import main\n"
    "try:\n"
    "    main(['--help'], prog_name='memstack')\n"
    "except SystemExit:\n"
    "    pass\n"
    "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in {heavy} or m in {heavy})), file=sys.stderr)\n"
)


def heavy_imports(args: tuple[str, ...] = ("--help",)) -> list[str]:
    """The heavy modules (:data:`HEAVY`) a new process imports to answer ``memstack ARGS``."""
    heavy = set(HEAVY)
    code = _PROBE.replace("['--help']", repr(list(args))).replace("{heavy}", repr(heavy))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    found = done.stderr.strip().splitlines()[-1].split() if done.stderr.strip() else []
    return sorted(m for m in found if m in heavy or m.split(".")[0] in heavy)


def measure_startup(runs: int = 7) -> dict[str, Any]:
    """The median, fastest and slowest of ``runs`` whole-process runs of ``python -m memstack --help`` (ms), and
    the heavy modules it imports (none expected)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "memstack", "--help"], capture_output=True, timeout=120, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return {
        "command": "memstack --help",
        "runs": runs,
        "median_ms": round(statistics.median(times), 1),
        "min_ms": round(min(times), 1),
        "max_ms": round(max(times), 1),
        "heavy_imports": heavy_imports(),
    }
