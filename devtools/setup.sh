#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# Idempotent setup, shared by every command of run.sh:
#  1. installs the Debian packages the build and the tests need (apt-get update once);
#  2. extracts the DPDK driver-SDK headers from the Debian source package of exactly
#     the installed libdpdk-dev version into build/sdk (never committed);
#  3. configures and builds with meson/ninja (incremental on later runs).
#
# Sourced by run.sh; call opa_setup <builddir> [meson options...].

OPA_TOP=${OPA_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}

# Debian 12 packages (the build's and the tests').
OPA_PKGS="dpdk dpdk-dev libdpdk-dev libibumad-dev libibverbs-dev libcmocka-dev \
meson ninja-build pkg-config libpcap-dev gcc clang libclang-rt-14-dev tshark \
dpkg-dev xz-utils iproute2 openvswitch-switch-dpdk"

# The headers that Debian's libdpdk-dev leaves out (DPDK built without enable_driver_sdk).
OPA_SDK_HEADERS="lib/ethdev/ethdev_driver.h lib/ethdev/ethdev_vdev.h lib/ethdev/ethdev_pci.h \
drivers/bus/vdev/bus_vdev_driver.h drivers/bus/pci/bus_pci_driver.h \
lib/eal/include/bus_driver.h lib/eal/include/dev_driver.h"

opa_log() { printf '[setup] %s\n' "$*" >&2; }
opa_die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

opa_apt_updated=0
opa_apt_update_once() {
	[ "$opa_apt_updated" = 1 ] && return 0
	opa_log "apt-get update"
	apt-get update -qq || opa_die "apt-get update failed"
	opa_apt_updated=1
}

opa_install_packages() {
	local missing="" p
	for p in $OPA_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	[ "$(id -u)" = 0 ] || opa_die "missing packages:$missing (run as root, or install them)"
	opa_apt_update_once
	opa_log "installing:$missing"
	# The OVS package must not start (or enable) the system's daemons: a policy-rc.d
	# denies it for the time of the install, unless one is there already.
	local prc=/usr/sbin/policy-rc.d made=0 rc=0
	if [ ! -e "$prc" ]; then
		printf '#!/bin/sh\nexit 101\n' > "$prc" && chmod 755 "$prc" && made=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
		>/dev/null || rc=$?
	[ $made = 1 ] && rm -f "$prc"
	[ $rc = 0 ] || opa_die "apt-get install failed for:$missing"
}

# Make sure apt knows a deb-src entry for the suites it installs binaries from;
# with "force", add ours even if some deb-src entry exists (not for the right suite).
opa_ensure_deb_src() {
	local f=/etc/apt/sources.list.d/dpdk-opa-vnic-src.sources
	local l=/etc/apt/sources.list.d/dpdk-opa-vnic-src.list
	[ -f "$f" ] || [ -f "$l" ] && return 0	# ours, added before
	# Only the files apt reads: *.sources (deb822) and *.list (one-line).
	if [ "${1:-}" != force ] &&
	   { cat /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -qs '^Types:.*deb-src' ||
	     cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		grep -qs '^deb-src '; }; then
		return 0
	fi
	[ "$(id -u)" = 0 ] || opa_die "no deb-src entry in apt sources (run as root to add one)"
	opa_log "adding deb-src entries to $f / $l"
	# One-line entries stay one-line (their [options] kept); deb822 stanzas are copied.
	cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		sed -n 's/^deb /deb-src /p' > "$l.tmp"
	: > "$f.tmp"
	if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
		# deb822: copy every stanza that has 'Types: deb', as deb-src.
		awk '
			/^Types:/ { t = ($0 ~ /(^| )deb( |$)/) } 
			{ buf = buf $0 "\n" }
			/^$/ { if (t) { sub(/Types:[^\n]*/, "Types: deb-src", buf); printf "%s", buf } buf = ""; t = 0 }
			END { if (t) { sub(/Types:[^\n]*/, "Types: deb-src", buf); printf "%s\n", buf } }
		' /etc/apt/sources.list.d/*.sources | grep -v '^#' >> "$f.tmp"
	fi
	grep -qs 'deb-src' "$f.tmp" "$l.tmp" ||
		{ rm -f "$f.tmp" "$l.tmp"; opa_die "cannot derive a deb-src entry from the apt sources"; }
	if [ -s "$f.tmp" ]; then mv "$f.tmp" "$f"; else rm -f "$f.tmp"; fi
	if [ -s "$l.tmp" ]; then mv "$l.tmp" "$l"; else rm -f "$l.tmp"; fi
	opa_apt_updated=0
	opa_apt_update_once
}

# Extract the driver-SDK headers of exactly the installed DPDK into $1/include
# (one cache, build/sdk, shared by the build trees of this checkout).
opa_sdk_headers() {
	local sdk=$1 ver h upver
	ver=$(dpkg-query -W -f='${Version}' libdpdk-dev 2>/dev/null) ||
		opa_die "libdpdk-dev is not installed"
	if [ -f "$sdk/VERSION" ] && [ "$(cat "$sdk/VERSION")" = "$ver" ]; then
		return 0
	fi
	opa_log "fetching DPDK driver-SDK headers for libdpdk-dev $ver"
	rm -rf "$sdk"
	mkdir -p "$sdk/src" "$sdk/include"
	opa_ensure_deb_src
	local log=$sdk/apt-source.log
	if ! (cd "$sdk/src" && apt-get source --download-only -qq "dpdk=$ver" >"$log" 2>&1); then
		# Perhaps apt's lists are old, or the deb-src found is not for dpdk's suite.
		opa_ensure_deb_src force
		opa_apt_updated=0
		opa_apt_update_once
		(cd "$sdk/src" && apt-get source --download-only -qq "dpdk=$ver" >"$log" 2>&1) ||
			{ tail -n 5 "$log" >&2; opa_die "the Debian source package dpdk=$ver is not \
available from the configured deb-src entries; the driver-SDK headers must match the installed \
libdpdk-dev exactly, so refusing to continue (install a libdpdk-dev version whose source is \
available, or add its deb-src)"; }
	fi
	(cd "$sdk/src" && dpkg-source --no-check -x ./*.dsc tree >/dev/null 2>&1) ||
		opa_die "could not unpack the dpdk $ver source package"
	# Check that what we unpacked is the version the binaries were built from.
	upver=${ver#*:}
	upver=${upver%%-*}
	upver=${upver%%+*}
	[ "$(cat "$sdk/src/tree/VERSION" 2>/dev/null)" = "$upver" ] ||
		opa_die "source VERSION '$(cat "$sdk/src/tree/VERSION" 2>/dev/null)' does not match installed DPDK $upver"
	local cfg hdrver
	cfg=$(pkg-config --variable=includedir libdpdk)/../$(gcc -print-multiarch)/dpdk/rte_build_config.h
	[ -f "$cfg" ] || cfg=$(pkg-config --variable=includedir libdpdk)/rte_build_config.h
	hdrver=$(awk '/define RTE_VER_YEAR /{y=$3} /define RTE_VER_MONTH /{m=$3}
		/define RTE_VER_MINOR /{n=$3} END {printf "%d.%02d.%d", y, m, n}' "$cfg")
	[ "$hdrver" = "$upver" ] ||
		opa_die "installed DPDK headers are version $hdrver, the source package is $upver"
	for h in $OPA_SDK_HEADERS; do
		[ -f "$sdk/src/tree/$h" ] || opa_die "$h is missing from the dpdk $ver source"
		cp "$sdk/src/tree/$h" "$sdk/include/"
	done
	rm -rf "$sdk/src" "$log"
	echo "$ver" > "$sdk/VERSION"
}

# opa_setup <builddir> [extra meson options]: everything above, then configure and build.
opa_setup() {
	local build=$1
	shift
	local sdk=${OPA_VNIC_SDK:-$OPA_TOP/build/sdk}
	opa_install_packages
	opa_sdk_headers "$sdk"
	local werror=false
	[ "${OPA_VNIC_WERROR:-0}" = 1 ] && werror=true
	if [ ! -f "$build/build.ninja" ]; then
		opa_log "configuring $build"
		meson setup "$build" "$OPA_TOP" -Dsdk_include="$sdk/include" \
			-Dwerror=$werror "$@" >"$build.setup.log" 2>&1 ||
			{ tail -n 30 "$build.setup.log"; opa_die "meson setup failed"; }
		rm -f "$build.setup.log"
	else
		meson configure "$build" -Dwerror=$werror "$@" >"$build/configure.log" 2>&1 ||
			{ tail -n 30 "$build/configure.log"; opa_die "meson configure failed"; }
	fi
	opa_log "building $build ${OPA_BUILD_TARGETS:-}"
	# shellcheck disable=SC2086 # the target list is word-split on purpose
	ninja -C "$build" ${OPA_BUILD_TARGETS:-} >"$build/ninja.log" 2>&1 ||
		{ tail -n 60 "$build/ninja.log"; opa_die "build failed"; }
	grep -E 'warning:' "$build/ninja.log" >&2 || true
}

# ---- a second DPDK: an upstream 24.11 tree (Debian 13's DPDK) ----
#
# OPA_VNIC_DPDK_SRC names an upstream DPDK 24.11 source tree (Debian 13's source
# package is not served to these machines). It is built once with the options of
# Debian's package that matter here (shared libraries, the driver SDK) into a cache
# outside the checkout, OPA_VNIC_DPDK_CACHE (default ~/.cache/dpdk-opa-vnic), and
# the project is built against it in build-dpdk<version>/.

# Print the install prefix of the DPDK built from $OPA_VNIC_DPDK_SRC (building it
# the first time), or nothing when no tree is given. With an argument, a second
# build of the same tree with 256 ethdev ports (RTE_MAX_ETHPORTS) for the
# 255-vport scale test, cached beside the first so that neither rebuilds the other.
opa_dpdk_alt() {
	local src=${OPA_VNIC_DPDK_SRC:-} variant=${1:-} ver prefix bld opts
	[ -n "$src" ] || return 0
	[ -f "$src/VERSION" ] && [ -f "$src/meson.build" ] ||
		opa_die "OPA_VNIC_DPDK_SRC=$src is not a DPDK source tree (no VERSION, meson.build)"
	ver=$(cat "$src/VERSION")
	case "$ver" in
	24.11*) ;;
	*) opa_die "OPA_VNIC_DPDK_SRC=$src holds DPDK $ver; expected a 24.11 release" ;;
	esac
	prefix=${OPA_VNIC_DPDK_CACHE:-$HOME/.cache/dpdk-opa-vnic}/dpdk-$ver${variant:+-$variant}
	# What the build takes; a cached build made with other options is redone.
	# net/pcap: dpdk-pdump writes its captures through it.
	opts="-Ddefault_library=shared -Dplatform=generic -Denable_driver_sdk=true -Dtests=false
		-Denable_docs=false -Denable_kmods=false
		-Denable_drivers=bus/vdev,bus/pci,mempool/ring,net/null,net/af_packet,net/ring,net/pcap
		-Denable_libs=bpf,pcapng,pdump,security,cryptodev,eventdev,timer,dmadev,metrics
		-Denable_apps=test-pmd,proc-info,dumpcap,pdump"
	case "$variant" in
	"") ;;
	ports256) opts="$opts -Dmax_ethports=256" ;;
	*) opa_die "unknown DPDK build variant $variant" ;;
	esac
	if [ "$(cat "$prefix/.built" 2>/dev/null)" != "$opts" ]; then
		# pmdinfogen needs pyelftools in the python3 meson runs; net/pcap libpcap.
		for pkg in python3-pyelftools libpcap-dev; do
			dpkg-query -W -f='${Status}' $pkg 2>/dev/null | grep -q "ok installed" ||
				{ opa_apt_update_once; DEBIAN_FRONTEND=noninteractive apt-get install \
					-y -qq --no-install-recommends $pkg >/dev/null ||
					opa_die "cannot install $pkg"; }
		done
		bld=$prefix.build
		rm -rf "$bld" "$prefix"
		mkdir -p "$(dirname "$prefix")"
		opa_log "building DPDK $ver from $src into $prefix (a few minutes, once)"
		(export PATH=/usr/bin:$PATH
		 # shellcheck disable=SC2086 # opts: several meson options
		 meson setup "$bld" "$src" --prefix="$prefix" $opts &&
		 ninja -C "$bld" && meson install -C "$bld" --quiet) >"$prefix.log" 2>&1 ||
			{ tail -n 20 "$prefix.log" >&2; opa_die "building DPDK $ver failed ($prefix.log)"; }
		rm -rf "$bld"
		echo "$opts" >"$prefix/.built"
	fi
	echo "$prefix"
}

# The environment that makes meson, the build and the tests use that DPDK.
opa_dpdk_alt_env() {
	local prefix=$1 arch
	arch=$(gcc -print-multiarch)
	export PKG_CONFIG_PATH=$prefix/lib/$arch/pkgconfig
	export LD_LIBRARY_PATH=$prefix/lib/$arch
	export PATH=$prefix/bin:$PATH
}
