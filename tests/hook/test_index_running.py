from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from briefd.settings import Settings
from tests.hook.conftest import RunHook, hook_json

LEDGER = "# Ledger {n}\n\nLedger posting of settlement batch {n} runs after the payout cut-off.\n"


REFUNDS = "# Refund window\n\nA refund is accepted within 30 days of the card capture.\n"


def _stopped_in_its_stages(run: subprocess.Popen[str], lock: Path) -> str:
    """Stop the index run ``run`` (SIGSTOP) once its lock file names a stage; that line."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and run.poll() is None:
        try:
            line = lock.read_text(encoding="ascii")
        except OSError:
            line = ""
        if len(line.split()) >= 5:
            os.kill(run.pid, signal.SIGSTOP)
            if len(lock.read_text(encoding="ascii").split()) >= 5:  # not stopped mid-write
                return line
            os.kill(run.pid, signal.SIGCONT)
        time.sleep(0.005)
    raise AssertionError(f"the index run ended or never wrote a stage: {run.communicate()}")


def test_a_prompt_during_a_first_index_run_says_it_is_building(
    settings: Settings, tmp_path: Path, run_hook: RunHook
) -> None:
    """A prompt while the first `briefd index` built the index was told "no document is
    indexed yet; run `briefd index`": the user had just run it. The reason now says a run is
    building the index, how far it is, and that prompts get knowledge once it finishes."""
    source = tmp_path / "knowledge" / "domain"
    source.mkdir(parents=True)
    for n in range(1500):
        (source / f"ledger-{n}.md").write_text(LEDGER.format(n=n), encoding="utf-8")
    (source / "refunds.md").write_text(REFUNDS, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIEFD_")}
    env |= {"BRIEFD_DB": str(settings.db), "BRIEFD_EMBEDDINGS__ENABLED": "false"}
    run = subprocess.Popen(
        [sys.executable, "-m", "briefd", "index", "--source", str(source.parent)],
        cwd=tmp_path, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        _stopped_in_its_stages(run, settings.db.with_name(settings.db.name + ".index.lock"))
        answer = json.loads(run_hook("--json", payload=hook_json("how is a ledger posted")).stdout)
    finally:
        os.kill(run.pid, signal.SIGCONT)
    err = run.communicate(timeout=120)[1]
    assert run.returncode == 0, err
    assert answer["sections"] == []
    assert re.fullmatch(
        rf"no document is indexed yet: an index run \(pid {run.pid}, for \d+ s, "
        r"(scan|parse|write|postings) \d+/1501\) is building the index now; prompts get "
        r"knowledge once it finishes",
        answer["reason"],
    ), answer["reason"]
    after = run_hook("--json", payload=hook_json("how long is the refund window after capture"))
    assert [s["doc_path"] for s in json.loads(after.stdout)["sections"]] == ["domain/refunds.md"]
