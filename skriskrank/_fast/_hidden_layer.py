"""The hidden layer of the relevance head: ``out += w2 . relu(pre + tool part)``.

One compiled pass over a GEMM block of pre-activations (``skriskrank._head_weights``), where
numpy would take three, each a full read and write. The ReLU keeps NaN (``0 if v < 0 else
v``: NaN < 0 is false), so an embedding that is not finite scores NaN, never a made-up number.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _hidden(pre, tool, w2, out):
    n, h, w = pre.shape
    acc = np.empty(w, dtype=np.float32)
    shared = tool.shape[0] == 1
    zero = np.float32(0.0)
    for i in range(n):
        tp = tool[0] if shared else tool[i]
        acc[:] = 0.0
        for j in range(h):
            c = w2[j]
            for t in range(w):
                v = pre[i, j, t] + tp[j, t]
                acc[t] += c * (zero if v < zero else v)
        for t in range(w):
            out[i, t] += acc[t]


def hidden_layer(pre, tool, w2, out):
    """``out[i, t] += sum_j w2[j] * relu(pre[i, j, t] + tool[i or 0, j, t])``, float32.

    ``pre`` (n, hidden, w) is C-contiguous; ``tool`` is (n, hidden, w), or (1, hidden, w) when
    every row shares it; ``w2`` is (hidden,) and ``out`` (n, w).
    """
    _hidden(pre, np.ascontiguousarray(tool), w2, out)
    return out
