package supervisor

import (
	"encoding/json"
	"math"
	"os/exec"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/jobcgroup"
	"github.com/torchmem/torchmem/internal/policy"
)

// A real job growing 40 MiB/s into a 400 MiB cgroup limit: the
// cgroup.time_to_oom rule fires before the kernel's OOM kill, and its
// projection is within 40% of the measured time from that sample to the
// kill (the cgroup's OOM event, else the job's exit). A sanity bound: on
// the loaded 2-core CI machine the job's own pacing drifts (+24% once with
// the tracer's tests beside it); the accuracy is measured, unloaded, by
// bench/run_time_to_oom.sh.
func TestTimeToOOMBeforeRealKill(t *testing.T) {
	if testing.Short() {
		t.Skip("real OOM kill: not with -short")
	}
	cgroupOK(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	max := int64(400 << 20)
	rec := &recorder{}
	rule := policy.Rule{Name: "ttl", Metric: policy.CgroupTimeToOOM, Threshold: 5, Action: policy.Warn, Every: time.Hour}
	o := runJob(t, Config{
		Argv:     []string{py, "-c", "import time\na=[]\nt=time.time()\nwhile True:\n a.append(bytearray(b'x'*(4<<20)))\n t+=0.1\n time.sleep(max(0,t-time.time()))"},
		Cgroup:   true,
		Limits:   jobcgroup.Limits{MemoryMax: &max},
		Interval: 500 * time.Millisecond,
		Rules:    []policy.Rule{rule},
		Rec:      rec,
	})
	if o.res.Summary.Cause != CauseCgroupOOMKill {
		t.Fatalf("cause %s", o.res.Summary.Cause)
	}
	var fired, killed time.Time
	var projected float64
	for _, e := range rec.events {
		switch {
		case e.Kind == policy.Warn && fired.IsZero():
			var d struct {
				Value    float64 `json:"value"`
				SampleNS int64   `json:"sample_ns"`
			}
			_ = json.Unmarshal(e.Data, &d)
			fired, projected = time.Unix(0, d.SampleNS), d.Value
		case (e.Kind == "cgroup_oom" || e.Kind == "cgroup_events" || e.Kind == "exit") && killed.IsZero():
			killed = e.Time
		}
	}
	if fired.IsZero() || !fired.Before(killed) {
		t.Fatalf("rule fired at %s, OOM at %s", fired, killed)
	}
	actual := killed.Sub(fired).Seconds()
	t.Logf("projected %.2f s, actual %.2f s to the OOM (%+.1f%%); post-mortem %+v", projected, actual, (projected-actual)/actual*100, o.res.Summary.TimeToOOM)
	if math.Abs(projected-actual) > 0.4*actual {
		t.Errorf("projection %.2f s is more than 40%% off the actual %.2f s", projected, actual)
	}
	if tto := o.res.Summary.TimeToOOM; tto == nil || tto.Rule != "ttl" {
		t.Errorf("post-mortem projection %+v", tto)
	}
}
