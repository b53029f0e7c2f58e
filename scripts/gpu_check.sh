#!/usr/bin/env bash
# GPU check (one H200, < 5 minutes): a Qwen3-4B-shaped model with RANDOM weights (nothing can be
# downloaded there) -> SFT tokens/s, MFU, peak memory, and one Dr. GRPO step time.
# The machine has Python 3.12, torch and transformers but no trl/datasets/peft: the call carries
# pure-Python wheels in wheels/ (pip download trl datasets peft accelerate --no-deps -d wheels/,
# plus their pure-Python deps), installed here offline.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/gpu_check}"; mkdir -p "$OUT"
if [ -d wheels ]; then python3 -m pip install --no-index --find-links wheels --no-deps wheels/*.whl >"$OUT/pip.log" 2>&1 || true; fi
python3 - <<'PY' 2>&1 | tee "$OUT/gpu_check.txt"
import json, os, time, torch
from transformers import Qwen3Config, Qwen3ForCausalLM
assert torch.cuda.is_available(), "no GPU"
torch.manual_seed(0)
# Qwen3-4B's shape.
cfg = Qwen3Config(vocab_size=151936, hidden_size=2560, intermediate_size=9728, num_hidden_layers=36,
                  num_attention_heads=32, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
                  tie_word_embeddings=True, torch_dtype="bfloat16")
model = Qwen3ForCausalLM(cfg).to("cuda", torch.bfloat16)
model.gradient_checkpointing_enable()
params = sum(p.numel() for p in model.parameters())
opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
seq, batch, steps = 8192, 1, 6
x = torch.randint(0, cfg.vocab_size, (batch, seq), device="cuda")
torch.cuda.reset_peak_memory_stats()
for i in range(steps + 2):
    if i == 2: torch.cuda.synchronize(); t0 = time.perf_counter()
    loss = model(input_ids=x, labels=x).loss
    loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
torch.cuda.synchronize(); dt = (time.perf_counter() - t0) / steps
tokens_s = batch * seq / dt
# 6N per token for forward+backward, +attention; +1 forward (2N) for gradient checkpointing's recompute.
flops_token = 8 * params + 12 * cfg.num_hidden_layers * cfg.hidden_size * seq
mfu = tokens_s * flops_token / 989e12  # H200 dense bf16 peak
sft = {"sft_tokens_per_s": round(tokens_s), "sft_step_s": round(dt, 3), "mfu": round(mfu, 3),
       "peak_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 1), "params_b": round(params / 1e9, 2)}
# One GRPO-shaped step: 8 generations of 256 tokens from a 1k prompt, then a policy-gradient backward.
model.eval(); prompt = torch.randint(0, cfg.vocab_size, (8, 1024), device="cuda")
torch.cuda.synchronize(); t0 = time.perf_counter()
with torch.no_grad():
    gen = model.generate(prompt, max_new_tokens=256, min_new_tokens=256, do_sample=True, pad_token_id=0)
torch.cuda.synchronize(); t_gen = time.perf_counter() - t0
model.train(); t0 = time.perf_counter()
logits = model(input_ids=gen).logits[:, 1023:-1].float()
logp = torch.log_softmax(logits, -1).gather(-1, gen[:, 1024:, None]).squeeze(-1)
adv = torch.randn(8, 1, device="cuda"); (-(adv * logp).sum() / (8 * 256)).backward(); opt.step(); opt.zero_grad()
torch.cuda.synchronize(); t_upd = time.perf_counter() - t0
try:
    import trl; trl_version = trl.__version__
except ImportError:
    trl_version = None
print(json.dumps(sft | {"grpo_generate_s": round(t_gen, 2), "grpo_update_s": round(t_upd, 2),
                        "grpo_step_s": round(t_gen + t_upd, 2), "trl": trl_version,
                        "gpu": torch.cuda.get_device_name(), "torch": torch.__version__}))
PY
