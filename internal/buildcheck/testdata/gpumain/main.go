// Command gpumain is built by the buildcheck test: a binary that links the
// GPU package (purego, no cgo), to check what it needs from glibc.
package main

import (
	"fmt"
	"os"

	"github.com/torchmem/torchmem/internal/gpu"
)

func main() {
	b, notice := gpu.Open(gpu.Options{})
	defer b.Close()
	devs, err := b.Devices()
	fmt.Printf("backend=%s devices=%d err=%v notice=%q\n", b.Info().Backend, len(devs), err, notice)
	if err != nil {
		os.Exit(1)
	}
}
