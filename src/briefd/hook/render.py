"""Rendering a recall's result for the hook: Claude Code's hook JSON, a ranked list for people,
the whole result as JSON (the ``<knowledge>`` block itself comes with the result, see
:mod:`briefd.recall.block`). Works on the JSON form of a result (what the server sends), so
the hook can print a server's answer without importing anything beyond the standard library."""

from __future__ import annotations

import json

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the hook start-up
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def hook_output(result: Mapping[str, Any]) -> dict[str, Any]:
    """Claude Code's ``UserPromptSubmit`` JSON output; ``{}`` adds nothing."""
    block = str(result.get("knowledge") or "")
    if not block:
        return {}
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": block}}


def terminal(result: Mapping[str, Any]) -> str:
    """A readable ranked list with scores, for a person trying the hook in a terminal."""
    sections = result.get("sections") or []
    head = (
        f"briefd recall · {len(sections)} section(s) · {result.get('tokens', 0)} tokens of "
        f"{result.get('budget', 0)} · {result.get('mode')} · via {result.get('via', '?')} · "
        f"{result.get('took_ms', 0):.1f} ms"
    )
    if result.get("confidence"):
        z = result.get("specificity")
        said = UNTIERED.get(str(result["confidence"]), str(result["confidence"]))
        head += f" · {said}" + (f" (specificity {z:.2f})" if z is not None else "")
    lines = [head]
    if not sections:
        lines.append(f"Nothing to inject: {result.get('reason') or 'no matching sections'}.")
    for rank, section in enumerate(sections, 1):
        crumb = " › ".join(
            " ".join(p.split()) for p in [section["title"], *section["heading_path"]]
        )
        where = f"{section['doc_path']}:{section['start_line']}-{section['end_line']}"
        preview = _head(" ".join(section["content"].split()), PREVIEW_CHARS)
        mark = "  related" if section.get("related_to") else ""
        mark += "  pointer (not shown)" if section.get("pointer") else ""
        lines += [
            f"{rank:>2}. {section['score']:.4f}  {where}  ({section['tokens']} tokens){mark}",
            f"    {crumb}",
            f"    {preview}",
        ]
    if result.get("already_injected"):
        lines.append(f"({result['already_injected']} matching section(s) already injected)")
    return "\n".join(lines) + "\n"


UNTIERED = {  # the confidence of an answer no tier was measured for, as the ranked list says it
    "keyword": "keyword match, untiered",
    "untiered": "untiered (no specificity calibration)",
}
PREVIEW_CHARS = 160  # of a section's text the ranked list shows


def _head(text: str, limit: int) -> str:
    """``text`` up to ``limit`` code points, cut where every character stays whole (a flag, an
    emoji ZWJ sequence, a letter with its marks: :func:`briefd.text.whole_characters`)."""
    if len(text) <= limit:
        return text
    from briefd.text import whole_characters  # here: the hook's other outputs never need it

    return text[: whole_characters(text, limit)].rstrip()


def to_json(result: Mapping[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False, indent=2) + "\n"


NOT_RUNNING = {  # ``briefd recall --status`` when no daemon runs, by why
    "starting": "starting",
    "no-index": (
        "not running, and none starts: the index below does not exist yet (build it with "
        "`briefd index --source DIR`; until then prompts get nothing)"
    ),
    "off": "off (recall.daemon is false): every prompt is answered in-process",
    "unsafe": (
        "none is asked or started: {error}; remove it or set XDG_RUNTIME_DIR (prompts are "
        "answered in-process meanwhile)"
    ),
    "no-lock": (
        "not running, and none starts: {error}; prompts are answered by keywords in-process "
        "(recall.daemon: false answers with the model, loaded for every prompt)"
    ),
}
SERVED = {  # …and a ``briefd serve`` answers the prompts
    **NOT_RUNNING,
    "stopped": "not running (a prompt starts it only when the server does not answer)",
    "no-index": "not running, and none starts: the index below does not exist yet",
    "off": "off (recall.daemon is false): a prompt the server does not answer is answered "
    "in-process",
}


def daemon_status(report: Mapping[str, Any]) -> str:
    """``briefd recall --status`` for people."""
    served = report.get("server")
    head = (
        f"recall server: {served} answers this project's prompts (the daemon below is asked "
        "only when it does not)\n"
        if served
        else ""
    )
    if report.get("server_refused"):
        head += f"recall server: {report['server_refused']}\n"
    return head + _daemon(report, bool(served))


def _daemon(report: Mapping[str, Any], served: bool) -> str:
    state = report.get("state")
    if state == "failed":
        return (
            f"recall daemon: failed ({report['error']}); prompts are answered in-process, and "
            f"the next one after {report['retry_in_s']} s starts it again (at once after an "
            "edit of the settings file, `briefd recall --stop` or a `briefd index` run)\n"
            f"  index  {report['index']}\n  log    {report['log']}\n"
        )
    if state == "wedged":
        return (
            f"recall daemon: running but not answering (pid {report['pid'] or '?'}); a prompt "
            f"waits 1 s for it, then gets nothing, and the third in a row ends it: `briefd "
            f"recall --stop` ends it now, and the next prompt starts a new one\n  index  {report['index']}\n  log    {report['log']}\n"
        )
    if state == "older":
        return (
            f"recall daemon: an earlier briefd's (pid {report['pid'] or '?'}), which this one "
            "does not use: the next prompt ends it and starts a new one (`briefd recall --stop` "
            f"ends it now)\n  index  {report['index']}\n  log    {report['log']}\n"
        )
    if state == "starting" and report.get("pid"):
        return (
            f"recall daemon: starting (pid {report['pid']}, since {report.get('since') or '?'}):"
            " loading its index and model; prompts are answered in-process until it listens "
            f"(`briefd recall --stop` ends it)\n  index  {report['index']}\n  log    {report['log']}\n"
        )
    if state != "running":
        what = (SERVED if served else NOT_RUNNING).get(
            str(state), "not running (the next prompt starts it)"
        )
        what = what.format(error=report.get("error", ""))
        return f"recall daemon: {what}\n  index  {report['index']}\n  log    {report['log']}\n"
    idle = f"idle {report['idle_s']:.0f} s (exits after {report['idle_minutes']:g} min)"
    text = (
        f"recall daemon: running · pid {report['pid']} · {report['mode']} · "
        f"{report['requests']} prompt(s) · {idle} · RSS {report['rss_mb']:.0f} MB\n"
        f"  index   {report['index']}\n"
        f"  socket  {report['socket']}\n"
        f"  log     {report['log']}\n"
        f"  started {report['started']}\n"
    )
    if report.get("fallback"):  # the embedding model failed on the last prompt
        text += f"  {report['fallback']}\n"
    if "yours" in report:  # another project's: this one's prompts are answered in-process
        theirs, yours = report.get("settings") or "none", report["yours"] or "none"
        text += (
            f"  it answers with the settings file {theirs}, not this folder's ({yours}): "
            "prompts here are answered in-process (BM25) while it runs\n"
        )
    if report.get("other_variables"):  # started by a hook whose BRIEFD_* variables differ
        text += (
            "  it answers with the BRIEFD_* variables of the hook that started it, not these: "
            "prompts here are answered in-process (BM25) while it runs (`briefd recall --stop` "
            "ends it; the next prompt starts one with these)\n"
        )
    return text
