"""The TLS context briefd's HTTP clients check certificates with (forge, embedding services,
Atlassian sites): made once per CA setting, as loading the CA bundle cost every client made
32 ms of CPU, yet following ``SSL_CERT_FILE`` and a CA file replaced since."""

from __future__ import annotations

import os
import ssl
import subprocess
import time
from pathlib import Path

import pytest

from briefd.proxy import tls_context
from tests.tls import self_signed


def trusted(context: ssl.SSLContext) -> set[str]:
    """The serial numbers of the CA certificates ``context`` holds (from a CA file)."""
    return {str(ca["serialNumber"]) for ca in context.get_ca_certs()}


def serial(cert: Path) -> str:
    said = subprocess.run(
        ["openssl", "x509", "-noout", "-serial", "-in", str(cert)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    return said.strip().removeprefix("serial=").upper()


def test_one_context_per_ca_setting_and_a_replaced_ca_file_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    default = tls_context()
    assert tls_context() is default  # the second client reuses it
    assert default.verify_mode == ssl.CERT_REQUIRED

    first = tmp_path / "first"
    first.mkdir()
    _, cert = self_signed(first)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    company = tls_context()
    assert company is not default and tls_context() is company
    assert trusted(company) == {serial(cert)}

    second = tmp_path / "second"
    second.mkdir()
    _, rotated = self_signed(second)
    cert.write_bytes(rotated.read_bytes())  # the same file, a new CA
    later = time.time() + 5  # a later modification time, however coarse the clock
    os.utime(cert, (later, later))
    renewed = tls_context()
    assert renewed is not company
    assert trusted(renewed) == {serial(rotated)} != trusted(company)

    unchecked = tls_context(verify=False)
    assert unchecked.verify_mode == ssl.CERT_NONE and tls_context(verify=False) is unchecked
