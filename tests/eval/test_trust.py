"""Trust figures (V4): seeded subsets, folded queries, the off-topic set, emptied and rejected."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from briefd.api import Briefd
from briefd.cli.eval_trust import EVERY_MODE, print_trust
from briefd.embeddings.fake import FakeEmbedder
from briefd.errors import EvalError
from briefd.eval.datasets import BeirSet, load_beir
from briefd.eval.recall import load_noise
from briefd.eval.run import beir_index, run_beir
from briefd.eval.thresholds import TrustLimits, load_gates, trust_shortfalls
from briefd.eval.trust import (
    LANGUAGES,
    TrustFigures,
    figures,
    load_offtopic,
    offtopic_answered,
)
from briefd.eval.variants import fold_turkish, folded, subset
from briefd.retrieval.gate import PROBES
from briefd.settings import Settings
from briefd.text import query_words
from tests.cli.test_cli import briefd
from tests.conftest import REPO
from tests.eval.test_eval import _split_set

OFFTOPIC = REPO / "eval" / "offtopic.yaml"


def _dataset(tmp_path: Path, docs: int = 12) -> BeirSet:
    folder = tmp_path / "tiny"
    folder.mkdir(exist_ok=True)
    corpus = [
        {"_id": f"d{i}", "title": f"Topic {i}", "text": f"word{i} alpha beta gamma {i}"}
        for i in range(docs)
    ]
    queries = [{"_id": f"q{i}", "text": f"word{i} alpha"} for i in range(docs)]
    qrels = [f"q{i}\td{i}\t1" for i in range(docs)] + ["q0\td1\t1"]
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(c) for c in corpus))
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    (folder / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(qrels) + "\n")
    return load_beir(folder)


def test_subset_is_seeded_and_keeps_the_queries_it_answers(tmp_path: Path) -> None:
    dataset = _dataset(tmp_path)
    small = subset(dataset, 4)
    assert small == subset(dataset, 4)  # seeded: the same documents and queries every run
    assert small.name == "tiny@4" and len(small.corpus) == 4
    inside = {doc_id for doc_id, _, _ in small.corpus}
    assert small.queries and all(set(dataset.qrels[q[0]]) <= inside for q in small.queries)
    outside = [q for q in dataset.queries if set(dataset.qrels[q[0]]) <= inside]
    assert len(small.queries) == len(outside)  # every query answered inside is kept
    assert small.digest != dataset.digest and subset(dataset, 5).digest != small.digest
    assert len(subset(dataset, 50).corpus) == 12


def test_folded_queries_are_typed_without_turkish_diacritics(
    settings: Settings, tmp_path: Path
) -> None:
    assert (
        fold_turkish("Şifre sıfırlama bağlantısı İçin ÖĞÜÇ")
        == "Sifre sifirlama baglantisi Icin OGUC"
    )
    dataset = _dataset(tmp_path)
    typed = folded(dataset, "tiny-folded")
    assert typed.name == "tiny-folded" and typed.qrels == dataset.qrels
    assert beir_index(settings, typed).db == beir_index(settings, dataset).db  # one index
    assert subset(typed, 4).digest == subset(dataset, 4).digest  # the same documents


def test_offtopic_set_is_large_multilingual_and_apart_from_the_probes() -> None:
    queries = load_offtopic(OFFTOPIC)
    assert len(queries) >= 150
    for lang in LANGUAGES:
        assert sum(q.lang == lang for q in queries) >= 50
    assert len({q.id for q in queries}) == len(queries)
    assert {"near-miss", "chit-chat", "cooking", "sport", "travel", "health", "trivia"} <= {
        q.kind for q in queries
    }
    probes = {" ".join(query_words(p)) for group in PROBES.values() for p in group}
    assert not probes & {" ".join(query_words(q.query)) for q in queries}


def test_figures_count_emptied_real_queries_and_rejected_offtopic(
    settings: Settings, tmp_path: Path
) -> None:
    dataset = _dataset(tmp_path, 6)
    offtopic = load_offtopic(OFFTOPIC)
    with Briefd(beir_index(settings, dataset), embedder=FakeEmbedder()) as api:
        api.index()
        reports = [run_beir(api, dataset, mode) for mode in ("bm25", "vector", "hybrid")]
        answered = offtopic_answered(api, offtopic)
    found = figures("tiny", 6, reports, offtopic, answered)
    hybrid = reports[2]
    assert found.queries == 6 and found.emptied == sum(not o.top for o in hybrid.outcomes)
    assert set(found.offtopic_rejected) == set(LANGUAGES)
    for lang in LANGUAGES:
        mine = [q for q in offtopic if q.lang == lang]
        share = sum(q.id not in answered for q in mine) / len(mine)
        assert found.offtopic_rejected[lang] == share
    best_side = max(found.ndcg["bm25"], found.ndcg["vector"])
    assert found.fusion_gap == best_side - found.ndcg["hybrid"]
    limits = TrustLimits(max_emptied=-1.0, min_offtopic_rejected=2.0, max_fusion_gap=-9.0)
    lines = trust_shortfalls(limits, found)
    assert lines[0].startswith(f"tiny emptied {found.emptied}/6 real queries")
    assert any("off-topic rejected (tr)" in line for line in lines)
    assert lines[-1].startswith("tiny hybrid nDCG@10") and lines[-1].endswith(
        "below its better side"
    )


def test_thresholds_read_trust_limits_subsets_and_folding(tmp_path: Path) -> None:
    folder = tmp_path / "eval"
    folder.mkdir()
    path = folder / "thresholds.yaml"
    path.write_text(
        "sets:\n"
        "  - name: t-folded\n"
        "    dataset: data/t\n"
        "    fold: turkish\n"
        "    subsets: [8, 30]\n"
        "    trust: {max_emptied: 0.01, min_offtopic_rejected: 0.95}\n"
        "    min: {bm25: {ndcg@10: 0.5}}\n"
    )
    (gate,) = load_gates(path)
    assert gate.fold and gate.subsets == (8, 30)
    assert gate.trust == TrustLimits(max_emptied=0.01, min_offtopic_rejected=0.95)
    assert gate.dataset == tmp_path / "data" / "t"


@pytest.mark.parametrize(
    ("keys", "said"),
    [
        (
            "    dataset: data/t\n    recall: {bm25: {recall@5: 0.99}}\n",
            "recall limits are measured on a golden set (queries:), not a dataset; drop them or "
            "point the set at a golden query file",
        ),
        (
            "    queries: q.yaml\n    fold: turkish\n",
            "fold is for a dataset (BEIR) set, not a golden query file; drop it",
        ),
        (
            "    queries: q.yaml\n    subsets: [8]\n    trust: {max_emptied: 0.1}\n",
            "subsets is for a dataset (BEIR) set, not a golden query file; drop it",
        ),
        (
            "    dataset: data/t\n    subsets: [8]\n",
            "subsets are measured against trust limits; add trust: or drop them",
        ),
        (
            "    queries: q.yaml\n    split: train\n",
            "split is for a dataset (BEIR) set, not a golden query file; drop it",
        ),
        (
            "    dataset: data/t\n    split: [train]\n",
            "split must be the name of a split of the dataset, e.g. train",
        ),
    ],
)
def test_a_key_the_sets_kind_never_runs_is_refused(tmp_path: Path, keys: str, said: str) -> None:
    """V2, V4: recall limits on a BEIR set, or fold/subsets on a golden one, were never run,
    and the gate passed as though they held ("eval gate passed" below a recall@5 of 0.99)."""
    path = tmp_path / "thresholds.yaml"
    path.write_text("sets:\n  - name: mine\n" + keys + "    min: {bm25: {ndcg@10: 0.5}}\n")
    with pytest.raises(EvalError) as caught:
        load_gates(path)
    assert str(caught.value) == f"{path}: set 'mine': {said}"


def test_offtopic_and_noise_files_are_read_whole(tmp_path: Path) -> None:
    """Every query of the shipped files is its line's whole text; a cut one is refused."""
    lines = [line for line in OFFTOPIC.read_text().splitlines() if line.strip().startswith("- {")]
    read = load_offtopic(OFFTOPIC)
    assert len(lines) == len(read)
    for line, query in zip(lines, read, strict=True):
        raw = line.split("query: ", 1)[1].rstrip().removesuffix("}")
        assert raw.strip('"') == query.query, query.id
    assert {q.query for q in read} >= {"good morning, did you sleep well"}
    load_noise(REPO / "eval" / "recall-noise.yaml")
    cut = tmp_path / "offtopic.yaml"
    cut.write_text("queries:\n  - {id: x, lang: en, kind: chat, query: hi, how are you}\n")
    with pytest.raises(EvalError, match="unexpected key 'how are you'"):
        load_offtopic(cut)
    noise = tmp_path / "noise.yaml"
    noise.write_text("prompts:\n  - {id: n, kind: chat, text: thanks, go on}\n")
    with pytest.raises(EvalError, match="put the text in quotes"):
        load_noise(noise)


def test_a_fusion_tie_is_printed_as_plus_zero(capsys: pytest.CaptureFixture[str]) -> None:
    """V4: hybrid level with its better side (a gap of 0, or under 0.0005) printed "-0.000",
    which reads as hybrid below it."""
    tie = TrustFigures(
        "tie", 5, 5, 0, 0.0, dict.fromkeys(LANGUAGES, 1.0), (), dict.fromkeys(EVERY_MODE, 1.0), 0.0
    )
    print_trust([tie, replace(tie, name="near", fusion_gap=0.0004)])
    print_trust([replace(tie, name="below", fusion_gap=0.012)])
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("│")]
    assert {row[1]: row[-2] for row in rows} == {
        "tie": "+0.000",
        "near": "+0.000",
        "below": "-0.012",
    }


def test_a_set_of_the_gate_can_be_a_datasets_held_out_split(tmp_path: Path) -> None:
    """V1, V2: ``split: train`` gates the questions no ranking change was tried on, beside
    the test split, on the same index."""
    _split_set(tmp_path / "mine")
    (tmp_path / "gate.yaml").write_text(
        "sets:\n"
        "  - {name: mine, dataset: mine, min: {bm25: {recall@5: 0.99}}}\n"
        "  - {name: mine-held-out, dataset: mine, split: train, min: {bm25: {recall@5: 0.99}}}\n"
    )
    (test, train) = load_gates(tmp_path / "gate.yaml")
    assert (test.split, train.split) == (None, "train")
    result = briefd("eval", "--check", "gate.yaml", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    reports = json.loads(result.stdout)["reports"]
    assert [(r["name"], r["queries"]) for r in reports] == [("mine", 1), ("mine-held-out", 2)]
    assert [o["id"] for o in reports[1]["outcomes"]] == ["t1", "t2"]
