"""A file's name with a bidirectional override or a zero-width character in it (U+202E,
U+200B) is shown with that character escaped wherever a person reads it: the CLI's tables and
messages and REST's error messages (the dashboard: tests/service/test_dashboard_links_browser.py).
Shown raw, 'inv\\u202ecod.exe.md' read as 'invexe.doc.md' and 'a\\u200bb.md' as 'ab.md'. --json
keeps the name as it is: a script reads it back."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.service import create_app
from briefd.text import visible
from tests.cli.test_cli import briefd
from tests.service.conftest import service_config, service_settings_for
from tests.service.live import TOKEN

RLO, ZWSP = "\u202e", "\u200b"
REVERSED = f"domain/inv{RLO}cod.exe.md"  # shows as domain/invexe.doc.md
JOINED = f"domain/a{ZWSP}b.md"  # shows as domain/ab.md


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cwd = tmp_path_factory.mktemp("names")
    (cwd / "kb" / "domain").mkdir(parents=True)
    (cwd / "kb" / REVERSED).write_text("# Evil\n\nChargeback evidence deadline.\n", "utf-8")
    (cwd / "kb" / JOINED).write_text("# Joined\n\nChargeback evidence rules.\n", "utf-8")
    result = briefd("index", "--source", "kb", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return cwd


def test_visible_escapes_zero_width_and_bidi_characters_but_keeps_joiners() -> None:
    assert visible(REVERSED) == "domain/inv\\u202ecod.exe.md"
    assert visible(JOINED) == "domain/a\\u200bb.md"
    assert visible("\ufeffx\u200ey\u2060z\u00ad") == "\\ufeffx\\u200ey\\u2060z\\xad"
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # an emoji sequence holds joiners
    assert visible(f"{family} نمی\u200cخواهم") == f"{family} نمی\u200cخواهم"


def test_the_cli_shows_such_names_escaped_in_its_tables_and_messages(folder: Path) -> None:
    search = briefd("search", "chargeback evidence", cwd=folder)
    assert search.returncode == 0, search.stderr
    docs = briefd("docs", cwd=folder)
    links = briefd("links", cwd=folder)
    for shown in (search.stdout, docs.stdout, links.stdout):
        assert RLO not in shown and ZWSP not in shown, shown
    assert "domain/inv\\u202ecod.exe.md:1-3" in search.stdout
    assert "  domain/a\\u200bb.md  " in docs.stdout
    assert "  domain/inv\\u202ecod.exe.md\n" in links.stdout
    missing = briefd("doc", f"domain/x{RLO}y.md", cwd=folder)
    assert missing.returncode == 1
    assert missing.stderr.startswith("error: no document 'domain/x\\u202ey.md' in the index")
    assert RLO not in missing.stderr


def test_json_keeps_the_names_as_they_are(folder: Path) -> None:
    found = json.loads(briefd("search", "chargeback evidence", "--json", cwd=folder).stdout)
    assert {hit["doc_path"] for hit in found["hits"]} == {REVERSED, JOINED}


def test_a_rest_error_naming_such_a_path_escapes_it(tmp_path: Path) -> None:
    source = tmp_path / "kb"
    (source / "domain").mkdir(parents=True)
    (source / REVERSED).write_text("# Evil\n\nText.\n", "utf-8")
    with Briefd(service_settings_for(source, tmp_path / "index.db"), embedder=None) as api:
        api.index()
        with TestClient(create_app(api, service_config())) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            answer = http.get("/api/docs/" + quote(f"domain/inv{RLO}cod.md"))  # a near name
            found = http.get("/api/docs/" + quote(REVERSED))
    assert answer.status_code == 404
    detail = answer.json()["detail"]
    assert detail.startswith("no document 'domain/inv\\u202ecod.md' in scopes domain"), detail
    assert "did you mean domain/inv\\u202ecod.exe.md?" in detail
    assert RLO not in detail
    assert found.json()["path"] == REVERSED  # the document itself, as it is
