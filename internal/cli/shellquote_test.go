package cli

import "testing"

// TestShellJoin: a command shown (traced:, runs) is the one the user ran:
// yolov5's `--weights ”` must not come back as a bare --weights, which
// takes the next flag as its value.
func TestShellJoin(t *testing.T) {
	got := shellJoin([]string{"python3", "train.py", "--weights", "", "--name", "my run", "--note=it's", "--lr=3e-4", "configs/ünïcödé.yaml"})
	want := `python3 train.py --weights '' --name 'my run' '--note=it'\''s' --lr=3e-4 configs/ünïcödé.yaml`
	if got != want {
		t.Errorf("shellJoin = %s\nwant         %s", got, want)
	}
}
