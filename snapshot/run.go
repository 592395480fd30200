package snapshot

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/statediff"
)

// The commands that list an environment's files and processes, where it
// lists neither itself: bash, GNU find, head, xargs, sha256sum and base64,
// as a Debian desktop (and the guest's) has them. Their output must fit a
// command's (a desktop keeps 1 MiB of it), so they list fewer files and
// keep less text than a walk of a local folder.
const (
	runMaxFiles = 4000
	runMaxText  = 256 << 10
	runTimeout  = 60 * time.Second
)

// shellQuote quotes s for bash.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// filesScript lists the home folder and the watched folders: a record
// for each root ("R", its path), one for each file ("type size mode
// mtime link-target", its path), the hashes of the files small enough
// ("H" then sha256sum's records), and the content of small files ("T"
// then path and base64 records).
func filesScript(watch []string, lim statediff.Limits) string {
	roots := `"$HOME"`
	for _, w := range watch {
		if w == "~" || strings.HasPrefix(w, "~/") {
			roots += ` "$HOME"` + shellQuote(strings.TrimPrefix(w, "~"))
		} else {
			roots += " " + shellQuote(w)
		}
	}
	files := min(lim.MaxFiles, runMaxFiles)
	text := min(lim.MaxTextTotal, runMaxText)
	return fmt.Sprintf(`export LC_ALL=C
roots=(%[1]s)
for r in "${roots[@]}"; do
  [ -d "$r" ] || continue
  printf 'R\0%%s\0' "$r"
  find "$r" -xdev -mindepth 1 -printf 'F\0%%y\t%%s\t%%m\t%%T@\t%%l\0%%p\0' 2>/dev/null | head -z -n %[2]d
done
printf 'H\0'
find "${roots[@]}" -xdev -mindepth 1 -type f -size -%[3]dc -printf '%%s\t%%p\0' 2>/dev/null | head -z -n %[4]d |
  { t=0; while IFS=$'\t' read -r -d '' s p; do t=$((t+s)); [ "$t" -le %[5]d ] || break; printf '%%s\0' "$p"; done; } |
  xargs -0 -r sha256sum -z 2>/dev/null
printf 'T\0'
find "${roots[@]}" -xdev -mindepth 1 -type f -size -%[6]dc -printf '%%s\t%%p\0' 2>/dev/null | head -z -n %[4]d |
  { t=0; while IFS=$'\t' read -r -d '' s p; do t=$((t+s)); [ "$t" -le %[7]d ] || break; printf '%%s\0' "$p"; base64 -w0 < "$p" 2>/dev/null; printf '\0'; done; }
printf 'E\0'
`, roots, 2*files, lim.MaxHashFile+1, files, lim.MaxHashTotal, lim.MaxText+1, text)
}

// listFiles lists the files with a command.
func listFiles(ctx context.Context, e env.Env, s *statediff.Snapshot, watch []string, b *statediff.Budget) error {
	res, err := e.Run(ctx, filesScript(watch, b.Limits), runTimeout)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 && res.Stdout == "" {
		return fmt.Errorf("the listing failed (exit %d): %s", res.ExitCode, statediff.Cut(res.Stderr, 200))
	}
	return parseFiles(res.Stdout, s, b)
}

// parseFiles reads filesScript's output into s.
func parseFiles(out string, s *statediff.Snapshot, b *statediff.Budget) error {
	recs := strings.Split(out, "\x00")
	home, root := "", ""
	byPath := map[string]int{} // path to item index
	key := func(p string) string {
		if home != "" && (p == home || strings.HasPrefix(p, home+"/")) {
			return "~" + strings.TrimPrefix(p, home)
		}
		return p
	}
	section := ""
	complete := false
	for i := 0; i < len(recs); i++ {
		r := recs[i]
		switch r {
		case "R", "H", "T", "E":
			if r == "R" {
				if i+1 >= len(recs) {
					break
				}
				root = path.Clean(recs[i+1])
				if home == "" {
					home = root
				}
				i++
			}
			section = r
			complete = r == "E"
			continue
		}
		switch section {
		case "R":
			if r != "F" || i+2 >= len(recs) {
				continue
			}
			meta, p := recs[i+1], path.Clean(recs[i+2])
			i += 2
			if _, dup := byPath[p]; dup || (p != root && !strings.HasPrefix(p, root+"/")) {
				continue
			}
			it, ok := fileItem(meta, key(p), b)
			if !ok {
				continue
			}
			if !b.File(s) {
				continue
			}
			byPath[p] = len(s.Items)
			s.Add(it)
		case "H":
			sum, p, ok := strings.Cut(r, "  ")
			if !ok || len(sum) != 64 {
				continue
			}
			if j, ok := byPath[path.Clean(p)]; ok && s.Items[j].Type == statediff.TypeFile {
				s.Items[j].Hash = sum
			}
		case "T":
			if i+1 >= len(recs) {
				continue
			}
			p, enc := path.Clean(r), recs[i+1]
			i++
			j, ok := byPath[p]
			if !ok {
				continue
			}
			data, err := base64.StdEncoding.DecodeString(enc)
			if err != nil || int64(len(data)) != s.Items[j].Size {
				continue // changed while it was read
			}
			it := s.Items[j]
			hash := it.Hash
			b.Content(&it, data)
			if it.Hash != hash {
				continue // not the content that was hashed
			}
			s.Items[j] = it
		}
	}
	if !complete {
		s.Note("the listing of files was cut short (the command's output is bounded)")
	}
	return nil
}

// fileItem makes a file's item from find's "type size mode mtime target".
func fileItem(meta, key string, b *statediff.Budget) (statediff.Item, bool) {
	f := strings.SplitN(meta, "\t", 5)
	if len(f) != 5 {
		return statediff.Item{}, false
	}
	size, err1 := strconv.ParseInt(f[1], 10, 64)
	mode, err2 := strconv.ParseUint(f[2], 8, 32)
	mtime, err3 := strconv.ParseFloat(f[3], 64)
	if err1 != nil || err2 != nil || err3 != nil || size < 0 {
		return statediff.Item{}, false
	}
	it := statediff.Item{Kind: statediff.File, Key: key, Mode: fmt.Sprintf("%o", mode&0o777)}
	switch f[0] {
	case "d":
		it.Type = statediff.TypeDir
	case "f":
		it.Type, it.Size = statediff.TypeFile, size
		it.Hash = statediff.Unhashed(size, int64(mtime*1e9))
	case "l":
		it.Type = statediff.TypeLink
		b.Value(&it, f[4])
	default:
		it.Type = statediff.TypeOther
	}
	return it, true
}

// processScript lists the processes of the session that runs it (those
// carrying the same PROCTOR_DESKTOP marker as its shell) but itself and
// its children: pid, parent pid and command line, NUL-separated, after
// its own pid.
const processScript = `m="PROCTOR_DESKTOP=$PROCTOR_DESKTOP"
[ -n "$PROCTOR_DESKTOP" ] || { echo "no session marker (PROCTOR_DESKTOP)" >&2; exit 3; }
printf '%s\0' "$$"
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  [ "$p" = "$$" ] && continue
  read -r st < "$d/stat" 2>/dev/null || continue
  rest=${st##*) }
  set -- $rest
  [ "$1" = Z ] && continue
  mapfile -d '' ev < "$d/environ" 2>/dev/null || continue
  found=
  for v in "${ev[@]}"; do [ "$v" = "$m" ] && { found=1; break; }; done
  [ -n "$found" ] || continue
  mapfile -d '' argv < "$d/cmdline" 2>/dev/null
  printf '%s\0%s\0%s\0' "$p" "$2" "${argv[*]}"
done
`

// listProcesses lists the session's processes with a command.
func listProcesses(ctx context.Context, e env.Env, s *statediff.Snapshot, b *statediff.Budget) error {
	res, err := e.Run(ctx, processScript, runTimeout)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("not listed (exit %d): %s", res.ExitCode, statediff.Cut(strings.TrimSpace(res.Stderr), 200))
	}
	parseProcesses(res.Stdout, s, b)
	return nil
}

// parseProcesses reads processScript's output into s.
func parseProcesses(out string, s *statediff.Snapshot, b *statediff.Budget) {
	recs := bytes.Split([]byte(out), []byte{0})
	if len(recs) == 0 {
		return
	}
	self := string(recs[0])
	n := 0
	for i := 1; i+2 < len(recs); i += 3 {
		if string(recs[i+1]) == self || string(recs[i]) == self {
			continue // the listing's own commands
		}
		if n >= b.Limits.MaxItems {
			s.Note("more than %d processes: the rest are not listed", b.Limits.MaxItems)
			return
		}
		n++
		s.Add(statediff.Item{Kind: statediff.Process, Key: statediff.Cut(string(recs[i+2]), b.Limits.MaxValue)})
	}
}
