"""onnxruntime, imported one way: with its telemetry off (O3).

onnxruntime 1.32 creates a telemetry event store with a device id under
``$XDG_CACHE_HOME/Microsoft/DeveloperTools/.onnxruntime`` (``~/.cache/…``) as soon as it is
imported, unless ``ORT_DISABLE_TELEMETRY`` is set first; its ``disable_telemetry_events()``
alone comes too late for that. briefd sets the variable before the import and switches events
off before it creates any session. Every module that runs onnxruntime gets it from here.
"""

from __future__ import annotations

import os
from typing import Any

TELEMETRY_ENV = "ORT_DISABLE_TELEMETRY"


def onnxruntime() -> Any:
    """The onnxruntime module (untyped), telemetry off."""
    os.environ[TELEMETRY_ENV] = "1"
    import onnxruntime as runtime

    runtime.disable_telemetry_events()
    return runtime
