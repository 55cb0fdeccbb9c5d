"""``briefd bundle`` as a real process: bytes on stdout, summary on stderr, JSON, --base."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from briefd.tokens import count_tokens
from tests.cli.test_cli import briefd, indexed_folder

TASK = "how do partial refunds work"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_folder(tmp_path_factory, "bundle-cli")


def test_bundle_prints_the_block_and_a_summary(indexed: Path) -> None:
    first = briefd("bundle", TASK, "--max-tokens", "900", cwd=indexed)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("> domain/refunds.md:")
    assert " · Refunds and partial refunds › " in first.stdout.splitlines()[0]
    assert "· compiled" in first.stderr and "/900 tokens (cl100k_base" in first.stderr
    second = briefd("bundle", TASK, "--max-tokens", "900", cwd=indexed)
    assert second.stdout == first.stdout
    assert "· cached" in second.stderr
    bundle_id = first.stderr.split()[1]

    delta = briefd("bundle", TASK, "--max-tokens", "900", "--base", bundle_id, cwd=indexed)
    assert delta.returncode == 0 and delta.stdout == ""
    assert f"delta from {bundle_id}: " in delta.stderr and " 0 replaced, 0 removed" in delta.stderr


def test_bundle_json_and_paths(indexed: Path) -> None:
    result = briefd(
        "bundle",
        "chargeback evidence deadline",
        "--paths",
        "services/payment-gateway/internal/refunds/a.go",
        "--mode",
        "manifest",
        "--json",
        cwd=indexed,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["schema_version"] == 2 and data["mode"] == "manifest"
    assert data["items"][0]["location"]["path"] == "domain/refunds.md"
    assert data["items"][0]["tier"] == "governed" and "content" not in data["items"][0]
    assert data["diagnostics"]["estimator"].startswith("cl100k_base")
    assert "exclusions" in data["diagnostics"]  # --json is the verbose response


@pytest.mark.parametrize("mode", ["package", "manifest"])
def test_a_package_on_stdout_stays_within_its_tokens_and_budget(indexed: Path, mode: str) -> None:
    """What ``--mode package`` prints is what the summary's tokens count and the budget bounds:
    the answer as compact JSON, in the order MCP and REST send it. It was printed indented
    with sorted keys, 15% more tokens than it reported, over the budget at 2,000."""
    result = briefd("bundle", TASK, "--max-tokens", "2000", "--mode", mode, cwd=indexed)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert count_tokens(result.stdout) <= data["tokens"] <= 2000 * 0.95, result.stderr
    assert list(data)[:4] == ["schema_version", "bundle_id", "mode", "tokens"]
    assert result.stdout == json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
    assert f" · {data['tokens']}/2000 tokens " in result.stderr


def test_a_package_on_stdout_has_the_figures_warnings_and_marks_of_its_answer(
    indexed: Path,
) -> None:
    """The JSON ``--mode package`` prints was the package as packed: a context over its hard
    limit printed tokens 2600 and overage 600 (no warning) while the summary, REST and MCP
    said 2706 and 706 with the warning that counts for the difference, and a full answer
    against an unknown base was not marked recovered."""
    over = briefd(
        "context", "domain/refunds.md", "--max-tokens", "500", "--mode", "package", cwd=indexed
    )
    assert over.returncode == 0, over.stderr
    data = json.loads(over.stdout)
    verbose = json.loads(
        briefd(
            "context",
            "domain/refunds.md",
            "--max-tokens",
            "500",
            "--mode",
            "package",
            "--json",
            cwd=indexed,
        ).stdout
    )
    figures = ("tokens", "budget_exceeded", "overage", "warnings")
    assert {k: data.get(k) for k in figures} == {k: verbose[k] for k in figures}
    assert f" · {data['tokens']}/500 tokens " in over.stderr
    assert data["tokens"] <= 2000 and not data["budget_exceeded"]  # cut at the hard limit
    assert data["warnings"][0].startswith("the target domain/refunds.md is over hard_limit ")
    unknown = ("--mode", "manifest", "--base", "0123456789abcdef")
    recovered = briefd("bundle", TASK, *unknown, cwd=indexed)
    assert json.loads(recovered.stdout)["recovered"] is True, recovered.stdout


def test_an_absolute_path_in_this_repository_is_read_from_its_root(indexed: Path) -> None:
    """An editor's "copy path" is absolute: it was read as a path from the root
    (tmp/…/services/…), which no anchored refs covers, and the governing document was
    silently left out. Inside the repository the command runs in, it is made relative."""
    code = indexed / "services" / "payment-gateway" / "internal" / "refunds" / "a.go"
    bundle = ("bundle", "--paths", str(code), "--mode", "manifest")
    for args in (bundle, ("search", "refund", "--paths", str(code))):
        result = briefd(*args, "--json", cwd=indexed)
        assert result.returncode == 0, result.stderr
        data = json.loads(result.stdout)
        first = data["items"][0] if args[0] == "bundle" else data["hits"][0]
        path = first["location"]["path"] if args[0] == "bundle" else first["doc_path"]
        assert path == "domain/refunds.md", (args[0], first)


def test_paths_alone_are_not_called_unrelated_to_the_knowledge(indexed: Path) -> None:
    """No task beside --paths: nothing is searched, the governing documents are the bundle;
    the summary never says the relevance gate found the task unrelated (B1, R4)."""
    code = "services/payment-gateway/internal/refunds/a.go"
    result = briefd("bundle", "--paths", code, "--json", cwd=indexed)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["items"][0]["tier"] == "governed" and data["diagnostics"]["gate"] == "off"
    assert "unrelated" not in result.stderr and "relevance gate" not in result.stderr


def test_bundle_bad_mode_is_one_line(indexed: Path) -> None:
    result = briefd("bundle", TASK, "--format", "yaml", cwd=indexed)
    assert result.returncode == 2  # a mistyped value, as click's own
    assert result.stderr.strip() == (
        "error: Invalid value for '--mode': 'yaml'; use markdown, package, manifest; "
        "see `briefd bundle -h`"
    )


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_task_fails_as_a_blank_search_does(indexed: Path, blank: str) -> None:
    """`briefd bundle ""` was a usage error, exit 2 ("Missing argument 'task'"), while
    `briefd search ""` exits 1 saying the query has no words: a task given blank is a value
    that goes wrong as the command runs (README: exit 1), said as REST and MCP say it. With no
    TASK, --issue nor --paths it is still a missing argument, exit 2."""
    searched = briefd("search", blank, "--json", cwd=indexed)
    assert (searched.returncode, searched.stdout) == (1, "")
    assert searched.stderr == "error: the query has no words to search for; type some words\n"
    for args in [("bundle", blank), ("bundle", blank, "--json"), ("bundle", "--", blank)]:
        result = briefd(*args, cwd=indexed)
        assert (result.returncode, result.stdout, result.stderr) == (
            1,
            "",
            "error: the task description is empty; describe the task (or pass an issue, or "
            "paths)\n",
        )
    missing = briefd("bundle", "--json", cwd=indexed)
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr.startswith("error: Missing argument 'task'")


def test_context_prints_the_document_then_its_dependency(indexed: Path) -> None:
    money, adr = "domain/currency-and-rounding.md", "domain/adr/0004-integer-minor-units.md"
    result = briefd("context", money, "--task", "rounding", "--max-tokens", "4000", cwd=indexed)
    assert result.returncode == 0, result.stderr
    sources = [line.split(" · ")[0] for line in result.stdout.splitlines() if line.startswith("> ")]
    assert sources[0].startswith(f"> {money}:")
    first_other = next(s for s in sources if not s.startswith(f"> {money}:"))
    assert first_other.startswith(f"> {adr}:")
    assert "/4000 tokens" in result.stderr

    as_json = briefd(
        "context", money, "--mode", "manifest", "--max-tokens", "4000", "--json", cwd=indexed
    )
    data = json.loads(as_json.stdout)
    structural = [i for i in data["items"] if i["tier"] == "structural"]
    assert data["target"] == money and data["budget_exceeded"] is False
    assert data["items"][0]["tier"] == "mandatory"
    assert structural[0]["reasons"] == [f"depends_on of {money} (front matter)"]
    assert structural[0]["location"]["path"] == adr and "content" not in structural[0]

    capped = briefd("context", money, "--hard-limit", "300", "--max-tokens", "300", cwd=indexed)
    assert capped.returncode == 0
    assert f"warning: the target {money} is over hard_limit 300 " in capped.stderr
    assert "this answer holds none of it" in capped.stderr and not capped.stdout.strip()

    missing = briefd("context", "domain/nope.md", cwd=indexed)
    assert missing.returncode == 1
    assert missing.stderr.startswith("error: no document 'domain/nope.md' in scopes")


def test_search_and_bundle_take_tags(indexed: Path) -> None:
    found = briefd("search", "retry", "--tags", "webhooks", "--json", cwd=indexed)
    assert found.returncode == 0, found.stderr
    paths = {h["doc_path"] for h in json.loads(found.stdout)["hits"]}
    assert paths == {"domain/merchant-webhooks.md"}
    bundle = briefd("bundle", "retry", "--tags", "refunds", "--mode", "manifest", cwd=indexed)
    listed = {i["location"]["path"] for i in json.loads(bundle.stdout)["items"]}
    assert listed == {"domain/refunds.md"}
