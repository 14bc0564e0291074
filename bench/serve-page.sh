#!/bin/sh
# How fast the run page of a 24-hour 10 Hz run opens in a real browser
# (headless chromium), and the samples API call behind it: once with the
# store's default downsampling tiers (what `torchmem run` writes), once with
# every sample kept. Writes 864,000 samples per mode first.
#
#   bench/serve-page.sh
set -eu
for mode in tiered raw; do
	TORCHMEM_BENCH_24H=$mode go test ./internal/web -run 'TestRunPage24h10Hz$' -v -count=1 -timeout 20m |
		grep -E 'wrote|GET samples|run page open'
done
