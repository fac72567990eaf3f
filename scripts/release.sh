#!/bin/sh
# Builds fray's release binaries into dist/ (git-ignored): static
# (CGO_ENABLED=0), reproducible paths (-trimpath), and the version stamped
# in (fray --version says it). The targets are linux, darwin and windows
# on amd64 and arm64; TARGETS="linux/amd64" builds fewer.
#
#   scripts/release.sh                     # version from git describe
#   VERSION=v0.1.0 scripts/release.sh
set -eu
cd "$(dirname "$0")/.."
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}
TARGETS=${TARGETS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}
mkdir -p dist
for t in $TARGETS; do
	os=${t%/*}
	arch=${t#*/}
	ext=
	[ "$os" = windows ] && ext=.exe
	out=dist/fray-$VERSION-$os-$arch$ext
	echo "building $out" >&2
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
		-ldflags "-s -w -X main.version=$VERSION" -o "$out" ./cmd/fray
done
(cd dist && sha256sum fray-"$VERSION"-* > fray-"$VERSION"-SHA256SUMS)
echo "dist/fray-$VERSION-SHA256SUMS" >&2
