package statediff

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func file(key, text string, mode string) Item {
	it := Item{Kind: File, Key: key, Type: TypeFile, Mode: mode}
	NewBudget(Limits{}).Content(&it, []byte(text))
	return it
}

func names(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

func TestCompare(t *testing.T) {
	base := []Item{file("~/a.txt", "one\n", "644"), file("~/b.txt", "two\n", "644"), file("~/c.txt", "three\n", "644"),
		{Kind: File, Key: "~/d", Type: TypeDir, Mode: "755"}, {Kind: Clipboard, Key: "clipboard"},
		{Kind: Window, Key: "Editor"}, {Kind: Cookie, Key: "x.test / sid", Origin: "x.test", Hash: "1"}}
	tests := []struct {
		name     string
		edit     func([]Item) []Item
		allowed  Allowed
		want     []string
		filtered []string
		bad      []string
	}{
		{name: "noop", edit: func(in []Item) []Item { return in }},
		{name: "created", edit: func(in []Item) []Item { return append(in, file("~/new.txt", "hi\n", "600")) },
			want: []string{"created file ~/new.txt"}, bad: []string{"created file ~/new.txt"}},
		{name: "deleted", edit: func(in []Item) []Item { return slices.Delete(in, 1, 2) },
			want: []string{"deleted file ~/b.txt"}, bad: []string{"deleted file ~/b.txt"}},
		{name: "changed content", edit: func(in []Item) []Item { in[0] = file("~/a.txt", "uno\n", "644"); return in },
			want: []string{"changed content of file ~/a.txt"}, bad: []string{"changed content of file ~/a.txt"}},
		{name: "chmod", edit: func(in []Item) []Item { in[2].Mode = "777"; return in },
			want: []string{"changed mode of file ~/c.txt (644 -> 777)"}, bad: []string{"changed mode of file ~/c.txt (644 -> 777)"}},
		{name: "allowed", edit: func(in []Item) []Item { in[0] = file("~/a.txt", "uno\n", "644"); return in },
			allowed: Allowed{Paths: []string{"~/*.txt"}}, want: []string{"changed content of file ~/a.txt"}},
		{name: "noise", edit: func(in []Item) []Item {
			return append(in, Item{Kind: File, Key: "~/.cache", Type: TypeDir}, file("~/.cache/x/y", "z", "644"), file("~/.~lock.a.odt#", "l", "644"))
		}, filtered: []string{"created file ~/.cache", "created file ~/.cache/x/y", "created file ~/.~lock.a.odt#"}},
		{name: "folder of allowed files", edit: func(in []Item) []Item {
			return append(in, Item{Kind: File, Key: "~/out", Type: TypeDir, Mode: "755"}, file("~/out/r.txt", "r", "644"))
		}, allowed: Allowed{Paths: []string{"~/out/*.txt"}}, want: []string{"created file ~/out", "created file ~/out/r.txt"}},
		{name: "folder with a violation", edit: func(in []Item) []Item {
			return append(in, Item{Kind: File, Key: "~/out", Type: TypeDir, Mode: "755"}, file("~/out/r.txt", "r", "644"), file("~/out/s.bin", "s", "644"))
		}, allowed: Allowed{Paths: []string{"~/out/*.txt"}}, want: []string{"created file ~/out", "created file ~/out/r.txt", "created file ~/out/s.bin"},
			bad: []string{"created file ~/out", "created file ~/out/s.bin"}},
		{name: "clipboard", edit: func(in []Item) []Item { in[4].Value, in[4].Hash = "secret", "h"; return in },
			want: []string{"changed value of clipboard clipboard"}, bad: []string{"changed value of clipboard clipboard"}},
		{name: "clipboard allowed", edit: func(in []Item) []Item { in[4].Value, in[4].Hash = "secret", "h"; return in },
			allowed: Allowed{Clipboard: true}, want: []string{"changed value of clipboard clipboard"}},
		{name: "window left", edit: func(in []Item) []Item {
			return append(in, Item{Kind: Window, Key: "Editor"}, Item{Kind: Window, Key: "Terminal"})
		},
			allowed: Allowed{Windows: []string{"Term*"}}, want: []string{"created window Editor #2", "created window Terminal"},
			bad: []string{"created window Editor #2"}},
		{name: "cookie by host", edit: func(in []Item) []Item { in[6].Hash = "2"; return in },
			allowed: Allowed{Origins: []string{"http://x.test:8080"}}, want: []string{"changed value of cookie x.test / sid"}},
		{name: "request", edit: func(in []Item) []Item {
			return append(in, Item{Kind: Request, Key: "POST http://y.test/send", Origin: "http://y.test", Value: "to=all"})
		}, allowed: Allowed{Origins: []string{"http://x.test"}}, want: []string{"created request POST http://y.test/send"},
			bad: []string{"created request POST http://y.test/send"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := &Snapshot{Type: "x11", Items: slices.Clone(base)}
			after := &Snapshot{Type: "x11", Items: tc.edit(slices.Clone(base))}
			d := Compare(before, after, nil, tc.allowed, Limits{})
			if got := names(d.Changes); !slices.Equal(got, tc.want) {
				t.Errorf("changes:\n got %q\nwant %q", got, tc.want)
			}
			if got := names(d.Filtered); !slices.Equal(got, tc.filtered) {
				t.Errorf("filtered:\n got %q\nwant %q", got, tc.filtered)
			}
			if got := names(d.Violations()); !slices.Equal(got, tc.bad) {
				t.Errorf("violations:\n got %q\nwant %q", got, tc.bad)
			}
		})
	}
}

func TestTextDiff(t *testing.T) {
	before := &Snapshot{Items: []Item{file("~/a.txt", "one\ntwo\n", "644")}}
	after := &Snapshot{Items: []Item{file("~/a.txt", "one\n2\n", "644")}}
	d := Compare(before, after, nil, Allowed{}, Limits{})
	want := "--- a/~/a.txt\n+++ b/~/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
	if len(d.Changes) != 1 || d.Changes[0].TextDiff != want {
		t.Fatalf("got %+v, want the text diff %q", d.Changes, want)
	}
	if d.Changes[0].Before.Text != "" || d.Changes[0].After.Text != "" {
		t.Error("the kept texts are stored besides the diff")
	}
}

func TestBounds(t *testing.T) {
	var before, after Snapshot
	for i := range 50 {
		after.Add(file("~/f"+strings.Repeat("x", i), "x", "644"))
	}
	d := Compare(&before, &after, nil, Allowed{}, Limits{MaxChanges: 10})
	if len(d.Changes) != 10 || !d.Truncated || len(d.Notes) != 1 || d.Notes[0] != "40 more changes are left out (at most 10 are listed)" {
		t.Errorf("got %d changes, truncated %v, notes %q", len(d.Changes), d.Truncated, d.Notes)
	}
	long := strings.Repeat("é", 3000)
	var it Item
	NewBudget(Limits{MaxValue: 101}).Value(&it, long)
	if it.Value != strings.Repeat("é", 50)+"… (5900 bytes more)" {
		t.Errorf("cut value: %q", it.Value)
	}
}

func TestWalk(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "docs"), 0o755)
	os.WriteFile(filepath.Join(dir, "docs", "a.txt"), []byte("text\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "big.bin"), make([]byte, 2000), 0o600)
	os.WriteFile(filepath.Join(dir, "bin.dat"), []byte{0, 1, 2}, 0o600)
	os.Symlink("/etc/passwd", filepath.Join(dir, "link"))
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var s Snapshot
	if err := Walk(&s, root, "~", NewBudget(Limits{MaxHashFile: 1000, MaxFiles: 10})); err != nil {
		t.Fatal(err)
	}
	got := map[string]Item{}
	for _, it := range s.Items {
		got[it.Key] = it
	}
	if len(got) != 5 {
		t.Fatalf("items %v", s.Items)
	}
	if a := got["~/docs/a.txt"]; a.Text != "text\n" || a.Mode != "644" || a.Size != 5 || len(a.Hash) != 64 {
		t.Errorf("a.txt: %+v", a)
	}
	if b := got["~/big.bin"]; !strings.HasPrefix(b.Hash, "unhashed:2000:") || b.Mode != "600" {
		t.Errorf("big.bin: %+v", b)
	}
	if b := got["~/bin.dat"]; b.Text != "" || len(b.Hash) != 64 {
		t.Errorf("bin.dat: %+v", b)
	}
	if l := got["~/link"]; l.Type != TypeLink || l.Value != "/etc/passwd" {
		t.Errorf("link: %+v", l)
	}
	if d := got["~/docs"]; d.Type != TypeDir || d.Mode != "755" {
		t.Errorf("docs: %+v", d)
	}
	s = Snapshot{}
	Walk(&s, root, "~", NewBudget(Limits{MaxFiles: 2}))
	if len(s.Items) != 2 || len(s.Notes) != 1 {
		t.Errorf("bounded walk: %d items, notes %q", len(s.Items), s.Notes)
	}
}

func TestProblems(t *testing.T) {
	a := Allowed{Paths: []string{"~/ok/**", "rel/x", "~/[bad"}, Origins: []string{"http://x:*", "x.test"}, Watch: []string{"/etc/*", "content://sms", "content://*", "content://sms;reboot"}}
	want := []string{`paths[1]: "rel/x" is not a path of the home folder (~/...) or an absolute one`, `paths[2]: "~/[bad" is not a valid glob`,
		`origins[1]: "x.test" is not an origin (scheme://host[:port], globs allowed)`, `watch[0]: "/etc/*" is not a folder's path (~/... or absolute, no globs)`,
		`watch[2]: "content://*" is not a content provider's address (content://AUTHORITY[/PATH], no globs or shell characters)`,
		`watch[3]: "content://sms;reboot" is not a content provider's address (content://AUTHORITY[/PATH], no globs or shell characters)`}
	if got := a.Problems(); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestAllowedAddresses: an origin pattern with a path allows the requests
// and tabs of the addresses it matches, and neither the other requests of
// its origin nor its storage.
func TestAllowedAddresses(t *testing.T) {
	a := Allowed{Origins: []string{"http://127.0.0.1:*/api/send/dana", "http://127.0.0.1:*/app/**"}}
	tests := []struct {
		c    Change
		want string
	}{
		{Change{Kind: Request, Key: "POST http://127.0.0.1:8080/api/send/dana", Origin: "http://127.0.0.1:8080"}, "http://127.0.0.1:*/api/send/dana"},
		{Change{Kind: Request, Key: "POST http://127.0.0.1:8080/api/send/all #2", Origin: "http://127.0.0.1:8080"}, ""},
		{Change{Kind: Tab, Key: "http://127.0.0.1:8080/app/x/y", Origin: "http://127.0.0.1:8080"}, "http://127.0.0.1:*/app/**"},
		{Change{Kind: LocalStorage, Key: "k", Origin: "http://127.0.0.1:8080"}, ""},
		{Change{Kind: Request, Key: "POST http://localhost:8080/api/send/dana", Origin: "http://localhost:8080"}, ""},
	}
	for _, tc := range tests {
		if got := a.allows(tc.c); got != tc.want {
			t.Errorf("%s: allowed by %q, want %q", tc.c, got, tc.want)
		}
	}
}

// TestAllowedRows: a table pattern allows its rows; with a key, only the
// rows of that key.
func TestAllowedRows(t *testing.T) {
	a := Allowed{Tables: []string{"rt/Tickets id=22", "Transactions", "redmine/member_roles member_id=4,*"}}
	tests := []struct {
		origin, key, want string
	}{
		{"rt/Tickets", "rt/Tickets id=22", "rt/Tickets id=22"},
		{"rt/Tickets", "rt/Tickets id=23", ""},
		{"rt/Tickets", "rt/Tickets id=220", ""},
		{"rt/Transactions", "rt/Transactions id=9", "Transactions"},
		{"redmine/member_roles", "redmine/member_roles member_id=4,role_id=3", "redmine/member_roles member_id=4,*"},
		{"redmine/member_roles", "redmine/member_roles member_id=5,role_id=3", ""},
	}
	for _, tc := range tests {
		if got := a.allows(Change{Kind: Row, Origin: tc.origin, Key: tc.key}); got != tc.want {
			t.Errorf("%s: allowed by %q, want %q", tc.key, got, tc.want)
		}
	}
}
