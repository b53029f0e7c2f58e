"""The shipped labelled set: episode records with the level the rubric gives them.

Built cases (``judge.calibration.label_cases``) run against a real seeded synthetic catalog;
captured cases (``judge/calibration/labels/captured.jsonl``) are real episodes from the
runner with the built-in heuristic policy, labelled by reading them.

Regenerate: ``.venv/bin/python -m judge.calibration.labelset`` (writes judge/calibration/labels/labelled.jsonl
and prints any case where the rules judge disagrees with the gold level).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from judge.calibration.label_cases import BUILT
from judge.calibration.label_shop import Shop
from judge.records import LabelledEpisode, load_labels, write_labels

LABELS_DIR = Path(__file__).resolve().parent / "labels"
LABELLED = LABELS_DIR / "labelled.jsonl"
CAPTURED = LABELS_DIR / "captured.jsonl"


def build_labels() -> list[LabelledEpisode]:
    with tempfile.TemporaryDirectory(prefix="judge-labels-") as tmp:
        shop = Shop(Path(tmp))
        labels = []
        for make in BUILT:
            case, gold, note, builder = make(shop)
            labels.append(LabelledEpisode(case=case, gold=gold, note=note, record=builder.build()))
    if CAPTURED.is_file():
        labels += load_labels(CAPTURED)
    return labels


def main() -> None:  # pragma: no cover - a maintenance script
    from judge.rules import RulesJudge

    parser = argparse.ArgumentParser(description="Regenerate the labelled calibration set.")
    parser.add_argument("--out", type=Path, default=LABELLED)
    args = parser.parse_args()
    labels = build_labels()
    write_labels(labels, args.out)
    rules = RulesJudge()
    for label in labels:
        found = rules.findings(label.record)
        flag = "" if found.level == label.gold else "   <-- rules disagree"
        print(f"{label.case:32} gold {label.gold}  rules {found.level}{flag}\n    {found.explanation}")
    print(f"{len(labels)} labelled episodes -> {args.out}")


if __name__ == "__main__":  # pragma: no cover
    main()
