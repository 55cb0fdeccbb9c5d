"""``briefd tune --output``: the result replaces an earlier one whole or not at all."""

from __future__ import annotations

import json
import resource
from pathlib import Path

import pytest

from briefd.cli.tune import _write
from briefd.errors import EvalError


def test_a_full_disk_leaves_the_earlier_result_whole(tmp_path: Path) -> None:
    """The result was written with write_text into best.json itself: a disk that filled up
    (or a kill) mid-write left the earlier best.json cut short, its tuned values lost. It is
    now written beside it and renamed over it: the earlier file stays whole, nothing is left."""
    best = tmp_path / "best.json"
    earlier = json.dumps({"search": {"top_k": 6, "rrf_k": 40}}, indent=2) + "\n"
    best.write_text(earlier, encoding="utf-8")
    config: dict[str, object] = {"search": {"top_k": 9}, "notes": "x" * 4000}
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, hard))  # a disk with 1 KB left
    try:
        with pytest.raises(EvalError, match=r"^cannot write .*best\.json: File too large; pass"):
            _write(best, config, force=True)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert best.read_text(encoding="utf-8") == earlier
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.json"]
    assert _write(best, config, force=True)  # space again: replaced
    assert json.loads(best.read_text(encoding="utf-8"))["search"] == {"top_k": 9}
