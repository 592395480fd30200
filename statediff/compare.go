package statediff

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"
)

// Limits bound a snapshot and a diff, for hostile state.
type Limits struct {
	MaxFiles     int   // files listed in all; the rest are left out, with a note
	MaxHashFile  int64 // a larger file is not read: its size and time stand for its content
	MaxHashTotal int64 // bytes hashed in all; past it, files are not read
	MaxText      int   // a text file at most this long keeps its content, for text diffs
	MaxTextTotal int   // bytes of text kept in all
	MaxItems     int   // items of each other kind (cookies, storage items, windows, ...)
	MaxValue     int   // bytes of a value kept (longer ones are cut; their hash is of all)
	MaxChanges   int   // changes a diff lists, filtered ones included
	MaxRows      int   // rows of databases listed in all
	MaxTextDiff  int   // bytes of one change's text diff
}

// DefaultLimits are the limits of every episode's snapshots.
var DefaultLimits = Limits{
	MaxFiles:     20_000,
	MaxHashFile:  16 << 20,
	MaxHashTotal: 256 << 20,
	MaxText:      64 << 10,
	MaxTextTotal: 4 << 20,
	MaxItems:     5_000,
	MaxValue:     4 << 10,
	MaxChanges:   2_000,
	MaxRows:      200_000,
	MaxTextDiff:  16 << 10,
}

// OrDefault fills the zero fields from DefaultLimits.
func (l Limits) OrDefault() Limits {
	d := DefaultLimits
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&l.MaxFiles, d.MaxFiles)
	set(&l.MaxText, d.MaxText)
	set(&l.MaxTextTotal, d.MaxTextTotal)
	set(&l.MaxItems, d.MaxItems)
	set(&l.MaxValue, d.MaxValue)
	set(&l.MaxChanges, d.MaxChanges)
	set(&l.MaxRows, d.MaxRows)
	set(&l.MaxTextDiff, d.MaxTextDiff)
	if l.MaxHashFile <= 0 {
		l.MaxHashFile = d.MaxHashFile
	}
	if l.MaxHashTotal <= 0 {
		l.MaxHashTotal = d.MaxHashTotal
	}
	return l
}

// Cut shortens a value to at most n bytes, on a character boundary, and
// says how much is left out.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + fmt.Sprintf("… (%d bytes more)", len(s)-i)
}

// Compare says what differs between before and after, filters the noise
// of the environment type and its applications (noise: nil for
// NoiseFor(after.Type)) and classifies the rest against allowed.
func Compare(before, after *Snapshot, noise []Noise, allowed Allowed, lim Limits) *Diff {
	start := time.Now()
	lim = lim.OrDefault()
	if noise == nil {
		noise = NoiseFor(after.Type)
	}
	apps := maps.Clone(before.Apps)
	if apps == nil {
		apps = map[string]string{}
	}
	maps.Copy(apps, after.Apps)
	noise = append(slices.Clip(noise), rowNoise(apps)...)
	before.normalize()
	after.normalize()
	d := &Diff{Type: after.Type, Changes: []Change{}, BeforeMS: ms(before.Took), AfterMS: ms(after.Took)}
	for _, n := range before.Notes {
		d.Notes = append(d.Notes, "before: "+n)
	}
	for _, n := range after.Notes {
		d.Notes = append(d.Notes, "after: "+n)
	}
	dropped := 0
	add := func(c Change) {
		if len(d.Changes)+len(d.Filtered) >= lim.MaxChanges {
			dropped++
			return
		}
		why := filter(noise, c)
		if c.Kind == Row && c.Op == Changed && why == "" {
			rest, whys := filterColumns(noise, c)
			if len(rest) == 0 {
				why = strings.Join(whys, "; ")
			} else {
				c.What = rest
			}
		}
		if c.Kind == Row && why == "" {
			// The text diff leaves the columns that are noise out.
			t := c
			t.Before, t.After = withoutVolatile(noise, c.Before), withoutVolatile(noise, c.After)
			c.TextDiff = textDiff(t, lim.MaxTextDiff)
			d.Changes = append(d.Changes, c)
			return
		}
		if why != "" {
			c.Filtered = why
			c.Before, c.After = strip(c.Before), strip(c.After)
			d.Filtered = append(d.Filtered, c)
			return
		}
		c.TextDiff = textDiff(c, lim.MaxTextDiff)
		c.Before, c.After = strip(c.Before), strip(c.After)
		d.Changes = append(d.Changes, c)
	}
	a, b := before.Items, after.Items
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var cmp int
		switch {
		case i == len(a):
			cmp = 1
		case j == len(b):
			cmp = -1
		default:
			cmp = compareKey(a[i], b[j])
		}
		switch {
		case cmp < 0:
			add(Change{Kind: a[i].Kind, Key: a[i].Key, Origin: a[i].Origin, Op: Deleted, Before: &a[i]})
			i++
		case cmp > 0:
			add(Change{Kind: b[j].Kind, Key: b[j].Key, Origin: b[j].Origin, Op: Created, After: &b[j]})
			j++
		default:
			if what := differ(a[i], b[j]); len(what) > 0 {
				add(Change{Kind: b[j].Kind, Key: b[j].Key, Origin: b[j].Origin, Op: Changed, What: what, Before: &a[i], After: &b[j]})
			}
			i++
			j++
		}
	}
	if dropped > 0 {
		d.Truncated = true
		d.Notes = append(d.Notes, fmt.Sprintf("%d more changes are left out (at most %d are listed)", dropped, lim.MaxChanges))
	}
	d.Classify(allowed)
	d.DiffMS = ms(time.Since(start))
	return d
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func compareKey(a, b Item) int {
	if c := strings.Compare(string(a.Kind), string(b.Kind)); c != 0 {
		return c
	}
	return strings.Compare(a.Key, b.Key)
}

// differ names the fields in which two items of the same key differ.
func differ(a, b Item) []string {
	if a.Kind == Row {
		return rowDiffer(a, b)
	}
	var what []string
	if a.Type != b.Type {
		what = append(what, "type")
	}
	if a.Mode != b.Mode {
		what = append(what, "mode")
	}
	if a.Type == TypeDir && b.Type == TypeDir {
		return what // a folder's size is its file system's business
	}
	if a.Origin != b.Origin {
		what = append(what, "origin")
	}
	switch {
	case a.Kind == Tab && a.Value != b.Value:
		what = append(what, "url")
	case a.Hash != b.Hash || (a.Hash == "" && a.Value != b.Value):
		if a.Kind == File {
			what = append(what, "content")
		} else {
			what = append(what, "value")
		}
	}
	if a.Size != b.Size && a.Kind == File && a.Type == b.Type {
		what = append(what, "size")
	}
	return what
}

// strip leaves a file's kept text out of an item of a change (the text
// diff says what changed).
func strip(it *Item) *Item {
	if it == nil || it.Text == "" {
		return it
	}
	c := *it
	c.Text = ""
	return &c
}

// textDiff is the unified diff of a change's text: a small text file's
// content, or a value.
func textDiff(c Change, max int) string {
	var old, new string
	var has bool
	if c.Before != nil {
		old, has = textOf(*c.Before)
	}
	if c.After != nil {
		t, ok := textOf(*c.After)
		new, has = t, has || ok
	}
	if !has || old == new {
		return ""
	}
	if c.Op == Changed && c.Kind == File && (c.Before.Text == "" && c.Before.Size > 0 || c.After.Text == "" && c.After.Size > 0) {
		return "" // one side's text was not kept: a diff would lie
	}
	name := c.Key
	return Cut(udiff.Unified("a/"+name, "b/"+name, old, new), max)
}

// textOf is the text of an item that a diff shows.
func textOf(it Item) (string, bool) {
	switch it.Kind {
	case File:
		return it.Text, it.Text != "" || (it.Type == TypeFile && it.Size == 0)
	case Clipboard, LocalStorage, SessionStorage, Setting, Row:
		return it.Value, true
	}
	return "", false
}
