"""A throwaway TLS key and certificate for servers on 127.0.0.1 in tests (openssl)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A key and a self-signed certificate for 127.0.0.1 (also as its subjectAltName, which
    clients that check the host name need); trusted only by a client told of ``cert``."""
    key, cert = directory / "key.pem", directory / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    return key, cert
