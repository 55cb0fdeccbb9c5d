"""The stamp that answers a no-change ``briefd index`` before settings load (O4): it answers
exactly what the hashing path answers, and every change — of the files, the settings, the
environment, the commit, the index — sends the run on to hash (never a stale report)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.cli import stamp
from briefd.cli.index_fast import Removals, Unchanged, _upkeep_next, check, refresh_stamp
from briefd.cli.index_fast import main as index_fast
from briefd.embeddings.base import EmbeddingKind, Vectors
from briefd.embeddings.fake import FakeEmbedder
from briefd.settings import Settings, with_overrides
from tests.conftest import WriteFiles
from tests.sync.gitrepo import git

FILES = {
    "domain/refunds.md": "# Refunds\n\nPartial refunds within 30 days.\n",
    "domain/retries.md": "# Retries\n\nSoft declines are retried three times.\n",
    "conventions/naming.md": "# Naming\n\nServices are named after their domain.\n",
}
ENV = {"BRIEFD_EMBEDDINGS__ENABLED": "false"}
FORMAT_HEAD = stamp.FORMAT + "\ninvocation\t"  # the first bytes a killed run wrote

Stamp = Callable[[], None]


@pytest.fixture
def knowledge(
    settings: Settings, write_files: WriteFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Settings, list[str]]]:
    """The source as a git checkout, indexed, the working directory beside it; with the argv
    of a ``briefd index`` for it."""
    monkeypatch.chdir(tmp_path)
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    root = write_files(FILES)
    git(root, "init", "--quiet", "--initial-branch=main")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "knowledge")
    with Briefd(settings, embedder=None) as api:
        api.index()
    yield settings, ["--db", str(settings.db), "index", "--source", str(root)]


def stamped(settings: Settings, argv: list[str], env: dict[str, str] | None = None) -> None:
    """Write the stamp now (no racy window: the tests change files right after)."""
    args = stamp.index_args(argv)
    assert args is not None
    found = refresh_stamp(settings, args, ENV if env is None else env, Path.cwd(), racy_ns=0)
    assert isinstance(found, Unchanged)
    assert Path(stamp.stamp_path(str(settings.db))).is_file()


def fast_output(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert index_fast(argv) == 0
    return capsys.readouterr().out


def without_seconds(text: str) -> str:
    lines = text.splitlines()
    if text.startswith("{"):
        return json.dumps({**json.loads(text), "seconds": 0})
    return "\n".join([lines[0].rsplit(" in ", 1)[0], *lines[1:]])


def test_nothing_changed_answers_as_the_hashing_path(
    knowledge: tuple[Settings, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    settings, argv = knowledge
    for extra in ([], ["--json"]):
        stamped(settings, argv)
        answer = stamp.answer([*argv, *extra], ENV)
        assert answer is not None
        hashed = fast_output([*argv, *extra], capsys)
        assert without_seconds(answer) == without_seconds(hashed)
        if extra:
            report = json.loads(answer)
            assert report["documents"] == 3 and report["unchanged"] == 3
            assert isinstance(report["seconds"], float)
        else:
            assert answer.startswith(f"Indexed {settings.source}: 3 documents, 3 chunks in 0.")
            assert "0 changed (0 new), 0 deleted, 3 unchanged, 0 skipped" in answer


def edit(root: Path) -> None:
    (root / "domain/refunds.md").write_text("# Refunds\n\nPartial refunds within 60 days!\n")


def add(root: Path) -> None:
    (root / "domain/disputes.md").write_text("# Disputes\n\nAnswer within 7 days.\n")


def delete(root: Path) -> None:
    (root / "domain/retries.md").unlink()


def rename(root: Path) -> None:
    (root / "domain/retries.md").rename(root / "domain/retry-policy.md")


def touch(root: Path) -> None:
    page = root / "domain/refunds.md"
    page.write_text(page.read_text())  # the same bytes, written again


def same_size_same_mtime(root: Path) -> None:
    """An edit in place that keeps size and mtime (a tool restoring the old mtime): only the
    ctime tells."""
    page = root / "domain/refunds.md"
    before = page.stat()
    page.write_text(page.read_text().replace("30 days", "31 days"))
    os.utime(page, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert page.stat().st_size == before.st_size and page.stat().st_mtime_ns == before.st_mtime_ns


def ignore(root: Path) -> None:
    (root / ".gitignore").write_text("conventions/\n")


def nested_folder(root: Path) -> None:
    (root / "domain/payouts").mkdir()
    (root / "domain/payouts/timing.md").write_text("# Timing\n\nPayouts settle daily.\n")


def commit(root: Path) -> None:
    git(root, "commit", "--quiet", "--allow-empty", "-m", "another commit")


def branch(root: Path) -> None:
    git(root, "checkout", "--quiet", "-b", "feature")
    git(root, "commit", "--quiet", "--allow-empty", "-m", "on a branch")


def detach(root: Path) -> None:
    git(root, "checkout", "--quiet", "--detach")
    git(root, "commit", "--quiet", "--allow-empty", "-m", "detached")


def pack_refs(root: Path) -> None:
    git(root, "commit", "--quiet", "--allow-empty", "-m", "then packed")
    git(root, "pack-refs", "--all")


CHANGES = [
    edit,
    add,
    delete,
    rename,
    touch,
    same_size_same_mtime,
    ignore,
    nested_folder,
    commit,
    branch,
    detach,
    pack_refs,
]


@pytest.mark.parametrize("change", CHANGES, ids=[c.__name__ for c in CHANGES])
def test_every_change_of_files_or_commit_falls_through(
    knowledge: tuple[Settings, list[str]], change: Callable[[Path], None]
) -> None:
    settings, argv = knowledge
    stamped(settings, argv)
    assert stamp.answer(argv, ENV) is not None
    assert settings.source is not None
    change(settings.source)
    assert stamp.answer(argv, ENV) is None
    assert stamp.answer([*argv, "--json"], ENV) is None


def test_settings_and_environment_changes_fall_through(
    knowledge: tuple[Settings, list[str]], tmp_path: Path
) -> None:
    settings, argv = knowledge
    stamped(settings, argv)
    assert stamp.answer(argv, ENV) is not None
    assert stamp.answer(argv, {**ENV, "BRIEFD_SEARCH__TOP_K": "3"}) is None  # a setting
    assert stamp.answer(argv, {}) is None  # one less
    assert stamp.answer(argv, {**ENV, "GIT_DIR": "/elsewhere"}) is None  # git's own
    assert stamp.answer([*argv[:3], "index"], ENV) is None  # other options
    assert stamp.answer(argv, ENV) is not None
    (tmp_path / "briefd.yaml").write_text("search:\n  top_k: 3\n")  # ./briefd.yaml appears
    assert stamp.answer(argv, ENV) is None


@pytest.mark.parametrize("where", [".briefd/briefd.yaml", "home/.config/briefd/briefd.yaml"])
def test_a_settings_file_appearing_where_briefd_looks_falls_through(
    knowledge: tuple[Settings, list[str]], tmp_path: Path, where: str
) -> None:
    settings, argv = knowledge
    env = {**ENV, "HOME": str(tmp_path / "home")}
    stamped(settings, argv, env)
    assert stamp.answer(argv, env) is not None
    assert stamp.answer(argv, {**env, "HOME": str(tmp_path / "elsewhere")}) is None
    (tmp_path / where).parent.mkdir(parents=True)
    (tmp_path / where).write_text("search:\n  top_k: 3\n")  # ./.briefd/ or the user's
    assert stamp.answer(argv, env) is None


def test_a_config_file_change_falls_through(
    knowledge: tuple[Settings, list[str]], tmp_path: Path
) -> None:
    settings, argv = knowledge
    config = tmp_path / "team.yaml"
    config.write_text(f"db: index.db\nsource: {settings.source}\n")
    argv = ["--config", str(config), "index"]
    assert stamp.locate(stamp.index_args(argv) or {}, ENV, str(tmp_path)) == str(settings.db)
    stamped(settings, argv)
    assert stamp.answer(argv, ENV) is not None
    config.write_text(f"db: index.db\nsource: {settings.source}\nsearch:\n  top_k: 3\n")
    assert stamp.answer(argv, ENV) is None


def test_another_index_run_into_the_same_index_falls_through(
    knowledge: tuple[Settings, list[str]], write_files: WriteFiles, tmp_path: Path
) -> None:
    settings, argv = knowledge
    stamped(settings, argv)
    other = tmp_path / "other"
    (other / "domain").mkdir(parents=True)
    (other / "domain/else.md").write_text("# Else\n\nSomething else.\n")
    with Briefd(with_overrides(settings, {"source": str(other)}), embedder=None) as api:
        api.index()  # the same index file, another source: its stored key is not the stamp's
    assert stamp.answer(argv, ENV) is None


def test_a_replaced_index_file_falls_through(knowledge: tuple[Settings, list[str]]) -> None:
    settings, argv = knowledge
    stamped(settings, argv)
    copy = settings.db.with_name("copy.db")
    copy.write_bytes(settings.db.read_bytes())
    copy.replace(settings.db)
    assert stamp.answer(argv, ENV) is None


def test_a_damaged_or_foreign_stamp_is_ignored(knowledge: tuple[Settings, list[str]]) -> None:
    settings, argv = knowledge
    stamped(settings, argv)
    path = Path(stamp.stamp_path(str(settings.db)))
    text = path.read_text()
    for damaged in (text[: len(text) // 2], text[:-10], "", "not a stamp\n", "\0\1\2"):
        path.write_text(damaged)
        assert stamp.answer(argv, ENV) is None
    path.write_bytes(b"\xff\xfe" + text.encode())
    assert stamp.answer(argv, ENV) is None


def test_a_stamp_a_killed_run_was_writing_is_swept_by_the_next(
    knowledge: tuple[Settings, list[str]],
) -> None:
    settings, argv = knowledge
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        target = Path(stamp.stamp_path(str(settings.db)))
        killed = target.with_name(f"{target.name}.{gone.stdout.strip()}.partial")
        writing = target.with_name(f"{target.name}.{live.pid}.partial")
        killed.write_text(FORMAT_HEAD)
        writing.write_text(FORMAT_HEAD)
        stamped(settings, argv)
        assert sorted(p.name for p in target.parent.glob(f"{target.name}*")) == sorted(
            [target.name, writing.name]
        )
    finally:
        live.kill()
        live.wait()


def test_a_racy_edit_writes_no_stamp(knowledge: tuple[Settings, list[str]]) -> None:
    """Files changed within the last two seconds could change again in the same clock tick
    without a new stat: the writer refuses the stamp (as git treats racily clean entries)."""
    settings, argv = knowledge
    args = stamp.index_args(argv)
    assert args is not None and settings.source is not None
    stamped(settings, argv)
    edit(settings.source)
    with Briefd(settings, embedder=None) as api:
        api.index()
    assert isinstance(refresh_stamp(settings, args, ENV, Path.cwd()), Unchanged)
    assert not Path(stamp.stamp_path(str(settings.db))).exists()  # removed, not rewritten
    assert stamp.answer(argv, ENV) is None


def test_an_index_inside_the_source_gets_no_stamp(
    settings: Settings, write_files: WriteFiles, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Writing the stamp would change the folder it records."""
    monkeypatch.chdir(tmp_path)
    root = write_files(FILES)
    inside = with_overrides(settings, {"db": str(root / "domain" / "index.db")})
    with Briefd(inside, embedder=None) as api:
        api.index()
    argv = ["--db", str(inside.db), "index", "--source", str(root)]
    args = stamp.index_args(argv)
    assert args is not None
    refresh_stamp(inside, args, ENV, tmp_path, racy_ns=0)
    assert not Path(stamp.stamp_path(str(inside.db))).exists()


def test_deletes_and_renames_are_removals(knowledge: tuple[Settings, list[str]]) -> None:
    settings, _ = knowledge
    assert settings.source is not None
    rename(settings.source)
    (settings.source / "conventions/naming.md").unlink()
    found = check(settings)
    assert isinstance(found, Removals)
    assert found.paths == ("conventions/naming.md", "domain/retries.md")
    edit(settings.source)
    assert check(settings) is None  # an edit needs the parser and maybe the model


def test_upkeep_is_due_when_the_oldest_entry_ages_out(settings: Settings) -> None:
    now = time.time()
    days = settings.bundles.manifest_days
    created = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(now - days * 86400 + 3600))
    assert abs(_upkeep_next((None, created), settings) - (now + 3600)) < 5
    assert _upkeep_next((None, None), settings) > now + 86400 - 5
    assert _upkeep_next((None, "not a time"), settings) <= time.time()


def test_the_console_script_answers_from_the_stamp_without_settings(
    knowledge: tuple[Settings, list[str]], tmp_path: Path
) -> None:
    """As users start it: the first run hashes and writes the stamp (once the files are two
    seconds old), the next answers from it alone — the same report, no settings loaded."""
    _, argv = knowledge
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}, **ENV}
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print(sorted(m for m in sys.modules if m.startswith('briefd')"
        " or m in ('json', 'pathlib', 'typing')), file=sys.stderr))\n"
        "sys.argv[0] = 'briefd'\n"
        "from briefd.cli.launch import run\n"
        "run()\n"
    )

    def briefd(*extra: str) -> tuple[str, list[str]]:
        done = subprocess.run(
            [sys.executable, "-c", code, *argv, *extra],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
            check=True,
        )
        return done.stdout, json.loads(done.stderr.splitlines()[-1].replace("'", '"'))

    time.sleep(2.1)  # past the racy window of the files the fixture wrote
    hashed, modules = briefd("--json")
    assert "briefd.settings" in modules  # no stamp yet: the hashing path
    answered, modules = briefd("--json")
    assert modules == [
        "briefd",
        "briefd.__about__",
        "briefd.cli",
        "briefd.cli.launch",
        "briefd.cli.stamp",
        "briefd.cli.streams",
        "briefd.project",  # where the settings are: --db names no settings (standard library)
        "briefd.store",
        "briefd.store.freshness",
        "briefd.store.peek",  # the index read so that its -wal and -shm go (standard library)
    ]
    assert without_seconds(answered) == without_seconds(hashed)
    human, _ = briefd()
    assert human.splitlines()[1] == "  0 changed (0 new), 0 deleted, 3 unchanged, 0 skipped"


def test_a_delete_embeds_nothing_not_even_the_calibration_probes(
    settings: Settings, write_files: WriteFiles
) -> None:
    """The gate's probes and recall's generic prompts keep their stored vectors while their
    texts and the model are the same: an index run with nothing new to embed never asks the
    model (a deferred model then never loads)."""

    class Counting(FakeEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.asked: list[tuple[str, int]] = []

        def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
            self.asked.append((kind, len(texts)))
            return super().embed_batch(texts, kind)

    root = write_files(FILES)
    embedder = Counting()
    with Briefd(settings, embedder=embedder) as api:
        api.index()
        with api.store.read() as conn:
            key = f"{embedder.model_id}|generic"
            row = conn.execute("SELECT language FROM calibration WHERE model = ?", (key,))
            assert row.fetchone()[0].startswith("generic ")  # the probe texts' digest
    asked = [kind for kind, _ in embedder.asked]
    assert asked.count("passage") == 1 and asked.count("query") == 2  # gate, generic probes
    embedder.asked.clear()
    delete(root)
    (root / "conventions/naming.md").rename(root / "conventions/names.md")  # the same text
    with Briefd(settings, embedder=embedder) as api:
        report = api.index()
    assert report.deleted == ("conventions/naming.md", "domain/retries.md")
    assert report.added == ("conventions/names.md",) and embedder.asked == []


def test_a_delete_is_indexed_without_the_command_line(
    knowledge: tuple[Settings, list[str]],
) -> None:
    settings, argv = knowledge
    assert settings.source is not None
    delete(settings.source)
    code = (
        "import sys, json; from briefd.cli.index_fast import main; status = main(sys.argv[1:]); "
        "heavy = [m for m in ('typer', 'fastapi', 'mcp', 'onnxruntime') if m in sys.modules]; "
        "print(json.dumps([status, heavy]), file=sys.stderr)"
    )
    env = {**ENV, "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    done = subprocess.run(
        [sys.executable, "-c", code, *argv, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert json.loads(done.stderr.splitlines()[-1]) == [0, []]
    report = json.loads(done.stdout)
    assert report["deleted"] == ["domain/retries.md"] and report["documents"] == 2
    assert check(settings) is not None  # indexed: nothing left to do


@pytest.fixture
def monorepo(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Settings, list[str], Path]:
    """Knowledge in ``docs/`` of a repository that also holds code in ``src/``, indexed (with
    ``docs/conventions/naming.md`` edited and not yet committed when it was), the stamp
    written; with the argv of a ``briefd index`` for it."""
    monkeypatch.chdir(tmp_path)
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    repo = tmp_path / "repo"
    docs = repo / "docs"
    for path, text in {**FILES, "../src/app.py": "print('v1')\n"}.items():
        (docs / path).parent.mkdir(parents=True, exist_ok=True)
        (docs / path).write_text(text)
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "knowledge and code")
    (docs / "conventions/naming.md").write_text("# Naming\n\nServices are named by domain.\n")
    ours = with_overrides(settings, {"source": str(docs)})
    with Briefd(ours, embedder=None) as api:
        api.index()
    argv = ["--db", str(ours.db), "index", "--source", str(docs)]
    stamped(ours, argv)
    return ours, argv, repo


def test_a_commit_to_the_code_beside_the_knowledge_needs_no_full_run(
    monorepo: tuple[Settings, list[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    settings, argv, repo = monorepo
    with Briefd(settings, embedder=None) as api, api.store.read() as conn:
        key = conn.execute("SELECT value FROM index_meta WHERE key = 'source-key'").fetchone()[0]
    (repo / "src/app.py").write_text("print('v2')\n")
    git(repo, "add", "src/app.py")
    git(repo, "commit", "--quiet", "-m", "code only")
    git(repo, "commit", "--quiet", "--allow-empty", "-m", "and an empty one")
    assert stamp.answer(argv, ENV) is None  # the stamp saw HEAD move
    found = check(settings)
    assert isinstance(found, Unchanged) and found.key == key  # the index is this state's
    assert found.report.documents == 3 and found.report.changed == ()
    stamped(settings, argv)
    assert stamp.answer(argv, ENV) is not None  # and the next run answers from the stamp
    assert "3 unchanged" in fast_output(argv, capsys)
    with Briefd(settings, embedder=None) as api:
        full = api.index()  # what the full command would have done: nothing
    assert full.changed == () and full.added == () and full.deleted == ()


@pytest.mark.parametrize("ignore_file", [".gitignore", ".git/info/exclude"])
def test_an_ignore_file_above_the_knowledge_changing_falls_through(
    monorepo: tuple[Settings, list[str], Path], ignore_file: str
) -> None:
    """What git ignores from above ``docs/`` decides what is indexed, so the stamp holds those
    files too, there or not: a pattern added to them is a change like any other."""
    settings, argv, repo = monorepo
    assert stamp.answer(argv, ENV) is not None
    with (repo / ignore_file).open("a") as file:
        file.write("docs/conventions/\n")
    assert stamp.answer(argv, ENV) is None
    with Briefd(settings, embedder=None) as api:
        assert api.index().deleted == ("conventions/naming.md",)


def test_a_commit_that_touches_the_knowledge_still_takes_the_full_run(
    monorepo: tuple[Settings, list[str], Path],
) -> None:
    settings, _, repo = monorepo
    git(repo, "commit", "--quiet", "-am", "the naming edit, committed")  # no file changes
    assert check(settings) is None  # its history did: naming.md now has a last commit
    with Briefd(settings, embedder=None) as api:
        api.index()
    assert isinstance(check(settings), Unchanged)
    first = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    git(repo, "checkout", "--quiet", "-b", "elsewhere", first)
    git(repo, "checkout", "--quiet", "main", "--", "docs")  # the same files, other history
    git(repo, "commit", "--quiet", "-m", "docs as on main")
    assert check(settings) is None  # not a descendant of the indexed commit


def not_utf8(root: Path) -> None:
    (root / "domain/retries.md").write_bytes(b"# Retries\n\nSoft declines \xe9 three times.\n")


def lfs_pointer(root: Path) -> None:
    oid = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393"
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize 12345\n"
    (root / "domain/retries.md").write_text(pointer)


def too_large(root: Path) -> None:
    (root / "domain/retries.md").write_text("# Retries\n\n" + "log line 123 " * 160_000)


KEPT = [not_utf8, lfs_pointer, too_large]


@pytest.mark.parametrize("spoil", KEPT, ids=[c.__name__ for c in KEPT])
def test_a_document_kept_as_last_indexed_leaves_nothing_to_do(
    knowledge: tuple[Settings, list[str]],
    spoil: Callable[[Path], None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """While a document's file cannot be indexed (not UTF-8, a Git LFS pointer, too large),
    the full run keeps its indexed version and counts it; the no-change check did not, so it
    took the document for deleted and every ``briefd index`` ran in full, never stamped."""
    settings, argv = knowledge
    assert settings.source is not None
    spoil(settings.source)
    with Briefd(settings, embedder=None) as api:
        full = api.index()
    assert full.documents == 3 and full.deleted == ()
    assert full.skipped[0].reason.endswith("; the version indexed before is kept")
    found = check(settings)
    assert isinstance(found, Unchanged)
    assert found.report.skipped == full.skipped
    hashed = fast_output(argv, capsys)
    assert hashed.endswith(f"  skipped domain/retries.md: {full.skipped[0].reason}\n")
    stamped(settings, argv)
    answer = stamp.answer(argv, ENV)
    assert answer is not None and without_seconds(answer) == without_seconds(hashed)


def test_a_checkout_with_merge_conflicts_gets_no_stamp(
    knowledge: tuple[Settings, list[str]],
) -> None:
    """A conflict resolved by editing the file and then `git add` alone: the stamp written
    between the two held the edited file's stat, and `git add` changes none it holds, so every
    later `briefd index` answered from it that the document was still conflicted."""
    settings, argv = knowledge
    args = stamp.index_args(argv)
    assert args is not None and settings.source is not None
    root = settings.source
    git(root, "checkout", "--quiet", "-b", "theirs")
    (root / "domain" / "refunds.md").write_text("# Refunds\n\nWithin 14 days.\n", "utf-8")
    git(root, "commit", "--quiet", "-am", "14 days")
    git(root, "checkout", "--quiet", "main")
    (root / "domain" / "refunds.md").write_text("# Refunds\n\nWithin 60 days.\n", "utf-8")
    git(root, "commit", "--quiet", "-am", "60 days")
    merge = subprocess.run(["git", "merge", "theirs"], cwd=root, capture_output=True, check=False)
    assert merge.returncode == 1
    (root / "domain" / "refunds.md").write_text("# Refunds\n\nWithin 45 days.\n", "utf-8")
    with Briefd(settings, embedder=None) as api:
        assert [s.path for s in api.index().skipped] == ["domain/refunds.md"]
    assert isinstance(refresh_stamp(settings, args, ENV, Path.cwd(), racy_ns=0), Unchanged)
    assert stamp.answer(argv, ENV) is None  # no stamp: the next run asks git again


def test_another_briefd_on_the_same_python_never_answers_from_the_stamp(
    knowledge: tuple[Settings, list[str]], tmp_path: Path
) -> None:
    """The stamp records the stat of the code of the briefd that wrote it. Another briefd run
    by the same Python (``PYTHONPATH``, another work tree's editable install, an older copy)
    found those files unchanged and answered "nothing to do" for code it never checked: after
    a release that refits the gate, the older code's stamp kept the newer fit, and back."""
    settings, argv = knowledge
    stamped(settings, argv)
    here = Path(stamp.__file__).resolve().parent.parent
    other = tmp_path / "other"
    shutil.copytree(here, other / "briefd", ignore=shutil.ignore_patterns("__pycache__"))
    code = "import sys; from briefd.cli import stamp; print(stamp.answer(sys.argv[1:]) is None)"

    def answered_elsewhere(path: Path) -> str:
        done = subprocess.run(
            [sys.executable, "-c", code, *argv],
            capture_output=True,
            text=True,
            # the environment the stamp was written for; no new __pycache__ in the code it stats
            env={**ENV, "PYTHONPATH": str(path), "PYTHONDONTWRITEBYTECODE": "1"},
            cwd=Path.cwd(),
            timeout=60,
            check=True,
        )
        return done.stdout.strip()

    assert answered_elsewhere(here.parent) == "False"  # this briefd: the stamp answers
    assert answered_elsewhere(other) == "True"  # another copy: it hashes, as a first run
