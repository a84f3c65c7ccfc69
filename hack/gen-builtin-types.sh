#!/bin/bash
# gen-builtin-types.sh - regenerate kubectl_fieldown/data/builtin-go-types-<major.minor>.json:
# how encoding/json sees the Go types of every built-in kind (see hack/gen-builtin-types/main.go),
# for kubectl_fieldown/schema/gotypes.py.
#
# Uses the lab build of hack/lab/build.sh (run it first): its Go toolchain and Debian's packaged
# k8s.io Go sources, in GOPATH mode, offline. The generator is built in a temporary overlay
# GOPATH (removed on exit); the only file written into the repository is the output. Re-running
# it on the same sources gives byte-identical output.
#
#   hack/gen-builtin-types.sh            # writes the data file
#   VERBOSE=1 hack/gen-builtin-types.sh  # also lists skipped scheme entries and custom types
#   CHECK=1 hack/gen-builtin-types.sh    # only compare with the committed file (exit 1 if it differs)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PREFIX=${PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/k8slab}
GOSRC=$PREFIX/gosrc/usr/share/gocode
log() { printf '[gen-builtin-types] %s\n' "$*" >&2; }

goroots=("$PREFIX"/go-root/usr/lib/go-*/)
GOROOT=${goroots[0]%/}
if [[ ! -x $GOROOT/bin/go || ! -d $GOSRC/src/k8s.io/api || ! -d $GOSRC/src/k8s.io/client-go ]]; then
  echo "no lab build under $PREFIX (Go toolchain + k8s.io sources): run hack/lab/build.sh first" >&2
  exit 1
fi

# versions of the Debian source packages (0.36.4-1 -> Kubernetes 1.36.4)
pkgver() {
  local deb
  deb=$(ls "$PREFIX"/debs/src/"$1"_*.deb 2>/dev/null | sed -n 1p)
  [[ -n $deb ]] || { echo "missing $PREFIX/debs/src/$1_*.deb" >&2; exit 1; }
  dpkg-deb -f "$deb" Version
}
packages=()
for p in golang-k8s-api-dev golang-k8s-apimachinery-dev golang-k8s-client-go-dev; do
  packages+=("$p=$(pkgver "$p")")
done
apiver=$(pkgver golang-k8s-api-dev)
apiver=${apiver%%-*}                  # 0.36.4
k8sver="1.${apiver#0.}"               # 1.36.4
minor=${k8sver%.*}                    # 1.36
out=$repo/kubectl_fieldown/data/builtin-go-types-$minor.json

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gen-builtin-types.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/k8slab.local/gen-builtin-types"
cp "$repo/hack/gen-builtin-types/main.go" "$tmp/src/k8slab.local/gen-builtin-types/main.go"

export GOROOT PATH="$GOROOT/bin:$PATH"
export GO111MODULE=off GOFLAGS= GOTOOLCHAIN=local GOPROXY=off GOSUMDB=off GOTELEMETRY=off
export GOPATH="$tmp:$GOSRC" GOCACHE="$PREFIX/gocache" CGO_ENABLED=0
log "$(go version); Kubernetes $k8sver (${packages[*]})"
(cd "$tmp" && go vet k8slab.local/gen-builtin-types && go build -o "$tmp/gen" k8slab.local/gen-builtin-types)
(IFS=,; "$tmp/gen" -k8s-version "$k8sver" -packages "${packages[*]}") > "$tmp/out.json"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out.json"

if [[ ${CHECK:-0} == 1 ]]; then
  if cmp -s "$tmp/out.json" "$out"; then log "up to date: $out"; exit 0; fi
  log "differs from the generated output: $out"; exit 1
fi
mkdir -p "$(dirname "$out")"
mv "$tmp/out.json" "$out"
log "wrote $out ($(wc -c < "$out") bytes)"
