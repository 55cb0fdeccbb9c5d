"""onnxruntime, imported one way: with its telemetry off (O3); and freed heap given back.

onnxruntime 1.32 creates a telemetry event store with a device id under
``$XDG_CACHE_HOME/Microsoft/DeveloperTools/.onnxruntime`` (``~/.cache/…``) as soon as it is
imported, unless ``ORT_DISABLE_TELEMETRY`` is set first; its ``disable_telemetry_events()``
alone comes too late for that. briefd sets the variable before the import and switches events
off before it creates any session. Every module that runs onnxruntime gets it from here.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from typing import Any

TELEMETRY_ENV = "ORT_DISABLE_TELEMETRY"
# How long an idle worker thread spins for the next operator before it sleeps. Waking a
# sleeping thread costs ~0.1 ms on a virtual CPU, once per parallel operator (~50 in a query);
# spinning much longer than the short single-threaded operators in between takes the core
# from the lexical search running beside the model, and an unlimited spin (onnxruntime's
# default) keeps a core busy ~40 ms after every run. Measured on 2 cores, hybrid search at 50K
# chunks (p50 / p95 ms): asleep 9.9-10.5 / 13.1-13.9, 10-40 µs 8.8-9.2 / 11.9-12.5, 100 µs
# 10.5-10.9 / 17.3-17.5; one query alone after another process ran: 11.8 asleep, 8.4-8.9
# spinning 20-50 µs, for ~2 CPU-ms more per query. 10 µs rather than 40 µs: on a busy machine
# (load 14-16, one process, variants taking turns query by query, the same bits) a query's
# embedding took 5.6 CPU-ms instead of 7.2, and hybrid searches at 50K chunks p50 / p95 14.0 /
# 52.5 ms wall and 10.5 CPU-ms instead of 17.3 / 61.2 ms and 12.1 CPU-ms: the spin is CPU
# other work on the machine (the lexical search beside the model included) waits for.
SPIN_US = 10


def onnxruntime() -> Any:
    """The onnxruntime module (untyped), telemetry off."""
    os.environ[TELEMETRY_ENV] = "1"
    import onnxruntime as runtime

    runtime.disable_telemetry_events()
    return runtime


def session_options(threads: int) -> Any:
    """Session options every briefd graph runs with: ``threads`` inside an operator (0: every
    core), operators one after another, short spins, quiet logs."""
    options = onnxruntime().SessionOptions()
    options.intra_op_num_threads = max(threads, 0)
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "1")
    options.add_session_config_entry("session.intra_op.spin_duration_us", str(SPIN_US))
    return options


def give_back_memory() -> None:
    """Return freed heap pages to the OS (glibc only). A 512-token window's attention buffers
    otherwise stay in the process: measured +73 MB after long windows, +38 MB after a trim."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


@functools.cache
def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None
