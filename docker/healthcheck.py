"""HEALTHCHECK of the briefd image: ``GET /api/health`` on the configured port answers 200."""

import sys
import urllib.request

from briefd.settings import load_settings

port = load_settings().serve.port
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=4) as response:
        sys.exit(0 if response.status == 200 else 1)
except OSError as exc:
    print(f"briefd is not answering on port {port}: {exc}")
    sys.exit(1)
