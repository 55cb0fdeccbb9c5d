"""``briefd gaps``, ``briefd drift`` and ``briefd usage`` as real processes (T3, T4, T6): JSON for
scripts, tables for people, one-line errors; ``briefd drift`` reads new code commits itself."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.retrieval.search import SearchRequest
from briefd.service.team_tools import gaps_text, usage_text
from briefd.settings import Settings, load_settings
from briefd.team.activity import nothing_logged
from briefd.team.drift import DRIFT_FIX
from briefd.team.gaps import GapsRequest
from tests.cli.test_cli import briefd
from tests.conftest import EXAMPLE
from tests.sync.gitrepo import git, stage
from tests.team.coderepo import LEDGER_DOC, RETRY_DOC, Repo, identity
from tests.team.seeded import logged, seeded_log


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Repo]:
    """A project directory whose briefd.yaml names a knowledge checkout and a code repo."""
    knowledge = Repo(tmp_path / "knowledge")
    knowledge.commit(
        {"domain/retry.md": RETRY_DOC, "domain/ledger.md": LEDGER_DOC},
        "Knowledge",
        "2026-03-10T09:00:00+00:00",
    )
    app = Repo(tmp_path / "app")
    app.commit({"services/payment/retry.py": "x\n"}, "Raise limits", "2026-03-15T00:00:00+00:00")
    cwd = indexed_project(tmp_path)
    settings = load_settings(
        cwd / "briefd.yaml", env={}, overrides={"db": str(cwd / ".briefd" / "briefd.db")}
    )
    with Briefd(settings, embedder=None) as api:
        api.log_queries(seeded_log(api))
    return cwd, app


def indexed_project(tmp_path: Path) -> Path:
    """``tmp_path/project``: a briefd.yaml reading ../knowledge with ../app as a code
    repository, indexed by the CLI."""
    cwd = tmp_path / "project"
    cwd.mkdir()
    config = {"source": "../knowledge", "code": {"repos": [{"source": "../app", "name": "app"}]}}
    (cwd / "briefd.yaml").write_text(yaml.safe_dump(config))
    assert briefd("index", cwd=cwd).returncode == 0
    return cwd


def test_gaps_json_and_table(project: tuple[Path, Repo]) -> None:
    cwd, _ = project
    result = briefd("gaps", "--since", "30d", "--json", cwd=cwd)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [g["query"] for g in report["gaps"]] == ["kafka consumer lag alerts", None]
    table = briefd("gaps", "--min-count", "6", cwd=cwd)
    assert "1 gap(s) among 4 query group(s)" in table.stdout
    assert "kafka consumer" in table.stdout and "hashed" not in table.stdout


def test_gaps_says_how_many_gaps_there_are_when_limit_lists_fewer(
    project: tuple[Path, Repo],
) -> None:
    """T3: `briefd gaps` (limit 20) over 297 gaps said "20 gap(s) among 854 query group(s)":
    the limit read as the count. It counts them all and says how many it lists."""
    cwd, _ = project
    table = briefd("gaps", "--since", "30d", "--limit", "1", cwd=cwd).stdout
    assert table.splitlines()[0].startswith("2 gap(s) among 4 query group(s) since ")
    assert table.splitlines()[0].endswith("; the first 1 listed (--limit)")
    report = json.loads(briefd("gaps", "--since", "30d", "--limit", "1", "--json", cwd=cwd).stdout)
    assert (len(report["gaps"]), report["gaps_count"]) == (1, 2)


def test_gaps_and_usage_page_with_offset_as_rest_and_mcp_do(project: tuple[Path, Repo]) -> None:
    """T3, T6: GET /api/gaps, /api/usage and the MCP tools take ``offset``; ``briefd gaps``
    and ``briefd usage`` had ``--limit`` only ("No such option: --offset"), so past the first
    page of a report there was no reading it from the command line."""
    cwd, _ = project
    first = json.loads(briefd("gaps", "--limit", "1", "--json", cwd=cwd).stdout)
    second = briefd("gaps", "--limit", "1", "--offset", "1", "--json", cwd=cwd)
    assert second.returncode == 0, second.stderr
    paged = json.loads(second.stdout)
    assert (paged["offset"], paged["gaps_count"], len(paged["gaps"])) == (1, 2, 1)
    assert paged["gaps"][0]["key"] != first["gaps"][0]["key"]
    table = briefd("gaps", "--limit", "1", "--offset", "1", cwd=cwd).stdout
    assert table.splitlines()[0].endswith("; 2-2 listed (--limit, --offset)"), table
    whole = json.loads(briefd("usage", "--limit", "500", "--json", cwd=cwd).stdout)
    done = briefd("usage", "--limit", "1", "--offset", "1", "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    usage = json.loads(done.stdout)
    assert usage["offset"] == 1
    assert usage["documents"] == whole["documents"][1:2]
    assert usage["never_served"] == whole["never_served"][1:2]


def test_drift_reads_new_commits_itself(project: tuple[Path, Repo]) -> None:
    cwd, app = project
    first = json.loads(briefd("drift", "--json", cwd=cwd).stdout)
    assert [len(d["commits"]) for d in first["documents"]] == [1]
    app.commit({"services/payment/b.py": "y\n"}, "Second change", "2026-03-16T00:00:00+00:00")

    cached = json.loads(briefd("drift", "--no-refresh", "--json", cwd=cwd).stdout)
    assert [len(d["commits"]) for d in cached["documents"]] == [1]
    text = briefd("drift", cwd=cwd).stdout
    assert text.startswith("1 of 2 documents with refs drift (app (main at ")
    assert "- domain/retry.md: 2 commit(s) since its last change 2026-03-10" in text
    assert "Dev One: Second change [services/payment/b.py]" in text


def test_drift_text_names_each_commit_s_repository_and_counts_those_not_listed(
    tmp_path: Path,
) -> None:
    """T4: with two code repositories, `briefd drift` (and the MCP text, the same lines)
    listed commits by hash alone, so nobody could tell in which repository to look one up;
    and a document drifting by 7 commits listed 5 with nothing saying more were left out."""
    knowledge = Repo(tmp_path / "knowledge")
    knowledge.commit({"domain/retry.md": RETRY_DOC}, "Knowledge", "2026-03-10T09:00:00+00:00")
    app, worker = Repo(tmp_path / "app"), Repo(tmp_path / "worker")
    for day in range(11, 17):
        app.commit({"services/payment/a.py": f"{day}\n"}, f"App {day}", f"2026-03-{day}T00:00:00Z")
    worker.commit({"services/payment/w.py": "w\n"}, "Worker", "2026-03-20T00:00:00+00:00")
    cwd = tmp_path / "project"
    cwd.mkdir()
    repos = [{"source": "../app", "name": "app"}, {"source": "../worker", "name": "worker"}]
    (cwd / "briefd.yaml").write_text(
        yaml.safe_dump({"source": "../knowledge", "code": {"repos": repos}})
    )
    assert briefd("index", cwd=cwd).returncode == 0

    lines = briefd("drift", cwd=cwd).stdout.splitlines()

    assert lines[1].startswith("- domain/retry.md: 7 commit(s) since its last change 2026-03-10")
    assert [line.split()[0] for line in lines[2:7]] == ["worker", "app", "app", "app", "app"]
    assert "Worker [services/payment/w.py]" in lines[2]
    assert lines[7:] == ["  … and 2 older commit(s)", DRIFT_FIX]


def test_usage_json_and_table(project: tuple[Path, Repo]) -> None:
    cwd, _ = project
    report = json.loads(briefd("usage", "--json", "--limit", "1", cwd=cwd).stdout)
    assert [d["doc_path"] for d in report["documents"]] == ["domain/retry.md"]
    assert report["never_served"] == ["domain/ledger.md"]
    table = briefd("usage", cwd=cwd).stdout
    assert "59 request(s) since" in table and "never served (1):" in table


def test_bad_input_is_one_line_that_says_what_to_do(project: tuple[Path, Repo]) -> None:
    cwd, _ = project
    result = briefd("gaps", "--since", "fortnight", cwd=cwd)
    assert result.returncode == 2
    assert result.stderr == (
        "error: Invalid value for '--since': 'fortnight'; use a span such as 30d, 12h or 2w, a "
        "date such as 2026-01-31 or a time with its offset (2026-01-31T09:00+01:00); see "
        "`briefd gaps -h`\n"
    )
    twice = {"source": "../knowledge", "code": {"repos": ["../app", "../app"]}}
    (cwd / "briefd.yaml").write_text(yaml.safe_dump(twice))
    result = briefd("drift", cwd=cwd)
    assert result.returncode == 1
    assert (
        "code.repos: two repositories are named 'app'; give each a distinct 'name'" in result.stderr
    )


def test_gaps_table_prints_a_query_as_asked(project: tuple[Path, Repo]) -> None:
    """A logged query is the user's text: brackets in it are never read as Rich markup."""
    cwd, _ = project
    settings = load_settings(
        cwd / "briefd.yaml", env={}, overrides={"db": str(cwd / ".briefd" / "briefd.db")}
    )
    at = datetime.now(UTC).isoformat(timespec="seconds")
    asked = "why [bold]payouts[/bold] stall"
    with Briefd(settings, embedder=None) as api:
        api.log_queries([logged("search", asked, at, None, 1.0, "mcp")])
    table = briefd("gaps", cwd=cwd, env={"COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert asked in table.stdout


def test_gaps_table_keeps_a_long_word_of_a_query_whole(project: tuple[Path, Repo]) -> None:
    """Piped, or in an 80-column terminal, a word longer than the query column (a file path,
    a dotted or hyphenated name: what agents ask about) was cut to "services/payment…":
    the question a gap is about could not be read. It is folded onto the next lines."""
    cwd, _ = project
    settings = load_settings(
        cwd / "briefd.yaml", env={}, overrides={"db": str(cwd / ".briefd" / "briefd.db")}
    )
    at = datetime.now(UTC).isoformat(timespec="seconds")
    word = "services/payment/retry_policy_for_soft_declines.py"
    with Briefd(settings, embedder=None) as api:
        api.log_queries([logged("search", f"who owns {word}", at, None, 1.0, "mcp")] * 9)
    table = briefd("gaps", "--min-count", "9", cwd=cwd)
    assert table.returncode == 0, table.stderr
    column = [line.split("│")[2] for line in table.stdout.splitlines() if line.startswith("│")]
    assert "".join("".join(column).split()) == f"whoowns{word}"


@pytest.mark.parametrize(
    ("asked", "shown"),
    [
        (  # an ESC sequence: retitle the terminal, write its clipboard with OSC 52
            "payouts \x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07stall",
            "payouts \\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07stall",
        ),
        (  # a right-to-left override: the rest of the line and its count cells reversed
            "refund \u202eexif.hs\u2066 window",
            "refund \\u202eexif.hs\\u2066 window",
        ),
    ],
)
def test_gaps_table_shows_control_characters_of_a_query_instead_of_sending_them(
    project: tuple[Path, Repo], asked: str, shown: str
) -> None:
    """Any client's query lands in the log: control characters and bidirectional overrides in
    it reached the team lead's terminal as they were sent."""
    cwd, _ = project
    settings = load_settings(
        cwd / "briefd.yaml", env={}, overrides={"db": str(cwd / ".briefd" / "briefd.db")}
    )
    at = datetime.now(UTC).isoformat(timespec="seconds")
    with Briefd(settings, embedder=None) as api:
        api.log_queries([logged("search", asked, at, None, 1.0, "mcp")])
    table = briefd("gaps", cwd=cwd, env={"COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert not any(c in table.stdout for c in "\x1b\x07\u202e\u2066")
    assert shown in table.stdout


def test_a_date_at_the_edge_of_time_is_a_window_not_a_traceback(
    project: tuple[Path, Repo],
) -> None:
    """A date with an offset that takes it past year 1 or 9999 in UTC: everything, or nothing."""
    cwd, _ = project
    everything = briefd("gaps", "--since", "0001-01-01T00:00+01:00", "--json", cwd=cwd)
    assert everything.returncode == 0, everything.stderr
    assert json.loads(everything.stdout)["since"] == "0001-01-01T00:00:00+00:00"
    nothing = briefd("usage", "--since", "9999-12-31T23:00-05:00", "--json", cwd=cwd)
    assert nothing.returncode == 0, nothing.stderr
    assert json.loads(nothing.stdout)["requests"] == 0


def test_usage_since_long_ago_charts_the_log_not_every_day_since(
    project: tuple[Path, Repo],
) -> None:
    """``--since 2000-01-01`` over a two-week log: the days run from a month back (the log's
    first entry is within it), not one per day since 2000 (9,800 of them, seconds and MBs)."""
    cwd, _ = project
    report = json.loads(briefd("usage", "--since", "2000-01-01", "--json", cwd=cwd).stdout)
    assert report["since"] == "2000-01-01T00:00:00+00:00" and report["requests"] == 59
    assert len(report["days"]) == 31
    assert sum(d["requests"] for d in report["days"]) == 59
    recent = json.loads(briefd("usage", "--since", "7d", "--json", cwd=cwd).stdout)
    assert len(recent["days"]) == 8  # a window shorter than the log: the window's days


def test_usage_table_says_what_was_served_from_documents_since_renamed(
    project: tuple[Path, Repo], tmp_path: Path
) -> None:
    """Sections served from a document renamed since are no longer in the table: the text
    says how many, as the JSON's gone_sections does. The document itself, moved with its
    content unchanged, counts what it served under its new path: it was "never served", which
    read as a document to retire (T6)."""
    cwd, _ = project
    before = json.loads(briefd("usage", "--json", cwd=cwd).stdout)
    (served,) = [d for d in before["documents"] if d["doc_path"] == "domain/retry.md"]
    knowledge = tmp_path / "knowledge"
    (knowledge / "domain" / "retry.md").rename(knowledge / "domain" / "retries.md")
    assert briefd("index", cwd=cwd).returncode == 0
    report = json.loads(briefd("usage", "--json", cwd=cwd).stdout)
    assert report["gone_sections"] > 0 and report["sections"] == []
    assert [(d["doc_path"], d["served"], d["surfaces"]) for d in report["documents"]] == [
        ("domain/retries.md", served["served"], served["surfaces"])
    ]
    assert "domain/retries.md" not in report["never_served"]
    table = briefd("usage", cwd=cwd, env={"COLUMNS": "200"}).stdout
    assert (
        f"{report['gone_sections']} served section(s) are no longer in the index (documents "
        "renamed or deleted, headings changed since): not counted among the sections above"
    ) in table


def test_usage_counts_each_report_on_a_bundle(project: tuple[Path, Repo]) -> None:
    """Two agents report on the same bundle in the same second, one useful, one "nothing
    helped": two reports, not one report of which one said nothing helped."""
    cwd, _ = project
    settings = load_settings(
        cwd / "briefd.yaml", env={}, overrides={"db": str(cwd / ".briefd" / "briefd.db")}
    )
    with Briefd(settings, embedder=None) as api:
        bundle = api.compile_bundle(BundleRequest("retry a soft decline"))
        time.sleep(1 - time.time() % 1)  # both in one second, as they are when agents are busy
        api.report_usage(bundle.bundle_id, [bundle.items[0].chunk_id], "agent-a")
        api.report_usage(bundle.bundle_id, [], "agent-b")
    report = json.loads(briefd("usage", "--json", cwd=cwd).stdout)
    assert (report["feedback_reports"], report["nothing_helped"]) == (2, 1)
    assert "2 usage report(s), 1 said nothing helped" in briefd("usage", cwd=cwd).stdout


def test_a_report_sent_twice_in_a_second_counts_once_everywhere(
    project: tuple[Path, Repo],
) -> None:
    """A client retrying its report: the totals counted one report, the section it named was
    counted useful twice, and a "nothing helped" sent twice counted two."""
    cwd, _ = project
    settings = load_settings(
        cwd / "briefd.yaml", env={}, overrides={"db": str(cwd / ".briefd" / "briefd.db")}
    )
    with Briefd(settings, embedder=None) as api:
        bundle = api.compile_bundle(BundleRequest("retry a soft decline"))
        other = api.compile_bundle(BundleRequest("refund window for card payments"))
        chunk = bundle.items[0].chunk_id
        time.sleep(1 - time.time() % 1)
        for _ in range(2):
            api.report_usage(bundle.bundle_id, [chunk], "agent-a")
            api.report_usage(other.bundle_id, [], "agent-a")
    report = json.loads(briefd("usage", "--json", cwd=cwd).stdout)
    assert (report["feedback_reports"], report["nothing_helped"]) == (2, 1)
    useful = [s["useful"] for s in report["sections"] if s["chunk_id"] == chunk]
    assert useful == [1], report["sections"]


def test_drift_of_a_document_older_than_the_commits_read_so_far(tmp_path: Path) -> None:
    """Code read first when no document had refs (from then on); then a document with refs
    merged from a branch, last changed before that: the code commits after its change are
    read and are its drift, not only the commits after the first read."""
    knowledge = Repo(tmp_path / "knowledge")
    knowledge.commit({"domain/glossary.md": "# Glossary\n"}, "Start", "2026-03-01T09:00:00+00:00")
    app = Repo(tmp_path / "app")
    app.commit({"services/payment/a.py": "x\n"}, "Raise limits", "2026-03-15T00:00:00+00:00")
    cwd = indexed_project(tmp_path)
    assert json.loads(briefd("drift", "--json", cwd=cwd).stdout)["documents"] == []

    knowledge.commit({"domain/retry.md": RETRY_DOC}, "Retry", "2026-03-10T09:00:00+00:00")
    assert briefd("index", cwd=cwd).returncode == 0
    report = json.loads(briefd("drift", "--json", cwd=cwd).stdout)
    assert [(d["doc_path"], d["commit_count"]) for d in report["documents"]] == [
        ("domain/retry.md", 1)
    ]
    again = json.loads(briefd("drift", "--json", cwd=cwd).stdout)
    assert again["repos"][0]["last_read"] == 0  # read again once, then only new commits


def test_drift_no_refresh_names_a_code_repo_no_sync_has_read(project: tuple[Path, Repo]) -> None:
    """code.repos names a repository added since the last sync: --no-refresh says it is not
    read yet (and how to read it), never that no repository is configured."""
    cwd, _ = project
    other = Repo(cwd.parent / "billing")
    other.commit({"services/ledger/post.py": "x\n"}, "Post", "2026-03-15T00:00:00+00:00")
    config = yaml.safe_load((cwd / "briefd.yaml").read_text())
    config["code"]["repos"].append({"source": "../billing", "name": "billing"})
    (cwd / "briefd.yaml").write_text(yaml.safe_dump(config))
    report = json.loads(briefd("drift", "--no-refresh", "--json", cwd=cwd).stdout)
    assert [(r["name"], r["error"]) for r in report["repos"]] == [
        ("app", None),
        (
            "billing",
            "not read yet: `briefd drift` (without --no-refresh) or the next sync reads it",
        ),
    ]
    text = briefd("drift", "--no-refresh", cwd=cwd).stdout
    assert "billing (? at none, error: not read yet" in text
    read = json.loads(briefd("drift", "--json", cwd=cwd).stdout)
    assert [r["error"] for r in read["repos"]] == [None, None]
    assert [d["doc_path"] for d in read["documents"]] == ["domain/ledger.md", "domain/retry.md"]


def test_gaps_names_the_setting_that_left_hook_prompts_unlogged(
    project: tuple[Path, Repo],
) -> None:
    """Hook prompts logged without text because log_hook_prompts is off (log_prompts is full):
    the report names both settings, not log_prompts alone."""
    cwd, _ = project
    config = yaml.safe_load((cwd / "briefd.yaml").read_text())
    (cwd / "briefd.yaml").write_text(
        yaml.safe_dump({**config, "activity": {"log_hook_prompts": "off"}})
    )
    settings = load_settings(
        cwd / "briefd.yaml", env={}, overrides={"db": str(cwd / ".briefd" / "briefd.db")}
    )
    at = datetime.now(UTC).isoformat(timespec="seconds")
    with Briefd(settings, embedder=None) as api:
        api.log_queries([logged("recall", "my private prompt", at, None, 1.0, "hook")])
    table = briefd("gaps", cwd=cwd, env={"COLUMNS": "200"}).stdout
    assert (  # the seeded log's five hashed hook prompts lost their hashes to the setting too
        "6 request(s) were logged without text (activity.log_prompts: off, or for hook prompts "
        "activity.log_hook_prompts: off)"
    ) in table


def test_usage_table_lists_the_most_served_sections(project: tuple[Path, Repo]) -> None:
    """--limit says "most documents and sections shown": the table shows the sections too."""
    cwd, _ = project
    report = json.loads(briefd("usage", "--json", "--limit", "2", cwd=cwd).stdout)
    table = briefd("usage", "--limit", "2", cwd=cwd, env={"COLUMNS": "200"}).stdout
    assert report["sections"]
    for section in report["sections"]:
        assert f"{section['doc_path']} › {section['heading']}" in table


def test_drift_without_refs_says_what_to_add(tmp_path: Path) -> None:
    """code.repos configured but no document has refs: say so and what to write, not
    "0 of 0 documents with refs drift"."""
    knowledge = Repo(tmp_path / "knowledge")
    knowledge.commit({"domain/glossary.md": "# Glossary\n"}, "Start", "2026-03-01T09:00:00+00:00")
    Repo(tmp_path / "app").commit({"a.py": "x\n"}, "Start", "2026-03-02T09:00:00+00:00")
    cwd = indexed_project(tmp_path)
    text = briefd("drift", cwd=cwd).stdout
    assert text.startswith("No indexed document has refs, so nothing is checked against app (main")
    assert 'in its front matter (refs: ["src/payments/**"]).' in text


def test_a_repo_to_read_again_that_fails_keeps_its_head(tmp_path: Path) -> None:
    """The repository must be read again from an older document's change but cannot be read
    now: its last known commit and stored commits are kept beside the error."""
    knowledge = Repo(tmp_path / "knowledge")
    knowledge.commit({"domain/retry.md": RETRY_DOC}, "Retry", "2026-03-10T09:00:00+00:00")
    app = Repo(tmp_path / "app")
    head = app.commit({"services/payment/a.py": "x\n"}, "Limits", "2026-03-15T00:00:00+00:00")
    cwd = indexed_project(tmp_path)
    knowledge.commit({"domain/ledger.md": LEDGER_DOC}, "Ledger", "2026-03-01T09:00:00+00:00")
    app.path.rename(tmp_path / "app-moved")
    assert briefd("index", cwd=cwd).returncode == 0
    (repo,) = json.loads(briefd("drift", "--no-refresh", "--json", cwd=cwd).stdout)["repos"]
    assert (repo["head"], repo["commits"]) == (head, 1)
    assert "not a git checkout" in repo["error"]


def test_usage_names_a_documents_lead_section_by_its_title(tmp_path: Path) -> None:
    """The text under a document's title has an empty heading path: it was listed as
    "domain/şifre.md ›" with no name, in the table and as "heading": "" in JSON."""
    root = tmp_path / "knowledge" / "domain"
    root.mkdir(parents=True)
    (root / "şifre.md").write_text("# Şifre Sıfırlama\n\nE-posta ile.\n\n## Süre\n\n24 saat.\n")
    settings = load_settings(
        None, env={}, overrides={"db": str(tmp_path / "i.db"), "source": str(root.parent)}
    )
    with Briefd(settings, embedder=None) as api:
        api.index()
        lead, timing = (c.id for c in api.document("domain/şifre.md").chunks)
        at = datetime.now(UTC).isoformat(timespec="seconds")
        api.log_queries([logged("search", "şifre", at, 1.0, 1.0, "mcp", (lead, timing))])
        report = api.usage()
    assert sorted((s.doc_path, s.heading) for s in report.sections) == [
        ("domain/şifre.md", "Süre"),
        ("domain/şifre.md", "Şifre Sıfırlama"),
    ]


def test_usage_table_piped_keeps_every_count_whole(tmp_path: Path) -> None:
    """Piped (80 columns to rich), a path of 40 characters left the other columns a few each:
    "ser…", "mcp…", "2026…": how often a document was served, where and when, all lost."""
    path = "projects/checkout/hosted-payment-page.md"
    settings = load_settings(
        None, env={}, overrides={"db": str(tmp_path / ".briefd" / "briefd.db"), "source": EXAMPLE}
    )
    with Briefd(settings, embedder=None) as api:
        api.index()
        lead = api.document(path).chunks[0].id
        at = datetime.now(UTC).isoformat(timespec="seconds")
        api.log_queries([logged("search", "hosted page", at, 1.0, 1.0, "mcp", (lead,))] * 3)
    table = briefd("usage", cwd=tmp_path, env={"BRIEFD_EMBEDDINGS__ENABLED": "false"})
    assert table.returncode == 0, table.stderr
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in table.stdout.splitlines()]
    assert [row for row in cells if row and row[0] == path] == [
        [path, "3", "mcp:3", "1", "0", at[:16]],
    ]


def test_a_repository_named_as_dot_is_its_folder_wherever_briefd_runs(tmp_path: Path) -> None:
    """Knowledge in ``docs/`` of the code's own repository, ``code.repos: ["."]``: the
    repository is named by its folder, not ".", and the same one (not forgotten and read
    again) when the settings are found in the current directory or named with --config."""
    mono = Repo(tmp_path / "payments")
    mono.commit({"docs/domain/retry.md": RETRY_DOC}, "Rules", "2026-03-10T09:00:00+00:00")
    mono.commit({"services/payment/a.py": "x\n"}, "Raise", "2026-03-15T00:00:00+00:00")
    config = {"source": "docs", "db": ".briefd/briefd.db", "code": {"repos": ["."]}}
    (mono.path / "briefd.yaml").write_text(yaml.safe_dump(config))
    assert briefd("index", cwd=mono.path).returncode == 0

    here = json.loads(briefd("drift", "--json", cwd=mono.path).stdout)
    named = briefd("--config", str(mono.path / "briefd.yaml"), "drift", "--json", cwd=tmp_path)
    elsewhere = json.loads(named.stdout)

    for report in (here, elsewhere):
        (repo,) = report["repos"]
        assert (repo["name"], repo["location"]) == ("payments", str(mono.path))
        assert [d["doc_path"] for d in report["documents"]] == ["domain/retry.md"]
    assert elsewhere["repos"][0]["last_read"] == 0  # nothing read again
    text = briefd("drift", "--no-refresh", cwd=mono.path).stdout
    assert "(payments (main at" in text


def test_an_empty_query_log_says_what_it_holds(tmp_path: Path) -> None:
    """A new user searches on the command line, then asks for gaps and usage: the reports say
    nothing was logged and why (only what a server answers is), not just zero groups."""
    knowledge = Repo(tmp_path / "knowledge")
    knowledge.commit({"domain/retry.md": RETRY_DOC}, "Rules", "2026-03-10T09:00:00+00:00")
    cwd = indexed_project(tmp_path)
    assert briefd("search", "soft decline retries", cwd=cwd).returncode == 0

    gaps = briefd("gaps", cwd=cwd).stdout
    usage = briefd("usage", cwd=cwd).stdout
    assert "0 gap(s) among 0 query group(s)" in gaps
    for text in (gaps, usage):
        said = " ".join(text.split())
        assert "Nothing was logged since " in said
        assert "what `briefd serve`, `briefd mcp` and the recall daemon answer" in said
        assert "hook prompts answered in the hook's own process" in said
    settings = load_settings(
        cwd / "briefd.yaml", env={}, overrides={"db": str(cwd / ".briefd" / "briefd.db")}
    )
    with Briefd(settings, embedder=None) as api:  # the MCP tools' text says it too
        texts = (gaps_text(api.gaps(GapsRequest())), usage_text(api.usage()))
    assert all("Nothing was logged since " in text for text in texts)


CHARGEBACKS_DOC = """
# Chargebacks

## Evidence
Merchants submit chargeback evidence within seven days.

## Disputes
A chargeback dispute closes after forty-five days.
"""


def _rules_project(tmp_path: Path) -> tuple[Path, Settings]:
    """A project indexing a knowledge repository of the chargeback and retry rules: its folder
    and its settings."""
    knowledge = Repo(tmp_path / "knowledge")
    docs = {"domain/chargebacks.md": CHARGEBACKS_DOC, "domain/retry.md": RETRY_DOC}
    knowledge.commit(docs, "Rules", "2026-03-10T09:00:00+00:00")
    cwd = indexed_project(tmp_path)
    db = str(cwd / ".briefd" / "briefd.db")
    return cwd, load_settings(cwd / "briefd.yaml", env={}, overrides={"db": db})


def test_a_gap_names_each_document_it_got_once(tmp_path: Path) -> None:
    """T3: the got column named a document once per section its queries got
    ("domain/chargebacks.md, domain/chargebacks.md, domain/retry.md"), as the dashboard did
    before 0c29101: each document once, most served first."""
    cwd, settings = _rules_project(tmp_path)
    at = datetime.now(UTC).isoformat(timespec="seconds")
    with Briefd(settings, embedder=None) as api:
        both = api.search(SearchRequest("chargeback evidence dispute", mode="bm25")).hits
        retry = api.search(SearchRequest("soft decline retried", mode="bm25")).hits[0].chunk_id
        chargebacks = tuple(h.chunk_id for h in both if h.doc_path == "domain/chargebacks.md")
        assert len(chargebacks) == 2
        weak = "chargeback evidence receipts"
        api.log_queries(
            [logged("search", weak, at, 0.05, 1.0, "mcp", chargebacks)] * 2
            + [logged("search", weak, at, 0.05, 1.0, "mcp", (retry,))]
            + [logged("search", "soft decline retries", at, 2.5, 1.0, "mcp", (retry,))] * 3
        )
    table = briefd("gaps", cwd=cwd, env={"COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert "1 gap(s) among 2 query group(s)" in table.stdout
    (row,) = [line for line in table.stdout.splitlines() if weak in line]
    assert row.split("│")[-2].strip() == "domain/chargebacks.md, domain/retry.md"


def test_a_retention_past_what_a_date_reaches_is_refused_in_one_line(
    project: tuple[Path, Repo],
) -> None:
    """``retention_days: 1000000`` (a team meaning "keep it for ever", which is 0) went back
    before year 1: every index run stopped with an OverflowError traceback, and a server's
    query log was never written. It is refused as a setting, saying the range."""
    cwd, _ = project
    config = yaml.safe_load((cwd / "briefd.yaml").read_text())
    (cwd / "briefd.yaml").write_text(
        yaml.safe_dump({**config, "activity": {"retention_days": 1_000_000}})
    )
    done = briefd("index", cwd=cwd)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert (
        "activity.retention_days: expected a whole number of days from 0 to 36500, got 1000000"
    ) in done.stderr


def test_a_window_that_starts_within_a_day_names_its_time(project: tuple[Path, Repo]) -> None:
    """``--since 12h`` or a time with its offset starts the window at that time, not at
    midnight: the tables and the tools' text name the time (UTC); a date names the day."""
    cwd, _ = project
    gaps = briefd("gaps", "--since", "2026-03-20T09:30+01:00", cwd=cwd).stdout
    usage = briefd("usage", "--since", "2026-03-20T09:30+01:00", cwd=cwd).stdout
    day = briefd("gaps", "--since", "2026-03-20", cwd=cwd).stdout
    assert " since 2026-03-20 08:30 UTC (" in gaps.splitlines()[0]
    assert " since 2026-03-20 08:30 UTC (" in usage.splitlines()[0]
    assert " since 2026-03-20 (" in day.splitlines()[0]
    hours = briefd("gaps", "--since", "12h", "--json", cwd=cwd)
    start = datetime.fromisoformat(json.loads(hours.stdout)["since"])
    settings = load_settings(
        cwd / "briefd.yaml", env={}, overrides={"db": str(cwd / ".briefd" / "briefd.db")}
    )
    with Briefd(settings, embedder=None) as api:
        text = gaps_text(api.gaps(GapsRequest(since=start.isoformat())))
    assert f"since {start:%Y-%m-%d %H:%M} UTC" in text.splitlines()[0]


def test_usage_table_lists_requests_per_day_with_the_days_between(tmp_path: Path) -> None:
    """The README has `briefd usage` print requests per day; only --json had them, so a lead
    reading the table saw no trend. The table lists each UTC day from the first with a request,
    the quiet days between as 0, by kind, with the empty ones and the latency."""
    knowledge = Repo(tmp_path / "knowledge")
    knowledge.commit({"domain/retry.md": RETRY_DOC}, "Rules", "2026-03-10T09:00:00+00:00")
    cwd = indexed_project(tmp_path)
    settings = load_settings(
        cwd / "briefd.yaml", env={}, overrides={"db": str(cwd / ".briefd" / "briefd.db")}
    )
    noon = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    day = [(noon - timedelta(days=back)).isoformat(timespec="seconds") for back in range(6)]
    with Briefd(settings, embedder=None) as api:
        hit = api.search(SearchRequest("soft decline retries", mode="bm25")).hits[0].chunk_id
        api.log_queries(
            [logged("search", "soft decline retries", day[5], 2.0, 10.0, "mcp", (hit,))] * 2
            + [logged("recall", "kafka consumer lag", day[5], None, 30.0, "hook")]
            + [logged("bundle", "retry a soft decline", day[2], 2.0, 20.0, "rest", (hit,))]
            + [logged("search", "soft decline retries", day[0], 2.0, 4.0, "mcp", (hit,))]
        )
    report = json.loads(briefd("usage", "--json", cwd=cwd).stdout)
    table = briefd("usage", cwd=cwd, env={"COLUMNS": "200"}).stdout

    rows = [line.split("│")[1:-1] for line in table.splitlines() if line.startswith("│ 20")]
    listed = [[cell.strip() for cell in row] for row in rows]
    assert listed == [
        [day[5][:10], "3", "2", "0", "1", "1", "10", "28"],
        [day[4][:10], "0", "0", "0", "0", "0", "–", "–"],
        [day[3][:10], "0", "0", "0", "0", "0", "–", "–"],
        [day[2][:10], "1", "0", "1", "0", "0", "20", "20"],
        [day[1][:10], "0", "0", "0", "0", "0", "–", "–"],
        [day[0][:10], "1", "1", "0", "0", "0", "4", "4"],
    ]
    assert sum(int(row[1]) for row in listed) == report["requests"] == 5


def test_a_report_before_the_first_index_says_the_command_that_builds_it(tmp_path: Path) -> None:
    """A fresh clone (or a new work tree) whose briefd.yaml names the source: ``briefd gaps``,
    ``usage`` and ``drift`` said to run ``briefd index --source DIR``, a folder the settings
    already name, where ``search`` said ``briefd index`` (source: …, from the settings)."""
    Repo(tmp_path / "knowledge").commit(
        {"domain/retry.md": RETRY_DOC}, "Knowledge", "2026-03-10T09:00:00+00:00"
    )
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "briefd.yaml").write_text(yaml.safe_dump({"source": "../knowledge"}))
    advice = (
        "error: no index at .briefd/briefd.db; build one with `briefd index` "
        "(source: ../knowledge, from the settings)"
    )
    assert briefd("search", "retry", cwd=cwd).stderr.strip() == advice
    for command in ("gaps", "usage", "drift"):
        result = briefd(command, cwd=cwd)
        assert (command, result.returncode) == (command, 1)
        assert (command, result.stderr.strip()) == (command, advice)


def test_the_repository_itself_named_from_its_briefd_folder_is_labelled_by_its_folder(
    tmp_path: Path,
) -> None:
    """T4: `code.repos: [.]` in `.briefd/briefd.yaml` (paths are relative to the settings
    file; git finds the repository above it) labelled the repository ".briefd" in drift."""
    app = Repo(tmp_path / "payments-app")
    app.commit({"docs/domain/retry.md": RETRY_DOC}, "Docs", "2026-03-10T09:00:00+00:00")
    app.commit({"services/payment/retry.py": "x\n"}, "Raise limits", "2026-03-15T00:00:00+00:00")
    (app.path / ".briefd").mkdir()
    config = {"source": "../docs", "code": {"repos": ["."]}}
    (app.path / ".briefd" / "briefd.yaml").write_text(yaml.safe_dump(config))
    assert briefd("index", cwd=app.path).returncode == 0
    report = json.loads(briefd("drift", "--json", cwd=app.path).stdout)
    assert [(r["name"], r["error"]) for r in report["repos"]] == [("payments-app", None)]
    assert [d["doc_path"] for d in report["documents"]] == ["domain/retry.md"]
    assert "payments-app" in briefd("drift", cwd=app.path).stdout


def test_a_gap_of_bundles_that_helped_with_nothing_says_so(tmp_path: Path) -> None:
    """T2, T3: bundles answered at the usual score but reported as helping with nothing were
    no gap; the table and the MCP text now list the group and count those reports."""
    cwd, settings = _rules_project(tmp_path)
    at = datetime.now(UTC).isoformat(timespec="seconds")
    task = "chargeback evidence for a partial refund"
    with Briefd(settings, embedder=None) as api:
        bundle = api.compile_bundle(BundleRequest(task, mode="manifest"))
        got = tuple(item.chunk_id for item in bundle.items)
        api.log_queries(
            [logged("bundle", task, at, 1.0, 1.0, "mcp", got, bundle.bundle_id)] * 2
            + [logged("search", "soft decline retries", at, 1.0, 1.0, "rest", got[:1])] * 3
        )
        api.report_usage(bundle.bundle_id, [], "agent-a")
        api.report_usage(bundle.bundle_id, [], "agent-b")
        text = gaps_text(api.gaps(GapsRequest()))
    assert f"1. '{task}': asked 2x (2 mcp), empty 0, gate emptied 0, reported no help 2, " in text
    table = briefd("gaps", cwd=cwd, env={"COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert "1 gap(s) among 2 query group(s)" in table.stdout
    (row,) = [line for line in table.stdout.splitlines() if task in line]
    cells = [cell.strip() for cell in row.split("│")[1:-1]]
    assert cells[1:7] == [f"{task} (no help: 2)", "2", "mcp:2", "0", "0", "1.000"], cells


def test_a_window_that_starts_after_now_says_so(project: tuple[Path, Repo]) -> None:
    """T3, T6: `--since 2027-…` typed for this year's date answered "Nothing was logged since
    …: the query log holds what `briefd serve`, `briefd mcp` … answer", sending the user
    after the log's coverage; it says the window starts after now."""
    cwd, _ = project
    later = f"{datetime.now(UTC).year + 1}-01-31"
    after = f"Nothing can be logged since {later}: that is after now ("
    for command in ("gaps", "usage"):
        shown = briefd(command, "--since", later, cwd=cwd, env={"COLUMNS": "200"})
        assert shown.returncode == 0, shown.stderr
        assert after in shown.stdout and "the query log holds" not in shown.stdout
    settings = load_settings(
        cwd / "briefd.yaml", env={}, overrides={"db": str(cwd / ".briefd" / "briefd.db")}
    )
    with Briefd(settings, embedder=None) as api:
        texts = [gaps_text(api.gaps(GapsRequest(since=later))), usage_text(api.usage(later))]
        assert all(after in text for text in texts), texts
    past = nothing_logged("2026-01-31T00:00:00+00:00")  # an empty window that has begun
    assert past.startswith("Nothing was logged since 2026-01-31: the query log holds what")


def test_drift_says_what_clears_it(project: tuple[Path, Repo], tmp_path: Path) -> None:
    """T4: the drift report listed documents and commits and said nothing of what to do, nor
    that only a commit of the document clears its drift (a review that keeps its text must
    still change the file). It says so; the commit it names clears it."""
    cwd, _ = project
    text = briefd("drift", cwd=cwd).stdout
    assert text.splitlines()[3:4] == [
        "Bring each up to date with the code commits listed and commit it: a commit of the "
        "document after them clears its drift at the next sync or index run (one that keeps "
        "its text, a review, must still change the file: a `reviewed:` date in its front "
        "matter)."
    ], text
    reviewed = RETRY_DOC.replace("---\n", "---\nreviewed: 2026-03-20\n", 1)
    stage(tmp_path / "knowledge", {"domain/retry.md": reviewed})
    at = identity("Dev One", "2026-03-20T00:00:00+00:00")
    git(tmp_path / "knowledge", "commit", "--quiet", "-m", "Reviewed", env=at)
    assert briefd("index", cwd=cwd).returncode == 0
    after = briefd("drift", cwd=cwd)
    assert after.stdout.startswith("0 of 2 documents with refs drift (app (main at ")
    assert "Bring each up to date" not in after.stdout
    assert "reviewed" not in briefd("index", cwd=cwd).stdout  # no front-matter problem
