"""What ``briefd tune`` / ``briefd eval`` are given to measure on (V1, V3): a --dataset folder
that is not one says why and what to give instead, and a golden heading copied from where
briefd shows sections is the section it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.eval.datasets import load_golden
from briefd.eval.run import golden_index, run_golden
from briefd.settings import Settings
from tests.cli.test_cli import briefd
from tests.conftest import WriteFiles

WANTED = "--dataset takes the folder holding corpus.jsonl, queries.jsonl and qrels.tsv"


@pytest.mark.parametrize("command", ["tune", "eval"])
def test_a_dataset_folder_that_does_not_exist_is_said_to_be_missing(
    tmp_path: Path, command: str
) -> None:
    """A mistyped folder was 'beir/scifct is not a BEIR dataset (corpus.jsonl, …)', which read
    as a folder of the wrong kind, not as a typo."""
    result = briefd(command, "--dataset", "beir/scifct", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"error: beir/scifct does not exist; {WANTED}\n"


def test_a_knowledge_folder_given_as_the_dataset_is_told_where_it_goes(tmp_path: Path) -> None:
    (tmp_path / "kb" / "domain").mkdir(parents=True)
    (tmp_path / "kb" / "domain" / "refunds.md").write_text("# Refunds\n\n30 days.\n")
    (tmp_path / "empty").mkdir()
    result = briefd("tune", "--dataset", "kb", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "error: kb is not a BEIR dataset: it has no corpus.jsonl and no queries.jsonl; a folder "
        "of Markdown knowledge is a golden set's source: --queries FILE --source DIR\n"
    )
    result = briefd("tune", "--dataset", "empty", cwd=tmp_path)
    assert result.stderr == (
        f"error: empty is not a BEIR dataset: it has no corpus.jsonl and no queries.jsonl; {WANTED}\n"
    )


REFUNDS = """\
# Refunds and partial refunds

Intro.

## Partial refunds

Any number of partial refunds, up to the captured amount.

### Pending refunds

Pending ones count against the refundable amount.

## Refund window

180 days.
"""


@pytest.mark.parametrize(
    "heading",
    [
        "Refunds and partial refunds > Partial refunds",  # `briefd search`'s section line
        "Refunds and partial refunds › Partial refunds › Pending refunds",  # a bundle's
        "## Refund window",  # the document's own line
        "## 2. Refund window",  # the MCP search text's
        "Partial refunds  >  Pending refunds",
    ],
)
def test_a_heading_copied_with_its_decoration_names_its_section(
    settings: Settings, write_files: WriteFiles, tmp_path: Path, heading: str
) -> None:
    """A heading copied from `briefd search` ('Title > Heading') was refused: "expects section
    'Refunds and partial refunds > Partial refunds' of domain/refunds.md, which is not in the
    index; its sections there are … 'Partial refunds' …"."""
    root = write_files({"domain/refunds.md": REFUNDS})
    queries = tmp_path / "q.yaml"
    queries.write_text(
        "queries:\n  - {id: q1, query: pending partial refunds window, type: keyword, "
        f"expected: [{{path: domain/refunds.md, heading: '{heading}'}}]}}\n",
        encoding="utf-8",
    )
    with Briefd(golden_index(settings, root)) as api:
        api.index()
        report = run_golden(api, load_golden(queries), "bm25")
    assert report.queries == 1
    assert report.overall["recall@10"] == 1.0
