"""The linear-time glob matcher (RE2) agrees with pathspec's re backend on every glob and path,
and takes linear time where pathspec's expression backtracks."""

from __future__ import annotations

import random
import re
import time
import warnings

import pathspec

from briefd.sources.globs import Globs, Linear, linear_spec, literal_head
from briefd.sources.refs import _line, paths_covered


def test_the_globs_agree_with_pathspec() -> None:
    rnd = random.Random(7)
    read = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # re's "possible nested set" on [[
        for _ in range(3000):
            glob = "".join(rnd.choice("ab/.*?[]!-\\\n") for _ in range(rnd.randint(1, 9)))
            try:
                spec = pathspec.PathSpec.from_lines("gitignore", [glob], backend="simple")
            except (ValueError, re.error):  # not a glob (refs: ignored with a problem)
                continue
            globs = Globs.of([glob])
            for _, rule in globs.rules:
                read += isinstance(rule, Linear)
            for _ in range(20):
                path = "".join(rnd.choice("ab/.-\n*") for _ in range(rnd.randint(0, 10)))
                assert globs.match_file(path) == spec.match_file(path), (glob, path)
    assert read > 500


def test_the_literal_head_is_what_every_match_begins_with() -> None:
    """Drift matches thousands of paths against every refs glob: a path that does not begin
    with the glob's literal head is skipped before the matcher runs (O4)."""
    heads = {
        "src/payments/**": "src/payments/",
        "./svc/a.py": "svc/a.py",
        "src/**/x.py": "src",
        "src/pay[mn]ents/**": "src/pay",
        "src/a*/b": "src/a",
        "sr?/x": "sr",
        "*.py": "",
        "build/": "",
    }
    for glob, head in heads.items():
        (rule,) = [r for _, r in Globs.of([_line(glob)]).rules]
        assert literal_head(rule.regex if isinstance(rule, Linear) else rule) == head, glob
    assert literal_head(re.compile("^ab+c")) == "a"
    assert literal_head(re.compile("^a|b")) == ""
    assert literal_head(re.compile("^ab", re.IGNORECASE)) == ""
    rnd = random.Random(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        for _ in range(2000):
            glob = "".join(rnd.choice("ab/.*?[]!-\\") for _ in range(rnd.randint(1, 9)))
            paths = [
                "".join(rnd.choice("ab/.-*") for _ in range(rnd.randint(0, 10))) for _ in range(20)
            ]
            try:
                globs = Globs.of([_line(glob)])
            except (ValueError, re.error):
                continue
            if len(globs.rules) == 1 and globs.rules[0][0]:  # every path through the matcher
                every = [p for p in paths if globs.rules[0][1].match(p)]
            else:
                every = [p for p in paths if globs.match_file(p)]
            assert paths_covered(glob, paths) == every, glob


def test_globs_made_to_backtrack_take_linear_time() -> None:
    started = time.monotonic()
    assert paths_covered("*a" * 12 + "*b", ["a" * 5000, "a" * 30 + "b"]) == ["a" * 30 + "b"]
    assert paths_covered("**/a/**/a/**/a/**/b", ["a/" * 3000]) == []
    assert time.monotonic() - started < 1


def test_re2_takes_the_dir_mark_gitignore_spec_reads_as_re_does() -> None:
    """GitIgnoreSpec ranks a match by whether it took the dir mark (``(?P<ps_d>/)``): the
    RE2 keeps re's order of preference (leftmost-first), so whole ignore files answer alike."""
    rnd = random.Random(11)
    read = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        for _ in range(2000):
            lines = [
                "".join(rnd.choice("ab/.*?[]!-\\\n") for _ in range(rnd.randint(1, 9)))
                for _ in range(rnd.randint(1, 3))
            ]
            try:
                spec = pathspec.GitIgnoreSpec.from_lines(lines, backend="simple")
                linear = linear_spec(pathspec.GitIgnoreSpec.from_lines(lines, backend="simple"))
            except (ValueError, re.error):
                continue
            for pattern in linear.patterns:
                read += isinstance(getattr(pattern, "regex", None), Linear)
            for _ in range(20):
                path = "".join(rnd.choice("ab/.-\n*") for _ in range(rnd.randint(0, 10)))
                assert linear.match_file(path) == spec.match_file(path), (lines, path)
    assert read > 300
