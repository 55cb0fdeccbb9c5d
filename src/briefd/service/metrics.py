"""Service metrics (I4): counters and latency histograms that survive restarts.

Every monotonic value (request counts, histogram buckets, tokens served, cache hits, embedding
calls) lives in one flat table keyed by (name, labels); the service loads it from SQLite at start,
adds what it counted since to it every few seconds and at shutdown (increments, never totals:
a ``briefd mcp`` a client spawned and ``briefd serve`` on the same index both count), then shows
the stored totals (so ``/metrics`` and the dashboard count the other processes' calls too), and
zeroes it when the dashboard resets the counters. Gauges (index size, last sync) are read live at scrape time. A custom collector hands
both to prometheus-client, which renders the text format.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector, CollectorRegistry

from briefd.embeddings.base import Embedder, EmbeddingKind, Vectors

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

REQUESTS = "briefd_requests"
DURATION = "briefd_request_duration_seconds"
TOKENS = "briefd_tokens_served"
CACHE = "briefd_bundle_cache"
EMBEDDINGS = "briefd_embedding_calls"
# The ``outcome`` of a request: ``ok``; ``error`` (a BriefdError: unknown scope, missing
# document, Jira refused); ``invalid`` (its arguments failed validation, so nothing ran: REST
# 422, an MCP tool's arguments; counted but not timed); ``failure`` (an unexpected exception).
INVALID = "invalid"

_HELP = {
    REQUESTS: "Requests per surface (rest, mcp), tool or endpoint, and outcome "
    "(ok, error, invalid arguments, failure).",
    DURATION: "Request latency per surface and tool or endpoint.",
    TOKENS: "Tokens of knowledge handed out, per surface and tool or endpoint.",
    CACHE: "Bundle requests answered from the cache (hit) or compiled (miss).",
    EMBEDDINGS: "Embedding model calls (query or passage batches).",
}
_COUNTER_LABELS = {
    REQUESTS: ("surface", "name", "outcome"),
    TOKENS: ("surface", "name"),
    CACHE: ("result",),
    EMBEDDINGS: ("kind",),
}

Key = tuple[str, str]


def labels_key(labels: Mapping[str, str]) -> str:
    return json.dumps(dict(sorted(labels.items())), separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Gauge:
    name: str
    help: str
    value: float
    labels: tuple[tuple[str, str], ...] = ()


class Metrics:
    """Thread-safe counters: the totals this process shows (every process's, as last stored,
    plus its own unsaved), its own share (what it loaded at start plus what it counted: what
    it saves again into an index file made anew), and the increments not yet saved (``dirty``
    tells the flusher whether there are any)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[Key, float] = {}
        self._mine: dict[Key, float] = {}
        self._unsaved: dict[Key, float] = {}

    @property
    def dirty(self) -> bool:
        return bool(self._unsaved)

    def inc(self, name: str, labels: Mapping[str, str], amount: float = 1.0) -> None:
        with self._lock:
            self._add((name, labels_key(labels)), amount)

    def observe(self, name: str, labels: Mapping[str, str], seconds: float) -> None:
        """One histogram observation, stored as cumulative bucket counters, sum and count."""
        with self._lock:
            for le in (*LATENCY_BUCKETS, float("inf")):
                if seconds <= le:
                    self._add((f"{name}:bucket", labels_key({**labels, "le": _le(le)})), 1.0)
            for suffix, amount in ((":sum", seconds), (":count", 1.0)):
                self._add((name + suffix, labels_key(labels)), amount)

    def _add(self, key: Key, amount: float) -> None:
        for counts in (self._values, self._mine, self._unsaved):
            counts[key] = counts.get(key, 0.0) + amount

    def merge(self, values: Mapping[Key, float]) -> None:
        """Add totals saved by earlier runs (already stored: not saved again)."""
        with self._lock:
            for key, value in values.items():
                for counts in (self._values, self._mine):
                    counts[key] = counts.get(key, 0.0) + value

    def show_stored(self, stored: Mapping[Key, float]) -> None:
        """Show the stored totals (what every process on the index saved, this one included)
        plus what this one counted since and has not saved yet."""
        with self._lock:
            values = dict(stored)
            for key, amount in self._unsaved.items():
                values[key] = values.get(key, 0.0) + amount
            self._values = values

    def unsaved(self) -> tuple[dict[Key, float], dict[Key, float]]:
        """The increments counted since the last save, handed over once (give them back with
        :meth:`restore` when they could not be saved), and this process's share of the totals
        as of that moment (never the other processes' counts it shows: each saves its own)."""
        with self._lock:
            taken, self._unsaved = self._unsaved, {}
            return taken, dict(self._mine)

    def restore(self, increments: Mapping[Key, float]) -> None:
        with self._lock:
            for key, amount in increments.items():
                self._unsaved[key] = self._unsaved.get(key, 0.0) + amount

    def reset(self) -> None:
        with self._lock:
            for counts in (self._values, self._mine, self._unsaved):
                counts.clear()

    def snapshot_view(self) -> list[tuple[Key, float]]:
        with self._lock:
            return list(self._values.items())


def _le(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(bound)


class BriefdCollector(Collector):
    """Renders :class:`Metrics` and the live gauges for prometheus-client."""

    def __init__(self, metrics: Metrics, gauges: Callable[[], Sequence[Gauge]]) -> None:
        self.metrics = metrics
        self.gauges = gauges

    def collect(self) -> Iterator[Metric]:
        values = self.metrics.snapshot_view()
        yield from _counters(values)
        yield _histogram(values)
        families: dict[str, GaugeMetricFamily] = {}
        for gauge in self.gauges():
            family = families.get(gauge.name)
            if family is None:
                family = GaugeMetricFamily(
                    gauge.name, gauge.help, labels=[k for k, _ in gauge.labels]
                )
                families[gauge.name] = family
            family.add_metric([v for _, v in gauge.labels], gauge.value)
        yield from families.values()


def _counters(values: Sequence[tuple[Key, float]]) -> Iterator[Metric]:
    for name, label_names in _COUNTER_LABELS.items():
        family = CounterMetricFamily(name, _HELP[name], labels=list(label_names))
        for (key_name, key_labels), value in sorted(values):
            if key_name == name:
                labels = json.loads(key_labels)
                family.add_metric([labels.get(n, "") for n in label_names], value)
        yield family


def _histogram(values: Sequence[tuple[Key, float]]) -> Metric:
    family = HistogramMetricFamily(DURATION, _HELP[DURATION], labels=["surface", "name"])
    series: dict[tuple[str, str], dict[str, float]] = {}
    sums: dict[tuple[str, str], float] = {}
    for (key_name, key_labels), value in values:
        if not key_name.startswith(DURATION + ":"):
            continue
        labels = json.loads(key_labels)
        ident = (labels["surface"], labels["name"])
        if key_name.endswith(":bucket"):
            series.setdefault(ident, {})[labels["le"]] = value
        elif key_name.endswith(":sum"):
            sums[ident] = value
    for ident in sorted(series):
        buckets = series[ident]
        ordered = [(_le(le), buckets.get(_le(le), 0.0)) for le in (*LATENCY_BUCKETS, float("inf"))]
        family.add_metric(list(ident), ordered, sums.get(ident, 0.0))
    return family


def registry(collector: BriefdCollector) -> CollectorRegistry:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(collector)
    return reg


class CountingEmbedder(Embedder):
    """Wraps the configured embedder and counts its calls into :class:`Metrics`."""

    def __init__(self, inner: Embedder, metrics: Metrics) -> None:
        self.inner = inner
        self.metrics = metrics
        self.name = inner.name
        self.runtime = inner.runtime
        self.cache_dir = inner.cache_dir

    @property
    def dim(self) -> int:
        """The inner embedder's, read when needed: a remote service's is learned from its
        first answer, which a server must not need in order to start (it may be away)."""
        return self.inner.dim

    @dim.setter
    def dim(self, value: int) -> None:
        self.inner.dim = value

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        self.metrics.inc(EMBEDDINGS, {"kind": kind})
        return self.inner.embed_batch(texts, kind)

    def embed_query(self, text: str) -> Vectors:
        self.metrics.inc(EMBEDDINGS, {"kind": "query"})
        return self.inner.embed_query(text)

    def release(self) -> None:
        self.inner.release()
