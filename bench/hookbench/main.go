// Command hookbench measures the in-process hook's overhead on a CPU
// training step: it runs bench/hookbench/train_bench.py alternately bare
// and under the hook (1 s stats, step messages at the default 20 Hz cap),
// with a real hook server draining messages, and prints the medians.
//
//	go run ./bench/hookbench -python /usr/bin/python3 -rounds 6 -steps 400
//	go run ./bench/hookbench -rounds 0 -step-hz 100000000   # cost when every step sends
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/torchmem/torchmem/internal/hook"
)

type result struct {
	MedianMS float64 `json:"median_ms"`
	MeanMS   float64 `json:"mean_ms"`
	StepUS   float64 `json:"step_us"`
}

func main() {
	py := flag.String("python", "/usr/bin/python3", "interpreter with torch")
	rounds := flag.Int("rounds", 6, "bare/hooked pairs")
	steps := flag.Int("steps", 400, "measured steps per run")
	script := flag.String("script", "bench/hookbench/train_bench.py", "training script")
	stepHz := flag.Int("step-hz", 20, "most step messages per second per process (hook.InstallOptions.StepMaxHz)")
	flag.Parse()
	if err := run(*py, *script, *rounds, *steps, *stepHz); err != nil {
		fmt.Fprintln(os.Stderr, "hookbench:", err)
		os.Exit(1)
	}
}

func run(py, script string, rounds, steps, stepHz int) error {
	dir, err := os.MkdirTemp("", "tmhb")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	env, err := hook.Install(dir, hook.InstallOptions{Interval: time.Second, StepMaxHz: stepHz})
	if err != nil {
		return err
	}
	srv, err := hook.Listen(dir, hook.Options{})
	if err != nil {
		return err
	}
	defer srv.Close()
	counts := map[string]int{}
	go func() {
		for m := range srv.Messages() {
			counts[m.Type]++
		}
	}()
	var mbare, mhooked []float64
	for i := 0; i < 3; i++ {
		b, err := once(py, script, os.Environ(), "micro", "20000")
		if err != nil {
			return err
		}
		h, err := once(py, script, hook.MergeEnv(os.Environ(), env), "micro", "20000")
		if err != nil {
			return err
		}
		mbare, mhooked = append(mbare, b.StepUS), append(mhooked, h.StepUS)
		fmt.Printf("micro %d: tiny optimizer step bare %.2f us, hooked %.2f us\n", i+1, b.StepUS, h.StepUS)
	}
	fmt.Printf("hook cost per optimizer step: %.2f us (best bare %.2f us, best hooked %.2f us)\n",
		minOf(mhooked)-minOf(mbare), minOf(mbare), minOf(mhooked))
	var bare, hooked []float64
	for i := 0; i < rounds; i++ {
		b, err := once(py, script, os.Environ(), fmt.Sprint(steps))
		if err != nil {
			return err
		}
		h, err := once(py, script, hook.MergeEnv(os.Environ(), env), fmt.Sprint(steps))
		if err != nil {
			return err
		}
		bare, hooked = append(bare, b.MedianMS), append(hooked, h.MedianMS)
		fmt.Printf("round %d: bare %.3f ms  hooked %.3f ms\n", i+1, b.MedianMS, h.MedianMS)
	}
	if rounds == 0 {
		return nil
	}
	mb, mh := median(bare), median(hooked)
	fmt.Printf("median step: bare %.3f ms, hooked %.3f ms, overhead %+.2f%%\n", mb, mh, (mh-mb)/mb*100)
	time.Sleep(200 * time.Millisecond)
	fmt.Printf("messages received: %v\n", counts)
	return nil
}

func once(py, script string, env []string, args ...string) (result, error) {
	abs, _ := filepath.Abs(script)
	cmd := exec.Command(py, append([]string{abs}, args...)...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", script, err)
	}
	var r result
	if err := json.Unmarshal(out, &r); err != nil {
		return result{}, fmt.Errorf("parse %q: %w", out, err)
	}
	return r, nil
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		if x < m {
			m = x
		}
	}
	return m
}
