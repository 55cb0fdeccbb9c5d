"""gitignore-style globs matched in time linear in the path (K2 ``refs``). pathspec reads a glob
into a regular expression that Python's backtracking engine takes exponential time over: a
``refs`` entry ``*a*a*a*a*a*a*a*a*a*a*a*a*b`` (a document's author writes it) against a path
of 30 ``a`` (an agent's ``paths``, or a file in a code repository that drift reads) took 2.5 s,
and each further letter about five times as long, while the request held a worker. pathspec
still reads the glob (its rules, its regular expression); an expression with more than one
unbounded repetition is then run here as an automaton over the path's characters, one set of
states per position, never going back (a path too short for backtracking to take long is left
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
# a node of the automaton: ("char", test, next), ("split", a, b), ("end",) or ("accept",)
Node = tuple[Any, ...]
# what an expression is read into: (test, quantifier "" "?" "*" "+"), ("opt", items), ("end",),
# ("slash_or_end",)
Item = tuple[Any, ...]

_NOT_SLASH: Test = lambda c: c != "/"  # noqa: E731
_ANY: Test = lambda c: c != "\n"  # noqa: E731  (re's '.' without DOTALL)
_FIXED = {
    "(?:.+/)?": ("opt", [(_ANY, "+"), (lambda c: c == "/", "")]),
    "(?:/.+)?": ("opt", [(lambda c: c == "/", ""), (_ANY, "+")]),
    "(?:/|$)": ("slash_or_end",),
    "/?$": ("opt_slash_end",),
}


@dataclass(slots=True)
class Linear:
    """One expression as an automaton; ``search`` and ``match`` as ``re.Pattern``'s (the
    expression is anchored at the start) but returning True or None. A text no longer than
    ``short`` is left to ``regex`` itself (faster, and it cannot backtrack long over so few
    characters); a longer one is read by the automaton, its sets of states numbered as they
    are met (a lazily built DFA)."""

    regex: re.Pattern[str]
    short: int
    nodes: list[Node]
    sets: dict[frozenset[int], int] = field(default_factory=dict)
    members: list[frozenset[int]] = field(default_factory=list)
    done: list[bool] = field(default_factory=list)  # the set holds the end of the expression
    ends: list[bool] = field(default_factory=list)  # ... where the text ends ($)
    steps: dict[tuple[int, str], int] = field(default_factory=dict)

    @property
    def pattern(self) -> str:
        return self.regex.pattern

    def search(self, text: str) -> bool | None:
        if len(text) <= self.short:
            return True if self.regex.search(text) else None
        state, last = 0, len(text) - 1
        for i, char in enumerate(text):
            if self.done[state] or (self.ends[state] and i == last and char == "\n"):
                return True  # re's $ also matches before a newline that ends the text
            following = self.steps.get((state, char), -1)
            state = following if following >= 0 else self._step(state, char)
            if not self.members[state]:
                return None
        return True if self.done[state] or self.ends[state] else None

    match = search

    def _step(self, state: int, char: str) -> int:
        """The state after ``char`` (remembered: a matcher lives for one request, and meets
        at most one new state per character it reads)."""
        nodes = [self.nodes[s] for s in self.members[state]]
        moved = _closure(self.nodes, [n[2] for n in nodes if n[0] == "char" and n[1](char)])
        found = self.steps[(state, char)] = self.number(moved)
        return found

    def number(self, states: frozenset[int]) -> int:
        found = self.sets.get(states)
        if found is None:
            found = self.sets[states] = len(self.members)
            self.members.append(states)
            kinds = {self.nodes[s][0] for s in states}
            self.done.append("accept" in kinds)
            self.ends.append("end" in kinds)
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
    machine.number(_closure(nodes, [start]))  # state 0
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
        if kind in ("end", "slash_or_end", "opt_slash_end") and current != 0:
            return None
        if kind == "end":
            current = _add(nodes, ("end",))
        elif kind == "slash_or_end":
            slash = _add(nodes, ("char", _literal("/"), current))
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


def _closure(nodes: list[Node], starts: Iterable[int]) -> frozenset[int]:
    seen: set[int] = set()
    todo = list(starts)
    while todo:
        s = todo.pop()
        if s in seen:
            continue
        seen.add(s)
        if nodes[s][0] == "split":
            todo += nodes[s][1:]
    return frozenset(s for s in seen if nodes[s][0] != "split")


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
            if regex.search(normal):
                return include
        return False
