package web

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/sample/sampletest"
)

// TestDashboardShowsIdentity: the node page's job list says whose job it
// is. The fixture job's root runs in a Slurm step (the variables sbatch
// and srun set, read from its environ file).
func TestDashboardShowsIdentity(t *testing.T) {
	ctx := browser(t)
	tree, err := sampletest.WriteJobTree(t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	env := "SLURM_JOB_ID=4242\x00SLURM_STEP_ID=0\x00SLURM_JOB_USER=alice\x00SLURM_JOB_PARTITION=gpu\x00"
	if err := os.WriteFile(filepath.Join(tree.ProcRoot, strconv.Itoa(sampletest.MainPID), "environ"), []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sample.New(sample.Options{ProcRoot: tree.ProcRoot, SysRoot: tree.SysRoot})
	if err != nil {
		t.Fatal(err)
	}
	url := startServe(t, Config{Sampler: s, Interval: time.Hour, NoRuntimeMetrics: true})
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	text, err := chromedp.Run(ctx, chromedp.Poll[string](`(document.querySelector('[data-who]') || {}).textContent`))
	if err != nil {
		t.Fatalf("node page never showed whose job it is: %v", err)
	}
	if !strings.Contains(text, "Slurm job 4242.0 (alice, gpu)") || !strings.Contains(text, "slurm:4242.0") {
		t.Errorf("who line %q", text)
	}
}
