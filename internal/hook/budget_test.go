package hook

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is an injected clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestBudgetRatesOnInjectedClock(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	srv := listenTest(t, Options{Now: clk.now, Budget: Budget{MaxPeers: 4, Rates: map[string]Rate{
		TypeException: {PerSecond: 2, Burst: 5}, "": {PerSecond: 1, Burst: 1}}}})
	c, err := net.Dial("unix", srv.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	send := func(n int, typ string) {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, `{"v":1,"type":%q,"exc_type":"E","text":"%d"}`+"\n", typ, i)
		}
		c.Write([]byte(b.String()))
	}
	send(50, TypeException)
	send(3, "newer-type") // a type not in Rates: Rates[""]
	got := map[string]int{}
	deadline := time.After(5 * time.Second)
	for got[TypeException]+got["newer-type"] < 6 {
		select {
		case m := <-srv.Messages():
			got[m.Type]++
		case <-deadline:
			t.Fatalf("delivered %v", got)
		}
	}
	time.Sleep(100 * time.Millisecond)
	drop, _ := srv.OverBudget()
	if got[TypeException] != 5 || got["newer-type"] != 1 || drop[TypeException] != 45 || drop["newer-type"] != 2 {
		t.Fatalf("delivered %v, dropped %v", got, drop)
	}
	clk.add(2 * time.Second) // 4 more exception tokens
	send(10, TypeException)
	for i := 0; i < 4; i++ {
		if m := next(t, srv); m.Type != TypeException {
			t.Fatalf("got %s", m.Type)
		}
	}
	select {
	case m := <-srv.Messages():
		t.Fatalf("a fifth exception after 2 s at 2/s: %+v", m)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestClampCutsEveryField(t *testing.T) {
	long := strings.Repeat("é", MaxTextBytes) // 2 bytes a rune: cuts land mid-rune
	m := Message{Exception: &Exception{Text: long, ExcType: long, Thread: long}}
	if !m.Clamp() || len(m.Exception.Text) > MaxTextBytes || len(m.Exception.ExcType) > MaxShortBytes || len(m.Exception.Thread) > MaxShortBytes ||
		!strings.HasSuffix(m.Exception.Text, "é") {
		t.Fatalf("exception not cut: %d %d %d", len(m.Exception.Text), len(m.Exception.ExcType), len(m.Exception.Thread))
	}
	h := Message{Hello: &Hello{Torch: long, Argv: make([]string, 1000)}}
	h.Hello.Argv[0] = long
	if !h.Clamp() || len(h.Hello.Argv) != MaxArgs || len(h.Hello.Argv[0]) > 4*MaxShortBytes || len(h.Hello.Torch) > MaxShortBytes {
		t.Fatalf("hello not cut")
	}
	o := Message{OOM: &OOM{Snapshot: long}}
	n := Message{Notice: &Notice{Text: long}}
	a := Message{Ack: &Ack{Error: long}}
	s := Message{Stats: &Stats{Devices: make([]DeviceStats, 100)}}
	if !o.Clamp() || !n.Clamp() || !a.Clamp() || !s.Clamp() || len(s.Stats.Devices) != MaxDevices || len(n.Notice.Text) > MaxLineText {
		t.Fatal("oom, notice, ack or stats not cut")
	}
	if small := (Message{Notice: &Notice{Text: "ok"}}); small.Clamp() {
		t.Fatal("a short notice was cut")
	}
}
