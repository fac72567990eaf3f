#!/bin/sh
# Builds fray's release binaries into dist/ (git-ignored): static
# (CGO_ENABLED=0), reproducible paths (-trimpath), and the version and
# commit stamped in (fray --version says them). The targets are linux,
# darwin and windows on amd64 and arm64; TARGETS="linux/amd64" builds fewer.
#
# It also lays out the npm packages in dist/npm/ (templates in
# scripts/npm/): one per target, @frayproxy/fray-OS-CPU with that
# binary, chosen by npm through "os" and "cpu", and the wrapper
# @frayproxy/fray, whose launcher runs the one installed, listing the
# targets built as optionalDependencies. `npm pack dist/npm/NAME` packs
# one; `npm publish` publishes it.
#
#   scripts/release.sh                     # version from git describe
#   VERSION=v0.1.0 scripts/release.sh
#   DIST=/tmp/out TARGETS=linux/amd64 scripts/release.sh
set -eu
cd "$(dirname "$0")/.."
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}
COMMIT=$(git rev-parse --short=12 HEAD 2>/dev/null || true)
if [ -n "$COMMIT" ] && [ -n "$(git status --porcelain 2>/dev/null)" ]; then
	COMMIT=$COMMIT-dirty
fi
TARGETS=${TARGETS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}
DIST=${DIST:-dist}

# npm wants a semantic version: v1.2.3[-pre] loses its v; anything else
# (a bare commit) becomes a prerelease of 0.0.0.
case $VERSION in
v[0-9]*.[0-9]*.[0-9]*) NPM_VERSION=${VERSION#v} ;;
*) NPM_VERSION=0.0.0-dev.g$(printf '%s' "$VERSION" | tr -c 'A-Za-z0-9-' '-') ;;
esac

mkdir -p "$DIST/npm"
optional=
for t in $TARGETS; do
	os=${t%/*}
	arch=${t#*/}
	ext=
	[ "$os" = windows ] && ext=.exe
	out=$DIST/fray-$VERSION-$os-$arch$ext
	echo "building $out" >&2
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
		-ldflags "-s -w -X main.version=$VERSION -X main.commit=$COMMIT" -o "$out" ./cmd/fray

	# npm's names for the platform: win32, x64.
	npmos=$os
	[ "$os" = windows ] && npmos=win32
	npmcpu=$arch
	[ "$arch" = amd64 ] && npmcpu=x64
	pkg=$DIST/npm/fray-$npmos-$npmcpu
	rm -rf "$pkg"
	mkdir -p "$pkg/bin"
	cp "$out" "$pkg/bin/fray$ext"
	chmod 755 "$pkg/bin/fray$ext"
	cp LICENSE "$pkg/"
	sed -e "s|@VERSION@|$NPM_VERSION|g" -e "s|@PLATFORM@|$npmos-$npmcpu|g" \
		-e "s|@OS@|$npmos|g" -e "s|@CPU@|$npmcpu|g" -e "s|@BINARY@|fray$ext|g" \
		scripts/npm/platform/package.json > "$pkg/package.json"
	optional="$optional${optional:+, }\"@frayproxy/fray-$npmos-$npmcpu\": \"$NPM_VERSION\""
done

wrapper=$DIST/npm/fray
rm -rf "$wrapper"
mkdir -p "$wrapper/bin"
cp scripts/npm/fray/bin/fray.js "$wrapper/bin/fray.js"
chmod 755 "$wrapper/bin/fray.js"
cp scripts/npm/fray/README.md LICENSE "$wrapper/"
sed -e "s|@VERSION@|$NPM_VERSION|g" -e "s|\"optionalDependencies\": {}|\"optionalDependencies\": { $optional }|" \
	scripts/npm/fray/package.json > "$wrapper/package.json"
echo "$wrapper (npm $NPM_VERSION)" >&2

rm -f "$DIST/fray-$VERSION-SHA256SUMS"
(cd "$DIST" && sha256sum fray-"$VERSION"-* > fray-"$VERSION"-SHA256SUMS.tmp && mv fray-"$VERSION"-SHA256SUMS.tmp fray-"$VERSION"-SHA256SUMS)
echo "$DIST/fray-$VERSION-SHA256SUMS" >&2
