#!/bin/sh
# k8s-control-plane.sh: obtain a real Kubernetes control plane (etcd, kube-apiserver,
# kube-controller-manager) for the tests of the kubernetes engine, without a container runtime.
#
#   scripts/k8s-control-plane.sh            # build into the cache when missing, print its folder
#   scripts/k8s-control-plane.sh --check    # print the folder if complete, exit 1 otherwise
#
# etcd is Debian's etcd-server (installed with apt-get when no etcd is on PATH). kube-apiserver and
# kube-controller-manager are built from the Go module proxy: the k8s.io/kubernetes module's own
# go.mod points its staging modules at ./staging (absent from the published module), so the
# module is copied out of the module cache, its ./staging replace directives swapped for the
# published k8s.io/<name> v0.<minor>.<patch> modules, and the two commands built in that throwaway
# copy. Nothing of this touches the repository's go.mod. The binaries are kept in
# ${XDG_CACHE_HOME:-$HOME/.cache}/bulkhead/k8s-<version>/bin and reused by every later run; a cold
# build takes several CPU-minutes (about 5.5 + 1.8 min on a 2-core machine), a warm one nothing.
#
# The last line printed on stdout is the bin folder (etcd, kube-apiserver, kube-controller-manager
# inside it, etcd as a symbolic link). Progress goes to stderr.
set -eu

K8S_VERSION=${K8S_VERSION:-v1.32.13}
# The published staging modules carry the same patch level as v0.<minor>.<patch>. The proxy
# refuses a few of them at that version: k8s.io/endpointslice v0.32.13 (v0.32.12, FALLBACK_VERSION,
# is served, builds and works) and the sample-* modules at any version (no command built here
# imports them, so they are dropped).
STAGING_VERSION=${STAGING_VERSION:-v0$(echo "$K8S_VERSION" | sed 's/^v1//')}
FALLBACK_VERSION=${FALLBACK_VERSION:-v0.32.12}

cache=${XDG_CACHE_HOME:-$HOME/.cache}/bulkhead/k8s-$K8S_VERSION
bin=$cache/bin

complete() {
	[ -x "$bin/kube-apiserver" ] && [ -x "$bin/kube-controller-manager" ] && [ -x "$bin/etcd" ]
}

if [ "${1:-}" = "--check" ]; then
	complete && { echo "$bin"; exit 0; }
	exit 1
fi

log() { echo "k8s-control-plane: $*" >&2; }

mkdir -p "$bin"

# etcd: Debian's etcd-server.
if [ ! -x "$bin/etcd" ]; then
	etcd=$(command -v etcd || true)
	if [ -z "$etcd" ]; then
		log "installing Debian's etcd-server"
		if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
		$sudo apt-get install -y -q etcd-server >&2 ||
			{ $sudo apt-get update -q >&2 && $sudo apt-get install -y -q etcd-server >&2; }
		# The package starts a system etcd on 2379 where an init system runs; the tests start
		# their own on other ports and never use it.
		etcd=$(command -v etcd)
	fi
	ln -sf "$etcd" "$bin/etcd"
fi

if complete; then
	echo "$bin"
	exit 0
fi

# kube-apiserver and kube-controller-manager from the module proxy.
log "downloading k8s.io/kubernetes@$K8S_VERSION"
moddir=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$moddir" ] || { log "go mod download gave no folder"; exit 1; }

src=$cache/src
rm -rf "$src"
cp -r "$moddir" "$src"
chmod -R u+w "$src"
rm -rf "$src/vendor" "$src/go.work" "$src/go.work.sum"

cd "$src"
edits=
for name in $(sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#\1#p' go.mod); do
	version=$STAGING_VERSION
	if ! GOWORK=off go mod download "$name@$version" 2>/dev/null; then
		version=$FALLBACK_VERSION
		if ! GOWORK=off go mod download "$name@$version" 2>/dev/null; then
			log "$name is not served; dropping it"
			edits="$edits -dropreplace=$name -droprequire=$name"
			continue
		fi
		log "$name@$STAGING_VERSION is not served; using $version"
	fi
	edits="$edits -dropreplace=$name -require=$name@$version"
done
[ -n "$edits" ] || { log "no ./staging replace directives found in go.mod"; exit 1; }
# shellcheck disable=SC2086
go mod edit $edits
for cmd in kube-apiserver kube-controller-manager; do
	log "building $cmd (several minutes)"
	GOFLAGS=-mod=mod GOWORK=off CGO_ENABLED=0 go build -trimpath -o "$bin/$cmd.tmp" "./cmd/$cmd"
	mv "$bin/$cmd.tmp" "$bin/$cmd"
done
cd /
rm -rf "$src"
log "ready in $bin"
echo "$bin"
