package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/proctor-eval/proctor/action"
)

// Human lets a person do the task on the desktop (through a VNC viewer,
// for example) and then say how it ended: DONE, FAIL, or ANS followed by
// the answer. Human baselines are measured this way.
type Human struct {
	In  io.Reader
	Out io.Writer
	t   Task

	once  sync.Once
	lines chan line // one reader for the whole run: a line typed while no
	// step waits is kept for the next, never read by two goroutines
}

type line struct {
	text string
	err  error
}

// read reads the person's lines for as long as the input lasts.
func (h *Human) read() {
	r := bufio.NewReader(h.In)
	for {
		s, err := r.ReadString('\n')
		h.lines <- line{s, err}
		if err != nil {
			close(h.lines)
			return
		}
	}
}

// Start shows the task.
func (h *Human) Start(_ context.Context, t Task) error {
	h.t = t
	h.once.Do(func() {
		h.lines = make(chan line, 1)
		go h.read()
	})
	fmt.Fprintf(h.Out, "\nTask %s: %s\n", t.ID, t.Instruction)
	return nil
}

// Next waits for the person's verdict; WAIT n gives them more steps.
func (h *Human) Next(ctx context.Context, obs Observation, _ []Turn) (Turn, error) {
	for {
		fmt.Fprint(h.Out, "Do the task on the desktop, then type DONE, FAIL or ANS <answer>: ")
		var r line
		select {
		case l, ok := <-h.lines:
			if !ok {
				return Turn{}, fmt.Errorf("the person's input ended: %w", io.EOF)
			}
			r = l
		case <-ctx.Done():
			return Turn{}, ctx.Err()
		}
		line := strings.TrimSpace(r.text)
		if line == "" && r.err != nil {
			return Turn{}, fmt.Errorf("the person's input ended: %w", r.err)
		}
		acts, err := action.Parse(action.FormatPyAutoGUI, line, action.Options{})
		if err == nil && len(acts) == 1 && (acts[0].Kind.Terminal() || acts[0].Kind == action.Wait) {
			return Turn{Actions: acts, Raw: line}, nil
		}
		fmt.Fprintf(h.Out, "%q is not DONE, FAIL, WAIT n or ANS <answer>\n", line)
	}
}

// Stop does nothing.
func (h *Human) Stop(context.Context) error { return nil }

func init() {
	Register("human", Def{Summary: "a person acts on the desktop (seen with a VNC viewer) and types DONE, FAIL or ANS",
		Interactive: true,
		New: func(o Options) (Factory, error) {
			if o.In == nil || o.Out == nil {
				return nil, errors.New("--agent human needs a terminal to read the person's verdicts")
			}
			h := &Human{In: o.In, Out: o.Out} // one reader for every episode: a second would lose buffered input
			return func() (Agent, error) { return h, nil }, nil
		}})
}
