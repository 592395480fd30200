package snapshot

import (
	"testing"

	"github.com/proctor-eval/proctor/statediff"
)

func TestParseFiles(t *testing.T) {
	out := "R\x00/h\x00F\x00d\t4096\t755\t1.5\t\x00/h/docs\x00F\x00f\t3\t644\t2.25\t\x00/h/docs/a.txt\x00F\x00l\t9\t777\t3\t/etc/x\x00/h/l\x00" +
		"F\x00f\t1\t600\t4\t\x00/elsewhere\x00H\x00" + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa  /h/docs/a.txt\x00" +
		"T\x00/h/docs/a.txt\x00aGkK\x00E\x00"
	var s statediff.Snapshot
	if err := parseFiles(out, &s, statediff.NewBudget(statediff.Limits{})); err != nil {
		t.Fatal(err)
	}
	if len(s.Items) != 3 || len(s.Notes) != 0 {
		t.Fatalf("items %+v notes %q", s.Items, s.Notes)
	}
	a := s.Items[1]
	// The text read does not hash to the hash listed: it is not kept.
	if a.Key != "~/docs/a.txt" || a.Mode != "644" || a.Size != 3 || a.Text != "" || a.Hash[:4] != "aaaa" {
		t.Errorf("a.txt: %+v", a)
	}
	if l := s.Items[2]; l.Type != statediff.TypeLink || l.Value != "/etc/x" {
		t.Errorf("link: %+v", l)
	}
	s = statediff.Snapshot{}
	parseFiles(out[:40], &s, statediff.NewBudget(statediff.Limits{}))
	if len(s.Notes) != 1 {
		t.Errorf("a cut listing is not noted: %q", s.Notes)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("R\x00/h\x00F\x00f\t3\t644\t2\t\x00/h/a\x00H\x00T\x00/h/a\x00aGkK\x00E\x00")
	f.Add("1\x002\x001\x00x\x003\x004\x00sleep 5\x00")
	f.Fuzz(func(t *testing.T, out string) {
		var s statediff.Snapshot
		b := statediff.NewBudget(statediff.Limits{MaxFiles: 5, MaxItems: 5})
		parseFiles(out, &s, b)
		parseProcesses(out, &s, b)
		files, procs := 0, 0
		for _, it := range s.Items {
			switch it.Kind {
			case statediff.File:
				files++
			case statediff.Process:
				procs++
			}
		}
		if files > 5 || procs > 5 {
			t.Fatalf("%d files, %d processes past the bounds", files, procs)
		}
	})
}
