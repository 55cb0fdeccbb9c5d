"""Queries whose letters arrive decomposed (NFD: a macOS file name or clipboard, some input
methods), through the real ``briefd search`` process: the same words as the composed query."""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import pytest

from tests.cli.test_cli import briefd, indexed_folder
from tests.conftest import EXAMPLE_TR


@pytest.fixture(scope="module")
def indexed_tr(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_folder(tmp_path_factory, "cli-tr", EXAMPLE_TR)


def hits(cwd: Path, query: str) -> list[tuple[str, str]]:
    result = briefd("search", query, "--json", "--related", "0", "-k", "3", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return [(h["doc_path"], h["heading"]) for h in json.loads(result.stdout)["hits"]]


@pytest.mark.parametrize("query", ["İADE SÜRESİ", "iade süresi"])
def test_a_decomposed_query_finds_what_the_composed_one_finds(indexed_tr: Path, query: str) -> None:
    composed = hits(indexed_tr, query)
    assert composed[0] == ("domain/iade-kurallari.md", "Kısmi iade")
    assert hits(indexed_tr, unicodedata.normalize("NFD", query)) == composed


def test_a_document_written_decomposed_is_found_by_the_words_as_typed(tmp_path: Path) -> None:
    """Knowledge written decomposed (a macOS export, some editors) is indexed composed, as
    queries are read: its words are one word each for briefd's own word lists (the gate, the
    postings' prefix forms), whichever way the query arrives, and the text served is composed."""
    source = tmp_path / "kb" / "domain"
    source.mkdir(parents=True)
    text = "# İade kuralları\n\n## Kısmi iade\n\nİade süresi on dört gündür; İslam takvimi değil.\n"
    (source / "iade.md").write_text(unicodedata.normalize("NFD", text), encoding="utf-8")
    (source / "other.md").write_text("# Other\n\nSlam dunk and su resi notes.\n", "utf-8")
    assert briefd("index", "--source", str(tmp_path / "kb"), cwd=tmp_path).returncode == 0
    for query in ("islam takvimi", "İslam", unicodedata.normalize("NFD", "İade süresi")):
        assert hits(tmp_path, query)[0] == ("domain/iade.md", "Kısmi iade"), query
    assert hits(tmp_path, "slam") == [("domain/other.md", "Other")]
    result = briefd("search", "iade süresi", "--json", cwd=tmp_path)
    content = json.loads(result.stdout)["hits"][0]["content"]  # what an agent reads: composed
    assert "İade süresi on dört gündür; İslam takvimi değil." in content


NOT_UTF8 = os.fsdecode(b"refund \xff window")  # a terminal in Latin-1 typing "ÿ"


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (("search", "--query-mode", "advanced", NOT_UTF8), "query"),
        (("search", NOT_UTF8, "--json"), "query"),
        (("doc", os.fsdecode(b"domain/\xffrefunds.md")), "path"),
        (("bundle", NOT_UTF8), "task"),
        (("context", "domain/refunds.md", "--task", NOT_UTF8), "--task"),
    ],
)
def test_text_that_is_not_utf8_is_a_one_line_usage_error(
    indexed_tr: Path, args: tuple[str, ...], name: str
) -> None:
    """Bytes that are not UTF-8 reach Python as lone surrogates, which SQLite cannot bind: a
    traceback before; now the value is named, as any other bad value is (exit 2)."""
    result = briefd(*args, cwd=indexed_tr)
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert result.stderr == (
        f"error: Invalid value for '{name}': not UTF-8 text (byte 0xff at character 8); set "
        f"the terminal's encoding to UTF-8; see `briefd {args[0]} -h`\n"
    )


def test_the_preview_never_ends_inside_an_emoji_or_a_flag(tmp_path: Path) -> None:
    """The table's preview is the content's first 220 characters: it ended on 👍 without its
    skin tone 🏽, or on one half of a flag (🇹 of 🇹🇷), which terminals show as another sign."""
    source = tmp_path / "kb" / "domain"
    source.mkdir(parents=True)
    lead = "onay " * 43 + "ekle"  # 219 characters
    (source / "onay.md").write_text(f"# Onay\n\n{lead}👍🏽 ve 🇹🇷 bayrağı.\n", encoding="utf-8")
    (source / "bayrak.md").write_text(f"# Bayrak\n\n{lead}🇹🇷 ve bayrak.\n", encoding="utf-8")
    assert briefd("index", "--source", str(tmp_path / "kb"), cwd=tmp_path).returncode == 0
    table = briefd("search", "onay ekle", cwd=tmp_path, env={"COLUMNS": "400"}).stdout
    previews = [line for line in table.splitlines() if "onay onay" in line]
    assert len(previews) == 2
    for line in previews:
        assert "👍" not in line and "🇹" not in line, line


def test_a_terminal_that_cannot_write_turkish_gets_question_marks_not_a_traceback(
    indexed_tr: Path,
) -> None:
    """stdout in ASCII or Latin-1 (PYTHONIOENCODING, a legacy locale): the first 'ş' or '·'
    was a UnicodeEncodeError traceback; the table shows '?' and JSON escapes, whole."""
    ascii_out = {"PYTHONIOENCODING": "ascii"}
    table = briefd("search", "iade süresi", "-k", "1", cwd=indexed_tr, env=ascii_out)
    assert table.returncode == 0 and "Traceback" not in table.stderr, table.stderr
    assert "domain/iade-kurallari.md" in table.stdout and "K?smi iade" in table.stdout
    as_json = briefd("search", "iade süresi", "--json", "-k", "1", cwd=indexed_tr, env=ascii_out)
    assert as_json.returncode == 0 and as_json.stdout.isascii()
    assert json.loads(as_json.stdout)["hits"][0]["heading"] == "Kısmi iade"
    listed = briefd("docs", "--json", cwd=indexed_tr, env={"PYTHONIOENCODING": "latin-1"})
    assert listed.returncode == 0, listed.stderr
    titles = [d["title"] for d in json.loads(listed.stdout)["documents"]]
    assert any("ş" in title or "ı" in title for title in titles), titles


def test_a_narrow_terminal_gets_every_score_and_token_count_whole(indexed_tr: Path) -> None:
    """COLUMNS=30 (a split pane, a phone's SSH client): the table cut the score to "0.02…" and
    the tokens header to "toke…"; under 50 columns each hit is a line of its rank, score and
    tokens over its location, heading and preview. A wide terminal keeps the table."""
    wide = briefd("search", "iade süresi", "-k", "2", cwd=indexed_tr, env={"COLUMNS": "120"})
    scored = json.loads(
        briefd("search", "iade süresi", "--json", "-k", "2", cwd=indexed_tr).stdout
    )["hits"]
    narrow = briefd("search", "iade süresi", "-k", "2", cwd=indexed_tr, env={"COLUMNS": "30"})
    assert narrow.returncode == 0, narrow.stderr
    assert "…" not in narrow.stdout and "┃" not in narrow.stdout, narrow.stdout
    lines = narrow.stdout.splitlines()
    for rank, hit in enumerate(scored[:2], 1):
        head = f"{rank} · score {hit['score']:.4f} · {hit['tokens']} tokens"
        at = lines.index(head)
        assert lines[at + 1] == f"{hit['doc_path']}:{hit['start_line']}-{hit['end_line']}"
    assert "┃  score ┃" in wide.stdout and f"{scored[0]['score']:.4f}" in wide.stdout


def test_text_written_like_an_emoji_code_is_printed_as_written(tmp_path: Path) -> None:
    """Rich turns ``:rocket:`` into 🚀 unless told not to: a section about Slack reactions
    showed the sign, and ``briefd eval --split train`` warned about ``tquad-tr🚋`` (the set
    ``tquad-tr:train`` followed by a colon)."""
    source = tmp_path / "kb" / "domain"
    source.mkdir(parents=True)
    (source / "deploys.md").write_text(
        "# Deploy reactions\n\nReact with :rocket: when the deploy is out, :x: when it failed.\n"
    )
    assert briefd("index", "--source", str(tmp_path / "kb"), cwd=tmp_path).returncode == 0
    table = briefd("search", "deploy reactions", cwd=tmp_path, env={"COLUMNS": "400"}).stdout
    assert ":rocket:" in table and "🚀" not in table and "❌" not in table
    shown = briefd("doc", "domain/deploys.md", cwd=tmp_path, env={"COLUMNS": "400"}).stdout
    assert ":rocket:" in shown and "🚀" not in shown
