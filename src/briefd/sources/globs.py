"""gitignore-style globs matched in time linear in the path (K2 ``refs``, K3 the knowledge's
``.gitignore`` files and ``index.include``/``exclude``). pathspec reads a glob
into a regular expression that Python's backtracking engine takes exponential time over: a
``refs`` entry ``*a*a*a*a*a*a*a*a*a*a*a*a*b`` (a document's author writes it) against a path
of 30 ``a`` (an agent's ``paths``, or a file in a code repository that drift reads) took 2.5 s,
and each further letter about five times as long, while the request held a worker. pathspec
still reads the glob (its rules, its regular expression); an expression with more than one
unbounded repetition is then run here as an automaton over the path's characters, one list of
threads per position, never going back (a path too short for backtracking to take long is left
to ``re``, faster there). Pure."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pathspec
from pathspec.util import normalize_file

BACKTRACKING = 200_000  # steps re may take over a text before the automaton reads it instead

Test = Callable[[str], bool]
# a node of the automaton: ("char", test, next), ("split", preferred, other), ("mark", next)
# (the dir-mark group of pathspec's GitIgnoreSpec expressions starts), ("end",) or ("accept",)
Node = tuple[Any, ...]
# what an expression is read into: (test, quantifier "" "?" "*" "+"), ("opt", items), or one of
# the endings of _FIXED
Item = tuple[Any, ...]
# the threads of the automaton at one position, highest priority first: (node, dir mark set)
Threads = tuple[tuple[int, bool], ...]
DIR_MARK = "ps_d"  # the group GitIgnoreSpec's backend reads (pathspec.patterns.gitignore.spec)

_NOT_SLASH: Test = lambda c: c != "/"  # noqa: E731
_ANY: Test = lambda c: c != "\n"  # noqa: E731  (re's '.' without DOTALL)
_FIXED = {
    "(?:.+/)?": ("opt", [(_ANY, "+"), (lambda c: c == "/", "")]),
    "(?:/.+)?": ("opt", [(lambda c: c == "/", ""), (_ANY, "+")]),
    "(?:/|$)": ("slash_or_end", False),
    f"(?:(?P<{DIR_MARK}>/)|$)": ("slash_or_end", True),
    f"(?P<{DIR_MARK}>/)": ("marked_slash",),
    "/?$": ("opt_slash_end",),
}


@dataclass(frozen=True, slots=True)
class Found:
    """A match, as much of ``re.Match`` as pathspec reads: whether the dir mark was taken."""

    marked: bool

    def groupdict(self) -> dict[str, str | None]:
        return {DIR_MARK: "/" if self.marked else None}


@dataclass(slots=True)
class Linear:
    """One expression as an automaton; ``search`` and ``match`` as ``re.Pattern``'s (the
    expression is anchored at the start). A text no longer than ``short`` is left to
    ``regex`` itself (faster, and it cannot backtrack long over so few characters); a longer
    one is read by the automaton, a Pike machine: its threads kept in re's order of preference,
    so that the match found is the one re finds (pathspec's GitIgnoreSpec reads whether it took
    the dir mark), their lists numbered as they are met (a lazily built DFA)."""

    regex: re.Pattern[str]
    short: int
    nodes: list[Node]
    numbers: dict[Threads, int] = field(default_factory=dict)
    states: list[Threads] = field(default_factory=list)
    steps: dict[tuple[int, bool, str], int] = field(default_factory=dict)

    @property
    def pattern(self) -> str:
        return self.regex.pattern

    def search(self, text: str) -> re.Match[str] | Found | None:
        if len(text) <= self.short:
            return self.regex.search(text)
        state, last, found = 0, len(text) - 1, None
        for i, char in enumerate(text):
            at_end = i == last and char == "\n"  # re's $ also matches before a final newline
            matched, cut = self._ended(self.states[state], at_end)
            found = matched or found  # a match of threads re prefers replaces one found before
            if cut == 0:
                return found
            following = self.steps.get((state, at_end, char), -1)
            state = following if following >= 0 else self._step(state, at_end, char)
        return self._ended(self.states[state], True)[0] or found

    match = search

    def _ended(self, threads: Threads, at_end: bool) -> tuple[Found | None, int]:
        """The match the first thread to end makes here, and how many threads re would try
        before it (those after it: never)."""
        for index, (node, marked) in enumerate(threads):
            kind = self.nodes[node][0]
            if kind == "accept" or (at_end and kind == "end"):
                return Found(marked), index
        return None, len(threads)

    def _step(self, state: int, at_end: bool, char: str) -> int:
        """The state after ``char`` (remembered: a matcher lives for one request, and meets
        at most one new state per character it reads)."""
        threads = self.states[state]
        alive = threads[: self._ended(threads, at_end)[1]]
        moved = [
            (self.nodes[n][2], marked)
            for n, marked in alive
            if self.nodes[n][0] == "char" and self.nodes[n][1](char)
        ]
        found = self.steps[(state, at_end, char)] = self.number(_closure(self.nodes, moved))
        return found

    def number(self, threads: Threads) -> int:
        found = self.numbers.get(threads)
        if found is None:
            found = self.numbers[threads] = len(self.states)
            self.states.append(threads)
        return found


def linear(regex: re.Pattern[str]) -> Linear | None:
    """``regex`` (as pathspec builds it from a gitignore glob) as a :class:`Linear`; None
    when backtracking cannot take long over it (at most one unbounded repetition) or it holds
    anything pathspec's gitignore expressions do not."""
    source = regex.pattern
    if not source.startswith("^") or source.count("*") + source.count("+") < 2:
        return None
    items = _read(source[1:])
    if items is None:
        return None
    nodes: list[Node] = [("accept",)]
    start = _build(items, nodes, 0)
    if start is None:
        return None
    machine = Linear(regex, _short(source), nodes)
    machine.number(_closure(nodes, [(start, False)]))  # state 0
    return machine


def _short(source: str) -> int:
    """The longest text ``source`` is left to ``re`` for: backtracking over ``k`` unbounded
    repetitions tries at most the ways of cutting the text in ``k + 1`` pieces,
    C(n + k, k), each once per optional group taken or not."""
    k = source.count("*") + source.count("+")
    tries = 2 ** source.count(")?") * len(source)
    n = 0
    while math.comb(n + 1 + k, k) * tries <= BACKTRACKING:
        n += 1
    return n


def _read(source: str) -> list[Item] | None:
    items: list[Item] = []
    i = 0
    while i < len(source):
        fixed = next((f for f in _FIXED if source.startswith(f, i)), None)
        if fixed is not None:
            items.append(_FIXED[fixed])
            i += len(fixed)
            continue
        char = source[i]
        if char == "$" and i == len(source) - 1:
            items.append(("end",))
            i += 1
            continue
        if char == "[":
            close = _class_end(source, i)
            if close is None:
                return None
            test: Test = _class_test(source[i : close + 1])
            i = close + 1
        elif char == "\\" and i + 1 < len(source) and not source[i + 1].isalnum():
            test, i = _literal(source[i + 1]), i + 2
        elif char == ".":
            test, i = _ANY, i + 1
        elif char in "()|?*+{}^$\\":
            return None  # not an expression pathspec's gitignore patterns are made of
        else:
            test, i = _literal(char), i + 1
        quantifier = source[i] if i < len(source) and source[i] in "?*+" else ""
        i += len(quantifier)
        items.append((test, quantifier))
    return items


def _class_end(source: str, start: int) -> int | None:
    i = start + 1
    if i < len(source) and source[i] == "^":
        i += 1
    if i < len(source) and source[i] == "]":
        i += 1
    while i < len(source) and source[i] != "]":
        i += 2 if source[i] == "\\" else 1
    return i if i < len(source) else None


def _class_test(source: str) -> Test:
    if source == "[^/]":
        return _NOT_SLASH
    one = re.compile(source)
    return lambda c: one.fullmatch(c) is not None


def _literal(char: str) -> Test:
    return lambda c: c == char


def _build(items: list[Item], nodes: list[Node], after: int) -> int | None:
    """The automaton for ``items`` followed by node ``after``; its first node (None: an end
    of the text asserted before the end of the expression)."""
    current = after
    for item in reversed(items):
        kind = item[0]
        if kind in ("end", "slash_or_end", "opt_slash_end", "marked_slash") and current != 0:
            return None
        if kind == "end":
            current = _add(nodes, ("end",))
        elif kind == "marked_slash":
            current = _add(nodes, ("mark", _add(nodes, ("char", _literal("/"), current))))
        elif kind == "slash_or_end":
            slash = _add(nodes, ("char", _literal("/"), current))
            slash = _add(nodes, ("mark", slash)) if item[1] else slash
            current = _add(nodes, ("split", slash, _add(nodes, ("end",))))
        elif kind == "opt_slash_end":
            end = _add(nodes, ("end",))
            current = _add(nodes, ("split", _add(nodes, ("char", _literal("/"), end)), end))
        elif kind == "opt":
            inner = _build(item[1], nodes, current)
            if inner is None:
                return None
            current = _add(nodes, ("split", inner, current))
        else:
            current = _repeat(item[0], item[1], nodes, current)
    return current


def _repeat(test: Test, quantifier: str, nodes: list[Node], after: int) -> int:
    if quantifier == "":
        return _add(nodes, ("char", test, after))
    if quantifier == "?":
        return _add(nodes, ("split", _add(nodes, ("char", test, after)), after))
    loop = _add(nodes, ("split", -1, after))  # -1: the char node, added next
    char = _add(nodes, ("char", test, loop))
    nodes[loop] = ("split", char, after)
    return loop if quantifier == "*" else char


def _add(nodes: list[Node], node: Node) -> int:
    nodes.append(node)
    return len(nodes) - 1


def _closure(nodes: list[Node], starts: Iterable[tuple[int, bool]]) -> Threads:
    """The threads ``starts`` lead to without reading a character, in re's order of
    preference (a split's first branch and all it leads to before its second); a node reached
    twice keeps its first, preferred, thread."""
    seen: set[int] = set()
    out: list[tuple[int, bool]] = []
    for start in starts:
        todo = [start]
        while todo:
            node, marked = todo.pop()
            if node in seen:
                continue
            seen.add(node)
            kind = nodes[node][0]
            if kind == "split":
                todo += [(nodes[node][2], marked), (nodes[node][1], marked)]
            elif kind == "mark":
                todo.append((nodes[node][1], True))
            else:
                out.append((node, marked))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Globs:
    """gitignore lines read as pathspec reads them (the last line matching a path decides),
    each matched by :class:`Linear` when backtracking could take long over it."""

    rules: tuple[tuple[bool, Linear | re.Pattern[str]], ...]

    @classmethod
    def of(cls, lines: Iterable[str]) -> Globs:
        spec = pathspec.PathSpec.from_lines("gitignore", lines)
        rules = []
        for pattern in spec.patterns:
            regex = getattr(pattern, "regex", None)
            if pattern.include is None or regex is None:
                continue
            rules.append((bool(pattern.include), linear(regex) or regex))
        return cls(tuple(rules))

    def match_file(self, path: str) -> bool:
        normal = normalize_file(path)
        for include, regex in reversed(self.rules):
            if regex.search(normal) is not None:
                return include
        return False


def linear_spec(spec: pathspec.PathSpec[Any]) -> pathspec.PathSpec[Any]:
    """``spec`` (a :class:`pathspec.GitIgnoreSpec` too) with each expression backtracking could
    take long over replaced by its :class:`Linear`, which pathspec's matching calls as it calls
    ``re.Pattern.search``."""
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if isinstance(regex, re.Pattern) and (machine := linear(regex)) is not None:
            setattr(pattern, "regex", machine)  # noqa: B010  (typed re.Pattern in pathspec)
    return spec
