"""The pages the server ships (dashboard, setup) are well-formed HTML: every container element
that opens closes, in order. A browser forgives an unclosed <section> by nesting the rest of
the page in it, which shifts styles and headings without any error to notice."""

from __future__ import annotations

from html.parser import HTMLParser
from importlib.resources import files

import pytest
from fastapi.testclient import TestClient

PAGES = ("dashboard.html", "setup.html")
CONTAINERS = {"main", "section", "div", "ul", "ol", "pre", "table", "form", "details", "nav"}


class Nesting(HTMLParser):
    """The container elements still open, and the mismatches met."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[tuple[str, int]] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in CONTAINERS:
            self.open.append((tag, self.getpos()[0]))

    def handle_endtag(self, tag: str) -> None:
        if tag not in CONTAINERS:
            return
        if not self.open or self.open[-1][0] != tag:
            inner = f"<{self.open[-1][0]}> of line {self.open[-1][1]}" if self.open else "nothing"
            self.problems.append(f"line {self.getpos()[0]}: </{tag}> closes {inner}")
            return
        self.open.pop()


@pytest.mark.parametrize("page", PAGES)
def test_every_container_that_opens_closes(page: str) -> None:
    nesting = Nesting()
    nesting.feed((files("briefd.service") / "static" / page).read_text(encoding="utf-8"))
    nesting.close()
    unclosed = [f"<{tag}> of line {line} never closes" for tag, line in nesting.open]
    assert nesting.problems + unclosed == []


def test_the_dashboard_is_served_as_one_page_with_its_parts_in_place(client: TestClient) -> None:
    """dashboard.html (~700 lines) is kept as its markup and a file per part (its styles, its
    figures, knowledge health, search, start-up), served as the one page it was."""
    served = client.get("/").text
    assert "<!-- inline:" not in served
    static = files("briefd.service") / "static"
    parts = [p.name for p in static.iterdir() if p.name.startswith("dashboard")]
    assert sorted(parts) == [
        "dashboard-core.js",
        "dashboard-health.js",
        "dashboard-search.js",
        "dashboard-start.js",
        "dashboard.css",
        "dashboard.html",
    ]
    for name in (p for p in parts if p != "dashboard.html"):
        assert (static / name).read_text(encoding="utf-8").rstrip("\n") in served, name
    script = served.index('<script>\n"use strict";\n// the dashboard: the token')
    assert served.index("function renderHealth(") > script
    assert served.index("async function find(") > served.index("function renderHealth(")
    assert served.rstrip().endswith("start();\n</script>\n</body>\n</html>")
