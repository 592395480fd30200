package xdesktop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/remote"
	"github.com/proctor-eval/proctor/guest/guesttest"
	"github.com/proctor-eval/proctor/task"
)

// benchDesktop starts a 1920x1080 desktop with a calculator and an editor
// holding text, so that screenshots have real content.
func benchDesktop(b *testing.B) *Desktop {
	need(b, "gnome-calculator", "mousepad")
	d := start(b)
	// The benchmarks measure input and reading, not the wait for the
	// screen to settle after each turn.
	if err := d.SetSettle(Settle{Off: true}); err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. 0123456789\n", 40)
	err := d.Reset(context.Background(), env.Setup{Steps: []task.Step{
		{Write: &task.Write{Path: "~/text.txt", Content: text}},
		{Launch: &task.Launch{App: "mousepad", Args: []string{"~/text.txt"}, WaitWindow: "text.txt", Timeout: duration.Duration(60 * time.Second)}},
		{Launch: &task.Launch{App: "gnome-calculator", WaitWindow: "Calculator", Timeout: duration.Duration(60 * time.Second)}},
		{Sleep: ptr(duration.Duration(time.Second))},
	}})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func ptr[T any](v T) *T { return &v }

// BenchmarkScreenshot compares Proctor's capture and PNG encoding of the
// whole 1920x1080 screen with the plain tools, `xwd -root | convert png:-`.
func BenchmarkScreenshot(b *testing.B) {
	d := benchDesktop(b)
	ctx := context.Background()
	b.Run("proctor-png", func(b *testing.B) {
		for b.Loop() {
			if _, err := d.Screenshot(ctx, env.ShotOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proctor-capture-only", func(b *testing.B) {
		for b.Loop() {
			if _, err := d.x.Capture(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("xwd-convert", func(b *testing.B) {
		need(b, "xwd", "/usr/bin/convert")
		for b.Loop() {
			cmd := exec.Command("sh", "-c", "xwd -root -silent | /usr/bin/convert xwd:- png:-")
			cmd.Env = append(os.Environ(), "DISPLAY="+d.Display(), "XAUTHORITY="+d.XAuthority())
			if out, err := cmd.Output(); err != nil || len(out) < 1000 {
				b.Fatalf("xwd | convert: %v (%d bytes)", err, len(out))
			}
		}
	})
}

// BenchmarkAction compares one click through Proctor, directly and
// through the guest daemon over HTTP, with xdotool.
func BenchmarkAction(b *testing.B) {
	d := benchDesktop(b)
	ctx := context.Background()
	click := []action.Action{{Kind: action.Click, Point: action.At(10, 10)}}
	move := []action.Action{{Kind: action.Move, Point: action.At(20, 20)}}
	// A click on the editor's text records the element under the pointer.
	var onText []action.Action
	ws, _ := d.Windows(ctx)
	for _, w := range ws {
		if strings.Contains(w.Title, "text.txt") {
			cx, cy := w.Box.Center()
			onText = []action.Action{{Kind: action.Click, Point: action.At(float64(cx), float64(cy))}}
		}
	}
	if onText == nil {
		b.Fatalf("no editor window among %+v", ws)
	}
	b.Run("proctor-click-background", func(b *testing.B) {
		for b.Loop() {
			if _, err := d.Do(ctx, click); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proctor-click-element-recorded", func(b *testing.B) {
		for b.Loop() {
			steps, err := d.Do(ctx, onText)
			if err != nil || steps[0].Element == "" {
				b.Fatalf("%+v %v", steps, err)
			}
		}
	})
	b.Run("proctor-element-record-only", func(b *testing.B) {
		x, y, _ := onText[0].Point.Pixels(d.size())
		for b.Loop() {
			if d.describeAt(ctx, x, y) == "" {
				b.Fatal("no element recorded")
			}
		}
	})
	b.Run("daemon-click-element-recorded", func(b *testing.B) {
		c := daemonClient(b, d)
		for b.Loop() {
			if _, err := c.Do(ctx, onText); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proctor-move", func(b *testing.B) {
		for b.Loop() {
			if _, err := d.Do(ctx, move); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("daemon-move", func(b *testing.B) {
		c := daemonClient(b, d)
		for b.Loop() {
			if _, err := c.Do(ctx, move); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("xdotool-click", func(b *testing.B) {
		need(b, "xdotool")
		for b.Loop() {
			cmd := exec.Command("xdotool", "mousemove", "10", "10", "click", "1")
			cmd.Env = append(os.Environ(), "DISPLAY="+d.Display(), "XAUTHORITY="+d.XAuthority())
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTree reads the accessibility tree of the running calculator
// and editor, beside the plain alternative: pyatspi (python3-pyatspi, as
// OSWorld reads the tree) reading the same properties of the same nodes,
// timed inside its own process so that Python's start is not counted.
func BenchmarkTree(b *testing.B) {
	d := benchDesktop(b)
	ctx := context.Background()
	t, err := d.Tree(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("proctor", func(b *testing.B) {
		for b.Loop() {
			if t, err = d.Tree(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed())/float64(b.N)/1e6, "ms/tree")
		b.ReportMetric(float64(t.Count()), "nodes")
	})
	b.Run("pyatspi", func(b *testing.B) {
		need(b, "/usr/bin/python3")
		if _, err := os.Stat("/usr/lib/python3/dist-packages/pyatspi"); err != nil {
			b.Skip("python3-pyatspi is not installed")
		}
		b.StopTimer()
		cmd := exec.Command("/usr/bin/python3", "../../bench/pyatspi_tree.py", strconv.Itoa(b.N))
		cmd.Env = d.Env()
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("pyatspi: %v\n%s", err, out)
		}
		var r struct {
			Nodes int
			Ms    []float64
		}
		if err := json.Unmarshal(out, &r); err != nil || len(r.Ms) == 0 {
			b.Fatalf("pyatspi's output %q: %v", out, err)
		}
		slices.Sort(r.Ms)
		b.ReportMetric(r.Ms[len(r.Ms)/2], "ms/tree")
		b.ReportMetric(float64(r.Nodes), "nodes")
	})
}

// BenchmarkReset measures a reset that ends the applications and restores
// the home folder, and one that also starts an editor and waits for it.
func BenchmarkReset(b *testing.B) {
	need(b, "mousepad")
	d := start(b)
	ctx := context.Background()
	withApp := env.Setup{Steps: []task.Step{{Launch: &task.Launch{App: "mousepad", WaitWindow: "Mousepad", Timeout: duration.Duration(60 * time.Second)}}}}
	b.Run("clean", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			if err := d.Reset(ctx, withApp); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if err := d.Reset(ctx, env.Setup{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("clean-and-launch-editor", func(b *testing.B) {
		for b.Loop() {
			if err := d.Reset(ctx, withApp); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkIdleMemory reports the resident memory of an idle desktop: the
// X server, the window manager, the D-Bus and AT-SPI daemons, and this
// process (which plays the guest daemon).
func BenchmarkIdleMemory(b *testing.B) {
	d := start(b)
	time.Sleep(500 * time.Millisecond)
	for b.Loop() {
		time.Sleep(10 * time.Millisecond)
	}
	kb := rssKB(os.Getpid())
	for _, p := range markedProcesses(d.s.id) {
		pid, _ := strconv.Atoi(strings.Fields(p)[0])
		kb += rssKB(pid)
	}
	b.ReportMetric(float64(kb)/1024, "MB-rss")
}

func rssKB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	return 0
}

// daemonClient serves d through a guest daemon on loopback, over TLS as
// the daemon serves by default.
func daemonClient(b *testing.B, d *Desktop) *remote.Client {
	return guesttest.Serve(b, d).Dial(b)
}
