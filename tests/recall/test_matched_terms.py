"""BM25 recall's evidence check (I8, :mod:`briefd.recall.evidence`): which informative terms
each candidate section holds. It asked FTS5 ``MATCH ? AND rowid IN (…)`` per term, which FTS5
answers by reading the term's whole posting list once for each rowid of the list: on 5,265
sections (scifact) a keyword answer took 190-370 ms and measuring the keyword levels 13.4 s
(load average 30), against 45-160 ms and 2.6 s reading each term's matches once. The sections
found must be the same, column filter included."""

from __future__ import annotations

from pathlib import Path

import yaml

from briefd.api import Briefd
from briefd.recall.evidence import _matched_terms, quote
from briefd.recall.generic import GENERIC_PROMPTS
from briefd.text import query_terms
from tests.conftest import REPO


def one_by_one(
    conn: object, terms: list[str], rowids: list[int], column: str
) -> dict[int, list[str]]:
    """The same question asked of each section alone."""
    sql = "SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid = ?"
    return {
        r: [t for t in terms if conn.execute(sql, (column + quote(t), r)).fetchone()]  # type: ignore[attr-defined]
        for r in rowids
    }


def test_the_terms_each_candidate_holds_are_found_as_one_by_one(indexed: Briefd) -> None:
    noise = yaml.safe_load(Path(REPO / "eval" / "recall-noise.yaml").read_text())["prompts"]
    golden = yaml.safe_load(Path(REPO / "eval" / "golden" / "queries.yaml").read_text())
    prompts = [p["text"] for p in noise] + [q["query"] for q in golden["queries"]]
    prompts += [p for group in GENERIC_PROMPTS.values() for p in group]
    checked = 0
    with indexed.store.read() as conn:
        every = [r for (r,) in conn.execute("SELECT rowid FROM chunks ORDER BY rowid")]
        for n, prompt in enumerate(prompts):
            terms = list(dict.fromkeys(query_terms(prompt)))[:8]
            rowids = every[n % 7 :: 7][:50]  # candidates, as a ranking gives at most 50
            for column in ("", "{title heading_path} : "):
                found = _matched_terms(conn, terms, rowids, column)
                assert found == one_by_one(conn, terms, rowids, column), (prompt, column)
                checked += sum(len(v) for v in found.values())
    assert checked > 1000  # the prompts' words are in the example knowledge, often
