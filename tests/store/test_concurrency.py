"""A reader process querying in a loop while another process reindexes: zero errors, and it
always sees a complete index (every version of the corpus answers the query)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

from briefd.api import Briefd
from briefd.retrieval.search import SearchRequest
from tests.conftest import REPO, WriteFiles

READER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from briefd.api import Briefd
    from briefd.retrieval.search import SearchRequest
    from briefd.settings import load_settings

    db, stop = Path(sys.argv[1]), Path(sys.argv[2])
    settings = load_settings(env={}, overrides={"db": str(db), "embeddings.enabled": False})
    queries = errors = empty = 0
    messages = []
    with Briefd(settings) as api:
        while not stop.exists():
            try:
                hits = api.search(SearchRequest("settlement cutoff", scopes=("all",), top_k=50)).hits
                queries += 1
                if len(hits) < 20:
                    empty += 1
            except Exception as exc:
                errors += 1
                messages.append(repr(exc))
    print(json.dumps({"queries": queries, "errors": errors, "partial": empty, "messages": messages[:3]}))
    """
)

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from briefd.api import Briefd
    from briefd.settings import load_settings

    db, root = Path(sys.argv[1]), Path(sys.argv[2])
    settings = load_settings(
        env={}, overrides={"db": str(db), "source": str(root), "embeddings.enabled": False}
    )
    for round in range(12):
        for n in range(20):
            path = root / "domain" / f"doc{n}.md"
            path.write_text(f"# Doc {n}\\n\\n## Settlement cutoff\\n\\nRound {round} text {n}.\\n" * 3)
        with Briefd(settings) as api:
            api.index(rebuild=(round % 3 == 2))
    """
)


def test_reader_never_fails_while_another_process_reindexes(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    (root / "domain").mkdir(parents=True)
    for n in range(20):
        (root / "domain" / f"doc{n}.md").write_text(
            f"# Doc {n}\n\n## Settlement cutoff\n\nStart {n}.\n"
        )
    db, stop = tmp_path / "index.db", tmp_path / "stop"
    env = {"PYTHONPATH": str(REPO / "src")}
    subprocess.run(
        [sys.executable, "-c", WRITER.replace("range(12)", "range(1)"), str(db), str(root)],
        check=True,
        env=env,
        timeout=120,
    )
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(db), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        subprocess.run(
            [sys.executable, "-c", WRITER, str(db), str(root)], check=True, env=env, timeout=300
        )
    finally:
        stop.write_text("stop")
        out, _ = reader.communicate(timeout=120)
    result = json.loads(out)
    assert result["errors"] == 0, result["messages"]
    assert result["partial"] == 0
    assert result["queries"] > 20


def test_threads_sharing_one_api_take_turns_with_its_connection(
    api: Briefd, write_files: WriteFiles
) -> None:
    """A server's worker threads share one Briefd: their transactions must not interleave."""
    api.index(
        write_files({f"domain/d{i}.md": f"# Doc {i}\n\nrefund rule {i}\n" for i in range(20)})
    )
    failures: list[BaseException] = []
    counts = [0, 0]

    def hammer(slot: int, work: Callable[[], object]) -> None:
        deadline = time.monotonic() + 1.0
        try:
            while time.monotonic() < deadline:
                work()
                counts[slot] += 1
        except BaseException as exc:  # reported below, with the count it reached
            failures.append(exc)

    threads = [
        threading.Thread(target=hammer, args=(0, lambda: api.search(SearchRequest("refund rule")))),
        threading.Thread(target=hammer, args=(1, api.scopes)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert min(counts) > 10
