package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Spec is what goes into the image: one static binary and its metadata.
type Spec struct {
	Binary   string    // path of the CGO-free torchmem binary
	Arch     string    // GOARCH of the binary (amd64, arm64)
	Version  string    // org.opencontainers.image.version
	Revision string    // org.opencontainers.image.revision (git commit)
	Created  time.Time // image and file times: SOURCE_DATE_EPOCH, so builds are reproducible
	Ref      string    // the tag stored in the layout (org.opencontainers.image.ref.name)
	LibRoot  string    // where the binary's shared libraries are taken from ("/": the build host)
}

// The image's one port: serve's default (docs/serve.md).
const agentPort = "10464/tcp"

// Image builds the image: no base image, one layer with /usr/bin/torchmem,
// the few glibc files its dynamic loader needs and nothing else (no shell,
// no package manager), user root (the agent reads every user's /proc
// files; docs/kubernetes.md says why), entrypoint torchmem.
//
// The binary is built without cgo but is not static: purego, which loads
// NVML at run time, links the dynamic loader and libc so that dlopen works.
// The NVIDIA container toolkit then mounts libnvidia-ml.so.1 into
// /usr/lib/<triplet>, which the image has, empty, for that.
func Image(s Spec) (v1.Image, error) {
	files, err := imageFiles(s)
	if err != nil {
		return nil, err
	}
	tarBytes, err := rootfs(files, s.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tarBytes)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	// OCI media types throughout: go-containerregistry's empty image is a
	// Docker schema 2 manifest, which OCI tools (umoci) refuse in a layout.
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: s.Created}, CreatedBy: "torchmem packaging/ociimage", Comment: "static torchmem binary",
	}})
	if err != nil {
		return nil, fmt.Errorf("append layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = s.Arch, "linux"
	cf.Created = v1.Time{Time: s.Created}
	cf.Config = v1.Config{
		Entrypoint:   []string{"/usr/bin/torchmem"},
		Cmd:          []string{"--help"},
		Env:          []string{"PATH=/usr/bin"},
		User:         "0:0",
		WorkingDir:   "/",
		ExposedPorts: map[string]struct{}{agentPort: {}},
		Labels:       labels(s),
	}
	return mutate.ConfigFile(img, cf)
}

// labels are the OCI annotations' keys, as image labels.
func labels(s Spec) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":         "torchmem",
		"org.opencontainers.image.description":   "torchmem node agent (torchmem serve): PyTorch jobs' host and GPU memory, OOM kills explained, Prometheus /metrics",
		"org.opencontainers.image.version":       s.Version,
		"org.opencontainers.image.revision":      s.Revision,
		"org.opencontainers.image.created":       s.Created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.source":        "https://github.com/torchmem/torchmem",
		"org.opencontainers.image.url":           "https://github.com/torchmem/torchmem",
		"org.opencontainers.image.documentation": "https://github.com/torchmem/torchmem/blob/main/docs/serve.md",
		"org.opencontainers.image.licenses":      "Apache-2.0",
		"org.opencontainers.image.vendor":        "torchmem",
	}
}

// rootfs is the layer's tar: the files in path order, owned by root, all
// with one time, so the same inputs give the same layer digest.
func rootfs(files []file, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.path, Mode: f.mode, ModTime: mtime, Format: tar.FormatPAX}
		switch {
		case strings.HasSuffix(f.path, "/"):
			hdr.Typeflag = tar.TypeDir
		case f.link != "":
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, f.link
		default:
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteLayout writes img as an OCI image layout in dir (index.json,
// oci-layout, blobs/sha256/...), tagged ref.
func WriteLayout(dir string, img v1.Image, s Spec) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("layout %s: %w", dir, err)
	}
	return p.AppendImage(img,
		layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": s.Ref}),
		layout.WithPlatform(v1.Platform{OS: "linux", Architecture: s.Arch}))
}

// TarDir writes dir's files to w as a tar (an "oci-archive": skopeo copy
// oci-archive:FILE, crane push after untarring), in name order with one
// time, so the same layout gives the same bytes.
func TarDir(dir string, w io.Writer, mtime time.Time) error {
	var names []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && path != dir {
			names = append(names, path)
		}
		return err
	})
	if err != nil {
		return err
	}
	sort.Strings(names)
	tw := tar.NewWriter(w)
	for _, path := range names {
		if err := tarEntry(tw, dir, path, mtime); err != nil {
			return err
		}
	}
	return tw.Close()
}

func tarEntry(tw *tar.Writer, dir, path string, mtime time.Time) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	rel, _ := filepath.Rel(dir, path)
	hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: mtime, Format: tar.FormatPAX}
	switch {
	case fi.IsDir():
		hdr.Typeflag, hdr.Mode, hdr.Name = tar.TypeDir, 0o755, hdr.Name+"/"
		return tw.WriteHeader(hdr)
	case fi.Mode().IsRegular():
		hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, fi.Size()
	default:
		return fmt.Errorf("%s: not a file or directory", path)
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(tw, f)
	return err
}

// refName is the tag for a version: "torchmem:<version>" with characters a
// tag cannot hold replaced.
func refName(version string) string {
	tag := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, version)
	return "ghcr.io/torchmem/torchmem:" + tag
}
