"""Post-training on the corpus: SFT, teacher-SFT, rejection-sampled re-SFT, KTO, Dr. GRPO (trl)."""
