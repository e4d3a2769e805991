#!/bin/sh
# .ci/run's exit status is the verdict CI acts on, so it must be 0 exactly when every
# step passed. The steps are replaced by stubs in a copy of the tree (so this takes a
# second), and the run is judged three ways: all pass, the suite fails, a build beside
# it fails.
set -eu
source_dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/.ci" "$work/scripts"
cp "$source_dir/.ci/run" "$work/.ci/run"
for step in setup test fuzz; do
  cat >"$work/scripts/$step" <<STUB
#!/bin/sh
case " \$* " in *" \$(cat "$work/fail" 2>/dev/null) "*) exit 3 ;; esac
exit 0
STUB
  chmod +x "$work/scripts/$step"
done

run() {
  printf '%s' "$1" >"$work/fail"
  status=0
  "$work/.ci/run" >"$work/log" 2>&1 || status=$?
  if [ "$status" -ne "$2" ]; then
    cat "$work/log"
    echo "FAIL: with '$1' failing, .ci/run exited $status, expected $2"
    exit 1
  fi
  echo "ok: with '${1:-nothing}' failing, .ci/run exited $status"
}

run 'never-an-argument' 0
run '--skip-setup' 3   # a sanitizer suite
run '--build-only' 3   # a build beside a suite
