"""The benchmark's knowledge: a sample of real Markdown docs, its retitled copies, and queries."""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from briefd.markdown.document import parse_document
from briefd.markdown.frontmatter import split_front_matter
from briefd.settings import Settings
from briefd.tokens import count_tokens

_CHUNKING = Settings().chunking
_TITLE_KEY = re.compile(r"title\s*:")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_LINK = re.compile(r"!?\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])")
_MARKUP = re.compile(r"[`*>#|]|\{[^}]*\}")
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")

# Questions no Node.js or Docker page answers (the relevance gate should return nothing).
OFF_TOPIC = (
    "best time of year to plant garlic",
    "how long should I boil an egg for a runny yolk",
    "who won the world cup in 1998",
    "recipe for a classic french onion soup",
    "how to remove red wine stains from a carpet",
    "what is the tallest mountain in africa",
    "exercises to strengthen the lower back",
    "how do I descale an espresso machine",
    "meaning of the word serendipity",
    "cheap ways to heat a drafty apartment",
    "how many players are on a rugby union team",
    "when was the eiffel tower built",
    "how to repot an orchid",
    "which wine goes with grilled salmon",
    "tips for a first marathon",
    "how to fold a fitted sheet",
    "what causes the northern lights",
    "easy card games for a family evening",
    "how to care for a cast iron pan",
    "distance from the earth to the moon",
    "how to stop a puppy biting",
    "what to pack for a week of skiing",
    "history of the printing press",
    "how to make cold brew coffee at home",
    "symptoms of vitamin d deficiency",
    "how do bees make honey",
    "best beginner watercolor techniques",
    "how to write a condolence letter",
    "why is the sky blue during the day",
    "how to patch a bicycle inner tube",
    "good names for a golden retriever",
    "how to negotiate the price of a used car",
    "what is the plot of hamlet",
    "how to get rid of fruit flies in the kitchen",
    "rules of beach volleyball",
    "how to say thank you in japanese",
    "what is a good bedtime routine for toddlers",
    "how to grow basil indoors in winter",
    "famous paintings by vincent van gogh",
    "how to change a flat tyre on a car",
)


@dataclass(frozen=True, slots=True)
class SourceDoc:
    rel: str  # path under the corpus root, e.g. nodejs-18.20.4-api-md/fs.md
    text: str
    title: str
    chunks: int
    headings: tuple[str, ...]
    sentences: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Sample:
    docs: tuple[SourceDoc, ...]

    @property
    def chunks(self) -> int:
        return sum(d.chunks for d in self.docs)

    @property
    def key(self) -> str:
        """Changes whenever a file of the sample does."""
        digest = hashlib.sha256()
        for doc in self.docs:
            digest.update(f"{doc.rel}\x00{doc.text}\x00".encode())
        return digest.hexdigest()[:16]


def select_sample(root: Path, minimum: int, seed: int) -> Sample:
    """Whole files, in a seeded random order, until they make at least ``minimum`` chunks
    (a file that would overshoot by more than 5% is passed over while others remain)."""
    paths = sorted(root.rglob("*.md"))
    random.Random(seed).shuffle(paths)
    docs: list[SourceDoc] = []
    passed: list[SourceDoc] = []
    for path in paths:
        if sum(d.chunks for d in docs) >= minimum:
            break
        doc = _read(root, path)
        if sum(d.chunks for d in docs) + doc.chunks > minimum * 1.05:
            passed.append(doc)
            continue
        docs.append(doc)
    for doc in sorted(passed, key=lambda d: d.chunks):
        if sum(d.chunks for d in docs) >= minimum:
            break
        docs.append(doc)
    return Sample(tuple(sorted(docs, key=lambda d: d.rel)))


def _read(root: Path, path: Path) -> SourceDoc:
    rel = path.relative_to(root).as_posix()
    text = path.read_text(encoding="utf-8")
    doc = parse_document(
        f"domain/{rel}",
        text,
        "domain",
        "",
        count_tokens,
        _CHUNKING.target_tokens,
        _CHUNKING.max_tokens,
    )
    headings = tuple(_clean(h.text) for h in doc.headings if h.level >= 2)
    sentences = tuple(s for chunk in doc.chunks for s in _sentences(chunk.content))
    return SourceDoc(rel, text, doc.title, len(doc.chunks), headings, sentences)


def write_tree(sample: Sample, root: Path, label: str | None = None) -> None:
    """The sample's files under ``root``; with ``label``, every title starts with it."""
    for doc in sample.docs:
        target = root / doc.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(doc.text if label is None else retitle(doc, label), encoding="utf-8")


def retitle(doc: SourceDoc, label: str) -> str:
    """The document under the title ``f"{label} {title}"`` and otherwise unchanged.

    A front-matter title wins over the H1 and the file name, so setting one changes the
    passage text (hence the embed hash) of every chunk, and neither chunk boundaries nor
    contents.
    """
    wanted = f"{label} {doc.title}"
    line = "title: " + json.dumps(wanted, ensure_ascii=False)
    lines = doc.text.split("\n")
    split = split_front_matter(doc.text)
    if split.body_start_line > 1 and not split.problems:
        closing = split.body_start_line - 2
        found = next((i for i in range(1, closing) if _TITLE_KEY.match(lines[i])), None)
        if found is None:
            lines.insert(1, line)
        else:
            lines[found] = line
    else:
        lines[:0] = ["---", line, "---"]
    text = "\n".join(lines)
    got = parse_document(f"domain/{doc.rel}", text, "domain", "", len).title
    if got != wanted:
        raise RuntimeError(f"retitling {doc.rel} gave the title {got!r}, not {wanted!r}")
    return text


def make_queries(sample: Sample, count: int, seed: int) -> list[str]:
    """``count`` distinct queries: section headings and sentence openings of the sample's docs
    in a seeded order, alternating, with an off-topic question every 25th."""
    rng = random.Random(seed)
    headings = [h for d in sample.docs for h in d.headings if 1 <= len(h.split()) <= 12]
    sentences = [s for d in sample.docs for s in d.sentences]
    rng.shuffle(headings)
    rng.shuffle(sentences)
    sources = [iter(headings), iter(sentences)]
    off_topic = iter(OFF_TOPIC)
    seen: set[str] = set()
    queries: list[str] = []
    while len(queries) < count:
        pick = next(off_topic, None) if len(queries) % 25 == 24 else None
        pick = pick or _next_new(sources[len(queries) % 2], seen)
        if pick is None:
            raise RuntimeError(f"the sample yields only {len(queries)} distinct queries")
        seen.add(pick.lower())
        queries.append(pick)
    return queries


def _next_new(source: Iterator[str], seen: set[str]) -> str | None:
    return next((q for q in source if q.lower() not in seen), None)


def _clean(text: str) -> str:
    return " ".join(_MARKUP.sub(" ", _LINK.sub(r"\1", text)).split())


def _sentences(content: str) -> list[str]:
    """Openings (at most 12 words) of prose sentences: no code, tables, lists or comments."""
    found: list[str] = []
    in_code = False
    for raw in _COMMENT.sub("", content).split("\n"):
        if raw.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
            continue
        if in_code or raw.startswith(("    ", "\t", "|", "<", "#", "-", "*", ">", "[", "!")):
            continue
        for part in _SENTENCE_END.split(_clean(raw)):
            words = part.split()
            if 5 <= len(words) <= 40 and words[0][:1].isupper():
                found.append(" ".join(words[:12]).rstrip(".,;:"))
    return found
