"""The hook contract, end to end: the real command in a subprocess, hook JSON on stdin."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from briefd.api import Briefd
from briefd.cli.init import hook_command
from briefd.settings import Settings
from briefd.store.db import Store
from tests.conftest import WriteFiles
from tests.hook.conftest import Run, RunHook, hook_json
from tests.recall.conftest import OFF_TOPIC, RELEVANT


def test_relevant_prompt_injects_a_knowledge_block(indexed: Briefd, run_hook: RunHook) -> None:
    run = run_hook(payload=hook_json(RELEVANT))
    assert run.code == 0, run.stderr
    assert run.stderr == ""
    assert run.stdout.startswith("<knowledge>\n")
    assert run.stdout.rstrip().endswith("</knowledge>")
    assert len(run.stdout) <= 10_000
    assert "[source: domain/chargebacks.md · Chargebacks and disputes › Evidence deadline" in (
        run.stdout
    )
    assert "Merchants have 7 calendar days" in run.stdout


def test_off_topic_prompt_prints_nothing(indexed: Briefd, run_hook: RunHook) -> None:
    run = run_hook(payload=hook_json(OFF_TOPIC))
    assert (run.code, run.stdout, run.stderr) == (0, "", "")


def test_a_client_command_alone_injects_nothing_and_one_with_words_is_answered_for_them(
    indexed: Briefd, run_hook: RunHook
) -> None:
    """A prompt of /compact (Claude Code compacting the conversation) was answered with the
    Kafka section "Retention and compaction"; /clear, /model, /help got a weak block when a word
    matched. A client command alone, or with flags only, asks the knowledge base nothing. A
    custom command with words after it is answered for those words."""
    for prompt in ("/compact", "/clear", "/model", "/help", "/init", "/compact --force -v"):
        assert run_hook(payload=hook_json(prompt)).stdout == "", prompt
        result = json.loads(run_hook("--json", payload=hook_json(prompt)).stdout)
        assert result["sections"] == [], prompt
        command = prompt.split()[0]
        assert result["reason"] == f"the prompt is the client command {command}, not a question"
    answered = json.loads(  # the gate's verdict alone: keyword tiers are test_keywords.py's
        run_hook("--json", "--mode", "bm25", payload=hook_json("/review the refund limits")).stdout
    )
    assert answered["prompt"] == "/review the refund limits"
    assert {s["doc_path"] for s in answered["sections"]} >= {"domain/refunds.md"}


def test_same_prompt_twice_in_a_session_adds_nothing_new(
    indexed: Briefd, run_hook: RunHook
) -> None:
    first = run_hook(payload=hook_json(RELEVANT, session="s-1"))
    second = run_hook(payload=hook_json(RELEVANT, session="s-1"))
    other = run_hook(payload=hook_json(RELEVANT, session="s-2"))
    assert "<knowledge>" in first.stdout
    assert (second.code, second.stdout) == (0, "")
    assert other.stdout == first.stdout


def test_repeats_are_counted_in_json(indexed: Briefd, run_hook: RunHook) -> None:
    run_hook("--mode", "bm25", payload=hook_json(RELEVANT, session="s-3"))  # untiered: all
    ask = ("--json", "--mode", "bm25")
    again = json.loads(run_hook(*ask, payload=hook_json(RELEVANT, session="s-3")).stdout)
    assert again["sections"] == []
    assert again["already_injected"] >= 1
    assert again["reason"] == "every matching section was already injected in this session"


def test_broken_index_fails_open(settings: Settings, run_hook: RunHook) -> None:
    settings.db.write_bytes(b"this is not a database" * 100)
    run = run_hook(payload=hook_json(RELEVANT))
    assert (run.code, run.stdout) == (0, "")
    assert run.stderr.count("\n") == 1
    assert "is not a usable briefd index" in run.stderr


def test_missing_index_fails_open(run_hook: RunHook) -> None:
    run = run_hook(payload=hook_json(RELEVANT))
    assert (run.code, run.stdout) == (0, "")
    assert run.stderr.startswith("briefd recall: no index at ")


def test_an_index_a_stopped_first_run_left_empty_says_so(
    settings: Settings, run_hook: RunHook
) -> None:
    """A first ``briefd index`` killed before it committed leaves an index with no document;
    recall's reason was "no scopes", which named neither the cause nor the fix."""
    Store.open(settings.db, create=True).close()  # what that run leaves: the schema alone
    run = run_hook("--json", payload=hook_json(RELEVANT))
    assert run.code == 0 and run.stdout, run.stderr
    answer = json.loads(run.stdout)
    assert answer["sections"] == []
    assert answer["reason"] == "no document is indexed yet; run `briefd index`"


def test_malformed_json_fails_open(indexed: Briefd, run_hook: RunHook) -> None:
    run = run_hook(payload='{"prompt": "unterminated')
    assert (run.code, run.stdout) == (0, "")
    assert run.stderr == (
        "briefd recall: stdin is not valid hook JSON (expected an object with a 'prompt' string)\n"
    )


def test_json_without_prompt_fails_open(indexed: Briefd, run_hook: RunHook) -> None:
    run = run_hook(payload={"session_id": "x"})
    assert (run.code, run.stdout, run.stderr) == (
        0,
        "",
        "briefd recall: hook JSON has no 'prompt' string\n",
    )


def test_unreachable_server_answers_in_process(indexed: Briefd, run_hook: RunHook) -> None:
    run = run_hook("--json", payload=hook_json(RELEVANT))
    result = json.loads(run.stdout)
    assert result["via"] == "in-process"
    assert result["mode"] == "bm25"
    assert result["sections"][0]["doc_path"] == "domain/chargebacks.md"


def test_silent_server_fails_open(indexed: Briefd, run_hook: RunHook, silent_server: str) -> None:
    env = {"BRIEFD_RECALL__SERVER": silent_server, "BRIEFD_RECALL__SERVER_TIMEOUT": "0.5"}
    run = run_hook(payload=hook_json(RELEVANT), env=env)
    assert (run.code, run.stdout) == (0, "")
    assert (
        run.stderr
        == f"briefd recall: briefd server at {silent_server} did not answer within 0.5 s\n"
    )


def test_a_lone_surrogate_in_the_prompt_or_session_costs_nothing_but_that_character(
    indexed: Briefd, run_hook: RunHook
) -> None:
    """JSON may spell half a surrogate pair ("\\ud800": an emoji cut in two); SQLite refused
    it, and the hook said "UnicodeEncodeError: 'utf-8' codec can't encode character '\\ud800'"
    and injected nothing. The character is U+FFFD; the session is remembered under it."""
    prompt = RELEVANT.replace(" ", " \ud83d ", 1)
    payload = {"session_id": "s-\udc80", "prompt": prompt}
    first = run_hook(payload=payload)
    assert first.stderr == ""
    assert "Merchants have 7 calendar days" in first.stdout
    again = json.loads(run_hook("--json", payload=payload).stdout)
    assert (again["sections"], again["session_id"]) == ([], "s-\ufffd")
    assert again["prompt"] == RELEVANT.replace(" ", " \ufffd ", 1)


def test_a_byte_that_is_not_utf8_costs_the_prompt_nothing_but_that_character(
    indexed: Briefd, hook_env: dict[str, str], tmp_path: Path
) -> None:
    """Hook JSON whose prompt holds text a script read from a cp1252 file (an en dash as the
    single byte 0x96) was refused whole: "stdin is not valid hook JSON", nothing injected. The
    byte is U+FFFD and the prompt is answered; UTF-16 hook JSON is still read as JSON reads it."""
    body = json.dumps({"prompt": RELEVANT + " \x96"})
    cp1252 = body.replace("\\u0096", "\x96").encode("latin-1")
    for raw in (cp1252, cp1252.replace(b"\x96", b"\xff\xfe")):  # no session: both answered
        done = subprocess.run(
            [*shlex.split(hook_command()), "--json"],
            input=raw,
            capture_output=True,
            cwd=tmp_path,
            env=hook_env,
            timeout=60,
            check=False,
        )
        assert done.stderr == b""
        answer = json.loads(done.stdout)
        assert answer["prompt"].startswith(RELEVANT + " \ufffd")
        assert "Merchants have 7 calendar days" in answer["knowledge"]
    utf16 = json.dumps({"prompt": RELEVANT}).encode("utf-16")
    done = subprocess.run(
        shlex.split(hook_command()),
        input=utf16,
        capture_output=True,
        cwd=tmp_path,
        env=hook_env,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, b"")
    assert "Merchants have 7 calendar days" in done.stdout.decode()


def test_claude_json_format(indexed: Briefd, run_hook: RunHook) -> None:
    run = run_hook("--format", "claude-json", payload=hook_json(RELEVANT))
    out = json.loads(run.stdout)
    assert list(out) == ["hookSpecificOutput"]
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert out["hookSpecificOutput"]["additionalContext"].startswith("<knowledge>")


def test_prompt_as_argument_and_text_list(indexed: Briefd, run_hook: RunHook) -> None:
    words = ("idempotency", "key", "reused", "with", "another", "body")
    run = run_hook("--format", "text", "--mode", "bm25", *words)  # untiered: every hit listed
    assert run.code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("briefd recall · ")
    assert "domain/idempotency.md:" in lines[1]
    assert lines[1].split()[1].replace(".", "").isdigit()  # the score


def test_budget_and_hard_cap(indexed: Briefd, run_hook: RunHook) -> None:
    small = json.loads(run_hook("--json", "--mode", "bm25", "--max-tokens", "200", RELEVANT).stdout)
    assert 0 < small["tokens"] <= 200
    assert len(small["knowledge"]) <= 10_000
    wide = ("--mode", "bm25", "--max-tokens", "100000", "--top-k", "50")  # untiered: every hit
    big = run_hook(*wide, "settlement payout currency cutoff")
    assert 0 < len(big.stdout) <= 10_000


def test_discovers_the_index_in_the_project_directory(
    indexed: Briefd, run_hook: RunHook, tmp_path: Path, settings: Settings
) -> None:
    project = tmp_path / "project"
    (project / ".briefd").mkdir(parents=True)
    indexed.close()
    settings.db.rename(project / ".briefd" / "briefd.db")
    run = run_hook(payload=hook_json(RELEVANT, cwd=str(project)), env={"BRIEFD_DB": None})
    assert "<knowledge>" in run.stdout, run.stderr


def test_a_prompt_from_a_subfolder_of_the_project_finds_its_index(
    indexed: Briefd, run_hook: RunHook, tmp_path: Path, settings: Settings
) -> None:
    """An agent that ran ``cd src/payments`` (or was started there) sends that folder as the
    hook's ``cwd``: discovery looked only there, found no briefd.yaml and no index, and recall
    went quiet for the rest of the session. It now climbs to the git work tree's top; a stray
    ``.briefd`` above the work tree, or above a folder in no work tree, is never used."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "src" / "payments").mkdir(parents=True)
    (project / "briefd.yaml").write_text("db: index/kb.db\n")
    (project / "index").mkdir()
    indexed.close()
    settings.db.rename(project / "index" / "kb.db")
    sub = str(project / "src" / "payments")
    run = run_hook(payload=hook_json(RELEVANT, cwd=sub), env={"BRIEFD_DB": None})
    assert "Merchants have 7 calendar days" in run.stdout, run.stderr
    run = run_hook(RELEVANT, env={"BRIEFD_DB": None}, cwd=sub)  # spawned there, prompt as words
    assert "Merchants have 7 calendar days" in run.stdout, run.stderr
    # outside any work tree, and above one, a folder with an index is not the project
    (project / "index" / "kb.db").rename(tmp_path / "stray.db")
    (tmp_path / ".briefd").mkdir()
    (tmp_path / "stray.db").rename(tmp_path / ".briefd" / "briefd.db")
    (project / "briefd.yaml").unlink()
    plain = tmp_path / "plain" / "sub"
    plain.mkdir(parents=True)
    for cwd in (sub, str(plain)):
        run = run_hook(payload=hook_json(RELEVANT, session=cwd, cwd=cwd), env={"BRIEFD_DB": None})
        assert (run.code, run.stdout) == (0, ""), cwd
        assert "no index" in run.stderr, run.stderr


def test_a_prompt_from_outside_the_project_is_answered_for_the_sessions_project(
    indexed: Briefd, run_hook: RunHook, tmp_path: Path, settings: Settings
) -> None:
    """Claude Code sends the session's current folder as ``cwd``, and an agent that ran ``cd``
    out of the project (a sibling repository, a dependency's checkout) leaves it there: the hook
    found no settings and no index, and every later prompt of the session got nothing. It now
    answers for the session's project (``$CLAUDE_PROJECT_DIR``), unless the folder is a briefd
    project of its own or a settings file or index is named."""
    project = tmp_path / "project"
    (project / ".briefd").mkdir(parents=True)
    indexed.close()
    settings.db.rename(project / ".briefd" / "briefd.db")
    sibling = tmp_path / "sibling" / "src"
    (tmp_path / "sibling" / ".git").mkdir(parents=True)
    sibling.mkdir()
    env: dict[str, str | None] = {"BRIEFD_DB": None, "CLAUDE_PROJECT_DIR": str(project)}
    for cwd in (sibling, tmp_path):  # in another work tree, and in none
        payload = hook_json(RELEVANT, session=str(cwd), cwd=str(cwd))
        run = run_hook(payload=payload, env=env, cwd=cwd)
        assert "Merchants have 7 calendar days" in run.stdout, run.stderr
    (tmp_path / "sibling" / "briefd.yaml").write_text("db: nowhere.db\n")  # a project of its own
    run = run_hook(payload=hook_json(RELEVANT, "s-3", str(sibling)), env=env, cwd=sibling)
    assert (run.stdout, run.stderr.split(";")[0]) == (
        "",
        f"briefd recall: no index at {tmp_path / 'sibling' / 'nowhere.db'}",
    )


def test_a_prompt_from_a_linked_work_tree_finds_the_main_work_trees_index(
    indexed: Briefd, run_hook: RunHook, tmp_path: Path, settings: Settings
) -> None:
    """Agents run in ``git worktree add`` checkouts; the index (untracked) is only in the main
    work tree, so a prompt there found the committed briefd.yaml but no index and stayed
    quiet. A work tree's own index, when it has one, is still the one used."""
    _work_trees(tmp_path, "recall:\n  max_tokens: 1200\n", indexed, settings.db, "briefd.db")
    for cwd in (tmp_path / "feature", tmp_path / "feature" / "src"):
        cwd.mkdir(exist_ok=True)
        payload = hook_json(RELEVANT, session=str(cwd), cwd=str(cwd))
        run = run_hook(payload=payload, env={"BRIEFD_DB": None})
        assert "Merchants have 7 calendar days" in run.stdout, run.stderr
    # the work tree's own index wins: an empty file there is its (unreadable) index
    (tmp_path / "feature" / ".briefd").mkdir()
    (tmp_path / "feature" / ".briefd" / "briefd.db").write_bytes(b"")
    payload = hook_json(RELEVANT, session="own", cwd=str(tmp_path / "feature" / "src"))
    run = run_hook(payload=payload, env={"BRIEFD_DB": None})
    assert run.stdout == "", run.stdout
    assert "the index file .briefd/briefd.db is empty" in run.stderr, run.stderr


def test_a_linked_work_tree_keeps_its_own_index_named_by_its_settings(
    indexed: Briefd, run_hook: RunHook, tmp_path: Path, settings: Settings
) -> None:
    """A work tree indexed on its own branch (``briefd index`` there builds the work tree's own
    index) under the name its briefd.yaml gives (``db: .briefd/team.db``) was still answered
    from the main work tree's index — the other branch's knowledge — since only the default
    ``.briefd/briefd.db`` counted as its own. The index its settings name counts too."""
    _work_trees(tmp_path, "db: .briefd/team.db\n", indexed, settings.db, "team.db")
    feature = tmp_path / "feature" / "src"
    feature.mkdir()
    payload = hook_json(RELEVANT, session="main", cwd=str(feature))
    run = run_hook(payload=payload, env={"BRIEFD_DB": None})
    assert "Merchants have 7 calendar days" in run.stdout, run.stderr  # none of its own yet
    (tmp_path / "feature" / ".briefd").mkdir()
    (tmp_path / "feature" / ".briefd" / "team.db").write_bytes(b"")  # its own (unreadable)
    payload = hook_json(RELEVANT, session="own", cwd=str(feature))
    run = run_hook(payload=payload, env={"BRIEFD_DB": None})
    assert run.stdout == "", run.stdout
    own = tmp_path / "feature" / ".briefd" / "team.db"
    assert f"the index file {own} is empty" in run.stderr, run.stderr


def test_a_broken_settings_file_is_named_and_the_hook_stays_quiet(
    tmp_path: Path, run_hook: RunHook
) -> None:
    config = tmp_path / "briefd.yaml"
    config.write_text("recall:\n  server: [\n")
    run = run_hook(payload=hook_json(RELEVANT), env={"BRIEFD_CONFIG": str(config)})
    assert (run.code, run.stdout) == (0, "")
    assert run.stderr == f"briefd recall: {config} is not valid YAML at line 3; fix it\n"


def test_a_recall_server_that_is_not_a_url_is_a_settings_error(
    indexed: Briefd, tmp_path: Path, run_hook: RunHook
) -> None:
    """recall.server: localhost:8484 (no http://) loaded, and the hook never asked that server
    and never said so: every prompt answered from the local index while the team server was
    meant to. It is refused at load, naming the key, as every settings mistake is."""
    config = tmp_path / "briefd.yaml"
    config.write_text("recall:\n  server: localhost:8484\n")
    run = run_hook(payload=hook_json(RELEVANT), env={"BRIEFD_CONFIG": str(config)})
    assert (run.code, run.stdout) == (0, "")
    assert run.stderr == (
        f"briefd recall: {config}: recall.server: 'localhost:8484' is not a server URL (it "
        "starts with neither https:// nor http://); expected http://host:port or "
        "https://host, or null for none\n"
    )
    config.write_text("recall:\n  server: 'off'\n")  # none, as null
    assert (
        "Merchants have 7 calendar days"
        in run_hook(payload=hook_json(RELEVANT), env={"BRIEFD_CONFIG": str(config)}).stdout
    )


def test_a_tab_in_the_settings_file_is_named_by_the_hook(tmp_path: Path, run_hook: RunHook) -> None:
    config = tmp_path / "briefd.yaml"
    config.write_text("recall:\n\tserver: off\n")
    run = run_hook(payload=hook_json(RELEVANT), env={"BRIEFD_CONFIG": str(config)})
    assert (run.code, run.stdout) == (0, "")
    assert run.stderr == (
        f"briefd recall: {config} is not valid YAML at line 2: a tab, which YAML does not "
        "take there; use spaces\n"
    )


def test_a_settings_file_that_cannot_be_read_is_named_with_where_its_path_came_from(
    tmp_path: Path, run_hook: RunHook
) -> None:
    """A BRIEFD_CONFIG set long ago to a file since moved (or --config given a folder) said
    'FileNotFoundError: [Errno 2] No such file or directory: …', as the CLI does not."""
    missing = tmp_path / "moved" / "briefd.yaml"
    run = run_hook(payload=hook_json(RELEVANT), env={"BRIEFD_CONFIG": str(missing)})
    assert (run.code, run.stdout) == (0, "")
    assert run.stderr == (
        f"briefd recall: cannot read config file {missing}, which BRIEFD_CONFIG names: No such "
        "file or directory; fix BRIEFD_CONFIG or unset it\n"
    )
    run = run_hook("--config", str(tmp_path), payload=hook_json(RELEVANT))
    assert (run.code, run.stdout) == (0, "")
    assert run.stderr == f"briefd recall: cannot read config file {tmp_path}: Is a directory\n"


def test_an_index_named_by_the_projects_settings_is_never_swapped_for_the_users(
    indexed: Briefd, run_hook: RunHook, tmp_path: Path, settings: Settings
) -> None:
    """The project's briefd.yaml names `.briefd/briefd.db` (the default path, written out) and
    it is not built yet; the user's default index holds other knowledge. The hook says the
    project's index is missing instead of injecting the other knowledge base."""
    indexed.close()
    user_db = tmp_path / "home" / ".local" / "share" / "briefd" / "briefd.db"
    user_db.parent.mkdir(parents=True)
    settings.db.rename(user_db)
    project = tmp_path / "project"
    project.mkdir()
    (project / "briefd.yaml").write_text("source: knowledge\ndb: .briefd/briefd.db\n")
    run = run_hook(payload=hook_json(RELEVANT, cwd=str(project)), env={"BRIEFD_DB": None})
    assert (run.code, run.stdout) == (0, "")
    assert run.stderr == (  # the file's paths, as its absolute path makes them
        f"briefd recall: no index at {project}/.briefd/briefd.db; build one with `briefd index` "
        f"(source: {project}/knowledge, from the settings)\n"
    )
    # without a db in the settings file the user's default index still answers
    (project / "briefd.yaml").write_text("source: knowledge\n")
    run = run_hook(payload=hook_json(RELEVANT, cwd=str(project)), env={"BRIEFD_DB": None})
    assert "Merchants have 7 calendar days" in run.stdout, run.stderr


def test_a_project_not_indexed_yet_is_named_where_briefd_index_builds_it(
    run_hook: RunHook, tmp_path: Path
) -> None:
    """Before a project's first `briefd index` the hook said "no index at
    ~/.local/share/briefd/briefd.db; build one with `briefd index`" (the user's default index,
    which nothing had built either), a path that command never writes; from a subfolder too."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "briefd.yaml").write_text("source: knowledge\n")
    said = (
        f"briefd recall: no index at {project}/.briefd/briefd.db; build one with `briefd index` "
        f"(source: {project}/knowledge, from the settings)\n"
    )
    for cwd in (project, project / "src"):
        run = run_hook(payload=hook_json(RELEVANT, cwd=str(cwd)), env={"BRIEFD_DB": None})
        assert (run.code, run.stdout, run.stderr) == (0, "", said)
    assert sorted(p.name for p in project.iterdir()) == [".git", "briefd.yaml", "src"]


LEFT_OPEN = {
    "domain/ledger.md": "# Ledger posting\n\nLedger posting covers settlement batches.\n\n"
    "```python\ndef post(batch):\n    return settle(batch)\n",
    "domain/refund.md": "# Refund nightly\n\nRefund reconciliation runs nightly.\n\n"
    "~~~sh\nreconcile --refunds\n",
    "domain/payout.md": "# Payout hold\n\nPayout scheduling holds funds three days.\n\n"
    "<!-- reviewer note: payout scheduling draft\n",
    "domain/invoice.md": "# Invoice format\n\n    INV-2024-000123\n    invoice numbering\n\n"
    "Invoice numbering is sequential.\n",
}
LEFT_OPEN_PROMPT = "ledger posting, refund reconciliation, payout scheduling, invoice numbering"


def test_a_section_left_open_is_closed_in_the_block(
    settings: Settings, write_files: WriteFiles, run_hook: RunHook
) -> None:
    """A section whose document never closes its fence or comment is closed before the next
    source line (the closing tag was hidden in a comment); indented code stays code."""
    with Briefd(settings) as api:
        api.index(write_files(LEFT_OPEN))
    text = run_hook(payload=hook_json(LEFT_OPEN_PROMPT, session="s-1")).stdout
    claude = run_hook("--format", "claude-json", payload=hook_json(LEFT_OPEN_PROMPT, session="s-2"))
    answer = json.loads(
        run_hook("--json", payload=hook_json(LEFT_OPEN_PROMPT, session="s-3")).stdout
    )
    assert json.loads(claude.stdout)["hookSpecificOutput"]["additionalContext"] == text
    assert answer["knowledge"] == text and len(answer["sections"]) == 4
    assert "\n    return settle(batch)\n```\n" in text
    assert "\n~~~sh\nreconcile --refunds\n~~~\n" in text
    assert "\n<!-- reviewer note: payout scheduling draft\n-->\n" in text
    assert "]\n\n    INV-2024-000123\n    invoice numbering\n\nInvoice numbering is" in text
    assert text.endswith("\n</knowledge>\n")
    assert answer["tokens"] <= answer["budget"]


def test_a_closing_tag_inside_a_section_does_not_end_the_block(
    settings: Settings, write_files: WriteFiles, run_hook: RunHook
) -> None:
    """A team documenting its own hook quotes ``</knowledge>``: the block ended there, and the
    rest of the section (and any after it) read as if outside the knowledge."""
    hook = (
        "# Hook output\n\nThe recall hook wraps sections in a knowledge tag; the block ends "
        "with </knowledge> on its own line, and the agent reads what follows as its prompt "
        "(a tag parser also ends it at </KNOWLEDGE >).\n"
    )
    with Briefd(settings) as api:
        api.index(write_files({"conventions/hook-output.md": hook}))
    prompt = "recall hook knowledge tag block ends agent prompt"
    text = run_hook(payload=hook_json(prompt, session="s-1")).stdout
    answer = json.loads(run_hook("--json", payload=hook_json(prompt, session="s-2")).stdout)
    assert text.count("</knowledge>") == 1 and text.endswith("\n</knowledge>\n")
    assert "block ends with <\\/knowledge> on its own line" in text
    assert "(a tag parser also ends it at <\\/knowledge>)" in text
    assert text.lower().count("</knowledge") == 1
    assert answer["tokens"] <= answer["budget"]


def test_a_section_starting_with_a_rule_does_not_make_its_source_line_a_heading(
    settings: Settings, write_files: WriteFiles, run_hook: RunHook
) -> None:
    """A body whose first line is ``---`` (a rule after the front matter) followed the source
    line directly, which Markdown reads as a setext heading: "[source: …]" became a heading."""
    cutoff = "---\ntitle: Settlement cutoff\n---\n---\n\nSettlement cutoff is 17:00 UTC.\n"
    with Briefd(settings) as api:
        api.index(write_files({"domain/cutoff.md": cutoff}))
    prompt = "settlement cutoff card batches UTC"
    answer = json.loads(run_hook("--json", payload=hook_json(prompt, session="s-1")).stdout)
    source = "[source: domain/cutoff.md · Settlement cutoff · updated "
    line = next(x for x in answer["knowledge"].split("\n") if x.startswith(source))
    assert f"{line}\n\n---\n\nSettlement cutoff is 17:00 UTC." in answer["knowledge"]
    assert answer["tokens"] <= answer["budget"]


def test_a_title_over_several_lines_stays_on_the_source_line(
    settings: Settings, write_files: WriteFiles, run_hook: RunHook
) -> None:
    """``title: |`` put its second line after the source line, where "# …" is a heading."""
    currency = "---\ntitle: |\n  Currency conversion\n  # not a heading\n---\n"
    with Briefd(settings) as api:
        api.index(write_files({"domain/currency.md": currency + "Conversion uses daily rates.\n"}))
    prompt = "currency conversion daily rates"
    block = run_hook(payload=hook_json(prompt, session="s-1")).stdout
    listing = run_hook("--format", "text", payload=hook_json(prompt, session="s-2")).stdout
    assert "[source: domain/currency.md · Currency conversion # not a heading · updated " in block
    assert "\n# not a heading" not in block
    assert "\n    Currency conversion # not a heading\n    Conversion uses daily rates." in listing


def in_a_removed_folder(
    hook_env: dict[str, str], tmp_path: Path, payload: object, env: dict[str, str | None]
) -> Run:
    """The hook line spawned in a folder removed before it starts (an agent whose shell sat
    in a deleted folder, a removed worktree), as the agent would spawn it."""
    gone = tmp_path / "gone"
    gone.mkdir()
    enter_and_remove = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    command = ["sh", "-c", enter_and_remove, "sh", str(gone), *shlex.split(hook_command())]
    done = subprocess.run(
        command,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={k: v for k, v in {**hook_env, **env}.items() if v is not None},
        timeout=60,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def test_a_hook_spawned_in_a_removed_folder_answers_for_its_project(
    indexed: Briefd, hook_env: dict[str, str], tmp_path: Path, settings: Settings
) -> None:
    """os.getcwd() failed on the way ('FileNotFoundError: [Errno 2] No such file or
    directory', nothing injected) though the hook JSON named the project; with the JSON's
    folder gone too, no daemon is started in it and the prompt is answered in-process."""
    project = tmp_path / "project"
    (project / ".briefd").mkdir(parents=True)
    indexed.close()
    settings.db.rename(project / ".briefd" / "briefd.db")
    payload = hook_json(RELEVANT, cwd=str(project))
    run = in_a_removed_folder(hook_env, tmp_path, payload, {"BRIEFD_DB": None})
    assert run.code == 0
    assert "Merchants have 7 calendar days" in run.stdout, run.stderr
    payload = hook_json(RELEVANT, session="s-2", cwd=str(tmp_path / "gone"))
    env = {"BRIEFD_DB": str(project / ".briefd" / "briefd.db"), "BRIEFD_RECALL__DAEMON": "true"}
    run = in_a_removed_folder(hook_env, tmp_path, payload, env)
    assert run.code == 0
    assert "Merchants have 7 calendar days" in run.stdout, run.stderr
    assert not (project / ".briefd" / "briefd.db.recall.log").exists()  # no daemon started


def test_a_broken_settings_file_found_from_a_subfolder_is_named_by_its_absolute_path(
    tmp_path: Path, run_hook: RunHook
) -> None:
    """From a subfolder the hook climbs to the project's briefd.yaml; a mistake in it was
    reported as "briefd.yaml: key 'source' appears twice", which the user in src/payments
    could not tell from a briefd.yaml of their own folder. The message names the file read."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    sub = project / "src" / "payments"
    sub.mkdir(parents=True)
    config = project / "briefd.yaml"
    config.write_text("source: knowledge\nsource: docs\n")
    payload = hook_json(RELEVANT, cwd=str(sub))
    for cwd in (sub, tmp_path):  # spawned in the subfolder, or elsewhere with the JSON's cwd
        run = run_hook(payload=payload, env={"BRIEFD_DB": None}, cwd=cwd)
        assert (run.code, run.stdout) == (0, "")
        assert run.stderr.startswith(f"briefd recall: {config}: key 'source' appears twice"), (
            run.stderr
        )


def test_the_terminal_preview_never_ends_inside_an_emoji_or_a_flag(
    settings: Settings, write_files: WriteFiles, run_hook: RunHook
) -> None:
    """The ranked list's preview of a section was its first 160 code points: a family emoji
    (👨‍👩‍👧, five code points) there was shown as 👨‍👩 and a dangling joiner, a flag (🇹🇷) as 🇹. It
    stops before a character it cannot show whole."""
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    flag = "\U0001f1f9\U0001f1f7"
    text = "Household payouts: " + "x" * 137 + f" {family} and {flag} accounts share one limit."
    assert text.index(family) + len(family) > 160 > text.index(family)
    with Briefd(settings) as api:
        api.index(write_files({"domain/household.md": f"# Household payouts\n\n{text}\n"}))
    listing = run_hook("--format", "text", payload=hook_json("household payouts")).stdout
    preview = next(x for x in listing.split("\n") if x.startswith("    Household payouts: "))
    assert preview == "    Household payouts: " + "x" * 137


def test_scopes_given_twice_are_both_searched(indexed: Briefd, run_hook: RunHook) -> None:
    """I8: `--scopes domain --scopes projects/ledger`, as search, bundle and context take it
    ("repeat or comma-separate"), searched the last one alone: the chargeback rules of
    domain/ were never injected, and nothing said a scope was dropped."""
    asked = ("--json", "--scopes", "domain", "--scopes", "projects/ledger")
    run = run_hook(*asked, payload=hook_json(RELEVANT))
    assert run.code == 0 and run.stderr == "", run.stderr
    paths = [section["doc_path"] for section in json.loads(run.stdout)["sections"]]
    assert "domain/chargebacks.md" in paths, paths
    comma = ("--json", "--scopes", "domain,projects/ledger")
    one = run_hook(*comma, payload=hook_json(RELEVANT, session="session-2"))
    assert [s["doc_path"] for s in json.loads(one.stdout)["sections"]] == paths


def _work_trees(tmp_path: Path, config: str, indexed: Briefd, db: Path, name: str) -> None:
    """A git repository ``repo`` committing a briefd.yaml of ``config``, a linked work tree of it
    at ``feature``, and the indexed example moved to ``repo/.briefd/<name>`` (the main work
    tree's index)."""
    main = tmp_path / "repo"
    main.mkdir()
    (main / "briefd.yaml").write_text(config)
    for args in (
        ("init", "-q"),
        ("add", "briefd.yaml"),
        ("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "settings"),
        ("worktree", "add", "-q", str(tmp_path / "feature")),
    ):
        subprocess.run(["git", *args], cwd=main, check=True, capture_output=True)
    (main / ".briefd").mkdir()
    indexed.close()
    db.rename(main / ".briefd" / name)
