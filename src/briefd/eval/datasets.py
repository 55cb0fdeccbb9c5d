"""Eval inputs: golden YAML query sets (section-level) and BEIR datasets (document-level)."""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from briefd.errors import EvalError
from briefd.settings.raw import DuplicateKeyError, strict_loader, yaml_fix
from briefd.text import shown

QUERY_TYPES = ("keyword", "paraphrase", "typo", "mixed-lang", "cross-lang")


@dataclass(frozen=True, slots=True)
class GoldenQuery:
    id: str
    query: str
    type: str
    expected: tuple[tuple[str, str], ...]  # (path, heading)
    line: int = 0  # where the entry starts in its file (0: not known)


@dataclass(frozen=True, slots=True)
class GoldenSet:
    name: str
    path: Path
    source: Path | None
    queries: tuple[GoldenQuery, ...]


@dataclass(frozen=True, slots=True)
class BeirSet:
    name: str
    path: Path
    corpus: tuple[tuple[str, str, str], ...]  # (_id, title, text)
    queries: tuple[tuple[str, str, str], ...]  # (_id, text, category)
    qrels: dict[str, dict[str, float]]
    qrels_file: str
    digest: str


def read_yaml(path: Path, what: str) -> Any:
    """The parsed YAML file; an unreadable or invalid one, or one giving a key twice in a
    mapping (YAML would keep the second silently), is an :class:`EvalError`."""
    try:
        text = path.read_text(encoding="utf-8")
        return yaml.load(text, strict_loader())  # a SafeLoader
    except DuplicateKeyError as exc:
        raise EvalError(
            f"{path}: {exc} in one entry: YAML would keep only the second; if a new entry "
            "starts there, begin it with '- '"
        ) from None
    except OSError as exc:
        raise EvalError(f"cannot read {what} {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise EvalError(f"{path}: not UTF-8 text; save it as UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        fix = yaml_fix(exc, text, "; fix its syntax")  # a tab, which an editor shows as spaces
        raise EvalError(f"{path} is not valid YAML{where}{fix}") from None


def check_keys(where: str, item: dict[Any, Any], text_key: str, known: set[str]) -> None:
    """Refuse an entry with keys outside ``known``: in a one-line ``{…}`` entry an unquoted
    comma ends the text and makes the rest a key of its own ("query: hi, how are you" →
    ``query: hi`` and ``how are you: null``), so a query would be measured cut short."""
    unknown = [str(k) for k in item if k not in known]
    if unknown:
        raise EvalError(
            f"{where}: unexpected key {unknown[0]!r}; if it is the rest of the {text_key} after "
            f'a comma, put the {text_key} in quotes ({text_key}: "…, …")'
        )


def load_golden(path: Path) -> GoldenSet:
    """The golden set of ``path``; every broken entry is named at once (a file with three
    took three runs to mend), each with its line."""
    data = read_yaml(path, "query file")
    if not isinstance(data, dict) or not isinstance(data.get("queries"), list):
        hint = _typo_hint(data, ("queries",)) if isinstance(data, dict) else ""
        raise EvalError(f"{path}: expected a mapping with a 'queries:' list{hint}")
    if not data["queries"]:  # scores of 0 over no query would read as a total miss
        raise EvalError(f"{path}: the 'queries:' list is empty; add {{{', '.join(GOLDEN_KEYS)}}}")
    problems = [f"{path}: {typo}" for typo in _top_level_typos(data)]
    lines = _entry_lines(path, len(data["queries"]))
    queries: list[GoldenQuery] = []
    for i, item in enumerate(data["queries"]):
        try:
            queries.append(_golden_query(path, i, item, lines[i]))
        except EvalError as exc:
            problems.append(str(exc))
    first: dict[str, int] = {}
    for query in queries:
        if query.id in first:
            problems.append(
                f"{path}:{query.line}: query id '{query.id}' is used twice (first on line "
                f"{first[query.id]}); ids must be unique"
            )
        first.setdefault(query.id, query.line)
    if problems:
        raise EvalError(all_of(problems))
    source = _find_source(path, data.get("source"))
    return GoldenSet(str(data.get("name") or path.stem), path, source, tuple(queries))


GOLDEN_KEYS = ("id", "query", "type", "expected")
TOP_KEYS = ("name", "source", "queries")
SHOWN_PROBLEMS = 20  # a file's problems named at once; the count of the rest after them


def all_of(problems: list[str]) -> str:
    """One message naming each problem on a line of its own (the first ``SHOWN_PROBLEMS``)."""
    if len(problems) == 1:
        return problems[0]
    more = len(problems) - SHOWN_PROBLEMS
    listed = problems[:SHOWN_PROBLEMS] + ([f"… and {more} more"] if more > 0 else [])
    return f"{len(problems)} problems:\n" + "\n".join(f"  {line}" for line in listed)


def _typo_of(key: object, known: tuple[str, ...]) -> str | None:
    """The known key ``key`` is one or two typos from (``sourc``, ``typ``), or None."""
    if not isinstance(key, str) or key in known:
        return None
    close = difflib.get_close_matches(key.strip().lower(), known, n=1, cutoff=0.8)
    return close[0] if close else None


def _typo_hint(item: dict[Any, Any], wanted: tuple[str, ...]) -> str:
    """`` ('typ' is not read: did you mean 'type'?)`` for a key written near a missing one."""
    for key in item:
        meant = _typo_of(key, wanted)
        if meant is not None and meant not in item:
            return f" ({key!r} is not read: did you mean {meant!r}?)"
    return ""


def _top_level_typos(data: dict[Any, Any]) -> list[str]:
    """A top-level key one typo from ``name``, ``source`` or ``queries``: ``sourc: kb`` was
    ignored without a word, and the queries were measured against the default source."""
    return [
        f"{key!r} is not read: did you mean {meant!r}?"
        for key in data
        if (meant := _typo_of(key, TOP_KEYS)) is not None and meant not in data
    ]


_WHAT = {  # what a missing key holds: a user's first set of their own was told its name alone
    "id": " (a name of the query, unique in the file)",
    "query": " (the question, as a developer would ask it)",
    "type": f" (how the query is worded, one of {', '.join(QUERY_TYPES)}: reported per type)",
    "expected": " (the sections that answer it: a list of {path, heading})",
}


def _entry_lines(path: Path, count: int) -> list[int]:
    """The line each entry of the file's ``queries:`` list starts on, as errors name it."""
    node = yaml.compose(path.read_text(encoding="utf-8"), yaml.SafeLoader)
    for key, value in node.value if isinstance(node, yaml.MappingNode) else []:
        if key.value == "queries" and isinstance(value, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value.value]
    return [0] * count  # not reached: the file was read as a mapping with that list


def _golden_query(path: Path, index: int, item: Any, line: int) -> GoldenQuery:
    where = f"{path}:{line}: query #{index + 1}"
    if not isinstance(item, dict):
        raise EvalError(f"{where}: expected a mapping with id, query, type, expected")
    missing = [k for k in GOLDEN_KEYS if k not in item]
    if missing:
        hint = _typo_hint(item, (missing[0],))
        raise EvalError(f"{where}: missing key '{missing[0]}'{_WHAT[missing[0]]}{hint}")
    # a user's own golden file may carry notes of its own; a key with no value is a cut query
    check_keys(where, {k: v for k, v in item.items() if v is None}, "query", set(GOLDEN_KEYS))
    if item["type"] not in QUERY_TYPES:
        raise EvalError(
            f"{where}: type must be one of {', '.join(QUERY_TYPES)}, got {item['type']!r}"
        )
    expected = item["expected"]
    if (
        not isinstance(expected, list)
        or not expected
        or not all(isinstance(e, dict) and "path" in e and "heading" in e for e in expected)
    ):
        raise EvalError(f"{where}: expected must be a list of {{path, heading}} entries")
    return GoldenQuery(
        _text(where, "id", item["id"], blank=False),
        _text(where, "query", item["query"], blank=False),
        str(item["type"]),
        tuple(
            (_text(where, "path", e["path"]), _text(where, "heading", e["heading"]))
            for e in expected
        ),
        line,
    )


def _text(where: str, key: str, value: Any, blank: bool = True) -> str:
    """A golden entry's text: ``query:`` left empty (YAML null) or given a list would be
    measured as the text 'None' or "['a', 'b']", a search nobody meant; ``query: ""`` failed
    mid-run, the index built, as a query that "cannot be searched" (``blank=False``)."""
    if value is None or (not blank and isinstance(value, str) and not value.strip()):
        raise EvalError(f'{where}: {key} has no value; give it one ({key}: "…")')
    if isinstance(value, bool | list | dict):
        raise EvalError(
            f'{where}: {key} must be one text, got {value!r}; put it in quotes ({key}: "…")'
        )
    return str(value)


def _find_source(path: Path, source: Any) -> Path | None:
    """``source:`` is relative to the working directory, or to a folder above the file; ``~``
    is the user's home, as in briefd.yaml's ``source:``."""
    if not isinstance(source, str):
        return None
    candidate = Path(source).expanduser()
    if candidate.is_absolute() or candidate.is_dir():
        return candidate
    for parent in path.resolve().parents:
        if (parent / source).is_dir():
            return parent / source
    return candidate


def is_beir(path: Path) -> bool:
    return (path / "corpus.jsonl").is_file() and (path / "queries.jsonl").is_file()


def load_beir(path: Path, split: str | None = None) -> BeirSet:
    """The set in ``path``; with ``split`` (``train``) scored with that split's labels and
    queries (:func:`_split_files`) and named ``<folder>:<split>``: questions a ranking change
    was never tried on, beside the test split it was measured on."""
    if not is_beir(path):
        raise EvalError(
            f"{path} is not a BEIR dataset (needs corpus.jsonl, queries.jsonl and qrels.tsv)"
        )
    qrels_path, queries_path = (
        _split_files(path, split) if split else (_qrels_path(path), path / "queries.jsonl")
    )
    corpus_bytes = _read_bytes(path / "corpus.jsonl")
    corpus = tuple(
        (str(r["_id"]), str(r.get("title") or ""), str(r.get("text") or ""))
        for _, r in _jsonl(corpus_bytes, path / "corpus.jsonl", ("_id",))
    )
    if not corpus:  # an empty index failed as a knowledge source that "does not exist"
        raise EvalError(
            f"{path / 'corpus.jsonl'} holds no document; a BEIR corpus has one JSON object a "
            'line: {"_id": …, "title": …, "text": …}'
        )
    _distinct(path / "corpus.jsonl", [doc_id for doc_id, _, _ in corpus])
    qrels, lines = _qrels(qrels_path)
    rows = _query_rows(queries_path)
    _labelled_queries_exist(qrels_path, lines, {str(r["_id"]) for r in rows}, queries_path.name)
    # as trec_eval and BEIR score: a query with no relevant document (every label 0, "judged
    # not relevant") is left out, not counted as a miss no ranking could avoid
    queries = tuple(
        (str(r["_id"]), str(r["text"]), str(r.get("category") or "all"))
        for r in rows
        if any(gain > 0 for gain in qrels.get(str(r["_id"]), {}).values())
    )
    digest = hashlib.sha256(corpus_bytes).hexdigest()
    qrels_file = qrels_path.relative_to(path).as_posix()
    name = folder_name(path) + (f":{split}" if split else "")
    return BeirSet(name, path, corpus, queries, qrels, qrels_file, digest)


def folder_name(path: Path) -> str:
    """A folder's own name, also when given as ``.`` or ``..`` (whose ``name`` is '' or '..'):
    what a set is called in the tables and its eval cache folder."""
    if path.name not in ("", ".."):
        return path.name
    return path.resolve().name or str(path)


QRELS_FILES = ("qrels.near-dup.tsv", "qrels.tsv", "qrels/test.tsv")  # the last: BEIR's own layout


def _qrels_path(path: Path) -> Path:
    """The labels to score with: a flat ``qrels.tsv`` (or its near-duplicate-aware variant),
    else the test split of a BEIR download (``qrels/test.tsv``); another split is the
    user's choice to make, never one taken for the test split without a word."""
    found = next((path / name for name in QRELS_FILES if (path / name).is_file()), None)
    if found is not None:
        return found
    splits = (
        sorted(p.name for p in (path / "qrels").glob("*.tsv")) if (path / "qrels").is_dir() else []
    )
    if splits:
        raise EvalError(
            f"{path} has no qrels.tsv or qrels/test.tsv, only the split(s) qrels/"
            f"{', qrels/'.join(splits)}; score with one by naming it (--split "
            f"{splits[0][:-4]}), or copy it to {path / 'qrels.tsv'}"
        )
    raise EvalError(
        f"{path} has no relevance labels: neither qrels.tsv nor qrels/test.tsv (BEIR's own "
        "layout); add them (query-id, corpus-id, score separated by tabs)"
    )


def _split_files(path: Path, split: str) -> tuple[Path, Path]:
    """A split's labels (``qrels.<split>.tsv``, or ``qrels/<split>.tsv`` as BEIR downloads
    lay them out) and its queries (``queries.<split>.jsonl``, else the one ``queries.jsonl``
    a BEIR download holds every split's queries in)."""
    if not split.replace("-", "").replace("_", "").isalnum():
        raise EvalError(
            f"a split is named by letters, digits, - and _ (train, dev, test), got {split!r}"
        )
    labels = (path / f"qrels.{split}.tsv", path / "qrels" / f"{split}.tsv")
    found = next((p for p in labels if p.is_file()), None)
    if found is None:
        scored = {path / name for name in QRELS_FILES if name.startswith("qrels.")}
        named = sorted(  # the files the test split is scored with are no other split
            {p.name[6:-4] for p in path.glob("qrels.*.tsv") if p not in scored}
            | {p.stem for p in path.glob("qrels/*.tsv")}
        )
        have = f"its other splits: {', '.join(named)}" if named else "it has no other split"
        raise EvalError(
            f"{path} has no labels of the split {split!r} ({labels[0].name} or qrels/"
            f"{labels[1].name}); {have} (with no split named, its test split is scored)"
        )
    queries = path / f"queries.{split}.jsonl"
    return found, queries if queries.is_file() else path / "queries.jsonl"


_QUERY = ("_id", "text")


def _distinct(path: Path, ids: list[str]) -> None:
    """Each record is one Markdown file of the eval index: a second record with the same
    file (the same ``_id``, or one differing only in characters a path cannot hold) would
    replace the first without a word, and its labels would score the wrong text."""
    seen: dict[str, str] = {}
    for doc_id in ids:
        file = beir_doc_path(doc_id)
        other = seen.get(file)
        if other is None:
            seen[file] = doc_id
            continue
        if other == doc_id:
            raise EvalError(
                f"{path}: document id '{shown(doc_id)}' is used twice; ids must be unique"
            )
        raise EvalError(
            f"{path}: document ids '{shown(other)}' and '{shown(doc_id)}' differ only in "
            "characters a file name cannot hold; rename one"
        )


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise EvalError(f"cannot read {path}: {exc.strerror}") from None


def _query_rows(path: Path) -> list[dict[str, Any]]:
    """The queries of ``queries.jsonl``: each with a text to search, each id once (a second
    query of one id was scored with the first's labels, and both were counted)."""
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for number, row in _jsonl(_read_bytes(path), path, _QUERY):
        qid, text = str(row["_id"]), row["text"]
        if isinstance(text, bool | list | dict) or text is None or not str(text).strip():
            raise EvalError(
                f"{path}:{number}: query '{shown(qid)}' has no text to search ({json.dumps(text)}); "
                "give it its question or drop the line"
            )
        if qid in seen:
            raise EvalError(
                f"{path}:{number}: query id '{shown(qid)}' is used twice (first on line "
                f"{seen[qid]}); ids must be unique"
            )
        seen[qid] = number
        rows.append(row)
    return rows


def _jsonl(data: bytes, path: Path, keys: tuple[str, ...]) -> list[tuple[int, dict[str, Any]]]:
    """The JSON objects of a JSON Lines file, each holding ``keys``, with their lines."""
    try:
        text = data.decode("utf-8-sig")  # a byte order mark (Notepad, PowerShell) is no text
    except UnicodeDecodeError:
        raise EvalError(f"{path}: not UTF-8 text; save it as UTF-8") from None
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:  # cut short, or two objects on one line
            raise EvalError(
                f"{path}:{number}: not valid JSON ({exc.msg}: column {exc.colno}); each line "
                "holds one whole JSON object"
            ) from None
        if not isinstance(row, dict):
            raise EvalError(f"{path}:{number}: not a JSON object; each line holds one")
        missing = [key for key in keys if key not in row]
        if missing:
            raise EvalError(
                f"{path}:{number}: no '{missing[0]}'; every line needs {', '.join(keys)}"
            )
        rows.append((number, row))
    return rows


def _labelled_queries_exist(
    path: Path, lines: dict[str, int], ids: set[str], queries: str = "queries.jsonl"
) -> None:
    """A label of a query that ``queries`` does not hold scores nothing: a mistyped id, or
    the labels of another split, was left out of every figure without a word. ``lines``: the
    first line of each query id the labels name, in the file's order."""
    strangers = [qid for qid in lines if qid not in ids]
    if not strangers:
        return
    first = strangers[0]
    said = f"{path}:{lines[first]}: labels query '{shown(first)}', which is not in {queries}"
    if len(strangers) == 1:
        raise EvalError(f"{said}; fix the query id or add the query")
    more = f"nor are {len(strangers) - 1} other query ids it labels"
    raise EvalError(f"{said} ({more}); fix the query ids or add the queries")


def _not_a_score(number: int, parts: list[str]) -> str:
    """Why a labels line's score is not one: a header of other names, or a TREC line."""
    said = f"score must be a number, got '{shown(parts[2])}'"
    if len(parts) == 4 and parts[1] == "0":
        return f"{said}; a TREC qrels line (query-id, 0, corpus-id, score)? drop its 2nd column"
    if number == 1:
        return f"{said}; if the line is a header, write BEIR's: query-id, corpus-id, score"
    return said


def _qrels(path: Path) -> tuple[dict[str, dict[str, float]], dict[str, int]]:
    """The labels (query id → corpus id → score) and the first line of each query id."""
    qrels: dict[str, dict[str, float]] = {}
    lines: dict[str, int] = {}
    try:
        text = _read_bytes(path).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise EvalError(f"{path}: not UTF-8 text; save it as UTF-8") from None
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split("\t")
        if number == 1 and parts[0] == "query-id":
            continue
        if not line.strip():
            continue
        if len(parts) < 3 and len(line.split()) == 3:
            parts = line.split()  # spaces for tabs (a hand-made file): three fields all the same
        if len(parts) < 3:  # left out, its query would be too (no label): a silent miss
            raise EvalError(f"{path}:{number}: {_fields(line, len(parts))}")
        try:
            qrels.setdefault(parts[0], {})[parts[1]] = float(parts[2])
        except ValueError:
            raise EvalError(f"{path}:{number}: {_not_a_score(number, parts)}") from None
        lines.setdefault(parts[0], number)
    return qrels, lines


def _fields(line: str, count: int) -> str:
    """Why a labels line with fewer than three fields cannot be read, and how to write it."""
    said = f"expected query-id, corpus-id and score separated by tabs, found {count} field"
    said += "" if count == 1 else "s"
    if " " in line.strip():
        return f"{said}; separate them with tabs, not spaces"
    return f"{said}; add the {'score' if count == 2 else 'corpus-id and score'}"


NAME_BYTES = 200  # a file name holds 255 bytes on common file systems; ".md" and room to spare


def beir_doc_path(doc_id: str) -> str:
    """Where a BEIR record lives in the eval index (one Markdown file per record). An id too
    long for a file name (a URL, say) keeps its head and gains a hash of the whole id, so two
    long ids of one head stay two files."""
    name = re.sub(r"[^\w.-]", "_", doc_id)
    if len(name.encode("utf-8")) > NAME_BYTES:
        head = name.encode("utf-8")[: NAME_BYTES - 17].decode("utf-8", "ignore")
        name = f"{head}-{hashlib.sha256(doc_id.encode('utf-8')).hexdigest()[:16]}"
    return f"domain/{name}.md"


def beir_markdown(title: str, text: str, doc_id: str) -> str:
    heading = " ".join(title.split()) or doc_id
    return f"# {heading}\n\n{text.strip()}\n"
