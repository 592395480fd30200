// Package receipt gathers what a run's receipt records (store.Receipt):
// the content hashes of the tasks and of the assets they use, the Debian
// package versions of their apps, the machine; it finds the drift between
// a receipt and the suite and environment of today, and writes a receipt
// as text.
package receipt

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// Hash is the hex SHA-256 of b.
func Hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Tasks returns the receipts of tasks, of suite s, by id.
func Tasks(s *task.Suite, tasks []*task.Task) []store.TaskReceipt {
	files := map[string]string{}
	out := make([]store.TaskReceipt, 0, len(tasks))
	for _, t := range tasks {
		fh, ok := files[t.File]
		if !ok {
			if b, err := os.ReadFile(t.File); err == nil {
				fh = Hash(b)
			}
			files[t.File] = fh
		}
		content, _ := json.Marshal(t)
		rel, err := filepath.Rel(s.Dir, t.File)
		if err != nil || t.File == "" {
			rel = t.File
		}
		res := t.Environment.Resolution
		if res == "" {
			res = task.DefaultResolution
		}
		tr := store.TaskReceipt{ID: t.ID, File: filepath.ToSlash(rel), FileHash: fh, Hash: Hash(content), Resolution: res}
		for _, a := range UsedAssets(t) {
			ar := store.AssetReceipt{Name: a}
			if b, err := s.ReadAsset(a); err == nil {
				ar.Hash = Hash(b)
			}
			tr.Assets = append(tr.Assets, ar)
		}
		out = append(out, tr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// UsedAssets lists the assets of the suite that a task uses: those its
// setup copies and those its checks and milestones compare with, sorted.
func UsedAssets(t *task.Task) []string {
	seen := map[string]bool{}
	for _, sec := range t.Sections() {
		for _, st := range sec.Steps {
			if st.Copy != nil && st.Copy.Asset != "" {
				seen[filepath.ToSlash(filepath.Clean(st.Copy.Asset))] = true
			}
		}
	}
	specs := slices.Clone(t.Checks)
	for _, m := range t.Milestones {
		specs = append(specs, m.Checks...)
	}
	check.Each(nil, specs, func(_ []any, c check.Spec) {
		if c.Asset != "" {
			seen[filepath.ToSlash(filepath.Clean(c.Asset))] = true
		}
	})
	out := make([]string, 0, len(seen))
	for a := range seen {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// SuiteFile is the hash of the suite's suite.yaml, "" when it has none.
func SuiteFile(s *task.Suite) string {
	b, err := os.ReadFile(filepath.Join(s.Dir, task.SuiteFile))
	if err != nil {
		return ""
	}
	return Hash(b)
}

// BasePackages are the Debian packages of the desktop and the browser,
// recorded for every run.
var BasePackages = []string{"xvfb", "chromium"}

// PackageNames lists the Debian packages of the apps tasks use (their
// app and apps, and those their setup launches or opens), with
// BasePackages, sorted.
func PackageNames(s *task.Suite, tasks []*task.Task) []string {
	return packageNames(s, tasks, BasePackages)
}

// AppPackages lists the Debian packages of the apps tasks use, sorted:
// PackageNames without the base.
func AppPackages(s *task.Suite, tasks []*task.Task) []string {
	return packageNames(s, tasks, nil)
}

func packageNames(s *task.Suite, tasks []*task.Task, base []string) []string {
	seen := map[string]bool{}
	for _, p := range base {
		seen[p] = true
	}
	add := func(app string) {
		if spec, ok := s.App(app); ok && spec.Package != "" {
			seen[spec.Package] = true
		}
	}
	for _, t := range tasks {
		for _, a := range t.AllApps() {
			add(a)
		}
		for _, sec := range t.Sections() {
			for _, st := range sec.Steps {
				if st.Launch != nil {
					add(st.Launch.App)
				}
				if st.Open != nil && st.Open.App != "" {
					add(st.Open.App)
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// debianName is the form of a Debian package's name (Debian Policy 5.6.1).
var debianName = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)

// ErrNoDpkg says this machine has no dpkg-query to ask.
var ErrNoDpkg = errors.New("no dpkg-query on this machine")

// Packages asks dpkg-query for the installed versions of the packages:
// a version for each installed one, "" for the others.
func Packages(ctx context.Context, names []string) (map[string]string, error) {
	if len(names) == 0 {
		return map[string]string{}, nil
	}
	if _, err := exec.LookPath("dpkg-query"); err != nil {
		return nil, ErrNoDpkg
	}
	// Only Debian package names are asked: a name from a suite's app
	// spec that starts with "-" would be an option of dpkg-query's.
	var asked []string
	for _, n := range names {
		if debianName.MatchString(n) {
			asked = append(asked, n)
		}
	}
	if len(asked) == 0 {
		return parseDpkg("", names), nil
	}
	args := append([]string{"-W", "-f", "${Package}\t${Status}\t${Version}\n"}, asked...)
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, "dpkg-query", args...)
	cmd.Stdout = &stdout
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return nil, fmt.Errorf("dpkg-query: %w", err)
	}
	// It exits 1 when some package is unknown, and lists the others.
	return parseDpkg(stdout.String(), names), nil
}

// parseDpkg reads dpkg-query's lines of package, status and version.
func parseDpkg(out string, names []string) map[string]string {
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[n] = ""
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			continue
		}
		name, _, _ := strings.Cut(f[0], ":")
		if _, asked := m[name]; asked && strings.HasSuffix(f[1], " installed") {
			m[name] = f[2]
		}
	}
	return m
}

// ThisMachine describes the machine the harness runs on.
func ThisMachine() store.Machine {
	m := store.Machine{OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.Memory = memTotal(string(b))
	}
	return m
}

// memTotal reads MemTotal (in kB) of /proc/meminfo, in bytes; 0 when
// absent.
func memTotal(meminfo string) int64 {
	for line := range strings.Lines(meminfo) {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				if err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}
