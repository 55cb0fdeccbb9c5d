"""O1 as the prompt hook meets it: ``BRIEFD_*`` variables in the agent's environment are
read as the command line reads them, by the hook's fast path, in-process and by its daemon."""

from __future__ import annotations

from pathlib import Path

from tests.hook.conftest import RunHook, hook_json
from tests.hook.test_daemon import daemons, db, no_daemon_left
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
