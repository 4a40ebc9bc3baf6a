"""Faults: each is applied through the real API (or a real process) and can be reverted."""
