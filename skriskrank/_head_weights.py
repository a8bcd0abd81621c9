"""Inference of the reranker's heads: one implementation, derived from the torch module.

:class:`~skriskrank._heads.DualHeadModule` defines the heads and is what training runs.
:class:`HeadWeights` holds its trained weights in one algebraic form that covers every kind
of relevance head,

``f_rel(q, t) = sigmoid(w2 . relu(Wq q + Wt t + b1 + Wx ((Pq q) * (Pt t))) + b2
+ cos_scale * q . t + cos_bias)``,

- the paper's ``"concat"`` head: no interaction (``r = 0``) and no cosine term;
- the ``"residual"`` head with elementwise interactions: ``Pq = Pt = I``;
- the default ``"residual"`` head with projected interactions: ``Pq``, ``Pt`` of rank ``r``,

and scores it without forming the (queries x tools x 2d) concatenation. Each query part
(``Wq q``, ``Pq q``) and tool part (``Wt t``, ``Pt t``) is one GEMM over the queries or the
tools alone; the interaction ``Wx ((Pq q) * (Pt t)) = (Wx * Pq q) (Pt t)`` is, with the query
part folded in as one more column, a thin GEMM of inner dimension ``r + 1`` per block of
pairs; the compiled hidden layer (:func:`skriskrank._fast.hidden_layer`) then adds the tool
part, applies the ReLU and takes the product with ``w2`` in one pass over the block. For
the default head nothing per pair grows with ``d``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.special import expit

from ._fast import hidden_layer, run_blocks

__all__ = ["HeadWeights"]

#: Floats of one (queries, hidden, tools) block, 4 MiB: enough for fast GEMMs, bounded per thread.
_BLOCK = 1 << 20


def _numpy(param) -> np.ndarray:
    return param.detach().cpu().numpy().astype(np.float32)


def _float(param) -> float:
    return float(param.detach().cpu())


@dataclasses.dataclass(frozen=True, eq=False)
class HeadWeights:
    """The trained relevance and risk heads as float32 arrays (see the module docstring).

    Parameters
    ----------
    Wq, Wt : ndarray of shape (hidden, d)
        First-layer weights of the query and tool embeddings.
    b1 : ndarray of shape (hidden,)
        First-layer bias.
    Wx : ndarray of shape (hidden, r)
        First-layer weights of the interaction features (``r = 0``: none).
    Pq, Pt : ndarray of shape (r, d)
        Projections of the query and tool embeddings that form the interaction features.
    w2 : ndarray of shape (hidden,)
        Output weights of the relevance head.
    b2, cos_scale, cos_bias : float
        Output bias, and the weight and bias of the cosine term (0 for ``"concat"``).
    R1, rb1, rw2, rb2 : ndarray of shape (hidden, d), (hidden,), (hidden,), and float
        The risk head's hidden weights and bias, and its output weights and bias.
    """

    Wq: np.ndarray
    Wt: np.ndarray
    b1: np.ndarray
    Wx: np.ndarray
    Pq: np.ndarray
    Pt: np.ndarray
    w2: np.ndarray
    b2: float
    cos_scale: float
    cos_bias: float
    R1: np.ndarray
    rb1: np.ndarray
    rw2: np.ndarray
    rb2: float

    @classmethod
    def from_module(cls, module) -> HeadWeights:
        """The weights of a (trained) :class:`~skriskrank._heads.DualHeadModule`."""
        w1 = _numpy(module.rel_hidden.weight)
        d = module.risk_hidden.weight.shape[1]
        wx = w1[:, 2 * d:]  # (hidden, 0) for "concat"
        if module.relevance_head == "concat":
            pq = pt = np.zeros((0, d), np.float32)
            cos_scale = cos_bias = 0.0
        else:
            if module.interaction_rank is None:
                pq = pt = np.eye(d, dtype=np.float32)
            else:
                pq, pt = _numpy(module.rel_proj_q.weight), _numpy(module.rel_proj_t.weight)
            cos_scale, cos_bias = _float(module.cos_scale), _float(module.cos_bias)
        return cls(
            Wq=w1[:, :d], Wt=w1[:, d:2 * d], b1=_numpy(module.rel_hidden.bias),
            Wx=np.ascontiguousarray(wx), Pq=pq, Pt=pt, w2=_numpy(module.rel_out.weight).ravel(),
            b2=_float(module.rel_out.bias), cos_scale=cos_scale, cos_bias=cos_bias,
            R1=_numpy(module.risk_hidden.weight), rb1=_numpy(module.risk_hidden.bias),
            rw2=_numpy(module.risk_out.weight).ravel(), rb2=_float(module.risk_out.bias))

    @property
    def hidden(self) -> int:
        """Hidden units of the relevance head."""
        return self.Wq.shape[0]

    def tool_side(self, tools) -> np.ndarray:
        """The per-tool part ``[Wt t, Pt t]`` of every tool, float32 (n_tools, hidden + r).

        It depends on the tools alone, so a fitted reranker computes it once per tool array.
        """
        return np.asarray(tools, dtype=np.float32) @ np.vstack([self.Wt, self.Pt]).T

    def risk(self, tools) -> np.ndarray:
        """f_risk of every tool, float32 (n_tools,)."""
        h = np.maximum(np.asarray(tools, dtype=np.float32) @ self.R1.T + self.rb1, 0.0)
        return expit(np.asarray(h @ self.rw2 + self.rb2, dtype=np.float32))

    def relevance(self, q_emb, tool_emb, candidates=None, *, tool_side=None,
                  block=_BLOCK) -> np.ndarray:
        """f_rel of each query's candidates (registry indices; ``None``: every tool), float32.

        ``tool_side`` is a precomputed :meth:`tool_side` of ``tool_emb``. ``block`` floats of
        one (queries, hidden, tools) block bound the temporary memory (one block per thread)
        and change nothing in the result.
        """
        q = np.asarray(q_emb, dtype=np.float32)
        tools = np.asarray(tool_emb, dtype=np.float32)
        side = self.tool_side(tools) if tool_side is None else tool_side
        h, r = self.hidden, self.Pq.shape[0]
        # Per query: [Wx * (Pq q), Wq q + b1], so that one product with a tool's [Pt t; 1]
        # gives the first layer without its tool part.
        a = np.empty((len(q), h, r + 1), dtype=np.float32)
        np.multiply(self.Wx[None], (q @ self.Pq.T)[:, None, :], out=a[:, :, :r])
        a[:, :, r] = q @ self.Wq.T + self.b1
        bias = np.float32(self.cos_bias + self.b2)
        if candidates is None:
            out = q @ tools.T
            out *= np.float32(self.cos_scale)
            out += bias
            b = np.ones((r + 1, len(tools)), dtype=np.float32)
            b[:r] = side[:, h:].T
            tb = min(len(tools), max(256, block // h))
            qb = max(1, block // (h * tb))
            # Each block of tools: its columns of [Pt t; 1] and its tool part, contiguous.
            tool_blocks = [(t0, np.ascontiguousarray(b[:, t0:t0 + tb]),
                            np.ascontiguousarray(side[t0:t0 + tb, :h].T)[None])
                           for t0 in range(0, len(tools), tb)]

            def pairs(t0, bb, part, s):
                # Without interactions (r = 0) the product is the query part broadcast
                # along the tools: no GEMM, no (queries, hidden, tools) block.
                shape = (len(a[s:s + qb]), h, bb.shape[1])
                g = (np.broadcast_to(a[s:s + qb, :, r:], shape) if not r
                     else (a[s:s + qb].reshape(-1, r + 1) @ bb).reshape(shape))
                hidden_layer(g, part, self.w2, out[s:s + qb, t0:t0 + tb])

            run_blocks(pairs, [(*t, s) for t in tool_blocks for s in range(0, len(q), qb)])
            return expit(out, out=out)
        candidates = np.asarray(candidates)
        m = candidates.shape[1]
        out = np.empty((len(q), m), dtype=np.float32)
        step = max(1, block // max(1, m * max(h, r + 1)))
        for s in range(0, len(q), step):
            cand = candidates[s:s + step]
            sc = side[cand].transpose(0, 2, 1)  # (queries, hidden + r, m)
            b = np.ones((len(cand), r + 1, m), dtype=np.float32)
            b[:, :r] = sc[:, h:]
            z = out[s:s + step]
            np.multiply(np.vecdot(tools[cand], q[s:s + step, None, :]),
                        np.float32(self.cos_scale), out=z)
            z += bias
            hidden_layer(np.matmul(a[s:s + step], b), sc[:, :h], self.w2, z)
        return expit(out, out=out)
