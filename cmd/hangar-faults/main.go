// Command hangar-faults runs the fault suite (the TestFault* end-to-end tests, which inject faults
// into a real workspace with live runs) and prints the fault matrix of RELIABILITY.md from what
// they report.
//
//	go run ./cmd/hangar-faults            # run the suite, print the table
//	go run ./cmd/hangar-faults -report f  # print the table of an earlier run's report
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

type row struct {
	Target      string `json:"target"`
	Injected    string `json:"injected"`
	Runs        int    `json:"runs"`
	Lines       int    `json:"lines"`
	LinesLost   int    `json:"lines_lost"`
	Metrics     int    `json:"metrics"`
	MetricsLost int    `json:"metrics_lost"`
	Leftover    int    `json:"leftover_processes"`
	Final       string `json:"final"`
	Reason      string `json:"reason"`
	Test        string `json:"test"`
}

func main() {
	report := flag.String("report", "", "print the table of this report (JSON lines) instead of running the suite")
	run := flag.String("run", "TestFault", "the tests to run (go test -run)")
	flag.Parse()
	if err := mainErr(*report, *run); err != nil {
		fmt.Fprintln(os.Stderr, "hangar-faults:", err)
		os.Exit(1)
	}
}

func mainErr(report, run string) error {
	if report == "" {
		dir, err := os.MkdirTemp("", "hangar-faults")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		report = filepath.Join(dir, "report.jsonl")
		cmd := exec.Command("go", "test", "-count=1", "-timeout", "20m", "-run", run, "./internal/e2e/")
		cmd.Env = append(os.Environ(), "HANGAR_FAULTS_REPORT="+report)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		failed := cmd.Run()
		if err := table(report, os.Stdout); err != nil {
			return err
		}
		if failed != nil {
			return fmt.Errorf("the fault suite failed: %w", failed)
		}
		return nil
	}
	return table(report, os.Stdout)
}

// table prints the rows as RELIABILITY.md's markdown table, sorted by what was injected.
func table(path string, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read the report: %w", err)
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Injected != rows[j].Injected {
			return rows[i].Injected < rows[j].Injected
		}
		return rows[i].Target < rows[j].Target
	})
	fmt.Fprintln(w, "| fault injected | target | runs | log lines lost | metric points lost | processes left | final state | reason shown |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %d | %s | %s |\n", r.Injected, r.Target, r.Runs,
			ofTotal(r.LinesLost, r.Lines), ofTotal(r.MetricsLost, r.Metrics), r.Leftover, r.Final, cell(r.Reason))
	}
	return nil
}

func ofTotal(lost, total int) string {
	if total == 0 {
		return fmt.Sprint(lost)
	}
	return fmt.Sprintf("%d of %d", lost, total)
}

func cell(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}
