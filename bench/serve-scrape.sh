#!/bin/sh
# Cost of one /metrics scrape of 8 GPUs and a 200-process job (gather and
# text encoding of the latest sample), and of the fast-tier sample plus a
# scrape, over a fixture tree of real captured /proc files.
#
#   bench/serve-scrape.sh
set -eu
go test ./internal/metrics -run '^$' -bench 'Scrape8GPU200Proc' -benchtime 2s -count 5
