"""The calibration lab: a labelled set of episodes, the tools that build it, and agreement with a judge on it."""
