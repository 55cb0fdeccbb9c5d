"""A team's own golden file naming a Turkish document or heading in another letter case, as
`briefd eval --queries` tells it (a real process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_cli import briefd


@pytest.mark.parametrize(
    ("path", "heading", "said"),
    [
        ("domain/iade.md", "İADE SÜRESİ", "paths are case-sensitive: write 'domain/İade.md'"),
        ("domain/İade.md", "İade süresi", "headings are case-sensitive: write 'İADE SÜRESİ'"),
    ],
)
def test_a_turkish_path_or_heading_in_another_case_is_told_the_indexed_one(
    tmp_path: Path, path: str, heading: str, said: str
) -> None:
    """V1: 'refund Window' was told "headings are case-sensitive: write 'Refund window'", but
    'İade süresi' for a heading written 'İADE SÜRESİ' got the list of every section of the
    document, and 'domain/iade.md' for 'domain/İade.md' "itself is not indexed (a typo, or a
    file outside every scope?)": the comparison used lower(), which makes İ an i with a
    combining dot, never the i a Turkish user types."""
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "İade.md").write_text(
        "# İade\n\n## İADE SÜRESİ\n\nİade 180 gün içinde yapılır.\n\n## Kargo\n\nÜcretsiz.\n",
        encoding="utf-8",
    )
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: q1, query: iade süresi, type: keyword, "
        f"expected: [{{path: {path}, heading: {heading}}}]}}\n",
        encoding="utf-8",
    )
    result = briefd("eval", "--queries", "q.yaml", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f"error: q.yaml:3: query q1 expects section '{heading}' of {path}, which is not in the "
        f"index; {said}\n"
    )
