"""The cached eval index of a team's golden set, run with the team's settings and without
them (another folder, another --config): each layout gets its own index."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_cli import briefd


def test_eval_with_another_layout_does_not_reuse_the_cached_index(tmp_path: Path) -> None:
    """V1: the eval cache was keyed by the knowledge folder alone. A team's set measured with
    its settings (`briefd --config team.yaml eval`, scopes `docs`), then measured without them
    (default scopes domain/, conventions/: none of its files), reused that index and failed
    with "found no document in …/kb where the index holds 1: the index is left as it was; …
    To empty the index, delete .briefd/eval-cache/golden-kb-…/index.db", an internal file to
    delete; without the cached index the same run says the source holds no document in a
    scope folder. Run with the team's settings again, it is measured as before."""
    (tmp_path / "kb" / "docs").mkdir(parents=True)
    (tmp_path / "kb" / "docs" / "refunds.md").write_text("# Refunds\n\n## Window\n\n30 days.\n")
    (tmp_path / "team.yaml").write_text("scopes:\n  - {folder: docs, default: true}\n")
    (tmp_path / "q.yaml").write_text(
        "source: kb\nqueries:\n  - {id: a, query: refund window, type: keyword, "
        "expected: [{path: docs/refunds.md, heading: Window}]}\n"
    )
    team = ("--config", "team.yaml", "eval", "--queries", "q.yaml", "--json")
    measured = briefd(*team, cwd=tmp_path)
    assert measured.returncode == 0, measured.stderr
    plain = briefd("eval", "--queries", "q.yaml", cwd=tmp_path)
    assert (plain.returncode, plain.stdout) == (1, "")
    assert plain.stderr == (
        "error: q.yaml: the knowledge source kb holds no indexed document (no Markdown, or "
        "none in a scope folder such as domain/); pass the folder of the knowledge the "
        "queries are about (--source DIR)\n"
    )
    again = briefd(*team, cwd=tmp_path)
    assert (again.returncode, again.stdout) == (0, measured.stdout)
