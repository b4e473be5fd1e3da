"""Seed agent for email validation: a naive regex, documented as naive.

It checks only the shape "something@something.something" with no spaces and
one @-sign, the test a developer writes first. It knows nothing of dot
placement, label rules (hyphens, length, characters), length limits,
quoting, bracketed IP addresses, reserved domains or unicode rules, so it
accepts many addresses RFC 5321/5322 syntax rejects. Room to improve.
"""
import re

NAIVE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def is_valid(address: str) -> bool:
    """True when `address` looks like an email address (naively)."""
    return NAIVE.match(address) is not None
