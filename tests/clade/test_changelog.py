"""CHANGELOG.md keeps Keep a Changelog 1.1.0's form, and its newest release is the package's version."""

from __future__ import annotations

import re
from datetime import date

from tests.conftest import REPO

RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$")
KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def headings() -> list[str]:
    return [line for line in (REPO / "CHANGELOG.md").read_text(encoding="utf-8").splitlines() if line.startswith("#")]


def test_unreleased_on_top_then_releases_newest_first_with_dates():
    releases = [h for h in headings() if h.startswith("## ")]
    assert releases[0] == "## [Unreleased]"
    found = [RELEASE.match(h) for h in releases[1:]]
    assert all(found), [h for h, m in zip(releases[1:], found) if not m]
    versions = [tuple(int(n) for n in m.group(1).split(".")) for m in found if m]
    dates = [date.fromisoformat(m.group(2)) for m in found if m]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    assert dates == sorted(dates, reverse=True)


def test_the_newest_release_is_the_package_version():
    from clade import __version__

    newest = next(m for h in headings() if (m := RELEASE.match(h)))
    assert newest.group(1) == __version__


def test_changes_are_grouped_by_the_kinds_keep_a_changelog_names():
    kinds = [h[4:] for h in headings() if h.startswith("### ")]
    assert kinds and set(kinds) <= KINDS, set(kinds) - KINDS
