// Package buildcheck holds tests about the built torchmem binary itself:
// that it builds with CGO_ENABLED=0 with the GPU package (purego) linked in,
// and that scripts/check-glibc.sh finds no glibc requirement newer than
// 2.17, so one file runs on CentOS 7 through current distributions.
package buildcheck
