#!/usr/bin/env bash
# check_latest.sh: run the test suite against the NEWEST releases of everything clade depends on,
# to find breakage from new releases (a duckdb 2, a litellm that changes error classes or costs)
# before users do. Users and CI install the pinned versions of constraints.txt; this does not.
#
# It makes a fresh venv in a temporary folder, installs the project with every extra WITHOUT
# constraints.txt and with --upgrade (the newest releases PyPI has), prints each version that
# differs from constraints.txt, runs the suite (`python -m pytest -q`, from the repo root) and
# exits with pytest's exit code. The venv is removed at the end.
#
#   scripts/check_latest.sh            check only; constraints.txt is left alone
#   scripts/check_latest.sh --write    the same, and when the suite passes, rewrite constraints.txt
#                                      from that venv (`pip freeze --exclude-editable`): this is how
#                                      to refresh constraints.txt; review `git diff constraints.txt`
#                                      and commit it
#   scripts/check_latest.sh --no-tests install and print the differences only (exit 0)
#
# Extra arguments after `--` go to pytest (e.g. `-- -m "not slow"`). Set PYTHON to choose the
# interpreter the venv is made from (default python3). Takes ~2 min to install and 10-15 min for
# the suite on 2 cores. When the suite fails, fix the code (or add an upper bound in
# pyproject.toml) before refreshing constraints.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
EXTRAS="dev,ray,slurm,viz,browser,tasks"
PYTHON=${PYTHON:-python3}
export PIP_DISABLE_PIP_VERSION_CHECK=1

write=0 tests=1
while [ $# -gt 0 ]; do
    case "$1" in
        --write) write=1 ;;
        --no-tests) tests=0 ;;
        --) shift; break ;;
        -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "check_latest: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clade-latest.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
venv="$tmp/venv"
echo "check_latest: fresh venv in $venv ($("$PYTHON" --version 2>&1))"
"$PYTHON" -m venv "$venv" || { echo "check_latest: could not make a venv" >&2; exit 1; }
py="$venv/bin/python"

echo "check_latest: pip install --upgrade -e \".[$EXTRAS]\" (no constraints.txt)"
# A caller's PIP_CONSTRAINT (say, pointing at constraints.txt) must not pin this install.
unset PIP_CONSTRAINT
if ! "$py" -m pip install --quiet --upgrade -e ".[$EXTRAS]" > "$tmp/install.log" 2>&1; then
    cat "$tmp/install.log" >&2
    echo "check_latest: the install failed" >&2
    exit 1
fi

"$py" -m pip freeze --exclude-editable > "$tmp/freeze.txt"
echo "check_latest: versions that differ from constraints.txt:"
"$py" - "$REPO/constraints.txt" "$tmp/freeze.txt" <<'EOF'
import re
import sys


def pins(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            out[re.sub(r"[-_.]+", "-", name).lower()] = (name.strip(), version.strip())
    return out


pinned, latest = pins(sys.argv[1]), pins(sys.argv[2])
rows = []
for key in sorted(set(pinned) | set(latest)):
    name = (latest.get(key) or pinned.get(key))[0]
    old = pinned.get(key, (None, "-"))[1]
    new = latest.get(key, (None, "-"))[1]
    if old != new:
        rows.append((name, old, new))
if not rows:
    print("  none: the newest releases are the pinned ones")
else:
    width = max(len(r[0]) for r in rows)
    print(f"  {'package':<{width}}  {'constraints.txt':<18} newest")
    for name, old, new in rows:
        print(f"  {name:<{width}}  {old:<18} {new}")
    print(f"  {len(rows)} of {len(set(pinned) | set(latest))} differ ('-': not pinned / no longer pulled in)")
EOF

if [ "$tests" -eq 0 ]; then
    exit 0
fi

echo "check_latest: python -m pytest -q $*"
# CLADE_UNPINNED: tests/scripts/test_versions.py skips its installed-equals-pinned check here,
# where the versions differ from constraints.txt on purpose.
CLADE_UNPINNED=1 "$py" -m pytest -q "$@"
rc=$?
if [ "$rc" -eq 0 ]; then
    echo "check_latest: the suite passes with the newest releases"
    if [ "$write" -eq 1 ]; then
        {
            sed -n '/^#/!q;p' "$REPO/constraints.txt"
            cat "$tmp/freeze.txt"
        } > "$tmp/constraints.txt" && mv "$tmp/constraints.txt" "$REPO/constraints.txt"
        echo "check_latest: wrote constraints.txt; review 'git diff constraints.txt' and commit it"
    else
        echo "check_latest: to pin them: scripts/check_latest.sh --write (or copy the versions above into constraints.txt)"
    fi
else
    echo "check_latest: the suite FAILS with the newest releases (pytest exit $rc); keep constraints.txt as it is"
fi
exit "$rc"
