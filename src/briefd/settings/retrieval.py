"""The settings of how the knowledge is read and searched: which files are indexed
(``index``), how they are cut into chunks (``chunking``), how chunks are ranked (``search``),
kept in memory (``vectors``) and embedded (``embeddings``). Re-exported by
:mod:`briefd.settings`, where :class:`~briefd.settings.Settings` gathers every section."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from briefd.settings.names import without_account

DEFAULT_INCLUDE = ("**/*.md", "**/*.markdown")


@dataclass(frozen=True, slots=True)
class IndexSettings:
    include: tuple[str, ...] = DEFAULT_INCLUDE
    exclude: tuple[str, ...] = ()
    max_file_bytes: int = 2_000_000

    def problem(self) -> str | None:
        """What is wrong with these settings (after the key ``index.``), or None: a glob that
        gitignore's rules cannot read (a lone ``!``, a trailing ``\\``) stopped every scan.
        The default globs are read without pathspec (~60 ms to import: the hook's first
        prompt loads settings without a ``db:`` in briefd.yaml through here)."""
        given = [
            (key, glob)
            for key, globs in (("include", self.include), ("exclude", self.exclude))
            for glob in globs
            if glob not in DEFAULT_INCLUDE
        ]
        if not given:
            return None
        import pathspec  # here: most settings loads never need it

        for key, glob in given:
            try:
                pathspec.PathSpec.from_lines("gitignore", [glob], backend="simple")  # as scan
            except (ValueError, re.error):  # re.error: a range written backwards ([z-a])
                return (
                    f"{key}: '{glob}' is not a glob briefd can read; separate folders with "
                    "'/' (drafts/**), and put a glob after a '!'"
                )
        return None


@dataclass(frozen=True, slots=True)
class ChunkingSettings:
    target_tokens: int = 500
    max_tokens: int = 800

    def problem(self) -> str | None:
        """What is wrong with these settings (after the key ``chunking.``), or None."""
        if self.max_tokens < self.target_tokens:
            return (
                f"max_tokens: {self.max_tokens} is below target_tokens ({self.target_tokens}); "
                "the hard maximum must be at least the target"
            )
        return None


@dataclass(frozen=True, slots=True)
class SearchSettings:
    top_k: int = 8
    candidates: int = 50
    title_weight: float = 3.0
    heading_weight: float = 2.0
    body_weight: float = 1.0
    any_term_weight: float = 0.25
    any_term_max_share: float = 0.1
    any_term_min_chunks: int = 2000
    rrf_k: int = 60
    query_mode: Literal["text", "advanced"] = "text"
    mode: Literal["bm25", "vector", "hybrid"] = "hybrid"
    fusion: Literal["score", "rrf"] = "score"
    vector_weight: float = 0.6
    all_terms_bonus: float = 0.2
    # opt-in (0: off): times the square of the share of query words a section holds
    coverage_bonus: float = 0.0
    rrf_vector_weight: float = 0.25
    vector_candidates: int = 50
    related: int = 3
    typo_tolerance: bool = True
    gate: bool = True
    gate_offset: float = 0.0  # added to the gate threshold calibrated for each index


@dataclass(frozen=True, slots=True)
class VectorSettings:
    blas_threads: int = 1
    ann_threshold: int = 100_000


@dataclass(frozen=True, slots=True)
class EmbeddingsSettings:
    enabled: bool = True
    adapter: Literal["local", "ollama", "openai-compatible", "none"] = "local"
    model: str = "multilingual-e5-small-onnx"
    model_dir: Path = Path(".briefd/models")  # unset: models/ next to the index (db)
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    query_prefix: str | None = None  # ollama / openai-compatible; None: "query: " for e5 models
    passage_prefix: str | None = None
    batch_size: int = 16
    threads: int = 2
    timeout_seconds: float = 60.0  # one request of an index run (or of an evaluation)
    # one request for a search's query (search, MCP, the hook): then keywords answer
    query_timeout_seconds: float = 5.0
    # which engine embeds the default model's passages: auto (OpenVINO when installed and the
    # CPU has AVX-512: ~2x onnxruntime's chunks/s; else onnxruntime), openvino, onnxruntime;
    # queries always run on onnxruntime
    passage_engine: Literal["auto", "openvino", "onnxruntime"] = "auto"
    # a chunk longer than this many words is also embedded as windows of its sentences, and
    # scores a query as its closest window or itself, whichever is closer (0: whole chunks only)
    window_words: int = 0

    def problem(self) -> str | None:
        """What is wrong with these settings (after the key ``embeddings.``), or None."""
        if self.base_url is not None and ("?" in self.base_url or "#" in self.base_url):
            return (
                f"base_url: {without_account(self.base_url.split('?')[0].split('#')[0])!r}… "
                "holds a query or fragment, which the API's path would follow; give the "
                "address alone (an API key comes from the variable api_key_env names)"
            )
        if self.base_url is not None and not _http_host(self.base_url):
            return (  # Ollama's own OLLAMA_HOST is written so: "cannot be reached" said nothing
                f"base_url: {without_account(self.base_url)!r} is not an http:// or https:// "
                "URL of a host; expected such as http://127.0.0.1:11434 (Ollama) or "
                "https://api.openai.com/v1"
            )
        return None


def _http_host(url: str) -> bool:
    """``url`` starts with http:// or https:// and names a host."""
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(url.strip())
        return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:  # an IPv6 host without its closing ']'
        return False
