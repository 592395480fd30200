package x11

import (
	"fmt"

	"github.com/jezek/xgb/res"
)

// ClientPIDs returns the process ids of the programs connected to the
// display, read through the X-Resource extension (version 1.2 or later).
// Only local clients report a process id; the others are left out. It
// finds every program that draws on the display, whatever its process
// group, session or environment.
func (c *Conn) ClientPIDs() ([]int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.x.Extensions["X-Resource"]; !ok {
		err := initExt(c.x, "X-Resource")
		if err != nil {
			return nil, fmt.Errorf("no X-Resource extension: %w", err)
		}
	}
	// Client 0 asks about every client.
	spec := res.ClientIdSpec{Client: 0, Mask: res.ClientIdMaskLocalClientPID}
	reply, err := res.QueryClientIds(c.x, 1, []res.ClientIdSpec{spec}).Reply()
	if err != nil {
		return nil, fmt.Errorf("X-Resource QueryClientIds: %w", err)
	}
	seen := map[int]bool{}
	var out []int
	for _, id := range reply.Ids {
		if id.Spec.Mask&res.ClientIdMaskLocalClientPID == 0 || len(id.Value) == 0 {
			continue
		}
		pid := int(id.Value[0])
		if pid > 0 && !seen[pid] {
			seen[pid] = true
			out = append(out, pid)
		}
	}
	return out, nil
}
