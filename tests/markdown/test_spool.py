"""The parsed documents of an index run, spooled to disk between parsing and writing (O4):
the same documents come back in the order added, as often as read; the file is unlinked
from the start (a killed run leaves nothing) and is gone once closed."""

from __future__ import annotations

from pathlib import Path

from briefd.markdown.document import parse_document
from briefd.markdown.spool import Spool
from briefd.model import Document
from briefd.tokens import count_tokens


def _doc(number: int) -> Document:
    text = f"# Page {number}\n\n## Part\n\n{'word ' * 200}{number}\n\nSee [[page-{number + 1}]].\n"
    return parse_document(f"domain/page-{number}.md", text, "domain", f"h{number}", count_tokens)


def _open_in(folder: Path) -> list[str]:
    """What this process holds open in ``folder`` (an unlinked file shows as ``(deleted)``)."""
    found = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = str(fd.readlink())
        except OSError:
            continue
        if target.startswith(str(folder) + "/"):
            found.append(target)
    return found


def test_documents_come_back_in_order_as_often_as_read(tmp_path: Path) -> None:
    docs = [_doc(n) for n in range(40)]
    with Spool(tmp_path, in_memory=3_000, batch=5_000) as spool:
        for doc in docs:
            spool.append(doc)
        assert len(spool) == 40 and spool.paths == [d.path for d in docs]
        assert list(spool) == docs
        assert list(spool) == docs  # read again (the embedder reads, then the writer)
        held = _open_in(tmp_path)
        assert len(held) == 1 and held[0].endswith("(deleted)")  # spooled, never listed
        assert list(tmp_path.iterdir()) == []
    assert _open_in(tmp_path) == []


def test_a_few_documents_never_touch_the_disk(tmp_path: Path) -> None:
    docs = [_doc(n) for n in range(3)]
    with Spool(tmp_path) as spool:
        for doc in docs:
            spool.append(doc)
        assert list(spool) == docs
        assert _open_in(tmp_path) == []


def test_without_a_folder_to_spool_to_every_document_stays_in_memory(tmp_path: Path) -> None:
    gone = tmp_path / "gone"  # no file can be made there (as a read-only or full folder)
    docs = [_doc(n) for n in range(20)]
    with Spool(gone, in_memory=3_000, batch=5_000) as spool:
        for doc in docs:
            spool.append(doc)
        assert list(spool) == docs
