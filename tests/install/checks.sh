# Sourced by the shell tests of this folder: `check DESCRIPTION COMMAND...` runs the
# command, counts it in $checks when it succeeds, and ends the test naming the
# description when it fails.
checks=0
check() { # description command...
  local what=$1
  shift
  if "$@"; then
    checks=$((checks + 1))
  else
    echo "FAILED: $what" >&2
    exit 1
  fi
}
