// Command ociimage builds torchmem's container image without a Docker
// daemon: the CGO-free binary in one layer on no base image, written as an
// OCI image layout and packed into a tarball (make image). Push it with
// `skopeo copy oci-archive:dist/torchmem-oci.tar docker://REGISTRY/torchmem:TAG`
// or untar it and `crane push DIR REGISTRY/torchmem:TAG`.
//
//	go run ./packaging/ociimage -binary ./torchmem -version 1.2.3 -out dist/torchmem-oci.tar
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fl := flag.NewFlagSet("ociimage", flag.ContinueOnError)
	var s Spec
	var out string
	fl.StringVar(&s.Binary, "binary", "torchmem", "the static torchmem binary (make build)")
	fl.StringVar(&s.Arch, "arch", runtime.GOARCH, "GOARCH the binary was built for")
	fl.StringVar(&s.Version, "version", "dev", "image version (label and tag)")
	fl.StringVar(&s.Revision, "revision", "", "git commit of the build")
	fl.StringVar(&s.LibRoot, "libroot", "/", "where the binary's shared libraries (glibc's loader, libc) are copied from")
	fl.StringVar(&out, "out", "dist/torchmem-oci.tar", "the OCI layout tarball to write")
	if err := fl.Parse(args); err != nil {
		return err
	}
	created, err := sourceDate(os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		return err
	}
	s.Created, s.Ref = created, refName(s.Version)
	img, err := Image(s)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "torchmem-oci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := WriteLayout(dir, img, s); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := TarDir(dir, f, s.Created); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	digest, _ := img.Digest()
	fmt.Printf("%s: %s %s (linux/%s)\n", out, s.Ref, digest, s.Arch)
	return nil
}

// sourceDate reads SOURCE_DATE_EPOCH (reproducible builds); unset, the
// Unix epoch, so that the same binary always gives the same image.
func sourceDate(v string) (time.Time, error) {
	if v == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", v, err)
	}
	return time.Unix(n, 0).UTC(), nil
}
