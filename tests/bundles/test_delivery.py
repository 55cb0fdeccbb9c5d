"""What a client is handed of a bundle's sections (B4, B5): a delta replaces what it holds when
the location or date it shows changed, a cut head never ends on an empty code fence and says in
which scope the rest is, and a tracker issue is sent once."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from briefd.api import Briefd
from briefd.bundles import BundleRequest
from briefd.bundles.measure import measure
from briefd.bundles.model import Candidate
from briefd.bundles.pack import closed_blocks, effective_budget, pack
from briefd.settings import BundleSettings
from tests.conftest import WriteFiles

WOMBATS = """\
# Wombats

## Burrows

Wombats dig long burrows with their claws and sleep in them by day.

## Diet

Wombats eat grasses, roots and bark, and drink little water.
"""
KOALAS = "# Koalas\n\n## Koala sleep\n\nKoalas sleep most of the day in the wombat forest.\n"
MAY_2031 = 1_936_000_000  # 2031-05-08: a day other than the base's
JUNE_2031 = MAY_2031 + 30 * 86_400


def _at(path: Path, text: str, when: float) -> None:
    path.write_text(text, encoding="utf-8")
    os.utime(path, (when, when))


def _ops(api: Briefd, request: BundleRequest) -> dict[str, str]:
    """{doc path and first line: op} of the delta against ``request.base``."""
    bundle = api.compile_bundle(request)
    assert bundle.delta is not None and not bundle.recovered
    where = {i.chunk_id: f"{i.doc_path}:{i.start_line}" for i in bundle.items}
    return {where[e.chunk_id]: e.op for e in bundle.delta.entries}


def test_a_section_that_moved_is_replaced_one_only_redated_is_reused(
    api: Briefd, write_files: WriteFiles
) -> None:
    root = write_files({"domain/koalas.md": KOALAS})
    wombats = root / "domain" / "wombats.md"
    _at(wombats, WOMBATS, MAY_2031)
    os.utime(root / "domain" / "koalas.md", (MAY_2031, MAY_2031))
    api.index()
    request = BundleRequest("wombats burrows diet koalas sleep", max_tokens=1000)
    base = api.compile_bundle(request)
    assert {i.doc_path for i in base.items} == {"domain/wombats.md", "domain/koalas.md"}
    again = replace(request, base=base.bundle_id)

    # a line added to Burrows, same day: Diet's content is unchanged but it moved down a line
    _at(wombats, WOMBATS.replace("by day.\n", "by day.\nThey share them.\n"), MAY_2031)
    api.index()
    assert _ops(api, again) == {
        "domain/wombats.md:3": "replace",  # its content changed
        "domain/wombats.md:8": "replace",  # moved from line 7: the client's location is stale
        "domain/koalas.md:3": "reuse",
    }
    moved = next(i for i in api.compile_bundle(request).items if i.heading_path == ("Diet",))
    assert (moved.start_line, moved.end_line) == (8, 10)

    # a word changed in Burrows on another day: Diet is where it was; only the document's
    # date moved, and re-sending every unchanged section for it would spend the delta's saving
    latest = api.compile_bundle(request)
    _at(wombats, WOMBATS.replace("by day.\n", "by day.\nThey share dens.\n"), JUNE_2031)
    api.index()
    assert _ops(api, replace(request, base=latest.bundle_id)) == {
        "domain/wombats.md:3": "replace",
        "domain/wombats.md:8": "reuse",
        "domain/koalas.md:3": "reuse",
    }
    nothing = api.compile_bundle(replace(request, base=api.compile_bundle(request).bundle_id))
    assert nothing.delta is not None and {e.op for e in nothing.delta.entries} == {"reuse"}


def test_a_head_cut_after_a_fence_opens_leaves_no_empty_fence(
    api: Briefd, write_files: WriteFiles
) -> None:
    intro = " ".join(f"The wombat ledger batch {i} settles overnight." for i in range(8))
    code = "\n".join(
        f"settle_wombat_batch(batch_{i}, currency='EUR', window='overnight')  # step {i}"
        for i in range(10)
    )
    write_files(
        {
            "projects/burrow/payouts.md": (
                f"# Payouts\n\n## Wombat ledger batches\n\n{intro}\n\n```python\n{code}\n```\n"
            )
        }
    )
    api.index()
    marker = (
        'read the rest with get_document("projects/burrow/payouts.md", start_line=3, '
        'scopes=["projects/burrow"])]'
    )
    for budget in range(300, 324, 3):  # heads that end on the first code line, or just before
        request = BundleRequest("wombat ledger", max_tokens=budget, scopes=("projects/burrow",))
        head = api.compile_bundle(request).items[0]
        assert head.truncated and head.content.endswith(marker), budget
        fences = [line for line in head.content.splitlines() if line.startswith("```")]
        assert fences in ([], ["```python", "```"]), (budget, head.content)
        assert "```python\n```" not in head.content, budget
        if fences:  # closed around the part of the first line that fits
            inside = head.content.split("```python\n")[1].split("\n```")[0]
            assert inside and code.startswith(inside) and "\n" not in inside, (budget, inside)


def test_closed_blocks_drops_a_fence_left_with_nothing_in_it() -> None:
    assert closed_blocks("Intro\n\n```json") == "Intro"
    assert closed_blocks("Intro\n\n> ```json\n> ") == "Intro"
    assert closed_blocks("Intro\n\n```json\n{") == "Intro\n\n```json\n{\n```"
    assert closed_blocks("Intro\n\n<!-- note") == "Intro\n\n<!-- note\n-->"  # kept: it says so


def test_closed_blocks_leaves_a_fence_its_list_item_or_quote_ended() -> None:
    """A fence never closed in a list item ends with the item; a closing line written after the
    text that follows opened a fence there, and every later section was read as code."""
    assert closed_blocks("- ```sh\n  run\nafter") == "- ```sh\n  run\nafter"
    assert closed_blocks("- ```sh\n  run\n\n- next") == "- ```sh\n  run\n\n- next"
    assert closed_blocks("> ```\n> code\n\nafter") == "> ```\n> code\n\nafter"
    assert closed_blocks("- item\n\n  ```sh\n  run") == "- item\n\n  ```sh\n  run\n  ```"
    assert closed_blocks("> ```\n> code") == "> ```\n> code\n> ```"


def test_a_tracker_issue_is_named_by_its_key_and_sent_once(example: Briefd) -> None:
    one_line = "PAY-12 Partial refunds fail for EUR payments"
    bundle = example.compile_bundle(BundleRequest("", max_tokens=1500, issue=one_line))
    assert bundle.text.startswith(f"> tracker issue · PAY-12\n\n{one_line}\n\n> ")
    assert bundle.text.count("Partial refunds fail for EUR") == 1
    keyless = "Partial refunds fail for EUR payments"
    bundle = example.compile_bundle(BundleRequest("", max_tokens=1500, issue=keyless))
    assert bundle.text.startswith(f"> tracker issue\n\n{keyless}\n\n> ")
    assert bundle.text.count(keyless) == 1


def test_a_package_cut_to_its_budget_is_never_dropped_for_its_brackets() -> None:
    """The head of a long section is cut to what is left; the package's ``[`` and ``]`` are
    reserved first, so the whole still fits and the section is not dropped for a token or two
    (one budget in fourteen gave an empty package)."""
    rules = "\n".join(
        f"- Attempt {n}: wait {2**n} seconds, then retry the soft decline with the same key."
        for n in range(1, 60)
    )
    candidate = Candidate(
        "c1",
        "domain/retry.md",
        "domain",
        "Retry policy",
        ("Soft declines",),
        rules,
        1.0,
        "ranked",
        ("matched",),
        5,
        64,
        "2026-03-10T09:00:00+00:00",
    )
    sizes, settings = measure("package"), BundleSettings()
    for budget in range(205, 330, 2):  # without the reserve: empty at 212, 236, 258…
        packed = pack([candidate], budget, settings, sizes)
        assert packed.items, (budget, packed.exclusions)
        assert sizes.whole(packed.items) <= effective_budget(budget, settings), budget
