#!/usr/bin/env bash
# ctest package_deb: builds the shared library, the tool, the fault kit redlock::testing
# and (with prometheus-cpp) redlock::prometheus in a build directory of their own, makes
# the Debian packages with CPack, runs lintian on every one (no error, no warning),
# unpacks them into a scratch root (dpkg -x, no root needed), checks what each holds and
# depends on, then compiles a program against the unpacked -dev package with CMake's
# find_package and with pkg-config and runs both, and the packaged redlock tool, against
# five real redis-server nodes, and builds and runs the kit's example (docs/testing-kit.md)
# against the unpacked libredlock-testing-dev.
#
# The package build sits next to the suite's build directory (BUILD-package), at the
# same depth, and uses the suite's compiler launcher: scripts/setup makes that ccache
# with CCACHE_BASEDIR at the repository, so its compilations hit the cache the suite's
# build filled (the same sources with the same flags; 67 of 68 in a fresh cache).
set -euo pipefail
src=$1 build=$2 cmake=$3 cpack=$4 generator=$5 cxx=$6 launcher=$7 version=$8 soversion=$9
pkg_build=${build%/}-package
work=$build/tests/install/package-test
rm -rf "$work"
mkdir -p "$work"
cluster=$src/compose/local-cluster
trap '"$cluster" stop --dir "$work/cluster" -q --purge || true' EXIT

# shellcheck source=checks.sh
source "$(dirname "$0")/checks.sh"
step() { echo "== $* ($SECONDS s)"; }

step "configure and build the shared library and the tool in $pkg_build"
"$cmake" -S "$src" -B "$pkg_build" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher} \
  -DBUILD_SHARED_LIBS=ON -DCMAKE_INSTALL_PREFIX=/usr -DREDLOCK_SANITIZE= \
  -DBUILD_TESTING=OFF -DREDLOCK_INSTALL_TESTING=ON -DREDLOCK_BUILD_TOOLS=ON -DREDLOCK_BUILD_BENCH=OFF \
  -DREDLOCK_BUILD_EXAMPLES=OFF >"$work/configure.log"
nice -n 5 "$cmake" --build "$pkg_build" -j2 >"$work/build.log"

step "cpack -G DEB"
rm -f "$pkg_build"/*.deb
(cd "$pkg_build" && "$cpack" -G DEB >"$work/cpack.log")
arch=$(dpkg --print-architecture)
lib_deb=$pkg_build/libredlock${soversion}_${version}_$arch.deb
dev_deb=$pkg_build/libredlock-dev_${version}_$arch.deb
tool_deb=$pkg_build/redlock_${version}_$arch.deb
testing_deb=$pkg_build/libredlock-testing-dev_${version}_$arch.deb
debs=("$lib_deb" "$dev_deb" "$tool_deb" "$testing_deb")
prom_lib_deb=$pkg_build/libredlock-prometheus${soversion}_${version}_$arch.deb
prom_dev_deb=$pkg_build/libredlock-prometheus-dev_${version}_$arch.deb
if grep -q "prometheus-cpp not found" "$work/configure.log"; then
  echo "SKIPPED: prometheus-cpp-dev is not installed: no libredlock-prometheus packages to check"
else
  debs+=("$prom_lib_deb" "$prom_dev_deb")
fi
for deb in "${debs[@]}"; do check "$deb was made" test -f "$deb"; done

step "lintian"
if ! command -v lintian >/dev/null; then
  echo "FAILED: lintian is not installed (apt-get install lintian, or scripts/setup)" >&2
  exit 1
fi
# Warnings fail too; the few we accept are overridden, with the reason, in the packages
# (cmake/RedlockPackaging.cmake).
check "lintian finds no error or warning" lintian --fail-on error,warning "${debs[@]}"

field() { dpkg-deb -f "$1" "$2"; }
contents() { dpkg-deb -c "$1" | awk '{print $6}'; }
check "the -dev package depends on the library of the same version, and on nothing else" \
  test "$(field "$dev_deb" Depends)" = "libredlock${soversion} (= ${version})"
# The public headers include none of them; only linking libredlock.a needs them.
check "the -dev package suggests the -dev packages a static link needs" \
  bash -c "[[ '$(field "$dev_deb" Suggests)' == *libhiredis-dev*libuv1-dev*libssl-dev* ]]"
for deb in "${debs[@]}"; do
  name=$(field "$deb" Package)
  check "$name has a machine-readable /usr/share/doc/$name/copyright" bash -c "dpkg-deb --fsys-tarfile '$deb' |
    tar -xO ./usr/share/doc/$name/copyright | head -n 1 | grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/'"
done
check "the tool package holds the man page redlock(1)" \
  bash -c "dpkg-deb -c '$tool_deb' | grep -q ' ./usr/share/man/man1/redlock.1.gz$'"
if [[ -f $prom_dev_deb ]]; then
  check "the Prometheus -dev package depends on its library, libredlock-dev and prometheus-cpp-dev" \
    bash -c "d='$(field "$prom_dev_deb" Depends)'; [[ \$d == *'libredlock-prometheus${soversion} (= ${version})'* && \$d == *'libredlock-dev (= ${version})'* && \$d == *prometheus-cpp-dev* ]]"
  check "the Prometheus -dev package holds the header, the CMake component and the .pc" \
    bash -c "c=\$(dpkg-deb -c '$prom_dev_deb'); [[ \$c == *./usr/include/redlock/prometheus.hpp* && \$c == *redlockPrometheusTargets.cmake* && \$c == *redlock-prometheus.pc* ]]"
  check "the Prometheus library depends on libredlock and prometheus-cpp's library" \
    bash -c "[[ '$(field "$prom_lib_deb" Depends)' == *libredlock${soversion}*libprometheus-cpp-core* ]]"
fi
check "the kit's package depends on libuv1-dev and libhiredis-dev (its archive links both) and recommends redis-server" \
  bash -c "[[ '$(field "$testing_deb" Depends)' == *libuv1-dev* && '$(field "$testing_deb" Depends)' == *libhiredis-dev* && '$(field "$testing_deb" Recommends)' == *redis-server* ]]"
check "the kit's package holds its archive, headers, CMake component, .pc and fake clock, and no other header" \
  bash -c "c=\$(dpkg-deb -c '$testing_deb'); [[ \$c == *./usr/include/redlock/testing.hpp* && \$c == *./usr/include/redlock/testing/fleet.hpp* && \$c == */libredlock-testing.a* && \$c == *redlockTestingTargets.cmake* && \$c == */pkgconfig/redlock-testing.pc* && \$c == */redlock/libredlock_fakeclock.so* && \$c != *redlock/redlock.hpp* ]]"
check "the -dev package does not hold the kit's headers" \
  bash -c "! dpkg-deb -c '$dev_deb' | grep -q 'include/redlock/testing'"
check "the tool depends on the library" \
  bash -c "[[ '$(field "$tool_deb" Depends)' == *libredlock${soversion}* ]]"
check "the library's dependencies come from dpkg-shlibdeps (libuv1)" \
  bash -c "[[ '$(field "$lib_deb" Depends)' == *libuv1* ]]"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
libdir=usr/lib/$multiarch
check "the library package holds the versioned shared object and no headers" \
  bash -c "contents=\$(dpkg-deb -c '$lib_deb'); [[ \$contents == *'./$libdir/libredlock.so.$version'* && \$contents != *include/* ]]"
check "the -dev package holds the headers, the .so link, the CMake package and redlock.pc" \
  bash -c "c=\$(dpkg-deb -c '$dev_deb'); [[ \$c == *./usr/include/redlock/redlock.hpp* && \$c == *./usr/include/redlock/version.hpp* && \$c == *'./$libdir/libredlock.so ->'* && \$c == *./$libdir/cmake/redlock/redlockConfig.cmake* && \$c == *./$libdir/pkgconfig/redlock.pc* ]]"
check "the -dev package installs no private header of lib/" \
  bash -c "! dpkg-deb -c '$dev_deb' | grep -E 'include/(core|net|client|scripts)/'"
check "the tool package holds /usr/bin/redlock" bash -c "dpkg-deb -c '$tool_deb' | grep -q ' ./usr/bin/redlock$'"

step "unpack into $work/root"
root=$work/root
for deb in "${debs[@]}"; do dpkg -x "$deb" "$root"; done
so=$root/$libdir/libredlock.so.$version
for binary in "$so" "$root/usr/bin/redlock"; do
  check "$binary is stripped" bash -c "file -L '$binary' | grep -q ', stripped'"
done
check "SONAME is libredlock.so.$soversion" \
  bash -c "readelf -d '$so' | grep -q 'Library soname: \[libredlock.so.$soversion\]'"
# Hidden visibility: of our own namespace only the public API leaves the library.
exported=$(nm -D --defined-only "$so" | c++filt | awk '{ $1 = ""; $2 = ""; print }')
check "redlock::Client::create is exported" grep -q '^  redlock::Client::create(' <<<"$exported"
check "redlock::version is exported" grep -q '^  redlock::version()' <<<"$exported"
check "nothing of redlock::detail, core, net or cli is exported" \
  bash -c "! grep -E '^  redlock::(detail|core|net|cli)::' <<<'$exported'"

step "start five nodes"
export REDLOCK_NODES
REDLOCK_NODES=$("$cluster" start -n 5 --dir "$work/cluster" -q)
export LD_LIBRARY_PATH=$root/$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

step "a program built with find_package(redlock)"
"$cmake" -S "$src/tests/install/package_consumer" -B "$work/cmake-consumer" -G "$generator" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$root/usr" -DEXPECTED_PREFIX="$root/usr" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF \
  -DREDLOCK_VERSION="$version" >"$work/cmake-consumer.log"
"$cmake" --build "$work/cmake-consumer" >>"$work/cmake-consumer.log"
check "the CMake-built program loads the unpacked library" \
  bash -c "ldd '$work/cmake-consumer/app' | grep -q '=> $root/$libdir/libredlock.so.$soversion'"
check "the CMake-built program locks on five nodes" "$work/cmake-consumer/app"

step "the same program built with pkg-config"
export PKG_CONFIG_PATH=$root/$libdir/pkgconfig
check "pkg-config knows redlock $version" test "$(pkg-config --modversion redlock)" = "$version"
# shellcheck disable=SC2046  # pkg-config's flags are meant to be split
"$cxx" -std=c++20 -Wall -Wextra -Werror -o "$work/pkg-config-app" \
  "$src/tests/install/package_consumer/main.cpp" $(pkg-config --cflags --libs redlock)
check "the pkg-config-built program loads the unpacked library" \
  bash -c "ldd '$work/pkg-config-app' | grep -q '=> $root/$libdir/libredlock.so.$soversion'"
check "the pkg-config-built program locks on five nodes" "$work/pkg-config-app"

step "a test program built with find_package(redlock COMPONENTS testing)"
mkdir -p "$work/kit-example"
"$cmake" -DINPUT="$src/docs/testing-kit.md" -DOUTPUT_DIR="$work/kit-example" -DEXPECTED=2 \
  -P "$src/tests/docs/extract_cpp_blocks.cmake"
"$cmake" -S "$src/tests/install/testing_consumer" -B "$work/kit-consumer" -G "$generator" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$root/usr" -DEXPECTED_PREFIX="$root/usr" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF \
  -DREDLOCK_VERSION="$version" -DEXAMPLE="$work/kit-example/block_1.cpp" \
  -DFAULTS_EXAMPLE="$work/kit-example/block_2.cpp" >"$work/kit-consumer.log"
"$cmake" --build "$work/kit-consumer" >>"$work/kit-consumer.log"
check "the kit's example locks through pauses, kills, restarts and cuts of its own fleet" \
  "$work/kit-consumer/kit_example"
# Unpacked under a scratch root, not /usr where the package puts its fake clock.
check "the kit's second example injects every fault into a fleet of three kinds" \
  env REDLOCK_FAKECLOCK="$root/$libdir/redlock/libredlock_fakeclock.so" \
  "$work/kit-consumer/kit_faults_example"

step "the packaged redlock tool"
check "redlock run holds the lock while its command runs" \
  test "$("$root/usr/bin/redlock" --no-guard-young-members run --wait 2s package:tool -- sh -c 'echo "$REDLOCK_KEY"')" = package:tool
check "redlock status answers for all five nodes" \
  test "$("$root/usr/bin/redlock" status package:tool | grep -c '^redis://')" -eq 5

echo "package_deb: $checks passed, 0 failed ($SECONDS s)"
