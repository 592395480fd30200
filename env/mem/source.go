package mem

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
)

// shared makes an environment count its calls and find its faults in p,
// with the other environments of its Source.
func shared(p *plan) Option {
	return func(c *config) error {
		c.plan = p
		return nil
	}
}

// Source is a place of a pool that starts in-memory environments of type
// Kind, with the options given; a caller may add to Also the types it
// should serve besides. With WithSize its screen has that size (Size);
// without, each start makes the size the runner asks for (DefaultSize
// when it asks for none). The environments it starts share the call
// counts of their faults (see Fault), and a fault on "Start" falls on its
// starts. Invalid options make every start fail.
func Source(name string, opts ...Option) env.Source {
	c, cerr := newConfig(opts)
	src := env.Source{Name: name, Type: Kind}
	fixed := cerr == nil && c.sized
	if fixed {
		src.Size = c.size
	}
	src.Start = func(ctx context.Context, size action.Size) (env.Env, error) {
		if cerr != nil {
			return nil, fmt.Errorf("mem: %w", cerr)
		}
		n, faults := c.plan.hit("Start")
		for _, f := range faults {
			if err := f.apply(ctx, nil, "Start", n); err != nil {
				return nil, err
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o := append(slices.Clone(opts), shared(c.plan))
		if !fixed && size.W > 0 && size.H > 0 {
			o = append(o, WithSize(size))
		}
		return New(o...)
	}
	return src
}

// Sources makes the places of an --env value for in-memory environments:
// arg is what follows "mem=": "" for parallel places (at least one), "N"
// for N places, "WxH" for places with a screen of that size, "N:WxH" for
// both. Places are named "mem 1", "mem 2"...; each is a Source with opts.
func Sources(arg string, parallel int, opts ...Option) ([]env.Source, error) {
	n := max(parallel, 1)
	if _, err := newConfig(opts); err != nil {
		return nil, fmt.Errorf("mem: %w", err)
	}
	if arg != "" {
		count, dims, both := strings.Cut(arg, ":")
		if !both && strings.Contains(arg, "x") {
			count, dims = "", arg
		}
		if count != "" {
			v, err := strconv.Atoi(count)
			if err != nil || v < 1 || v > 64 {
				return nil, fmt.Errorf("mem=%s: give the number of environments (1 to 64), a screen size WxH, or both as N:WxH", arg)
			}
			n = v
		}
		if dims != "" || both {
			w, h, ok := strings.Cut(dims, "x")
			wi, err1 := strconv.Atoi(w)
			hi, err2 := strconv.Atoi(h)
			if !ok || err1 != nil || err2 != nil {
				return nil, fmt.Errorf("mem=%s: screen size %q is not WIDTHxHEIGHT", arg, dims)
			}
			size := WithSize(action.Size{W: wi, H: hi})
			if err := size(&config{}); err != nil {
				return nil, fmt.Errorf("mem=%s: %w", arg, err)
			}
			opts = append(slices.Clone(opts), size)
		}
	}
	out := make([]env.Source, n)
	for i := range out {
		out[i] = Source(fmt.Sprintf("mem %d", i+1), opts...)
	}
	return out, nil
}
