"""gitignore-style globs matched in time linear in the path (K2 ``refs``, K3 the knowledge's
``.gitignore`` files and ``index.include``/``exclude``). pathspec reads a glob into a regular
expression that Python's backtracking engine takes exponential time over: a ``refs`` entry
``*a*a*a*a*a*a*a*a*a*a*a*a*b`` (a document's author writes it) against a path of 30 ``a`` took
2.5 s, and each further letter about five times as long, while the request held a worker.
pathspec still reads the glob (its rules, its regular expression, with its ``simple`` backend:
see :data:`BACKEND`); the expression is then run by RE2 (google-re2), which never backtracks,
written so that it matches as ``re`` does (:func:`_for_re2`; a name that is not UTF-8 is read
with U+FFFD for each byte that is not, so two such names differ there no more). An expression
RE2 cannot read is left to ``re`` when it has at most one unbounded repetition (backtracking
cannot take long over it), and is otherwise a glob briefd cannot read (``re.error``). Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pathspec
import re2
from pathspec.util import normalize_file

# pathspec runs its expressions on RE2 itself when google-re2 is installed, with RE2's $ and an
# re2.error for what RE2 cannot read; briefd builds its specs on the re backend and runs them here
BACKEND = "simple"
_END = re.compile(r"(?<!\\)\$(\)?)\Z")  # the $ pathspec ends an expression with
_SURROGATE = re.compile("[\ud800-\udfff]")  # a byte of a name that is not UTF-8 (os.fsdecode)
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # an expression RE2 cannot read is an answer here, not a log line


@dataclass(frozen=True, slots=True)
class Linear:
    """One expression run by RE2; ``search`` and ``match`` as ``re.Pattern``'s (the expression
    is anchored at the start), their matches' ``groupdict`` holding the dir mark."""

    regex: re.Pattern[str]
    compiled: Any  # re2._Regexp (google-re2 has no type hints)

    @property
    def pattern(self) -> str:
        return self.regex.pattern

    def search(self, text: str) -> Any:
        return self.compiled.search(text if text.isascii() else _SURROGATE.sub("\ufffd", text))

    match = search


def linear(regex: re.Pattern[str]) -> Linear | re.Pattern[str]:
    """``regex`` (as pathspec builds it from a gitignore glob) run by RE2; ``regex`` itself
    when RE2 cannot read it but backtracking cannot take long over it (at most one unbounded
    repetition); an ``re.error`` when RE2 cannot read it and ``re`` could take long."""
    source = regex.pattern
    try:
        return Linear(regex, re2.compile(_for_re2(source), _OPTIONS))
    except re2.error:
        if source.count("*") + source.count("+") <= 1:
            return regex
        raise re.error(f"{source} cannot be matched in time linear in the path") from None


def _for_re2(source: str) -> str:
    """``source`` as RE2 reads it as ``re`` does: its final ``$`` also before a final newline;
    ``[:`` not the start of a POSIX class (RE2 reads ``[[:alpha:]]`` as letters, ``re`` as the
    characters ``[:alph`` and a ``]``; ``\\:`` is ``:`` to both); U+FFFD for a byte of a name
    that is not UTF-8 (RE2 reads UTF-8 only; in the path too)."""
    source = _END.sub(r"(?:\\n?\\z)\1", source).replace("[:", "[\\:")
    return source if source.isascii() else _SURROGATE.sub("\ufffd", source)


@dataclass(frozen=True, slots=True)
class Globs:
    """gitignore lines read as pathspec reads them (the last line matching a path decides),
    each matched by :func:`linear`."""

    rules: tuple[tuple[bool, Linear | re.Pattern[str]], ...]

    @classmethod
    def of(cls, lines: Iterable[str]) -> Globs:
        spec = pathspec.PathSpec.from_lines("gitignore", lines, backend=BACKEND)
        rules = []
        for pattern in spec.patterns:
            regex = getattr(pattern, "regex", None)
            if pattern.include is None or regex is None:
                continue
            rules.append((bool(pattern.include), linear(regex)))
        return cls(tuple(rules))

    def match_file(self, path: str) -> bool:
        normal = normalize_file(path)
        for include, regex in reversed(self.rules):
            if regex.search(normal) is not None:
                return include
        return False


def linear_spec(spec: pathspec.PathSpec[Any]) -> pathspec.PathSpec[Any]:
    """``spec`` (a :class:`pathspec.GitIgnoreSpec` too, built with :data:`BACKEND`) with each
    expression replaced by its :func:`linear`, which pathspec's matching calls as it calls
    ``re.Pattern.search``."""
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if isinstance(regex, re.Pattern):
            setattr(pattern, "regex", linear(regex))  # noqa: B010  (typed re.Pattern in pathspec)
    return spec


_META = frozenset(".^$*+?{}[]()|\\")
_QUANTIFIER = frozenset("*+?{")


def literal_head(regex: re.Pattern[str]) -> str:
    """The text every match of the start-anchored ``regex`` begins with ("" when none is
    certain): the literal characters after its ``^``, up to the first that is not plain (a
    class, a group, a quantified character). Lets a caller skip paths no match can begin
    with before running the matcher on each."""
    source = regex.pattern
    if not source.startswith("^") or regex.flags & re.IGNORECASE or "|" in _outside_groups(source):
        return ""
    head: list[str] = []
    at = 1
    while at < len(source):
        char, width = source[at], 1
        if char == "\\" and at + 1 < len(source) and not source[at + 1].isalnum():
            char, width = source[at + 1], 2
        elif char in _META:
            break
        if source[at + width : at + width + 1] in _QUANTIFIER:
            break
        head.append(char)
        at += width
    text = "".join(head)
    return "" if "\ufffd" in text else text


def _outside_groups(source: str) -> str:
    """``source``'s characters outside groups and classes (escaped ones dropped)."""
    out, depth, escaped, in_class = [], 0, False, False
    for char in source:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth == 0:
            out.append(char)
    return "".join(out)
