"""The greedy token of an fp32 LM head without reading the whole fp32 head: a bf16 copy scores every
vocabulary row, its top candidates are rescored exactly, and a rounding-error bound proves that the
token is the one ``torch.argmax`` picks on the fp32 head's logits. Where the bound cannot prove it
(a near-tie, or a hidden state the bf16 copy misjudges), the fp32 head computes the step as before.

Why bf16, and why this kernel (measured on the shared 2-core AMD EPYC, AVX-512 BF16, torch 2.13,
2 threads; docs/results/student-serving.md): the Gemma 3 270M head is 262,144 x 640, 671 MB at
fp32, and a decode step of 4 rows spent about 120 ms in it. A bf16 ``F.linear`` took about 47 ms,
the same bf16 weight prepacked for oneDNN (``torch.ops.mkldnn._linear_pointwise``) 12-30 ms.
fbgemm's dynamic int8 linear was as fast (16-24 ms), but it quantizes the hidden state to 8 bits
per tensor, and this model's hidden states carry outlier channels of 70-95 (L1 norm near 2,000):
its logits were off by up to 2.2, more than the margin between the best token and the 17th, so
the proof would fail on most steps. Relative rounding (bf16 keeps 8 significant bits of every
element, outliers included) gives errors of 0.1-0.5 there, well inside the margin to the 65th
candidate (2.3 or more).

The proof, for one row with hidden state h (fp32, K elements) and head rows w_j (fp32):

- The fp32 head's logit f_j, whatever its summation order, is within g * S_j of the real h . w_j,
  where S_j = sum_i |h_i w_ji| and g = gamma_K = K u / (1 - K u), u = 2^-24 (fp32 rounding).
- The bf16 logit a_j (inputs rounded to bf16, products summed in fp32, the sum rounded to bf16)
  is within c_S * S_j + c_a * |a_j| of h . w_j: c_S covers rounding h and w (2^-8 and a little),
  and the fp32 sum; c_a covers the output's rounding to bf16.
- S_j <= ||h||_2 * max_j ||w_j||_2 (Cauchy-Schwarz), one number a row.
- The candidates are the ``candidates`` highest a_j. Every other row's a_j is at most t, the next
  highest, so its f_j is at most U = t + c_a |t| + (c_S + g) ||h||_2 max ||w||_2.
- Each candidate's h . w_c is computed in float64 (its products are exact there), and f_c lies
  within (g + gamma_K in float64) * S_c of it.
- The best candidate is proven when its lowest possible f_c exceeds every other candidate's highest
  and U. Then its fp32 logit is strictly the largest, so ``torch.argmax`` (which takes the lowest
  index among equals) picks it: a tie, or anything within rounding of one, falls back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_FP32_UNIT = 2.0**-24
_FP64_UNIT = 2.0**-53
_BF16_UNIT = 2.0**-9  # half an ulp of 8 significant bits, relative
# Float64 arithmetic of the bound itself, the flush of denormals by bf16 dot-product instructions
# and any other absolute trifle: orders of magnitude below the bound, added so that it stays one.
_SLACK_RELATIVE = 1e-9
_SLACK_ABSOLUTE = 1e-20


def _gamma(terms: int, unit: float) -> float:
    """Higham's bound on the relative error of a sum of ``terms`` products, in any order."""
    return terms * unit / (1 - terms * unit)


@dataclass(frozen=True)
class Bounds:
    """The error factors of the proof for hidden states of ``size`` elements (see the module's text)."""

    size: int

    @property
    def fp32(self) -> float:
        """|f_j - h . w_j| <= fp32 * S_j: the fp32 head, any summation order."""
        return _gamma(self.size, _FP32_UNIT)

    @property
    def bf16_sum(self) -> float:
        """The bf16 logit's error per unit of S_j: rounding h and w to bf16, then the fp32 sum."""
        return 2 * _BF16_UNIT + _BF16_UNIT**2 + self.fp32 * (1 + 4 * _BF16_UNIT)

    @property
    def bf16_out(self) -> float:
        """The bf16 logit's error per unit of its own magnitude: the sum's rounding to bf16."""
        return _BF16_UNIT / (1 - _BF16_UNIT)

    @property
    def rescore(self) -> float:
        """|f_c - e_c| <= rescore * S_c, e_c the float64 logit of a candidate."""
        return (self.fp32 + _gamma(self.size, _FP64_UNIT)) * (1 + _SLACK_RELATIVE)


class GreedyHead:
    """The argmax of ``lm_head(hidden)`` for greedy rows, proven from a bf16 copy of the head.

    ``choose(hidden)`` returns each row's token, equal to ``torch.argmax`` of the fp32 head's logits
    for that row. A step where a row cannot be proven runs the fp32 head on the whole batch, the
    call ``forward()`` makes, so every fallback token is the one the model gives today. The bf16 copy
    is made on first use and again when the head's weight changes (it is the tied embedding, which
    training writes in place)."""

    def __init__(self, lm_head: Any, *, candidates: int = 64) -> None:
        self.lm_head, self.candidates = lm_head, candidates
        self.proven = self.fallback_rows = self.fallback_steps = 0  # for benchmarks and tests
        self._copy: tuple[int, int] | None = None  # (data_ptr, version) of the weight the copy is of

    @staticmethod
    def fits(model: Any) -> bool:
        """Whether ``model``'s logits are a bias-free fp32 linear head of its decoder's last hidden
        state and nothing after it (no soft-capping), the arithmetic the proof covers."""
        import torch

        head: Any = getattr(model, "lm_head", None)
        config = getattr(model, "config", None)
        return (
            type(head) is torch.nn.Linear
            and head.bias is None
            and head.weight.dtype == torch.float32
            and head.weight.device.type == "cpu"
            and getattr(config, "final_logit_softcapping", None) is None
            and callable(getattr(model, "get_decoder", None))
        )

    def _prepare(self) -> None:
        import torch

        weight = self.lm_head.weight
        key = (weight.data_ptr(), weight._version)
        if self._copy == key:
            return
        low = weight.detach().to(torch.bfloat16).contiguous()
        self._matmul = _bf16_linear(low)
        norms = weight.detach().double().norm(dim=1)
        self._row_norm = float(norms.max()) * (1 + _SLACK_RELATIVE)
        self._copy = key

    def choose(self, hidden) -> list[int]:
        """The greedy token of each row of ``hidden`` ([rows, 1, K], the decoder's last position)."""
        import torch

        with torch.no_grad():
            self._prepare()
            rows = hidden[:, -1, :]
            tokens = self._proven(rows) if bool(torch.isfinite(rows).all()) else None
            if tokens is not None:
                self.proven += len(tokens)
                return tokens
            self.fallback_steps, self.fallback_rows = self.fallback_steps + 1, self.fallback_rows + len(rows)
            logits = self.lm_head(hidden)[:, -1, :].float()  # what forward() computes, bit for bit
            return [int(torch.argmax(row)) for row in logits]

    def _proven(self, rows) -> list[int] | None:
        """Every row's token if the bound proves them all, else None."""
        import torch

        bounds = Bounds(rows.shape[1])

        approx = self._matmul(rows.to(torch.bfloat16))
        top = torch.topk(approx, self.candidates + 1, dim=1)
        index = top.indices[:, : self.candidates]
        beyond = top.values[:, -1].double()  # the highest bf16 logit outside the candidates
        exact_rows = rows.double()
        heads = self.lm_head.weight.detach()[index].double()  # [rows, candidates, K]
        exact = torch.einsum("rck,rk->rc", heads, exact_rows)
        spread = torch.einsum("rck,rk->rc", heads.abs(), exact_rows.abs()) * bounds.rescore + _SLACK_ABSOLUTE
        norm = exact_rows.norm(dim=1) * (1 + _SLACK_RELATIVE)
        worst = (bounds.bf16_sum + bounds.fp32) * norm * self._row_norm  # per unit of S_j, S_j at its largest
        outside = beyond + bounds.bf16_out * beyond.abs() + worst + _SLACK_ABSOLUTE
        tokens = []
        for r in range(len(rows)):
            best = int(torch.argmax(exact[r]))
            low = exact[r, best] - spread[r, best]
            high = exact[r] + spread[r]
            high[best] = float("-inf")
            if not bool(low > high.max()) or not bool(low > outside[r]):
                return None
            tokens.append(int(index[r, best]))
        return tokens


def _bf16_linear(weight):
    """``x @ weight.T`` for bf16 ``x``: through oneDNN's prepacked weight where this torch has it
    (2-4x faster than ``F.linear`` on bf16 here), else ``F.linear``. Either sums in fp32."""
    import torch

    try:
        if torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported():
            packed = torch.ops.mkldnn._reorder_linear_weight(weight, 1)
            probe = torch.zeros(1, weight.shape[1], dtype=torch.bfloat16)
            torch.ops.mkldnn._linear_pointwise(probe, packed, None, "none", [], "")
            return lambda x: torch.ops.mkldnn._linear_pointwise(x, packed, None, "none", [], "")
    except (RuntimeError, AttributeError):
        pass  # a torch without the private op: the public one
    return lambda x: torch.nn.functional.linear(x, weight)
