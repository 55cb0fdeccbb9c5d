"""A document's title and its H1 in breadcrumbs and search (K2, K4), through the real ``briefd
index`` and ``briefd search``: an H1 other than the front-matter title is a heading as any."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import briefd


def _hits(cwd: Path, query: str) -> list[dict[str, object]]:
    result = briefd("search", query, "--mode", "bm25", "--json", "--related", "0", cwd=cwd)
    assert result.returncode == 0, result.stderr
    hits: list[dict[str, object]] = json.loads(result.stdout)["hits"]
    return hits


def test_an_h1_other_than_the_front_matter_title_is_searched_and_in_breadcrumbs(
    tmp_path: Path,
) -> None:
    """With ``title: Refund policy`` over ``# Chargebacks`` the H1 was left out of every heading
    path, as if it were the title: "chargebacks" found nothing, and a later H1's subsections
    lost it from their breadcrumbs ("Refund policy > Window" for "… > Returns > Window")."""
    domain = tmp_path / "kb" / "domain"
    domain.mkdir(parents=True)
    (domain / "refunds.md").write_text(
        "---\ntitle: Refund policy\n---\n# Chargebacks\n\nDisputes are answered within seven days.\n",
        encoding="utf-8",
    )
    (domain / "returns.md").write_text(
        "---\ntitle: Shop rules\n---\n## Opening\n\nWe open at nine.\n\n"
        "# Returns\n\nParcels come back.\n\n## Window\n\nFourteen days for a parcel.\n",
        encoding="utf-8",
    )
    (domain / "plain.md").write_text(  # the title is the H1: out of paths, as before
        "---\ntitle: Ledger  Rules.\n---\n# ledger rules\n\n## Entries\n\nDouble entry.\n",
        encoding="utf-8",
    )
    assert briefd("index", "--source", str(tmp_path / "kb"), cwd=tmp_path).returncode == 0
    found = _hits(tmp_path, "chargebacks")
    assert [(h["doc_path"], h["heading"], h["heading_path"]) for h in found] == [
        ("domain/refunds.md", "Chargebacks", ["Chargebacks"])
    ]
    window = _hits(tmp_path, "fourteen days parcel")[0]
    assert (window["title"], window["heading_path"]) == ("Shop rules", ["Returns", "Window"])
    entries = _hits(tmp_path, "double entry")[0]
    assert (entries["title"], entries["heading_path"]) == ("Ledger  Rules.", ["Entries"])


def test_an_h1_that_is_the_title_in_quotes_or_with_a_dash_is_not_repeated(tmp_path: Path) -> None:
    """``title: Payments API`` over ``# “Payments API”`` (or ``# Payments API —``) kept the H1
    in every heading path, so breadcrumbs said the title twice ("Payments API > “Payments
    API” > Errors"); an H1 that says more (``# Payments API v2``) stays, as before."""
    domain = tmp_path / "kb" / "domain"
    domain.mkdir(parents=True)
    for name, h1, sub in [
        ("quoted", "“Payments API”", "Errors"),
        ("dashed", "Payments API —", "Retries"),
        ("v2", "Payments API v2", "Limits"),
    ]:
        (domain / f"{name}.md").write_text(
            f"---\ntitle: Payments API\n---\n# {h1}\n\nIntro.\n\n## {sub}\n\nThe {sub} rules.\n",
            encoding="utf-8",
        )
    assert briefd("index", "--source", str(tmp_path / "kb"), cwd=tmp_path).returncode == 0
    paths = {
        sub: [(h["title"], h["heading_path"]) for h in _hits(tmp_path, f"{sub} rules")][:1]
        for sub in ("Errors", "Retries", "Limits")
    }
    assert paths == {
        "Errors": [("Payments API", ["Errors"])],
        "Retries": [("Payments API", ["Retries"])],
        "Limits": [("Payments API", ["Payments API v2", "Limits"])],
    }
