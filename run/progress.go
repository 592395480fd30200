package run

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/store"
)

// progress prints a line per finished episode: position and a bar, the
// episode's outcome, and the running success rate, tokens, spend and time left.
type progress struct {
	mu              sync.Mutex
	w               io.Writer
	total, done0, n int
	passed, decided int
	tokens          int
	cost            float64
	start           time.Time
	validation      bool // no success rate: the episodes are meant to differ
}

func newProgress(w io.Writer, total, already, rerun int) *progress {
	p := &progress{w: w, total: total, done0: already, start: time.Now()}
	if w != nil && already+rerun > 0 {
		fmt.Fprintf(w, "resuming: %d of %d episodes already recorded", already, total)
		if rerun > 0 {
			fmt.Fprintf(w, "; %d that ended in an error run again", rerun)
		}
		fmt.Fprintln(w)
	}
	return p
}

// notef prints a line about the pool (an environment lost or replaced)
// or a retry.
func (p *progress) notef(format string, args ...any) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *progress) done(r store.Result) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if r.Outcome == "success" {
		p.passed++
	}
	if r.Outcome != "error" {
		p.decided++
	}
	p.tokens += r.InputTokens + r.OutputTokens
	p.cost += r.Cost
	at := p.done0 + p.n
	left := p.total - at
	eta := time.Duration(0)
	if p.n > 0 {
		eta = time.Since(p.start) / time.Duration(p.n) * time.Duration(left)
	}
	// Errors are left out of the rate, as in the report.
	rate := " | success n/a"
	if p.decided > 0 {
		rate = fmt.Sprintf(" | success %.1f%%", 100*float64(p.passed)/float64(p.decided))
	}
	if p.validation {
		rate = ""
	}
	fmt.Fprintf(p.w, "[%*d/%d] %s %3.0f%% %-12s %s (%d steps, %s)%s | %d tokens | $%.4f | ETA %s\n",
		len(fmt.Sprint(p.total)), at, p.total, bar(at, p.total, 20), 100*float64(at)/float64(p.total), r.Outcome, r.Task, r.Steps,
		r.Duration.Round(100*time.Millisecond), rate, p.tokens, p.cost, eta.Round(time.Second))
	if r.Outcome == "error" { // why, for a run whose episodes all fail alike
		reason := strings.Join(strings.Fields(r.Reason), " ")
		if len(reason) > 300 {
			reason = strings.ToValidUTF8(reason[:300], "") + "…"
		}
		fmt.Fprintf(p.w, "    error: %s\n", reason)
	}
}

// bar draws done out of total as a bar of width characters: [#####-----].
func bar(done, total, width int) string {
	n := 0
	if total > 0 {
		n = min(width, max(0, done*width/total))
	}
	return "[" + strings.Repeat("#", n) + strings.Repeat("-", width-n) + "]"
}
