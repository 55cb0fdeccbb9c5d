"""O1 as the prompt hook meets it: ``BRIEFD_*`` variables in the agent's environment are
read as the command line reads them, by the hook's fast path, in-process and by its daemon."""

from __future__ import annotations

from pathlib import Path

from tests.hook.conftest import RunHook, hook_json
from tests.hook.test_daemon import DAEMON, as_json, daemons, db, no_daemon_left, serving, wait_for
from tests.recall.conftest import RELEVANT

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
    first = as_json(run_hook, RELEVANT, "s-1")
    wait_for(lambda: serving(db))
    same = as_json(run_hook, RELEVANT, "s-2")
    assert (same["via"], same["budget"]) == ("daemon", 1500)
    changed = as_json(run_hook, RELEVANT, "s-3", BRIEFD_RECALL__MAX_TOKENS="300")
    assert (changed["via"], changed["budget"]) == ("in-process", 300)
    assert changed["sections"] and first["sections"]
    shown = run_hook("--status", env={**DAEMON, "BRIEFD_RECALL__MAX_TOKENS": "300"}).stdout
    assert (
        "  it answers with the BRIEFD_* variables of the hook that started it, not these: " in shown
    )
    assert "BRIEFD_* variables" not in run_hook("--status", env=DAEMON).stdout
    again = as_json(run_hook, RELEVANT, "s-4")  # the hook that started it still gets it
    assert again["via"] == "daemon"
    assert len(daemons(tmp_path)) == 1
