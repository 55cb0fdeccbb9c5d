"""BERT-style encoders exported to ONNX, run by onnxruntime with a ``tokenizers`` tokenizer.

Texts are tokenized (truncated to the recipe's ``max_tokens``, padded to the longest text in
the batch), run through the graph, pooled (mean over real tokens, or the [CLS] token) and
L2-normalised. The graph must take ``input_ids`` / ``attention_mask`` (and optionally
``token_type_ids``) and return ``last_hidden_state``, as the sentence-transformers and Xenova
exports do. onnxruntime and tokenizers are imported only when such a model loads.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from briefd.embeddings import runtime
from briefd.embeddings.base import Embedder, EmbeddingKind, Vectors, normalise
from briefd.embeddings.spec import (
    ModelSpec,
    OnnxRecipe,
    WeightFile,
    file_problem,
    install_hint,
    locate,
    runtime_id,
)
from briefd.errors import EmbeddingError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "last_hidden_state"


class OnnxEmbedder(Embedder):
    def __init__(
        self, spec: ModelSpec, recipe: OnnxRecipe, session: Any, tokenizer: Tokenizer
    ) -> None:
        onnxruntime = runtime.onnxruntime()

        self.name = spec.name
        self.runtime = runtime_id(spec, onnxruntime.__version__)
        self.dim = spec.dim
        self._recipe = recipe
        self._session = session
        self._tokenizer = tokenizer
        self._inputs = _check_graph(session, spec)

    @classmethod
    def load(cls, spec: ModelSpec, model_dir: Path, threads: int) -> OnnxEmbedder:
        """Find and verify the spec's files (pulled files against their SHA-256), then load."""
        recipe = spec.onnx
        if recipe is None:  # pragma: no cover - a registry bug, not user input
            raise EmbeddingError(f"model {spec.name} has no ONNX recipe")
        graph = _usable_path(spec, recipe.graph, model_dir)
        tokenizer_path = _usable_path(spec, recipe.tokenizer, model_dir)
        try:
            session = _session(graph, threads)
            tokenizer = build_tokenizer(tokenizer_path, recipe.max_tokens)
        except ImportError as exc:
            raise EmbeddingError(
                f"model {spec.name} needs onnxruntime and tokenizers ({exc.name} is missing): "
                "reinstall briefd, or set embeddings.adapter: none (BM25 only)"
            ) from None
        return cls(spec, recipe, session, tokenizer)

    def embed_batch(self, texts: Sequence[str], kind: EmbeddingKind) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        recipe = self._recipe
        prefix = recipe.query_prefix if kind == "query" else recipe.passage_prefix
        encodings = self._tokenizer.encode_batch([prefix + text for text in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = self._session.run([OUTPUT], {k: feeds[k] for k in self._inputs})
        return normalise(pool(np.asarray(hidden, dtype=np.float32), mask, recipe.pooling))


def pool(
    hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64], how: str
) -> npt.NDArray[np.float32]:
    """(batch, tokens, dim) hidden states → (batch, dim): mean over unmasked tokens, or [CLS]."""
    if how == "cls":
        first: npt.NDArray[np.float32] = hidden[:, 0, :]
        return first
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    counts = np.maximum(weights.sum(axis=1), 1.0)
    mean: npt.NDArray[np.float32] = (summed / counts).astype(np.float32)
    return mean


def build_tokenizer(path: Path, max_tokens: int) -> Tokenizer:
    """A ``tokenizer.json`` as it is, or an uncased BERT WordPiece tokenizer from ``vocab.txt``;
    either way truncated at ``max_tokens`` and padded to the longest text of a batch."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path)) if path.suffix == ".json" else _wordpiece(path)
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_tokens)
    pad_id = tokenizer.token_to_id("[PAD]")
    tokenizer.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
    return tokenizer


def _wordpiece(vocab: Path) -> Tokenizer:
    """The tokenizer of bert-base-uncased (same ids as its ``tokenizer.json``)."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    model = WordPiece(
        WordPiece.read_file(str(vocab)), unk_token="[UNK]", max_input_chars_per_word=100
    )
    tokenizer = Tokenizer(model)
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    if cls_id is None or sep_id is None:
        raise EmbeddingError(f"{vocab} is not a BERT vocabulary (no [CLS]/[SEP]); reinstall briefd")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    tokenizer.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    return tokenizer


def _session(graph: Path, threads: int) -> Any:
    onnxruntime = runtime.onnxruntime()

    options = runtime.session_options(threads)
    # Without the arena, memory goes back after a batch: measured with all-minilm-l6-v2 int8,
    # 16 x 256 tokens: RSS 250 MB after indexing instead of holding its 814 MB peak.
    options.enable_cpu_mem_arena = False
    try:
        return onnxruntime.InferenceSession(
            str(graph), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime raises its own unexported classes
        raise EmbeddingError(
            f"onnxruntime cannot load {graph} ({_first_line(exc)}); reinstall or re-pull the model"
        ) from None


def _check_graph(session: Any, spec: ModelSpec) -> tuple[str, ...]:
    inputs = tuple(i.name for i in session.get_inputs())
    outputs = {o.name for o in session.get_outputs()}
    unknown = [name for name in inputs if name not in INPUTS]
    if unknown or "input_ids" not in inputs or OUTPUT not in outputs:
        raise EmbeddingError(
            f"the ONNX graph of {spec.name} has inputs {list(inputs)} and outputs "
            f"{sorted(outputs)}; expected {list(INPUTS)} → {OUTPUT}"
        )
    return inputs


def _usable_path(spec: ModelSpec, file: WeightFile, model_dir: Path) -> Path:
    path = locate(file, spec, model_dir)
    problem = file_problem(file, path, verify=True)
    if problem is None and path is not None:
        return path
    fix = install_hint(spec, file)
    raise EmbeddingError(f"embedding model {spec.name} is not usable: {problem}; {fix}")


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
