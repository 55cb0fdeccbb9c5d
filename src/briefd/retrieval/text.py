"""Text normalisation shared by the index and the query side, and query-term extraction."""

from __future__ import annotations

import re

# Dotless ı and dotted İ have no Unicode decomposition, so FTS5's remove_diacritics cannot
# fold them; Turkish typed on an English keyboard writes "i" for both.
_FOLD = str.maketrans({"ı": "i", "İ": "I"})
_WORD = re.compile(r"\w+", re.UNICODE)

_ENGLISH = (
    "a an the and or not of to in on at by for from with without into onto as is are was were be "
    "been being do does did done how what when where which who whom why can could should would "
    "will shall may might must i we you he she it they me us my our your their this that these "
    "those there here then than so if about any all some no yes please need want get make let "
    "use using via vs also just only its"
)
_TURKISH = (
    "ve veya ile ya da de ki mi mı mu mü bir bu şu o için gibi ne nasıl neden niçin hangi nerede "
    "kaç çok daha en olan olarak ama fakat ise"
)
STOP_WORDS = frozenset(_ENGLISH.split() + _TURKISH.split())


def fold(text: str | None) -> str:
    """The index-side normalisation every FTS column goes through (also used for queries)."""
    return text.translate(_FOLD) if text else ""


def query_terms(query: str) -> list[str]:
    """Folded, lower-cased word terms of a free-text query, stop words dropped.

    When every term is a stop word the terms are kept, so a query never becomes empty.
    """
    words = [w.lower() for w in _WORD.findall(fold(query))]
    unique = list(dict.fromkeys(words))
    kept = [w for w in unique if w not in STOP_WORDS and w.replace("ı", "i") not in STOP_WORDS]
    return kept or unique
