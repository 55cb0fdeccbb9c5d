"""A one-file model for pull tests: ``tiny``, its one file ``w.bin`` pinned by SHA-256."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest

from briefd.embeddings import registry
from briefd.embeddings.spec import DownloadedFile


def register_tiny(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    """Add ``tiny`` (its file ``w.bin`` holding ``data``) to the registry for this test."""
    tiny = dataclasses.replace(
        registry.MINILM_FP32,
        name="tiny",
        files=(DownloadedFile("w.bin", hashlib.sha256(data).hexdigest(), len(data)),),
        download_url="http://127.0.0.1:9/unused",
    )
    monkeypatch.setattr(registry, "MODELS", (*registry.MODELS, tiny))
