"""Make the email_validation task's two data sets once, labelled by the oracle.

Why a script: the labels must come from the oracle (email-validator, with the
options in tasks/email_validation/task.py), not from anyone's idea of valid,
and the sets must be reproducible. Run it once and commit the JSON:

    python scripts/make_email_sets.py [--seed 0]

- data/original.json (dev): ~100 addresses a developer writes first, plain
  valid ones and obvious invalid ones (no @, two @, spaces, nothing after @,
  no TLD), 4 batches of 25;
- data/adversarial.json (holdout): 1,000 addresses built by mutation from
  templates (dot placement, label hyphens, label/local/total length limits,
  underscores, numeric TLDs, IP literals, quoting, comments, whitespace,
  unicode local parts and IDN domains, special-use names, ...) plus valid
  tricky ones (+tags, apostrophes, single-character labels, long TLDs, ...),
  half valid and half invalid by the oracle, spread evenly over the kinds,
  shuffled into 40 batches of 25.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tasks.email_validation.task import DATA, ORACLE_NOTE, oracle_is_valid  # noqa: E402

BATCH = 25

# ----- the original set: what a developer tests first --------------------------------------------
ORIGINAL_VALID = [
    "john@example.com",
    "jane.doe@example.com",
    "john.smith@gmail.com",
    "alice@company.org",
    "bob@mail.example.com",
    "support@shop.co.uk",
    "info@my-site.net",
    "contact@website.io",
    "first.last@university.edu",
    "user123@yahoo.com",
    "sales@business.biz",
    "admin@server.example.org",
    "test.user@domain.com",
    "peter@outlook.com",
    "mary.jones@hotmail.co.uk",
    "dev@startup.io",
    "hello@world.com",
    "noreply@notifications.example.com",
    "a.b@c.de",
    "jsmith@company.com",
    "anna.maria@firma.de",
    "marketing@brand.com",
    "user@sub.domain.org",
    "team@project.dev",
    "someone@somewhere.net",
    "customer.service@store.com",
    "jdoe2024@mail.com",
    "billing@acme.com",
    "office@law-firm.com",
    "help@desk.example.com",
    "ceo@bigcorp.com",
    "newsletter@media.co",
    "x@example.com",
    "tom_hanks@movies.com",
    "sara-lee@bakery.com",
    "user.name@example.com",
    "jane@doe.name",
    "mike99@games.net",
    "hr@people.example.org",
    "events@city.gov",
    "student@school.ac.uk",
    "orders@pizza.com",
    "webmaster@example.net",
    "family@home.com",
    "lisa.smith@example.co",
    "feedback@app.io",
    "user@example.travel",
    "paul@example.info",
    "careers@jobs.example.com",
    "kim@korea.kr",
    "luca@italia.it",
    "pierre@france.fr",
]
ORIGINAL_INVALID = [
    "plainaddress",
    "john.example.com",
    "@example.com",
    "john@",
    "john@@example.com",
    "john@example@com",
    "john doe@example.com",
    "john@exam ple.com",
    " john@example.com",
    "john@example.com ",
    "john@example",
    "john@localhost",
    "",
    "@",
    "john@.com",
    "john@com",
    "john.doe",
    "example.com",
    "john@example,com",
    "john;doe@example.com",
    "john@example.com@",
    "jane@",
    "@domain.org",
    "user name@mail.com",
    "user@mail .com",
    "user@",
    "no-at-sign.com",
    "two@@signs.com",
    "user@@",
    "user@domain",
    "user@@domain.com",
    "a@b",
    "first last@example.com",
    "user@exa mple.org",
    "missing.domain@",
    "justtext",
    "user@site",
    "name@company",
    "mailto@",
    "user@.org",
    "@@example.com",
    "user@ example.com",
    "user @example.com",
    "user@example..com",
    "john..doe@example.com",
    ".john@example.com",
    "john.@example.com",
    "user@-example.com",
]


# ----- the adversarial set: templates and mutations ------------------------------------------------
LOCALS = [
    "john",
    "jane.doe",
    "a",
    "first.last",
    "info",
    "user42",
    "mary.ann.smith",
    "bob",
    "x1",
    "sales",
    "o.k",
    "test",
    "m",
    "hello.world",
    "team-lead",
    "j_doe",
    "admin",
    "zz",
]
DOMAINS = [
    "example.com",
    "mail.example.org",
    "a.io",
    "sub.domain.co.uk",
    "example.net",
    "shop.example.de",
    "x.org",
    "my-site.com",
    "uni.edu",
    "b.cd",
    "host1.example.com",
    "company.info",
    "e.museum",
    "news.example.co.jp",
    "k8s.dev",
    "d.ee",
]
TLDS = [
    "com",
    "org",
    "net",
    "io",
    "de",
    "uk",
    "info",
    "travel",
    "museum",
    "technology",
    "photography",
    "international",
    "xn--p1ai",
    "co",
    "me",
]
SPECIAL_TLDS = ["test", "local", "localhost", "invalid", "onion", "arpa"]
UNICODE_LOCALS = ["üser", "josé", "дмитрий", "用户", "θσερ", "françois.dupont", "ærø", "ñandú", "ユーザー", "δοκιμή"]
IDN_DOMAINS = [
    "münchen.de",
    "bücher.example.com",
    "пример.рф",
    "例え.jp",
    "café.fr",
    "xn--bcher-kva.com",
    "ñandú.com.ar",
    "straße.de",
    "εμπορικό.gr",
    "中国.cn",
]
TRICKY_LOCAL_CHARS = "!#$%&'*+/=?^_`{|}~-"
BAD_LOCAL_CHARS = '()<>[]:;,\\" '
BAD_DOMAIN_CHARS = "_!#$%&'*+/=?^`{|}~,;:()<>\\\""


LONG_TLDS = ["technology", "photography", "international", "museum"]


def _label(rng: random.Random, n: int) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return rng.choice("abcdefghijklmnopqrstuvwxyz") + "".join(rng.choice(alphabet) for _ in range(n - 1))


def _pick(rng: random.Random) -> tuple[str, str]:
    return rng.choice(LOCALS), rng.choice(DOMAINS)


def _dots_local(rng: random.Random, local: str, domain: str) -> str:
    base = local if "." in local else local + "." + rng.choice(LOCALS).split(".")[0]
    i = base.index(".")
    return (
        rng.choice([base[:i] + ".." + base[i + 1 :], "." + base, base + ".", base[:i] + "..." + base[i + 1 :]])
        + "@"
        + domain
    )


def _dots_domain(rng: random.Random, local: str, domain: str) -> str:
    i = domain.index(".")
    return (
        local
        + "@"
        + rng.choice(
            [
                domain[:i] + ".." + domain[i + 1 :],
                "." + domain,
                domain + ".",
                domain + "..",
                domain.replace(".", ".-.", 1),
            ]
        )
    )


def _hyphen(rng: random.Random, local: str, domain: str) -> str:
    labels = domain.split(".")
    k = rng.randrange(len(labels))
    labels[k] = rng.choice(
        ["-" + labels[k], labels[k] + "-", labels[k][:1] + "--" + labels[k][1:], labels[k][:1] + "-" + labels[k][1:]]
    )
    return local + "@" + ".".join(labels)


def _long_label(rng: random.Random, local: str, domain: str) -> str:
    n = rng.choice([62, 63, 63, 64, 65, 70])
    return local + "@" + _label(rng, n) + "." + domain


def _long_local(rng: random.Random, local: str, domain: str) -> str:
    n = rng.choice([63, 64, 65, 66, 80])
    return ".".join(_label(rng, 8) for _ in range(10))[:n].strip(".") + "@" + domain


def _long_total(rng: random.Random, local: str, domain: str) -> str:
    target = rng.choice([250, 253, 254, 255, 256, 260, 300])
    labels = []
    while len(local) + 1 + len(".".join(labels + [domain])) < target:
        labels.append(_label(rng, rng.randint(20, 60)))
    address = local + "@" + ".".join(labels + [domain])
    excess = len(address) - target
    if excess > 0 and len(labels[0]) > excess + 1:
        labels[0] = labels[0][: len(labels[0]) - excess]
    return local + "@" + ".".join(labels + [domain])


def _bad_domain_char(rng: random.Random, local: str, domain: str) -> str:
    i = rng.randrange(1, domain.index(".") + 1)
    return local + "@" + domain[:i] + rng.choice(BAD_DOMAIN_CHARS) + domain[i:]


def _numeric_tld(rng: random.Random, local: str, domain: str) -> str:
    return (
        local
        + "@"
        + rng.choice(
            [
                domain.rsplit(".", 1)[0] + "." + str(rng.randint(1, 999)),
                ".".join(str(rng.randint(0, 255)) for _ in range(4)),
                "123.456",
                domain + "." + str(rng.randint(0, 99)),
            ]
        )
    )


def _ip_literal(rng: random.Random, local: str, domain: str) -> str:
    ip = ".".join(str(rng.randint(0, 255)) for _ in range(4))
    return local + "@" + rng.choice([f"[{ip}]", f"[IPv6:2001:db8::{rng.randint(1, 9999):x}]", f"[{ip}"])


def _quoted(rng: random.Random, local: str, domain: str) -> str:
    return (
        rng.choice([f'"{local}"', f'"{local} smith"', f'"{local}@home"', f'"{local}".x', '"a\\"b"', f'"{local}..x"'])
        + "@"
        + domain
    )


def _space(rng: random.Random, local: str, domain: str) -> str:
    address = local + "@" + domain
    i = rng.randrange(1, len(address))
    return rng.choice(
        [
            address[:i] + " " + address[i:],
            address[:i] + "\t" + address[i:],
            " " + address,
            address + " ",
            address + "\n",
            address[:i] + "\u00a0" + address[i:],
        ]
    )


def _bad_local_char(rng: random.Random, local: str, domain: str) -> str:
    i = rng.randrange(0, len(local) + 1)
    return local[:i] + rng.choice(BAD_LOCAL_CHARS) + local[i:] + "@" + domain


def _no_tld(rng: random.Random, local: str, domain: str) -> str:
    return local + "@" + rng.choice([domain.split(".")[0], "localhost", "intranet", "server1"])


def _special_tld(rng: random.Random, local: str, domain: str) -> str:
    return local + "@" + domain.rsplit(".", 1)[0] + "." + rng.choice(SPECIAL_TLDS)


def _at_signs(rng: random.Random, local: str, domain: str) -> str:
    return rng.choice(
        [
            local + "@@" + domain,
            local + "@" + local + "@" + domain,
            "@" + local + "@" + domain,
            local + "@" + domain + "@",
            local + domain,
            local + "@",
        ]
    )


def _comment(rng: random.Random, local: str, domain: str) -> str:
    return rng.choice(
        [f"{local}(comment)@{domain}", f"(note){local}@{domain}", f"{local}@{domain}(work)", f"{local}@(x){domain}"]
    )


def _display_name(rng: random.Random, local: str, domain: str) -> str:
    return rng.choice([f"{local.title()} <{local}@{domain}>", f"<{local}@{domain}>", f"mailto:{local}@{domain}"])


def _unicode_local(rng: random.Random, local: str, domain: str) -> str:
    return rng.choice(UNICODE_LOCALS) + "@" + domain


def _idn_domain(rng: random.Random, local: str, domain: str) -> str:
    return local + "@" + rng.choice(IDN_DOMAINS)


def _unicode_bad(rng: random.Random, local: str, domain: str) -> str:
    """Unicode the oracle refuses: invisible, control, symbol or combining characters, disallowed IDNA."""
    return rng.choice(
        [
            local + "\u200b@" + domain,
            local + "@" + domain.replace(".", "\u3002", 1),
            local + "\u0301@" + domain,
            "\u2603" + local + "@" + domain,
            local + "@\u2603." + domain,
            local + "@" + "ex\u00adample.com",
            local + "\u202e@" + domain,
            local + "@xn--zz." + domain,
            local + "@" + domain.split(".")[0] + ".\u0441\u043e\u043c",
        ]
    )


def _empty_parts(rng: random.Random, local: str, domain: str) -> str:
    return rng.choice(["@" + domain, local + "@", local + "@.", "@", local + "@." + domain.split(".")[-1]])


def _tricky_valid(rng: random.Random, local: str, domain: str) -> str:
    """Valid by the oracle, though many home-made validators reject them."""
    return rng.choice(
        [
            f"{local}+{rng.choice(['tag', 'news', 'a.b', '1', 'x-y'])}@{domain}",
            f"o'{rng.choice(['brien', 'neil', 'connor'])}@{domain}",
            f"{local}@{rng.choice('abcxyz')}.{rng.choice(TLDS)}",
            f"{rng.choice('abcdefghijklmnopqrstuvwxyz')}@{rng.choice('abcdefghijklmnopqrstuvwxyz')}.{rng.choice(TLDS)}",
            f"{local}@{domain.rsplit('.', 1)[0]}.{rng.choice(LONG_TLDS)}",
            f"{local.upper()}@{domain.upper()}",
            f"{rng.randint(0, 99999)}@{domain}",
            f"{rng.choice(TRICKY_LOCAL_CHARS)}{local}@{domain}",
            f"{local}{rng.choice(TRICKY_LOCAL_CHARS)}{rng.choice(LOCALS).split('.')[0]}@{domain}",
            f"{local}@{rng.randint(1, 999)}.{domain}",
            f"{local}@{_label(rng, 3)}-{_label(rng, 4)}.{domain}",
            f"{local}@{_label(rng, 4)}.{_label(rng, 3)}.{_label(rng, 5)}.{domain}",
            f"{local}@{domain.split('.')[0]}.xn--p1ai",
            f"{local}@{domain.rsplit('.', 1)[0]}.c0m",
            f"-{local}@{domain}",
            f"{local}-@{domain}",
            f"{local}_@{domain}",
        ]
    )


MUTATIONS: dict[str, Callable[[random.Random, str, str], str]] = {
    "dots_local": _dots_local,
    "dots_domain": _dots_domain,
    "hyphen": _hyphen,
    "long_label": _long_label,
    "long_local": _long_local,
    "long_total": _long_total,
    "bad_domain_char": _bad_domain_char,
    "numeric_tld": _numeric_tld,
    "ip_literal": _ip_literal,
    "quoted": _quoted,
    "space": _space,
    "bad_local_char": _bad_local_char,
    "no_tld": _no_tld,
    "special_tld": _special_tld,
    "at_signs": _at_signs,
    "comment": _comment,
    "display_name": _display_name,
    "unicode_local": _unicode_local,
    "idn_domain": _idn_domain,
    "unicode_bad": _unicode_bad,
    "empty_parts": _empty_parts,
    "tricky_valid": _tricky_valid,
}


def candidates(rng: random.Random, per_kind: int) -> dict[str, list[str]]:
    """{kind: distinct addresses} made by each mutation from random templates."""
    out: dict[str, list[str]] = {}
    for kind, mutate in MUTATIONS.items():
        seen: dict[str, None] = {}
        for _ in range(per_kind * 20):
            if len(seen) >= per_kind:
                break
            seen[mutate(rng, *_pick(rng))] = None
        out[kind] = list(seen)
    return out


def balanced(
    rng: random.Random, pool: dict[str, list[tuple[str, bool]]], label: bool, n: int, taken: set[str]
) -> list[tuple[str, bool]]:
    """n addresses of one label, taken round-robin over the kinds so no kind dominates."""
    queues = {k: [a for a in v if a[1] is label and a[0] not in taken] for k, v in pool.items()}
    for q in queues.values():
        rng.shuffle(q)
    chosen: list[tuple[str, bool]] = []
    while len(chosen) < n and any(queues.values()):
        for q in queues.values():
            if q and len(chosen) < n:
                item = q.pop()
                if item[0] not in taken:
                    taken.add(item[0])
                    chosen.append(item)
    if len(chosen) < n:
        raise SystemExit(f"only {len(chosen)} {'valid' if label else 'invalid'} candidates; raise per_kind")
    return chosen


def batches(prefix: str, items: list[tuple[str, bool]]) -> list[dict]:
    return [
        {
            "id": f"{prefix}-{k // BATCH:02d}",
            "addresses": [a for a, _ in items[k : k + BATCH]],
            "labels": [v for _, v in items[k : k + BATCH]],
        }
        for k in range(0, len(items), BATCH)
    ]


def write(path: Path, kind: str, seed: int, items: list[tuple[str, bool]], prefix: str) -> None:
    from email_validator import __version__

    data = {
        "kind": kind,
        "oracle": ORACLE_NOTE.format(version=__version__),
        "seed": seed,
        "valid": sum(v for _, v in items),
        "invalid": sum(not v for _, v in items),
        "batches": batches(prefix, items),
    }
    path.write_text(json.dumps(data, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(
        f"{path.relative_to(ROOT)}: {len(items)} addresses, {data['valid']} valid, "
        f"{len(data['batches'])} batches, {path.stat().st_size / 1024:.0f} KB"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--holdout", type=int, default=1000, help="adversarial addresses (a multiple of 25)")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)

    original = [(a, oracle_is_valid(a)) for a in ORIGINAL_VALID + ORIGINAL_INVALID]
    rng.shuffle(original)
    original = original[: len(original) // BATCH * BATCH]

    pool = {kind: [(a, oracle_is_valid(a)) for a in addrs] for kind, addrs in candidates(rng, 120).items()}
    taken = {a for a, _ in original}  # the holdout shares no address with dev
    half = args.holdout // 2
    adversarial = balanced(rng, pool, True, half, taken) + balanced(rng, pool, False, args.holdout - half, taken)
    rng.shuffle(adversarial)

    DATA.mkdir(parents=True, exist_ok=True)
    write(DATA / "original.json", "original: the typical first tests (dev)", args.seed, original, "original")
    write(
        DATA / "adversarial.json",
        "adversarial: mutations from templates (holdout)",
        args.seed,
        adversarial,
        "adversarial",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
