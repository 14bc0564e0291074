#!/usr/bin/env bash
# Builds dist/torchmem_<version>_<arch>.deb and .rpm with nfpm (pinned in
# go.mod as a tool): the static binary, its man pages and completions
# generated from the CLI, the systemd unit and example tuning files.
# Usage: scripts/package.sh [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
export VERSION="${VERSION:-$(git describe --tags --always 2>/dev/null | sed 's/^v//' || echo 0.0.0)}"
case "$VERSION" in [0-9]*) ;; *) VERSION="0.0.0+${VERSION}" ;; esac
export ARCH="${ARCH:-$(go env GOARCH)}"
rm -rf build/pkg && mkdir -p build/pkg "$out"
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/torchmem/torchmem/internal/cli.Version=${VERSION}" \
	-o build/pkg/torchmem ./cmd/torchmem
build/pkg/torchmem gen-docs --man build/pkg/man --completions build/pkg/completions
gzip -9n build/pkg/man/*.1
for p in deb rpm; do
	go tool nfpm package --config packaging/nfpm.yaml --packager "$p" --target "$out/" >&2
done
ls "$out"/*.deb "$out"/*.rpm
