package phonetest

import (
	"context"
	"testing"
)

// The stand-in's messages (content://sms) answer the content tool's
// insert, query, update and delete, by row address and by where clause,
// and refuse what it cannot honour by name.
func TestProvider(t *testing.T) {
	ph := New(t, 1080, 2340)
	steps := []struct {
		cmd, stdout, stderr string
		exit                int
	}{
		{"content query --uri content://sms", "No result found.\n", "", 0},
		{"content insert --uri content://sms --bind address:s:+15550101 --bind body:s:'Code 4711, keep it' --bind read:i:0 --bind type:i:1", "", "", 0},
		{"content insert --uri content://sms --bind address:s:+15550102 --bind body:s:\"It's lunch\" --bind read:i:0 --bind type:i:1", "", "", 0},
		{"content query --uri content://sms --projection _id:address:body:read",
			"Row: 0 _id=1, address=+15550101, body=Code 4711, keep it, read=0\nRow: 1 _id=2, address=+15550102, body=It's lunch, read=0\n", "", 0},
		{"content update --uri content://sms --bind read:i:1 --where \"address='+15550102'\"", "", "", 0},
		{"content query --uri content://sms/2 --projection read", "Row: 0 read=1\n", "", 0},
		{"content query --uri content://sms --projection _id --where \"read=0 AND body LIKE 'code%'\"", "Row: 0 _id=1\n", "", 0},
		{"content query --uri content://sms --projection _id --where \"body='It''s lunch'\"", "Row: 0 _id=2\n", "", 0},
		{"content query --uri content://sms --projection seen", "Row: 0 seen=NULL\nRow: 1 seen=NULL\n", "", 0},
		{"content update --uri content://sms/1 --bind seen:n:", "", "", 0},
		{"content delete --uri content://sms --where \"read != 1\"", "", "", 0},
		{"content query --uri content://sms --projection _id", "Row: 0 _id=2\n", "", 0},
		{"content query --uri content://sms --where \"read > 0\"", "",
			"Error while accessing provider:sms\njava.lang.IllegalArgumentException: the stand-in takes where clauses of the form COL='TEXT', COL=NUMBER, COL!=... or COL LIKE 'PATTERN' joined by AND, not \"read > 0\"\n", 1},
		{"content query --uri content://sms --where \"colour=1\"", "",
			"Error while accessing provider:sms\njava.lang.IllegalArgumentException: no such column: colour\n", 1},
		{"content insert --uri content://mms --bind body:s:x", "",
			"Error while accessing provider:mms\njava.lang.IllegalArgumentException: Unknown URL content://mms\n", 1},
		{"content update --uri content://sms --bind colour:s:red", "",
			"Error while accessing provider:sms\njava.lang.IllegalArgumentException: table has no column named colour\n", 1},
		{"content insert --uri content://sms --bind body:x:1", "", "Error: Invalid binding: body:x:1\n", 1},
		{"content insert --uri content://sms --bind _id:i:2 --bind body:s:x", "",
			"Error while accessing provider:sms\njava.lang.IllegalArgumentException: UNIQUE constraint failed: _id=2\n", 1},
		{"content insert --uri content://sms --bind _id:i:9 --bind body:s:nine", "", "", 0},
		{"content insert --uri content://sms --bind body:s:ten", "", "", 0},
		{"content query --uri content://sms --projection _id:body", "Row: 0 _id=2, body=It's lunch\nRow: 1 _id=9, body=nine\nRow: 2 _id=10, body=ten\n", "", 0},
		{"content update --uri content://sms/9 --bind _id:i:3", "",
			"Error while accessing provider:sms\njava.lang.IllegalArgumentException: the stand-in takes a row's _id on insert only, as a number\n", 1},
		{"content delete --uri content://sms", "", "", 0},
		{"content query --uri content://sms", "No result found.\n", "", 0},
	}
	for _, s := range steps {
		res, err := ph.Shell(context.Background(), s.cmd)
		if err != nil {
			t.Fatal(err)
		}
		if res.Stdout != s.stdout || res.Stderr != s.stderr || res.ExitCode != s.exit {
			t.Fatalf("%s:\nstdout %q\nstderr %q\nexit %d\nwant\nstdout %q\nstderr %q\nexit %d",
				s.cmd, res.Stdout, res.Stderr, res.ExitCode, s.stdout, s.stderr, s.exit)
		}
	}
}
