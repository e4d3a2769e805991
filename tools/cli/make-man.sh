#!/usr/bin/env bash
# Writes the man page redlock(1) from the tool's own help: `tools/cli/make-man.sh
# BUILD/tools/redlock tools/cli/redlock.1` after changing any help text (the man_page
# test fails until it is done). help2man is Debian's `help2man`.
set -euo pipefail
binary=$1 output=$2
help2man --no-info --help-option=--help-all --version-option=--version \
  --name="a distributed flock(1) over N independent Redis masters" \
  --output="$output" "$binary"
