"""A throwaway TLS key and certificate for servers on 127.0.0.1 in tests (openssl)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def self_signed(directory: Path, host: str = "127.0.0.1") -> tuple[Path, Path]:
    """A key and a self-signed certificate for ``host``, 127.0.0.1 by default (also as its
    subjectAltName, which clients that check the host name need: an IP address, or a name);
    trusted only by a client told of ``cert``."""
    alt = f"IP:{host}" if host.replace(".", "").isdigit() else f"DNS:{host}"
    key, cert = directory / "key.pem", directory / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", f"/CN={host}", "-addext", f"subjectAltName={alt}"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    return key, cert
