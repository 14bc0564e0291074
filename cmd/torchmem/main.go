// Command torchmem keeps PyTorch jobs out of memory trouble. All logic lives in
// internal/cli; main only turns its result into an exit status.
package main

import (
	"os"

	"github.com/torchmem/torchmem/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
