"""``briefd search``: the same ranking as the API, for people and scripts."""

from __future__ import annotations

import typer
from rich.table import Table

from briefd.cli.output import console, print_json, reported_errors
from briefd.model import SearchResult
from briefd.retrieval.search import SearchRequest


def register(app: typer.Typer) -> None:
    app.command("search")(search_command)


def split_scopes(scopes: list[str] | None) -> tuple[str, ...] | None:
    if not scopes:
        return None
    return tuple(s.strip() for item in scopes for s in item.split(",") if s.strip())


def search_command(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="What you are looking for, in your own words."),
    scopes: list[str] | None = typer.Option(
        None, "--scopes", "--scope", help="Scopes to search (repeat or comma-separate; 'all')."
    ),
    top_k: int | None = typer.Option(None, "--top-k", "-k", help="Number of hits (default 8)."),
    mode: str = typer.Option("bm25", "--mode", help="bm25 (more modes come with embeddings)."),
    query_mode: str | None = typer.Option(
        None, "--query-mode", help="text (default: punctuation escaped) or advanced (raw FTS5)."
    ),
    explain: bool = typer.Option(False, "--explain", help="Show the SQL and per-hit scores."),
    json_output: bool = typer.Option(False, "--json", help="Print hits as JSON."),
) -> None:
    """Search the index and print ranked sections."""
    with reported_errors(), ctx.obj.api(**{"search.query_mode": query_mode}) as api:
        if mode not in ("bm25", "vector", "hybrid"):
            from briefd.errors import QueryError

            raise QueryError(f"unknown --mode '{mode}'; use bm25, vector or hybrid")
        request = SearchRequest(
            query=query,
            scopes=split_scopes(scopes),
            top_k=top_k,
            mode=mode,  # type: ignore[arg-type]
            explain=explain,
        )
        result = api.search(request)
    if json_output:
        print_json(result)
    else:
        print_result(result, explain)


def print_result(result: SearchResult, explain: bool) -> None:
    if explain:
        for sql in result.sql:
            console.print(sql, markup=False)
            console.print()
    if not result.hits:
        console.print(f"No matches in scopes {', '.join(result.scopes) or '(none)'}.", markup=False)
        return
    table = Table(show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("section", overflow="fold")
    table.add_column("tokens", justify="right")
    for rank, hit in enumerate(result.hits, start=1):
        location = f"{hit.doc_path}:{hit.start_line}-{hit.end_line}"
        crumb = " > ".join((hit.title, *hit.heading_path))
        preview = " ".join(hit.content.split())[:220]
        cell = f"{location}\n{crumb}\n{preview}"
        if explain and hit.explain:
            e = hit.explain
            cell += (
                f"\nall-terms rank {e.and_rank} bm25 {_num(e.and_bm25)} · "
                f"any-term rank {e.any_rank} bm25 {_num(e.any_bm25)} · "
                + " + ".join(f"{name} {value:.5f}" for name, value in e.contributions)
            )
        table.add_row(str(rank), f"{hit.score:.4f}", cell, str(hit.tokens))
    console.print(table)
    console.print(
        f"{len(result.hits)} hits in {result.took_ms:.1f} ms · scopes {', '.join(result.scopes)} · "
        f"ranking {result.ranking_version}",
        markup=False,
    )


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
