"""The reasoning judge: rubric, evidence, rules judge, LLM judge, calibration (docs/judge.md)."""
