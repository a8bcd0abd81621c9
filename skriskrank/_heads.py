"""The reranker's two heads as a torch module, and the skorch net that trains them."""

import math

import torch
from skorch import NeuralNet
from torch import nn

__all__ = ["DualHeadModule", "DualHeadNet"]


class DualHeadModule(nn.Module):
    """The two heads: ``forward(query, tools)`` returns ``(f_rel, f_risk)``, relevance first.

    Parameters
    ----------
    dim : int
        Embedding dimension ``d``.
    hidden : int, default=64
        Hidden units of each head.
    relevance_head : {"residual", "concat"}, default="residual"
        ``"concat"`` is the paper's ``MLP([e_q; e_t])`` (2d -> hidden -> 1, ReLU, sigmoid).
        ``"residual"`` learns a correction on top of the frozen cosine similarity:
        ``sigmoid(a * cos(q, t) + b + MLP([e_q; e_t; x(q, t)]))`` with the MLP's last layer
        initialised to zero, so that training starts from the dense ranking.
    interaction_rank : int or None, default=32
        The residual head's interaction features ``x(q, t)``. ``None``: the elementwise
        product ``e_q * e_t`` (``d`` features). An int ``r``: ``(P_q e_q) * (P_t e_t)``,
        the product of two learned ``r``-dimensional projections (both start as the same
        random orthonormal rows, so ``x`` starts as a projection of the cosine's terms): a
        pair costs ``O(r * hidden)``, not ``O(d * hidden)``. Ignored by ``"concat"``.
    device : str, torch.device or None, default=None
        Where the weights live (None: the CPU); ``"meta"`` leaves them empty and undrawn.
    """

    def __init__(self, dim, hidden=64, relevance_head="residual", interaction_rank=32,
                 device=None):
        super().__init__()
        self.relevance_head = relevance_head
        self.interaction_rank = None
        empty = {"device": "meta"}  # each weight is drawn once, by reset_parameters
        if relevance_head == "concat":
            n_in = 2 * dim
        elif interaction_rank is None:
            n_in = 3 * dim
        else:
            self.interaction_rank = int(interaction_rank)
            self.rel_proj_q = nn.Linear(dim, self.interaction_rank, bias=False, **empty)
            self.rel_proj_t = nn.Linear(dim, self.interaction_rank, bias=False, **empty)
            n_in = 2 * dim + self.interaction_rank
        self.rel_hidden = nn.Linear(n_in, hidden, **empty)
        self.rel_out = nn.Linear(hidden, 1, **empty)
        self.risk_hidden = nn.Linear(dim, hidden, **empty)
        self.risk_out = nn.Linear(hidden, 1, **empty)
        if relevance_head == "residual":
            self.cos_scale = nn.Parameter(torch.empty((), **empty))
            self.cos_bias = nn.Parameter(torch.empty((), **empty))
        if str(device) != "meta":
            self.to_empty(device=device or "cpu").reset_parameters()

    def reset_parameters(self, generator=None):
        """Draw every weight afresh from ``generator`` (None: torch's global generator).

        In the order the layers were built, as ``torch.nn.Linear`` draws its own; then
        the projections' shared orthonormal rows and the residual head's zero output layer.
        """
        with torch.no_grad():
            for layer in self.children():
                nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
                if layer.bias is not None:
                    bound = 1 / math.sqrt(layer.in_features)
                    nn.init.uniform_(layer.bias, -bound, bound, generator=generator)
                if layer is getattr(self, "rel_proj_t", None):
                    nn.init.orthogonal_(self.rel_proj_q.weight, generator=generator)
                    layer.weight.copy_(self.rel_proj_q.weight)
            if self.relevance_head == "residual":
                nn.init.zeros_(self.rel_out.weight)
                nn.init.zeros_(self.rel_out.bias)
                self.cos_scale.fill_(10.0)  # cos in [0, 1] mapped to a usable slope
                self.cos_bias.fill_(-5.0)
        return self

    def relevance_logit(self, query, tools):
        """Pre-sigmoid relevance of ``tools`` (B, n, d) for ``query`` (B, d)."""
        q = query.unsqueeze(1).expand(-1, tools.shape[1], -1)
        parts = [q, tools]
        if self.interaction_rank is not None:
            parts.append(self.rel_proj_q(query).unsqueeze(1) * self.rel_proj_t(tools))
        elif self.relevance_head == "residual":
            parts.append(q * tools)
        z = self.rel_out(torch.relu(self.rel_hidden(torch.cat(parts, dim=-1)))).squeeze(-1)
        if self.relevance_head == "residual":
            z = z + self.cos_scale * (q * tools).sum(-1) + self.cos_bias
        return z

    def risk(self, tools):
        """f_risk of ``tools`` (..., d) in [0, 1]."""
        return torch.sigmoid(self.risk_out(torch.relu(self.risk_hidden(tools))).squeeze(-1))

    def forward(self, query, tools):
        """``(f_rel, f_risk)`` (B, n), each in [0, 1], of each query's tools (B, n, d)."""
        return torch.sigmoid(self.relevance_logit(query, tools)), self.risk(tools)


class DualHeadNet(NeuralNet):
    """skorch net for :class:`DualHeadModule` with the paper's joint loss.

    ``loss = mean(relu(margin - f_rel(q, t+) + f_rel(q, t-))) + risk_loss_weight *
    MSE(f_risk(t), (r_t - 1) / 4)`` over the tools of the batch whose risk is known. Each
    training sample is a query with its tools ``[t+, t-_1, ..., t-_n]``; ``y`` holds their
    risk targets (NaN where unknown). ``margin`` and ``risk_loss_weight`` are
    :class:`~skriskrank.RiskAwareReranker`'s, the other arguments :class:`skorch.NeuralNet`'s.
    A ``seed`` draws the module's weights from a generator of the net's own (the draws of
    ``torch.manual_seed(seed)``); None draws from torch's global generator.
    """

    def __init__(self, *args, margin=0.1, risk_loss_weight=0.5, seed=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.margin = margin
        self.risk_loss_weight = risk_loss_weight
        self.seed = seed

    def initialize_module(self):
        """Build the module; given a ``seed``, draw its weights from a generator of its own."""
        super().initialize_module()
        if self.seed is not None:
            self.module_.to_empty(device="cpu").reset_parameters(
                torch.Generator().manual_seed(self.seed))
        return self

    def get_loss(self, y_pred, y_true, X=None, training=False):
        rel, risk = y_pred
        pos, neg = rel[:, :1], rel[:, 1:]
        rank_loss = torch.relu(self.margin - pos + neg).mean()
        target = y_true.to(risk.device, risk.dtype)
        known = ~torch.isnan(target)
        risk_loss = (self.criterion_(risk[known], target[known]) if known.any()
                     else risk.sum() * 0.0)
        return rank_loss + self.risk_loss_weight * risk_loss
