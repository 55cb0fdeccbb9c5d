"""The git routes in the real app: a push followed by a signed webhook makes new content
searchable; an unsigned (or wrongly signed) webhook is 401 and changes nothing; proposals and
sync over REST; the lifespan's poller."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient

from briefd.api import Briefd
from briefd.service import create_app
from briefd.settings import Settings, load_settings
from briefd.sources.knowledge import sync_lock
from briefd.sync.webhook import signature
from tests.service.conftest import service_config
from tests.service.live import TOKEN
from tests.sync.conftest import git_settings
from tests.sync.gitrepo import RETRY, Remote, git
from tests.sync.httpgit import AuthenticatedGit

SECRET = "webhook-secret-7d1e"
PUSH = json.dumps({"ref": "refs/heads/main", "after": "0" * 40}).encode()


@pytest.fixture
def settings(tmp_path: Path, remote: Remote) -> Settings:
    return git_settings(tmp_path, remote.url, **{"sync.webhook_secret": SECRET, "sync.interval": 0})


@pytest.fixture
def api(settings: Settings) -> Iterator[Briefd]:
    with Briefd(settings, embedder=None) as instance:
        instance.sync()
        yield instance


@pytest.fixture
def client(api: Briefd) -> Iterator[TestClient]:
    with TestClient(create_app(api, service_config())) as http:
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        yield http


def search(client: TestClient, query: str) -> list[str]:
    response = client.get("/api/search", params={"q": query, "scopes": "all"})
    assert response.status_code == 200, response.text
    return [hit["doc_path"] for hit in response.json()["hits"]]


def webhook(client: TestClient, body: bytes, sig: str | None, event: str = "push") -> object:
    headers = {"Content-Type": "application/json", "X-GitHub-Event": event}
    headers["Authorization"] = ""  # GitHub sends no bearer token
    if sig is not None:
        headers["X-Hub-Signature-256"] = sig
    return client.post("/webhook/git", content=body, headers=headers)


def eventually(check: Callable[[], bool], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return False


def test_push_then_signed_webhook_makes_content_searchable(
    client: TestClient, api: Briefd, remote: Remote
) -> None:
    assert search(client, "chargeback dispute") == []
    commit = remote.push(
        {"domain/chargebacks.md": "# Chargebacks\n\n## Disputes\nA chargeback dispute.\n"}
    )

    response = webhook(client, PUSH, signature(SECRET, PUSH))

    assert response.status_code == 202  # type: ignore[attr-defined]
    assert response.json()["sync"] in ("started", "queued")  # type: ignore[attr-defined]
    assert eventually(lambda: search(client, "chargeback dispute") == ["domain/chargebacks.md"])
    assert eventually(lambda: api.sync_status().last_commit == commit)
    status = client.get("/api/sync").json()
    assert status["last_commit"] == commit and status["last_error"] is None
    stats = client.get("/api/stats").json()
    assert {"source": "git", "last_commit": commit}.items() <= next(
        s for s in stats["sync"] if s["source"] == "git"
    ).items()


@pytest.mark.parametrize(
    "sig",
    [None, "", "sha256=" + "0" * 64, signature("wrong-secret", PUSH), "sha1=abc"],
)
def test_unsigned_or_badly_signed_webhook_changes_nothing(
    client: TestClient, api: Briefd, remote: Remote, sig: str | None
) -> None:
    before = api.sync_status()
    remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"})

    response = webhook(client, PUSH, sig)

    assert response.status_code == 401  # type: ignore[attr-defined]
    assert response.json() == {  # type: ignore[attr-defined]
        "error": "unauthorized",
        "detail": "missing or wrong X-Hub-Signature-256; sign the raw body with the webhook secret",
    }
    time.sleep(0.3)
    assert search(client, "rates refresh hourly") == []
    after = api.sync_status()
    assert (after.last_commit, after.last_sync_at, after.syncs) == (
        before.last_commit,
        before.last_sync_at,
        before.syncs,
    )


def test_every_webhook_401_carries_its_signature_challenge(
    client: TestClient, tmp_path: Path, remote: Remote
) -> None:
    """HTTP asks a WWW-Authenticate challenge of every 401: the webhook's refusals had none
    (the bearer guard's have one); theirs names the signature header, not the bearer token."""
    challenge = 'HMAC-SHA256 realm="briefd-webhook", header="X-Hub-Signature-256"'
    unsigned = webhook(client, PUSH, None)
    wrong = webhook(client, PUSH, signature("wrong-secret", PUSH))
    gitlab = client.post(
        "/webhook/git", json={}, headers={"X-Gitlab-Token": SECRET, "Authorization": ""}
    )
    off_settings = git_settings(tmp_path / "off", remote.url, **{"sync.interval": 0})
    with (
        Briefd(off_settings, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        off = http.post("/webhook/git", content=PUSH, headers={"X-Hub-Signature-256": ""})
    for response in (unsigned, wrong, gitlab, off):
        assert response.status_code == 401  # type: ignore[attr-defined]
        assert response.headers.get("www-authenticate") == challenge  # type: ignore[attr-defined]


def test_a_signature_over_a_different_body_is_refused(client: TestClient) -> None:
    other = json.dumps({"ref": "refs/heads/main"}).encode()
    assert webhook(client, PUSH, signature(SECRET, other)).status_code == 401  # type: ignore[attr-defined]


def test_a_secret_with_the_line_break_of_a_secret_file_still_checks_githubs_signature(
    tmp_path: Path, remote: Remote
) -> None:
    """A Kubernetes secret made from a file (``--from-file``) ends in a line break, which
    BRIEFD_SYNC__WEBHOOK_SECRET kept: GitHub signs with the secret as typed into its form, so
    every delivery was 401 "missing or wrong X-Hub-Signature-256" and no push synced."""
    overrides = {"db": str(tmp_path / "data" / "index.db"), "source": remote.url}
    env = {"BRIEFD_SYNC__WEBHOOK_SECRET": SECRET + "\n", "BRIEFD_SYNC__INTERVAL": "0"}
    settings = load_settings(config=None, env=env, overrides=overrides)
    with (
        Briefd(settings, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        api.sync()
        response = webhook(http, PUSH, signature(SECRET, PUSH))
        other = json.dumps({"ref": "refs/heads/main", "after": "1" * 40}).encode()
        wrong = webhook(http, other, signature(SECRET + "x", other))
    assert response.status_code == 202, response.text  # type: ignore[attr-defined]
    assert wrong.status_code == 401  # type: ignore[attr-defined]


def test_webhook_without_a_configured_secret_is_off(tmp_path: Path, remote: Remote) -> None:
    settings = git_settings(tmp_path, remote.url, **{"sync.interval": 0})
    with (
        Briefd(settings, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        api.sync()
        response = http.post("/webhook/git", content=PUSH, headers={"X-Hub-Signature-256": ""})
    assert response.status_code == 401
    assert "set sync.webhook_secret" in response.json()["detail"]


def test_ping_is_accepted_without_a_sync(client: TestClient, api: Briefd) -> None:
    runs = api.sync_status().syncs
    response = webhook(client, b"{}", signature(SECRET, b"{}"), event="ping")
    assert response.status_code == 202  # type: ignore[attr-defined]
    assert response.json()["sync"] == "skipped"  # type: ignore[attr-defined]
    assert api.sync_status().syncs == runs


def test_a_push_to_another_branch_than_the_default_syncs_nothing(
    client: TestClient, api: Briefd
) -> None:
    """No sync.branch set: the push event's repository.default_branch is the one followed."""
    runs = api.sync_status().syncs
    body = json.dumps(
        {"ref": "refs/heads/feature-x", "repository": {"default_branch": "main"}}
    ).encode()
    response = webhook(client, body, signature(SECRET, body))
    assert response.json() == {  # type: ignore[attr-defined]
        "accepted": True,
        "event": "push",
        "sync": "skipped",
        "reason": "push to refs/heads/feature-x, not to the followed branch main",
    }
    assert api.sync_status().syncs == runs


def test_a_form_encoded_delivery_is_read_as_its_json_would_be(
    client: TestClient, api: Briefd, remote: Remote
) -> None:
    """GitHub's webhook form starts at application/x-www-form-urlencoded (payload=<JSON>): such
    a push to another branch synced (every proposal branch briefd pushed, a sync each), and a
    push captured long ago and sent again under a new delivery id was not refused."""
    form = {"Content-Type": "application/x-www-form-urlencoded", "X-GitHub-Event": "push"}

    def send(event: dict[str, object]) -> dict[str, object]:
        body = urlencode({"payload": json.dumps(event)}).encode()
        headers = {**form, "Authorization": "", "X-Hub-Signature-256": signature(SECRET, body)}
        return client.post("/webhook/git", content=body, headers=headers).json()  # type: ignore[no-any-return]

    runs = api.sync_status().syncs
    other = {"ref": "refs/heads/feature-x", "repository": {"default_branch": "main"}}
    assert send(other)["reason"] == "push to refs/heads/feature-x, not to the followed branch main"
    old = {"ref": "refs/heads/main", "repository": {"pushed_at": int(time.time()) - 86_400}}
    assert send(old)["detail"].startswith("the delivery is a push from 8640")  # type: ignore[union-attr]
    assert api.sync_status().syncs == runs

    remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"})
    assert send({"ref": "refs/heads/main", "repository": {"default_branch": "main"}}) == {
        "accepted": True,
        "event": "push",
        "sync": "started",
    }
    assert eventually(lambda: search(client, "rates refresh hourly") == ["domain/fx.md"])


def test_events_of_another_repository_of_the_organisation_start_no_sync(
    tmp_path: Path, remote: Remote
) -> None:
    """An organisation's webhook sends every repository's events: only pushes were checked
    against the followed repository, so each check run, workflow run or issue anywhere in the
    organisation started a sync. Now any event of another repository is skipped with the
    reason; the followed repository's pull requests (they refresh proposals' statuses) still
    sync, and a ping (which names no repository) is still a ping."""
    forge = tmp_path / "forge"
    (forge / "acme").mkdir(parents=True)
    (forge / "acme" / "knowledge.git").symlink_to(remote.bare)
    with AuthenticatedGit(forge, "alice", TOKEN) as server:
        url = server.url("acme/knowledge.git", f"alice:{TOKEN}")
        settings = git_settings(tmp_path, url, **{"sync.webhook_secret": SECRET})
        with (
            Briefd(settings, embedder=None) as api,
            TestClient(create_app(api, service_config())) as http,
        ):
            assert api.sync().error is None
            runs = api.sync_status().syncs

            def send(event: str, payload: dict[str, object]) -> dict[str, object]:
                body = json.dumps(payload).encode()
                return webhook(http, body, signature(SECRET, body), event).json()  # type: ignore[attr-defined,no-any-return]

            website = {"repository": {"full_name": "acme/website"}}
            for event in ("check_run", "workflow_run", "issues", "pull_request"):
                assert send(event, {"action": "completed", event: {"id": 7}, **website}) == {
                    "accepted": True,
                    "event": event,
                    "sync": "skipped",
                    "reason": f"{event} event of acme/website, not of the followed repository "
                    "acme/knowledge",
                }
            assert send("ping", {"zen": "Keep it logically awesome.", "hook_id": 1})["reason"] == (
                "ping"
            )
            assert api.sync_status().syncs == runs
            ours = {"action": "closed", "repository": {"full_name": "Acme/Knowledge"}}
            assert send("pull_request", ours)["sync"] in ("started", "queued")
            assert eventually(lambda: api.sync_status().syncs == runs + 1)


def test_a_webhook_on_a_checkout_says_it_rereads_it_and_cannot_bring_the_push_in(
    tmp_path: Path, remote: Remote
) -> None:
    """A checkout is read in place and never pulled: the webhook answered "sync: started" as
    if the push would be served, and it never was."""
    settings = git_settings(tmp_path, str(remote.work), **{"sync.webhook_secret": SECRET})
    with (
        Briefd(settings, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        assert api.sync().kind == "checkout"
        runs = api.sync_status().syncs
        answer = webhook(http, PUSH, signature(SECRET, PUSH)).json()  # type: ignore[attr-defined]
        assert answer == {
            "accepted": True,
            "event": "push",
            "sync": "started",
            "note": "the source is a folder read in place (a git checkout or a plain directory), "
            "which briefd never pulls: this sync re-reads it as it is now, and a pushed commit "
            "reaches it only once the folder is updated there (git pull); set source to the "
            "repository's URL for briefd to fetch pushes itself",
        }
        assert eventually(lambda: api.sync_status().syncs == runs + 1)


def test_a_tag_push_syncs_nothing(client: TestClient, api: Briefd) -> None:
    """K3: a release tag pushed to the followed repository changes no branch."""
    runs = api.sync_status().syncs
    body = json.dumps({"ref": "refs/tags/v2.0", "repository": {"default_branch": "main"}}).encode()
    response = webhook(client, body, signature(SECRET, body))
    assert response.json()["reason"] == "push of the tag v2.0: a sync follows a branch"  # type: ignore[attr-defined]
    assert api.sync_status().syncs == runs


def test_admin_sync_runs_in_the_background(client: TestClient, api: Briefd, remote: Remote) -> None:
    remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"})
    response = client.post("/api/admin/sync")
    assert response.status_code == 202
    assert response.json()["status"]["kind"] == "clone"
    assert eventually(lambda: search(client, "rates refresh hourly") == ["domain/fx.md"])


def test_admin_sync_is_counted_once_as_itself(client: TestClient) -> None:
    """I4: the dashboard's sync button is one request, counted as admin_sync, not also as a
    GET /api/sync nobody sent (its answer carries the sync status)."""
    assert client.post("/api/admin/sync").json()["status"]["kind"] == "clone"
    text = client.get("/metrics").text
    assert 'briefd_requests_total{name="admin_sync",outcome="ok",surface="rest"} 1.0' in text
    assert 'name="sync_status"' not in text
    rows = {r["name"]: r["count"] for r in client.get("/api/stats").json()["requests"]}
    assert rows == {"admin_sync": 1}


def test_a_sync_asked_for_while_one_runs_is_queued_not_started(
    client: TestClient, api: Briefd, settings: Settings
) -> None:
    with sync_lock(settings):  # the running sync waits here (another process's sync)
        first = client.post("/api/admin/sync").json()
        assert first["sync"] == "started"
        assert eventually(lambda: api.sync_status().running)
        second = client.post("/api/admin/sync").json()
        third = client.post("/api/admin/sync").json()
    assert (second["sync"], third["sync"]) == ("queued", "queued")
    assert eventually(lambda: api.sync_status().syncs == 3 and not api.sync_status().running)


def test_admin_sync_needs_the_token(client: TestClient) -> None:
    response = client.post("/api/admin/sync", headers={"Authorization": ""})
    assert response.status_code == 401


def test_proposals_over_rest(client: TestClient, api: Briefd, remote: Remote) -> None:
    new = RETRY.replace("three", "four").lstrip("\n")
    made = client.post(
        "/api/proposals",
        json={"doc_path": "domain/retry.md", "change_description": "Four", "new_content": new},
    )
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["status"] == "pushed" and body["client"] == "rest"
    assert git(remote.bare, "show", f"{body['branch']}:domain/retry.md") + "\n" == new

    listed = client.get("/api/proposals").json()
    assert [p["id"] for p in listed["proposals"]] == [body["id"]]
    assert listed["counts"] == {"pushed": 1}
    assert client.get("/api/proposals", params={"status": "open"}).json()["proposals"] == []
    assert client.get("/api/stats").json()["proposals"]["pushed"] == 1

    # an absolute path inside the knowledge folder, as GET /api/documents takes one (it was
    # "outside every scope")
    clone = Path(str(api.last_report()["source"]))
    absolute = {"doc_path": str(clone / "domain/retry.md"), "change_description": "Five"}
    again = client.post(
        "/api/proposals", json={**absolute, "new_content": new.replace("four", "five")}
    )
    assert again.status_code == 201, again.text
    assert again.json()["doc_path"] == "domain/retry.md"

    refused = client.post(
        "/api/proposals",
        json={"doc_path": "../x.md", "change_description": "x", "new_content": "# x\n"},
    )
    assert refused.status_code == 400
    assert refused.json()["error"] == "proposal"
    assert "may not contain '..'" in refused.json()["detail"]

    remote.bare.rename(remote.bare.with_name("gone.git"))  # the remote, not the request, failed
    unreachable = client.post(
        "/api/proposals",
        json={"doc_path": "domain/retry.md", "change_description": "Five", "new_content": "# R\n"},
    )
    assert unreachable.status_code == 502
    assert unreachable.json()["error"] == "proposal_remote"
    assert unreachable.json()["detail"].startswith("git fetch failed: fatal: ")


def test_the_app_lifespan_polls_a_git_source(tmp_path: Path, remote: Remote) -> None:
    settings = git_settings(tmp_path, remote.url, **{"sync.interval": 1})
    with Briefd(settings, embedder=None) as api:
        api.sync()
        with TestClient(create_app(api, service_config())) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            remote.push({"domain/fx.md": "# FX\n\n## Rates\nRates refresh hourly.\n"})
            assert eventually(lambda: search(http, "rates refresh hourly") == ["domain/fx.md"], 5)


def test_the_app_lifespan_polls_a_plain_folder(tmp_path: Path) -> None:
    """A folder that is no git checkout (`briefd serve --source ~/notes`, a volume mounted in
    the container): a note edited or copied in was never served until a restart, whatever
    sync.interval said; a checkout's poll indexes its edits."""
    folder = tmp_path / "notes"
    (folder / "domain").mkdir(parents=True)
    (folder / "domain" / "retry.md").write_text(RETRY, encoding="utf-8")
    settings = git_settings(tmp_path, str(folder), **{"sync.interval": 1})
    with Briefd(settings, embedder=None) as api:
        api.index()
        with TestClient(create_app(api, service_config())) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            (folder / "domain" / "fx.md").write_text(
                "# FX\n\n## Rates\nRates refresh hourly.\n", encoding="utf-8"
            )
            assert eventually(lambda: search(http, "rates refresh hourly") == ["domain/fx.md"], 5)
            assert http.get("/api/sync").json()["kind"] == "directory"


def test_a_folder_missing_when_the_server_starts_is_followed_once_it_appears(
    tmp_path: Path,
) -> None:
    """A source on a mount that comes up after briefd (a network share, a volume attached
    late): the server started with the index as it was and then never polled, so nothing
    edited there was served until a restart."""
    folder = tmp_path / "notes"
    (folder / "domain").mkdir(parents=True)
    (folder / "domain" / "retry.md").write_text(RETRY, encoding="utf-8")
    settings = git_settings(tmp_path, str(folder), **{"sync.interval": 1})
    with Briefd(settings, embedder=None) as api:
        api.index()
        folder.rename(tmp_path / "away")
        with TestClient(create_app(api, service_config())) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            assert eventually(lambda: http.get("/api/sync").json()["last_error"] is not None, 5)
            assert "does not exist" in http.get("/api/sync").json()["last_error"]
            (tmp_path / "away").rename(folder)
            (folder / "domain" / "fx.md").write_text(
                "# FX\n\n## Rates\nRates refresh hourly.\n", encoding="utf-8"
            )
            assert eventually(lambda: search(http, "rates refresh hourly") == ["domain/fx.md"], 5)


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_or_blank_description_is_one_answer(client: TestClient, text: str) -> None:
    refused = client.post(
        "/api/proposals",
        json={"doc_path": "domain/retry.md", "change_description": text, "new_content": "# R\n"},
    )
    assert (refused.status_code, refused.json()) == (
        400,
        {"error": "proposal", "detail": "change_description is empty; say what changes and why"},
    )


def test_a_first_sync_that_fails_shows_its_error_without_an_index(
    tmp_path: Path, remote: Remote
) -> None:
    """No index yet and a remote that fails (moved, a token refused): the sync's record is
    kept in the index, so GET /api/sync said last_error null, last_sync_at null, and /metrics
    had no briefd_last_sync_ok, while every poll failed (only the log said why)."""
    remote.bare.rename(tmp_path / "moved.git")
    settings = git_settings(tmp_path, remote.url, **{"sync.interval": 0})
    with (
        Briefd(settings, embedder=None) as api,
        TestClient(create_app(api, service_config())) as http,
    ):
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        assert http.post("/api/admin/sync").status_code == 202
        assert eventually(lambda: http.get("/api/sync").json()["syncs"] == 1)
        status = http.get("/api/sync").json()
        metrics = http.get("/metrics").text
    assert status["last_error"].startswith("git clone failed: ")
    assert status["last_sync_at"] is not None and status["last_commit"] is None
    assert 'briefd_last_sync_ok{source="git"} 0.0' in metrics.splitlines()
    folder = settings.db.parent  # the clone's (sync.checkout_dir: <db dir>/repo)
    assert not list(folder.glob(".*.cloning")), list(folder.iterdir())  # nothing of the failed one


def test_a_gitlab_webhook_is_told_this_webhook_takes_githubs_signature(
    client: TestClient, api: Briefd
) -> None:
    """GitLab sends its secret as X-Gitlab-Token and signs nothing: the answer said to sign the
    raw body with the webhook secret, which GitLab cannot do."""
    runs = api.sync_status().syncs
    push = {"object_kind": "push", "ref": "refs/heads/main", "project": {"default_branch": "main"}}
    headers = {"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": SECRET, "Authorization": ""}
    headers["X-Gitlab-Event-UUID"] = "6b7a6b5e-5c1b-4f7e-9e53-7f6b1e0c2a11"
    response = client.post("/webhook/git", json=push, headers=headers)
    assert response.status_code == 401
    assert response.json()["detail"] == (
        "a GitLab webhook's X-Gitlab-Token is not a signature: this webhook takes GitHub's "
        "X-Hub-Signature-256 (an HMAC-SHA256 of the raw body with sync.webhook_secret); a GitLab "
        "repository is followed by polling (sync.interval)"
    )
    assert api.sync_status().syncs == runs


def test_a_signed_body_nested_too_deep_to_read_is_a_400_that_says_so(
    client: TestClient, api: Briefd
) -> None:
    """A correctly signed JSON body nested deeper than Python's JSON reader goes (RecursionError)
    was a 500 'Internal Server Error'; it is a 400 that says what is wrong, and starts no sync."""
    runs = api.sync_status().syncs
    body = b'{"ref": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    response = webhook(client, body, signature(SECRET, body))
    assert response.status_code == 400, response.text  # type: ignore[attr-defined]
    assert response.json()["detail"] == (  # type: ignore[attr-defined]
        "the delivery's JSON is nested too deeply to read; a push event is a few levels deep"
    )
    assert api.sync_status().syncs == runs


def test_sync_names_the_commit_a_checkout_was_indexed_at_before_any_sync(
    tmp_path: Path,
) -> None:
    """A local git checkout indexed by ``briefd index`` and served without polling
    (``sync.interval: 0``, or before the first poll): ``/api/health`` and ``briefd version``
    named the commit the index serves, ``GET /api/sync`` (the dashboard's sync panel) said
    ``last_commit: null``."""
    checkout = tmp_path / "knowledge"
    checkout.mkdir()
    git(checkout, "init", "--quiet", "--initial-branch=main")
    (checkout / "retry.md").write_text("# Retry\n\n## Backoff\nRetries back off.\n")
    git(checkout, "add", "-A")
    git(checkout, "commit", "--quiet", "-m", "retry notes")
    commit = git(checkout, "rev-parse", "HEAD")
    settings = git_settings(tmp_path, str(checkout), **{"sync.interval": 0})
    with Briefd(settings, embedder=None) as api:
        api.index()
        with TestClient(create_app(api, service_config())) as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            status = http.get("/api/sync").json()
            health = http.get("/api/health").json()
    assert (status["syncs"], status["last_sync_at"]) == (0, None)
    assert status["last_commit"] == commit == health["commit"]
