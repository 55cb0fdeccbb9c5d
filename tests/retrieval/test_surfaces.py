"""A query typed without diacritics (Turkish on a phone or an English keyboard) is read by the
embedding model with its words written as the index writes them; BM25 reads it as typed."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from briefd.api import Briefd
from briefd.embeddings.base import EmbeddingKind, Vectors
from briefd.embeddings.fake import FakeEmbedder
from briefd.retrieval.search import SearchRequest
from briefd.settings import Settings
from briefd.store.surfaces import restored
from tests.conftest import WriteFiles

TURKISH = {
    "domain/sifre.md": """
        # Şifre sıfırlama

        ## Bağlantının geçerlilik süresi

        Şifre sıfırlama bağlantısı otuz dakika geçerli. Süre dolunca kullanıcı yeni bağlantı
        ister; eski bağlantı açılınca hata sayfası görünür.
        """,
    "domain/taksit.md": """
        # Taksit seçenekleri

        ## Neden görünmüyor

        Kartla ödemede taksit seçenekleri bankaya göre değişir. Kampanya bitince seçenek
        görünmez; önbellek saatte bir yenilenir.
        """,
    "domain/iade.md": """
        # İade

        ## Kısmi iade

        Kısmi iade toplam tutarı geçemez; iade süresi 180 gündür.
        """,
}


class Reader(FakeEmbedder):
    """The fake bag-of-words model ("sifre" and "şifre" are other words to it, as to a real
    one), keeping the queries it read."""

    def __init__(self) -> None:
        super().__init__()
        self.queries: list[str] = []

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        if kind == "query":
            self.queries += texts
        return super().embed_batch(texts, kind)


def test_a_query_typed_without_diacritics_is_read_by_the_model_as_the_index_writes_it(
    settings: Settings, write_files: WriteFiles
) -> None:
    """The model reads the query both ways, and a section is as close as the closer reading:
    typed without diacritics, the password section is as close as to the query written with
    them (before, only as typed: another word to the model)."""
    write_files(TURKISH)
    embedder = Reader()
    with Briefd(settings, embedder=embedder) as api:
        api.index()
        embedder.queries.clear()  # the gate's probes
        typed, written = (
            api.search(SearchRequest(q, mode="vector", top_k=3, explain=True))
            for q in ("sifre sifirlama baglantisi", "şifre sıfırlama bağlantısı")
        )
        # both readings, side by side (in either order)
        assert sorted(embedder.queries) == [
            "sifre sifirlama baglantisi",
            "şifre sıfırlama bağlantısı",
        ]
        hybrid = api.search(SearchRequest("Sifre sifirlama baglantisi ne kadar gecerli"))
    assert sorted(embedder.queries[2:]) == [
        "Sifre sifirlama baglantisi ne kadar gecerli",
        "Şifre sıfırlama bağlantısı ne kadar geçerli",
    ]
    best, expected = typed.hits[0], written.hits[0]
    assert best.doc_path == expected.doc_path == "domain/sifre.md"
    assert best.explain is not None and expected.explain is not None
    assert best.explain.cosine == expected.explain.cosine
    assert hybrid.hits[0].doc_path == "domain/sifre.md"


class Together(FakeEmbedder):
    """Each of a query's two readings waits (up to 5 s) until the other is being embedded too."""

    def __init__(self) -> None:
        super().__init__()
        self.meet: threading.Barrier | None = None

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        if kind == "query" and self.meet is not None:
            self.meet.wait(timeout=5)
        return super().embed_batch(texts, kind)


def test_the_two_readings_of_a_query_are_embedded_side_by_side(
    settings: Settings, write_files: WriteFiles
) -> None:
    """Typed without diacritics, a query is embedded twice (as typed and as the index writes
    it): at once on two workers, not one after the other on one (which doubled the time a
    hybrid search waits for the model); the hits are those of one reading after the other."""
    write_files(TURKISH)
    embedder = Together()
    query = "sifre sifirlama baglantisi ne kadar gecerli"
    with Briefd(settings, embedder=embedder) as api:
        api.index()
        embedder.meet = threading.Barrier(2)
        found = api.search(SearchRequest(query, mode="hybrid", explain=True))
    with Briefd(settings, embedder=FakeEmbedder()) as api:  # no vector cached yet
        again = api.search(SearchRequest(query, mode="hybrid", explain=True))
    assert found.hits[0].doc_path == "domain/sifre.md"
    assert [(h.chunk_id, h.score, h.explain) for h in found.hits] == [
        (h.chunk_id, h.score, h.explain) for h in again.hits
    ]


def test_only_a_spelling_the_index_mostly_uses_is_restored(
    settings: Settings, write_files: WriteFiles
) -> None:
    """A word the index writes plain at least as often as with diacritics (resume, résumé)
    stays as typed, as does one it never holds, a word typed with diacritics, an acronym and
    a word of two letters ("is": iş, as likely English)."""
    write_files(
        {
            "domain/a.md": "# Café\n\nThe café resumes the résumé upload at the Straße desk.\n",
            "domain/b.md": "# Resume\n\nResume the upload after a failure.\n",
            "domain/c.md": "# API\n\nThe ÇAPI naïve client, İş listesi.\n",
        }
    )
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        with api.store.read() as conn:
            got = restored(conn, "Cafe resume upload strasse, naive API Çapi is unknown 2024")
    assert got == "Café resume upload straße, naïve API Çapi is unknown 2024"


def test_german_typed_with_ae_oe_ue_is_read_with_its_umlauts(
    settings: Settings, write_files: WriteFiles
) -> None:
    """ae, oe, ue is how German is typed without umlauts: "zurueckschicken" was another word
    to the model than "zurückschicken" (the gate emptied a German pharmacy team's question
    typed so, kept with the umlauts). A word the index holds as typed (Steuer, Queue), or
    whose readings it never writes with umlauts (Israel), stays as typed."""
    write_files(
        {
            "domain/rueckgabe.md": "# Rückgabe\n\nKühlware darf nicht zurückgeschickt werden; "
            "die Steuer wird über die Rückerstattung verrechnet. Die Queue läuft.\n",
            "domain/lager.md": "# Lager\n\nBeschädigte Kühlakkus gehen an die Rückerstattung.\n",
        }
    )
    with Briefd(settings, embedder=FakeEmbedder()) as api:
        api.index()
        with api.store.read() as conn:
            got = restored(conn, "Rueckerstattung fuer Kuehlware ueber die Steuer, Queue Israel")
    assert got == "Rückerstattung fuer Kühlware über die Steuer, Queue Israel"


def _forms(db: Path) -> list[tuple[str, str, int]]:
    conn = sqlite3.connect(db)
    try:
        return [tuple(r) for r in conn.execute("SELECT * FROM surfaces ORDER BY term, form")]
    finally:
        conn.close()


def test_the_spellings_follow_edits_and_an_older_index_gets_them(
    settings: Settings, write_files: WriteFiles
) -> None:
    root = write_files(TURKISH)
    with Briefd(settings, embedder=None) as api:
        api.index()
    forms = _forms(settings.db)
    assert ("sifre", "şifre", 1) in forms and ("iade", "iade", 1) not in forms
    (root / "domain/sifre.md").write_text("# Parola\n\nParola otuz dakika geçerli.\n")
    with Briefd(settings, embedder=None) as api:
        api.index()
    after = _forms(settings.db)
    assert not [f for f in after if f[0] == "sifre"] and ("gecerli", "geçerli", 1) in after
    conn = sqlite3.connect(settings.db)
    conn.execute("DROP TABLE surfaces")
    conn.execute("PRAGMA user_version = 20")  # an index from before the table
    conn.close()
    with Briefd(settings, embedder=None) as api:
        api.scopes()  # opens (and upgrades) the index
    assert _forms(settings.db) == after
