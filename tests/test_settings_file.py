"""O1: a file given as the settings that is no YAML text (the index itself, UTF-16 from
PowerShell, a binary) says what it is and what to do, not "save it as UTF-8"."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_cli import briefd


def test_the_index_given_as_the_settings_file_says_which_option_names_it(tmp_path: Path) -> None:
    """`briefd --config .briefd/briefd.db search …` (the index, where --db was meant) was told
    "not UTF-8 text; save it as UTF-8"."""
    (tmp_path / "k" / "domain").mkdir(parents=True)
    (tmp_path / "k" / "domain" / "a.md").write_text("# Refunds\n\nRefunds take five days.\n")
    assert briefd("index", "--source", "k", cwd=tmp_path).returncode == 0
    db = Path(".briefd") / "briefd.db"
    given = briefd("--config", str(db), "search", "refunds", cwd=tmp_path)
    assert (given.returncode, given.stdout) == (1, "")
    assert given.stderr == (
        f"error: {db}: an SQLite database (a briefd index?), not a settings file; an index is "
        "named by --db (or BRIEFD_DB, or 'db:' in the settings), a settings file by --config\n"
    )
    named = briefd("search", "refunds", cwd=tmp_path, env={"BRIEFD_CONFIG": str(db)})
    assert named.stderr.startswith(f"error: {db} (named by BRIEFD_CONFIG): an SQLite database")
    assert (tmp_path / db).read_bytes().startswith(b"SQLite format 3\x00")  # left as it was


def test_utf16_and_binary_settings_files_say_what_they_are(tmp_path: Path) -> None:
    """Windows PowerShell's `"search: …" > briefd.yaml` writes UTF-16, which was "not valid
    YAML; fix the syntax" (the file looks right in an editor); a binary file likewise."""
    (tmp_path / "briefd.yaml").write_bytes("search:\n  top_k: 3\n".encode("utf-16"))
    utf16 = briefd("scopes", cwd=tmp_path)
    assert utf16.stderr == (
        "error: briefd.yaml: UTF-16 text (as Windows PowerShell's '>' writes it); save it as "
        "UTF-8\n"
    )
    (tmp_path / "briefd.yaml").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00")
    binary = briefd("scopes", cwd=tmp_path)
    assert binary.stderr == (
        "error: briefd.yaml: a binary file (it holds NUL bytes), not a YAML settings file\n"
    )


def test_the_prompt_hook_says_the_same_of_the_index_named_as_its_settings(tmp_path: Path) -> None:
    """The hook (`briefd recall`, which reads the settings file itself) said "… is not UTF-8
    text; save it as UTF-8" of the index that BRIEFD_CONFIG named."""
    (tmp_path / "k" / "domain").mkdir(parents=True)
    (tmp_path / "k" / "domain" / "a.md").write_text("# Refunds\n\nRefunds take five days.\n")
    assert briefd("index", "--source", "k", cwd=tmp_path).returncode == 0
    db = tmp_path / ".briefd" / "briefd.db"
    env = {"BRIEFD_CONFIG": str(db), "BRIEFD_RECALL__DAEMON": "false"}
    hooked = briefd("recall", "how long do refunds take", cwd=tmp_path, env=env)
    assert (hooked.returncode, hooked.stdout) == (0, "")  # fails open, as ever
    assert hooked.stderr == (
        f"briefd recall: {db}: an SQLite database (a briefd index?), not a settings file; an "
        "index is named by --db (or BRIEFD_DB, or 'db:' in the settings), a settings file by "
        "--config\n"
    )


def test_the_commonest_yaml_slips_say_what_to_do(tmp_path: Path) -> None:
    """A key one space off, a value holding ': ' and a second document ('---' between two
    pastes) said only YAML's reader words ("expected <block end>, but found '<block mapping
    start>'", "(but found another document)") and "fix the syntax"."""
    cases = {
        "search:\n  top_k: 3\n mode: bm25\n": (
            "line 3 (expected <block end>, but found '<block mapping start>'); that line is "
            "indented as no key above it: line it up with its section's keys"
        ),
        "sync:\n  branch: main\n  webhook_secret: ab: cd\n": (
            "line 3 (mapping values are not allowed here); a value that holds ': ' goes in "
            "quotes, and a key is indented as its section's other keys, not under the value "
            "above it"
        ),
        "search:\n  top_k: 3\n---\nserve:\n  port: 9000\n": (
            "line 3 (expected a single document in the stream, but found another document); a "
            "settings file is one document: remove that '---' and merge what follows it"
        ),
    }
    for text, said in cases.items():
        (tmp_path / "briefd.yaml").write_text(text)
        done = briefd("scopes", cwd=tmp_path)
        assert (done.returncode, done.stderr) == (
            1,
            f"error: briefd.yaml: not valid YAML at {said}\n",
        )
