"""Seed test writer for the email_validation arena: propose addresses that may trip a validator.

`propose(n, seed)` returns n proposals {"address": str, "valid": bool}: an
ordinary address bent in one place (dot placement, hyphens, a special-use
name, quoting, length, ...) with this writer's guess of whether the result
is still valid. The guesses are a developer's, not the RFC's: some are
wrong, and the engine's oracle (outside any sandbox) keeps only the ones it
confirms. Deterministic for a seed. Room to improve: more kinds of bends,
better guesses, addresses aimed at what validators get wrong.
"""
import random

LOCALS = ["john", "jane.doe", "info", "sales", "a.b", "user123", "first.last"]
DOMAINS = ["example.com", "mail.example.org", "shop.co.uk", "company.net", "site.io"]


def bends(local, domain):
    """(address, guessed validity) for each way of bending one address."""
    return [
        (local + ".." + "x@" + domain, False),          # doubled dot
        ("." + local + "@" + domain, False),            # leading dot
        (local + ".@" + domain, False),                 # trailing dot
        (local + "@-" + domain, False),                 # label starts with a hyphen
        (local + "+tag@" + domain, True),               # sub-addressing
        (local + "@" + domain.split(".")[0] + ".local", True),  # a guess the oracle will not share
        ('"' + local + '"@' + domain, True),            # quoted local part (a guess)
        (local + "@" + domain + ".", False),            # trailing dot in the domain
        (local + "@" + "a" * 64 + ".com", False),       # a 64-character label
        (local + "@sub_domain." + domain, False),       # underscore in the domain
        (local + "@" + domain.split(".")[0] + ".123", False),  # numeric TLD
    ]


def propose(n, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        address, valid = rng.choice(bends(rng.choice(LOCALS), rng.choice(DOMAINS)))
        out.append({"address": address, "valid": valid})
    return out
