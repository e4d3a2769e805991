#!/usr/bin/env bash
# ctest man_page: the checked-in man page tools/cli/redlock.1 is what make-man.sh makes
# of the built tool's help (only the month in its .TH line may differ), and man renders
# it without a warning. help2man and man come from scripts/setup.
set -euo pipefail
binary=$1 cli_dir=$2
for tool_and_package in help2man:help2man man:man-db; do
  if ! command -v "${tool_and_package%%:*}" >/dev/null; then
    echo "FAILED: ${tool_and_package%%:*} is not installed" \
      "(apt-get install ${tool_and_package#*:}, or scripts/setup)" >&2
    exit 1
  fi
done
work=$(mktemp -d "${TMPDIR:-/tmp}/man-page-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$cli_dir/make-man.sh" "$binary" "$work/redlock.1"
undated() { sed -E 's/^(\.TH [^ ]+ "1") "[^"]*"/\1 DATE/' "$1"; }
if ! diff -u <(undated "$cli_dir/redlock.1") <(undated "$work/redlock.1"); then
  echo "FAILED: tools/cli/redlock.1 differs from the tool's help; run" >&2
  echo "  tools/cli/make-man.sh $binary tools/cli/redlock.1" >&2
  exit 1
fi
grep -q '^\.SH ENVIRONMENT' "$cli_dir/redlock.1" || { echo "FAILED: no ENVIRONMENT section" >&2; exit 1; }
grep -q 'Exit status' "$cli_dir/redlock.1" || { echo "FAILED: no exit status" >&2; exit 1; }
warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z \
  "$cli_dir/redlock.1" 2>&1 >/dev/null)
if [[ -n $warnings ]]; then
  echo "FAILED: man warns about redlock.1:" >&2
  echo "$warnings" >&2
  exit 1
fi
echo "man_page: redlock.1 matches the help of $binary and renders cleanly"
