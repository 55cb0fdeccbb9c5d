"""Refs that cover no file of the code repositories (T4): a typo in a glob, or code moved or
deleted since the document was written, leaves a document that can never drift, and the drift
report said "0 of N documents with refs drift" as if all were current. The report now names
those documents and globs: ``briefd drift``, ``GET /api/drift``, ``knowledge_drift`` and the
dashboard's drift panel."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.service import create_app
from briefd.service.team_tools import drift_text
from tests.cli.test_cli import briefd
from tests.service.conftest import service_config
from tests.service.live import TOKEN
from tests.team.coderepo import Repo, settings_for

CHECKOUT = """---
refs: ["services/checkout/**", "services/chekout/api.py", "!services/checkout/gen/**"]
---
# Checkout
"""
LEGACY = """---
refs: ["services/legacy/**"]
---
# Legacy batch
"""
LEDGER = """---
refs: ["services/ledger"]
---
# Ledger
"""


def test_refs_that_cover_no_file_are_named_by_every_drift_report(tmp_path: Path) -> None:
    knowledge = Repo(tmp_path / "knowledge")
    knowledge.commit(
        {"domain/checkout.md": CHECKOUT, "domain/legacy.md": LEGACY, "domain/ledger.md": LEDGER},
        "Write the rules",
        "2026-03-10T09:00:00+00:00",
    )
    app = Repo(tmp_path / "app")
    app.commit(
        {
            "services/checkout/api.py": "x\n",
            "services/legacy/batch.py": "x\n",
            "services/ledger/post.py": "x\n",
        },
        "Start",
        "2026-03-01T10:00:00+00:00",
    )
    app.commit({"services/legacy/batch.py": None}, "Drop the batch", "2026-03-01T11:00:00+00:00")
    settings = settings_for(tmp_path, knowledge, str(app.path))
    with Briefd(settings, embedder=None) as api:
        api.index()
        report = api.drift()
        assert report.documents == ()  # nothing changed after the documents
        assert [(u.doc_path, u.globs) for u in report.uncovered] == [
            ("domain/checkout.md", ("services/chekout/api.py",)),
            ("domain/legacy.md", ("services/legacy/**",)),
        ]
        text = drift_text(report)
        assert text.startswith("0 of 3 documents with refs drift (app (main at")
        assert (
            "2 documents with refs globs that cover no file of the code repositories (a typo, "
            "or code moved or deleted), so no change is ever drift for them; correct these "
            "globs or drop them from refs:\n"
            "- domain/checkout.md: services/chekout/api.py\n"
            "- domain/legacy.md: services/legacy/**"
        ) in text
        with TestClient(create_app(api, service_config())) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            body = http.get("/api/drift").json()
            panel = http.get("/api/dashboard/health").json()["drift"]
        assert [u["doc_path"] for u in body["uncovered"]] == [
            "domain/checkout.md",
            "domain/legacy.md",
        ]
        assert panel["uncovered_count"] == 2 and panel["uncovered"] == body["uncovered"]
    (tmp_path / "briefd.yaml").write_text(
        f"source: {knowledge.path}\ndb: {settings.db}\ncode:\n  repos: [{app.path}]\n"
    )
    cli = briefd("drift", "--no-refresh", cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    assert "- domain/legacy.md: services/legacy/**" in cli.stdout
