package cli

import (
	"encoding/json"
	"testing"

	"github.com/torchmem/torchmem/internal/store"
)

// show in Chinese words a policy event's condition from its data; an event
// with an English tail, or without the data (older runs), stays as stored.
func TestShowPolicyEventZH(t *testing.T) {
	data, _ := json.Marshal(map[string]any{"rule": "leak-stop: cgroup.time_to_oom < 20s → stop", "value": 7.5,
		"rule_name": "leak-stop", "metric": "cgroup.time_to_oom", "value_text": "7.5s", "threshold_text": "20.0s"})
	e := store.Event{Kind: "stop", Source: "policy", Message: "leak-stop: cgroup.time_to_oom = 7.5s (threshold 20.0s)", Data: data}
	zh, en := &Env{Lang: langZH}, &Env{Lang: langEN}
	if got := showEventMessage(zh, e, nil); got != "leak-stop：cgroup.time_to_oom = 7.5s（阈值 20.0s）" {
		t.Errorf("zh %q", got)
	}
	if got := showEventMessage(en, e, nil); got != e.Message {
		t.Errorf("en %q", got)
	}
	tail := e
	tail.Message += "; cleanup sent to 2 process(es)"
	old := e
	old.Data = []byte(`{"rule":"leak-stop","value":7.5}`)
	for _, x := range []store.Event{tail, old} {
		if got := showEventMessage(zh, x, nil); got != x.Message {
			t.Errorf("zh %q, want the stored %q", got, x.Message)
		}
	}
}

// The exit event's message is the English verdict; show in Chinese prints
// the run's Chinese verdict instead, and only for that event.
func TestShowExitEventZH(t *testing.T) {
	v := map[string]string{"exited normally": "正常退出"}
	zh := &Env{Lang: langZH}
	if got := showEventMessage(zh, store.Event{Kind: "exit", Source: "supervisor", Message: "exited normally"}, v); got != "正常退出" {
		t.Errorf("exit %q", got)
	}
	if got := showEventMessage(zh, store.Event{Kind: "warn", Source: "hook", Message: "exited normally"}, v); got != "exited normally" {
		t.Errorf("another kind %q", got)
	}
}
