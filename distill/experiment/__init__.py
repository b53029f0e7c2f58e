"""`arena experiment run`: the paper's experiment end to end, a real pretrained student, one command.

suite -> arena run (reference agents, offline policy, sandboxed, judged) -> corpus export -> leak check
-> student materialised -> base on held-out -> each post-training stage, evaluated the same way -> report.
Every step is cached by its inputs (distill/experiment/steps.py), so an interrupted run resumes.
"""
