"""Defines no agent_main."""

VALUE = 1
