"""C1 control characters are out of the served text as C0 ones are, and a file that looks
double-encoded (mojibake) is reported with what to do, its text not guessed at."""

from __future__ import annotations

import json
from pathlib import Path

from briefd.api import Briefd
from briefd.model import DocumentProblem
from tests.cli.test_cli import briefd
from tests.conftest import WriteFiles


def test_c1_controls_are_out_and_a_double_encoded_file_is_reported(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A file saved as UTF-8 twice served ``â\\x80\\x99`` and a stray U+009B to agents, and the
    index said nothing of it; the C1 characters are now out, the file reported."""
    write_files(
        {
            "domain/twice.md": "# Refunds\n\nThe customer\u00e2\u0080\u0099s refund: caf\u00c3\u00a9 \u00e2\u20ac\u0153fees\u00e2\u20ac\x9d.\n",
            "domain/stray.md": "# Limits\n\nThe daily limit\u009b is 500.\n",
            "domain/german.md": "# Gruß\n\n„Viele Grüße“ und „Gruß“ from the café team: 20 °C.\n",
        }
    )
    report = api.index()
    shown = {p: api.document(p).chunks[0].content for p in ("domain/twice.md", "domain/stray.md")}
    assert shown == {
        "domain/twice.md": "The customer\u00e2s refund: caf\u00c3\u00a9 \u00e2\u20ac\u0153fees\u00e2\u20ac.",
        "domain/stray.md": "The daily limit is 500.",
    }
    assert "\u009b" not in api.document("domain/stray.md").body
    assert report.problems == (
        DocumentProblem(
            "domain/twice.md",
            "the file looks double-encoded ('\u00e2\\x80\\x99' where '\u2019' is meant, "
            "4 places): it was read as Windows-1252 and saved as UTF-8 again; re-save it as "
            "UTF-8 from its original",
        ),
    )


def test_control_characters_written_as_yaml_escapes_are_out_of_front_matter(
    tmp_path: Path, write_files: WriteFiles
) -> None:
    """The file's own control characters were out, but a quoted YAML string writes them as
    escapes: ``title: "\\e]0;…\\a"`` put a terminal's escape sequence into the title that
    `briefd docs` printed to the terminal as it was (retitling it), NUL and ESC reached agents
    in every hit's title, and a tag's ESC the 'known tags' of an unknown tag's error."""
    source = write_files(
        {
            "domain/limits.md": '---\ntitle: "Daily\\e]0;owned\\a limits\\0"\n'
            'tags: ["lim\\e[31mits", "ok"]\naliases: ["cap\\x07s"]\n---\n'
            "# Limits\n\nThe daily limit is 500.\n"
        }
    )
    db = ("--db", "idx/k.db")
    assert briefd(*db, "index", "--source", str(source), cwd=tmp_path).returncode == 0
    listed = briefd(*db, "docs", cwd=tmp_path)
    assert listed.stdout.splitlines()[-1].split()[-1] == "limits"
    assert "Daily limits" in listed.stdout and "\x1b" not in listed.stdout
    found = json.loads(briefd(*db, "search", "caps", "--json", cwd=tmp_path).stdout)
    assert [h["title"] for h in found["hits"]] == ["Daily limits"]
    unknown = briefd(*db, "search", "daily limit", "--tags", "zz", cwd=tmp_path)
    assert unknown.stderr == "error: tag 'zz' is on no document; known tags: limits, ok\n"
