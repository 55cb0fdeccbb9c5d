"""``briefd docs`` as text: paths whole at any width, titles cut only where they still say
something, scopes as headings."""

from __future__ import annotations

from rich.cells import cell_len

from briefd.cli.docs import listing
from briefd.store.views import DocumentSummary

DOCS = [
    DocumentSummary(
        "conventions",
        "conventions/api-design.md",
        "REST API Conventions",
        8,
        2448,
        "2026-11-29T10:00:00",
    ),
    DocumentSummary(
        "domain", "domain/refunds.md", "Refunds and partial refunds", 7, 1643, "2026-11-30T09:00:00"
    ),
    DocumentSummary("domain", "domain/x.md", "X", 1, 12, "2026-12-01T00:00:00"),
]


def test_paths_stay_whole_and_titles_fit_the_terminal() -> None:
    lines = listing(DOCS, 85)
    assert lines == [
        "conventions (1 document)",
        "  path                       sections   tokens  updated     title",
        "  conventions/api-design.md         8    2,448  2026-11-29  REST API Conventions",
        "",
        "domain (2 documents)",
        "  path                       sections   tokens  updated     title",
        "  domain/refunds.md                 7    1,643  2026-11-30  Refunds and partial refu…",
        "  domain/x.md                       1       12  2026-12-01  X",
    ]
    assert all(len(line) <= 85 for line in lines)


def test_piped_or_too_narrow_the_title_is_whole() -> None:
    assert listing(DOCS, None)[6].endswith("Refunds and partial refunds")
    assert listing(DOCS, 70)[6].endswith("Refunds and partial refunds")  # 4 columns left: wraps


def test_wide_characters_keep_the_columns_and_the_width() -> None:
    """Terminals give a CJK character or an emoji two cells: padding by characters shifted
    every column after such a path and let its title run past the terminal."""
    docs = [
        DocumentSummary(
            "domain",
            "domain/東京オフィス.md",
            "東京オフィスの営業時間と会議室の予約方法",
            1,
            44,
            "2026-12-03T00:00:00",
        ),
        DocumentSummary(
            "domain", "domain/şifre-sıfırlama.md", "Şifre Sıfırlama", 5, 126, "2026-12-03T00:00:00"
        ),
    ]
    lines = listing(docs, 80)
    assert lines[2:] == [
        "  domain/東京オフィス.md            1       44  2026-12-03  東京オフィスの営業…",
        "  domain/şifre-sıfırlama.md         5      126  2026-12-03  Şifre Sıfırlama",
    ]
    assert {cell_len(line[: line.index("2026")]) for line in lines[2:]} == {48}
    assert all(cell_len(line) <= 80 for line in lines)


def test_a_title_is_never_cut_inside_an_emoji() -> None:
    """A family joined by U+200D or a flag cut in two shows as other signs."""
    family, flag = "👨\u200d👩\u200d👧", "🇹🇷"
    title = "Aile " + (family + flag) * 12
    docs = [DocumentSummary("domain", "domain/aile.md", title, 1, 6, "2026-12-03T00:00:00")]
    for width in range(70, 100):
        head = listing(docs, width)[2].removesuffix("…").rsplit("  ", 1)[-1]
        assert head.removeprefix("Aile ").replace(family, "").replace(flag, "") == "", width


def test_a_title_over_several_lines_is_one_row() -> None:
    """``title: |`` made two rows of one document, the second reading as a heading."""
    title = "Currency conversion\n# not a heading\n"
    docs = [DocumentSummary("domain", "domain/currency.md", title, 1, 8, "2026-12-03T00:00:00")]
    assert listing(docs, None)[2:] == [
        "  domain/currency.md         1        8  2026-12-03  Currency conversion # not a heading"
    ]
