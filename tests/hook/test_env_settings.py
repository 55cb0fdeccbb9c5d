"""O1 as the prompt hook meets it: ``BRIEFD_*`` variables in the agent's environment are
read as the command line reads them, by the hook's fast path, in-process and by its daemon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.hook.conftest import RunHook, hook_json
from tests.hook.test_daemon import DAEMON, as_json, daemons, db, no_daemon_left, serving, wait_for
from tests.recall.conftest import RELEVANT

# strong by keywords too: the whole budget (RELEVANT is weak: recall.weak_tokens)
SPECIFIC = "which header carries the HMAC signature of a webhook and how is the secret rotated"

__all__ = ["db", "no_daemon_left"]  # fixtures of the daemon's tests, used here too


def test_a_daemon_turned_off_with_zero_still_answers_the_prompt(
    db: Path, tmp_path: Path, run_hook: RunHook
) -> None:
    """``BRIEFD_RECALL__DAEMON=0`` (as environment variables often say false): the hook's fast
    path took it as off and answered in-process, where the settings refused it ("recall.daemon:
    expected true or false, got 0"), so every prompt got nothing but that line on stderr."""
    for n, off in enumerate(("0", " 0")):
        prompt = hook_json(RELEVANT, session=f"s-{n}")
        done = run_hook(payload=prompt, env={"BRIEFD_RECALL__DAEMON": off})
        assert (done.code, done.stderr) == (0, "")
        assert done.stdout.startswith("<knowledge>")
        assert "Merchants have 7 calendar days" in done.stdout
    assert daemons(tmp_path) == []


def test_a_variable_set_after_the_daemon_started_is_not_ignored(
    db: Path, tmp_path: Path, run_hook: RunHook
) -> None:
    """The daemon reads its settings once, with the environment of the hook that started it:
    ``BRIEFD_RECALL__MAX_TOKENS=300`` set since (in the agent's config) was ignored, the
    prompt given the daemon's 1500-token budget until it idled out 30 minutes after its last
    answer. A prompt whose BRIEFD_* variables differ is answered in-process, with its own."""
    first = as_json(run_hook, SPECIFIC, "s-1")
    wait_for(lambda: serving(db))
    same = as_json(run_hook, SPECIFIC, "s-2")
    assert (same["via"], same["budget"]) == ("daemon", 1500)
    changed = as_json(run_hook, SPECIFIC, "s-3", BRIEFD_RECALL__MAX_TOKENS="300")
    assert (changed["via"], changed["budget"]) == ("in-process", 300)
    assert changed["sections"] and first["sections"]
    shown = run_hook("--status", env={**DAEMON, "BRIEFD_RECALL__MAX_TOKENS": "300"}).stdout
    assert (
        "  it answers with the BRIEFD_* variables of the hook that started it, not these: " in shown
    )
    assert "BRIEFD_* variables" not in run_hook("--status", env=DAEMON).stdout
    again = as_json(run_hook, SPECIFIC, "s-4")  # the hook that started it still gets it
    assert again["via"] == "daemon"
    assert len(daemons(tmp_path)) == 1


def test_a_tilde_in_briefd_db_and_briefd_config_is_the_home_folder(
    db: Path, tmp_path: Path, run_hook: RunHook
) -> None:
    """An agent's config sets ``"env": {"BRIEFD_DB": "~/kb/briefd.db"}`` and no shell expands
    the ``~``: `briefd search` read ~/kb/briefd.db, as the settings expand it, but the hook
    looked for ./~/kb/briefd.db ("no index at /project/~/kb/briefd.db"), and a
    ``BRIEFD_CONFIG=~/briefd.yaml`` was "cannot read config file ~/briefd.yaml" everywhere."""
    home = db.parent
    (home / "briefd.yaml").write_text("default_scopes: [domain]\nembeddings:\n  enabled: false\n")
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {"HOME": str(home), "BRIEFD_DB": f"~/{db.name}", "BRIEFD_CONFIG": "~/briefd.yaml"}
    done = run_hook(payload=hook_json(RELEVANT, session="s-1"), env=env, cwd=project)
    assert (done.code, done.stderr) == (0, "")
    assert "Merchants have 7 calendar days" in done.stdout
    cli = [sys.executable, "-m", "briefd", "search", "chargeback evidence deadline", "--json"]
    found = subprocess.run(
        cli,
        cwd=project,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["scopes"] == ["domain"]  # the settings file under ~
