"""Long runs of base64 or hex pasted into a document (a certificate, a key, a file): out of
the chunk text with a marker saying their size, reported by the index, the file served whole."""

from __future__ import annotations

import base64
import random
import textwrap

from briefd.api import Briefd
from briefd.model import DocumentProblem
from tests.conftest import WriteFiles

_CERT = textwrap.fill(base64.b64encode(random.Random(1).randbytes(900)).decode(), 64)
_BLOB = textwrap.fill(base64.b64encode(random.Random(2).randbytes(300 * 1024)).decode(), 76)
_CA = base64.b64encode(random.Random(3).randbytes(1500)).decode()
_SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
TEXT = (
    "# Cluster access\n\n"  # 1
    "The gateway's certificate:\n\n"  # 3
    "```\n"  # 5
    "-----BEGIN CERTIFICATE-----\n"  # 6
    f"{_CERT}\n"  # 7-25
    "-----END CERTIFICATE-----\n"  # 26
    "```\n\n"  # 27
    "## Kubeconfig\n\n"  # 29
    f"    certificate-authority-data: {_CA}\n"  # 31
    f"    server: https://k8s.internal:6443 (digest {_SHA})\n\n"  # 32
    "## Dump\n\n"  # 34
    f"{_BLOB}\n\n"  # 36-5426
    "Text after the dump.\n"  # 5428
)


def test_a_pasted_certificate_or_file_is_out_of_the_chunks(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A 1.2 MB base64 paste made 2,400 chunks (860,000 tokens to embed) of noise; each long run
    now stands as a marker with its size, the index reports it, the file reads as written."""
    write_files({"domain/cluster.md": TEXT})
    report = api.index()
    view = api.document("domain/cluster.md")
    assert [c.content for c in view.chunks] == [
        "The gateway's certificate:\n\n"
        "```\n-----BEGIN CERTIFICATE-----\n… (900 bytes of base64 left out)\n"
        "-----END CERTIFICATE-----\n```",
        "    certificate-authority-data: … (1 KB of base64 left out)\n"
        f"    server: https://k8s.internal:6443 (digest {_SHA})",
        "… (300 KB of base64 left out)\n\nText after the dump.",
    ]
    last = 36 + _BLOB.count("\n")
    assert [(c.start_line, c.end_line) for c in view.chunks] == [(1, 27), (29, 32), (34, last + 2)]
    told = "(a certificate, key or pasted file?) left out of the index, a marker in its place; "
    told += "link the file instead of pasting it"
    assert report.problems == (
        DocumentProblem(
            "domain/cluster.md",
            f"lines 7-{6 + _CERT.count(chr(10)) + 1}: 900 bytes of base64 {told}",
        ),
        DocumentProblem("domain/cluster.md", f"line 31: 1 KB of base64 {told}"),
        DocumentProblem("domain/cluster.md", f"lines 36-{last}: 300 KB of base64 {told}"),
    )
    assert view.body == TEXT


def test_hashes_listed_one_a_line_and_short_keys_stay(api: Briefd, write_files: WriteFiles) -> None:
    """Commit hashes one a line (hex of one width, 1,200 characters) and a short key are
    searched for: they stay in the chunk text, and nothing is reported."""
    rng = random.Random(4)
    shas = "\n".join(rng.randbytes(20).hex() for _ in range(30))
    key = base64.b64encode(rng.randbytes(32)).decode()
    text = f"# Release 4.2\n\nThe commits:\n\n```\n{shas}\n```\n\nSigning key {key} here.\n"
    write_files({"domain/release.md": text})
    report = api.index()
    content = api.document("domain/release.md").chunks[0].content
    assert content == f"The commits:\n\n```\n{shas}\n```\n\nSigning key {key} here."
    assert report.problems == ()
