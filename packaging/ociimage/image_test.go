package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// buildTorchmem builds the real binary the way make build does.
func buildTorchmem(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds torchmem; skipped in -short")
	}
	bin := filepath.Join(t.TempDir(), "torchmem")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "../../cmd/torchmem")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// makeImage runs the command as make image does and returns the tarball.
func makeImage(t *testing.T, bin string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "img.tar")
	if err := run([]string{"-binary", bin, "-version", "1.2.3", "-revision", "abc123", "-arch", "amd64", "-out", out}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// untar unpacks the layout tarball into a directory.
func untar(t *testing.T, b []byte) string {
	t.Helper()
	dir := t.TempDir()
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, h.Name)
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestImage: the tarball is a valid OCI layout (go-containerregistry's
// validate checks every digest, size and the config against the layers),
// tagged, with the entrypoint, root user, port and OCI labels; its one
// layer holds the binary, byte for byte and executable, and the binary in
// it runs; the same binary gives the same tarball.
func TestImage(t *testing.T) {
	bin := buildTorchmem(t)
	tarball := makeImage(t, bin)
	p, err := layout.FromPath(untar(t, tarball))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		t.Fatalf("index: %v, %+v", err, im)
	}
	desc := im.Manifests[0]
	if desc.Annotations["org.opencontainers.image.ref.name"] != "ghcr.io/torchmem/torchmem:1.2.3" || desc.Platform == nil || desc.Platform.Architecture != "amd64" {
		t.Errorf("index entry %+v", desc)
	}
	img, err := idx.Image(desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("validate: %v", err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || desc.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON ||
		len(m.Layers) != 1 || m.Layers[0].MediaType != types.OCILayer {
		t.Errorf("media types: manifest %s (index says %s), config %s, layers %+v", m.MediaType, desc.MediaType, m.Config.MediaType, m.Layers)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if !slices.Equal(c.Entrypoint, []string{"/usr/bin/torchmem"}) || c.User != "0:0" || cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("config: entrypoint %v, user %q, %s/%s", c.Entrypoint, c.User, cf.OS, cf.Architecture)
	}
	if _, ok := c.ExposedPorts["10464/tcp"]; !ok {
		t.Errorf("exposed ports %v", c.ExposedPorts)
	}
	for k, want := range map[string]string{"org.opencontainers.image.version": "1.2.3", "org.opencontainers.image.revision": "abc123",
		"org.opencontainers.image.source": "https://github.com/torchmem/torchmem", "org.opencontainers.image.title": "torchmem"} {
		if c.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], want)
		}
	}
	checkLayer(t, img, bin)
	if again := makeImage(t, bin); !bytes.Equal(again, tarball) {
		t.Errorf("two builds of one binary differ: %x, %x", sha256.Sum256(tarball), sha256.Sum256(again))
	}
}

// checkLayer: one layer whose /usr/bin/torchmem is the binary, mode
// 0755, with the directory the NVIDIA toolkit mounts NVML into; unpacked
// alone, it is enough to run the binary (chroot into it, as root: the
// loader and libc the binary asks for are in the image).
func checkLayer(t *testing.T, img v1.Image, bin string) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %v, %d", err, len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	want, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s owned by %d:%d", h.Name, h.Uid, h.Gid)
		}
		p := filepath.Join(root, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, p)
		default:
			data, _ := io.ReadAll(tr)
			if h.Name == "usr/bin/torchmem" && (!bytes.Equal(data, want) || h.Mode != 0o755) {
				t.Errorf("usr/bin/torchmem: %d bytes (want %d), mode %o", len(data), len(want), h.Mode)
			}
			err = os.WriteFile(p, data, os.FileMode(h.Mode))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(filepath.Join(root, "usr/lib/x86_64-linux-gnu")); err != nil || !fi.IsDir() {
		t.Errorf("no /usr/lib/x86_64-linux-gnu for NVML: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Log("not root: the unpacked image is not run under chroot")
		return
	}
	out, err := exec.Command("chroot", root, "/usr/bin/torchmem", "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "torchmem") {
		t.Fatalf("chroot into the image's layer, torchmem --version: %v\n%s", err, out)
	}
}

// TestSharedLibrariesOfAStaticBinary: a binary without an interpreter gets
// no libraries (a static build would need no glibc in the image).
func TestSharedLibrariesOfAStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "static")
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	libs, err := sharedLibraries(bin, "/nonexistent", "x86_64-linux-gnu")
	if err != nil || len(libs) != 0 {
		t.Errorf("static binary: %d libraries, %v", len(libs), err)
	}
}
