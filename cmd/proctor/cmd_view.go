package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/proctor-eval/proctor/viewer"
)

func newViewCommand() *cobra.Command {
	var listen, token, export string
	var hosts []string
	var pageSize int
	c := &cobra.Command{
		Use:   "view [RESULTS_DIR]",
		Short: "Serve a web viewer of runs: leaderboard, plots, trajectories, human reviews",
		Long: `View serves the runs under RESULTS_DIR (a run folder, or a folder of run
folders; default runs) as web pages that work offline:

  - the leaderboard: one row per run (agent, model, observation mode, date,
    harness version) with the weighted score, success, milestone average,
    uncompleted and early-stop shares, time, tokens and cost, and columns
    per level, app or domain, or all three; sort by any column, filter, and
    pick runs to compare task by task (which tasks flipped);
  - plots drawn on the server: success against cost and against time per
    run, and success per level;
  - each run's episodes (paginated), with filters for unreviewed and
    disagreeing episodes and the human-versus-checks disagreement rate;
  - each episode: instruction, outcome, every check with its reason, the
    milestones, and the trajectory step by step (left and right arrow keys)
    with the action drawn on the screenshot, the model's thought and raw
    output, the parsed actions, errors, timings and tokens; a zip download
    of it.

The viewer is read-only unless --token (or $PROCTOR_VIEW_TOKEN) is given:
then a reviewer can mark an episode pass or fail with a note, giving the
token; reviews are stored in the run's results.db with who and when (the
newest counts, earlier ones stay listed). It listens on 127.0.0.1 unless
told otherwise, and answers only requests addressed to it: to the listening
address (and localhost on loopback; any address with its port and the
machine's name when listening on every interface) and to the names --host
gives (a proxy's in front of it); another Host header gets 421, so a web
page whose name was made to resolve to the viewer cannot read it.

With --export DIR, view writes one run (RESULTS_DIR is its folder) as a
static site instead of serving: DIR/index.html (the run's page, every
episode listed) and a page, an animated GIF and a zip per episode, with
the screenshots; it opens from disk and can be shared. Filters, searches
and reviews need the server and are not in the copy.`,
		Example: `  proctor view
  proctor view runs/20261122-010000-replay
  proctor view runs/20261122-010000-replay --export site
  proctor view runs --listen 127.0.0.1:8080 --token "$PROCTOR_VIEW_TOKEN"`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := "runs"
			if len(args) == 1 {
				root = args[0]
			}
			if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
				return fmt.Errorf("%s is not a folder of runs (make one with proctor run)", root)
			}
			if export != "" {
				if err := viewer.Export(root, export, nil); err != nil {
					return fmt.Errorf("--export: %w", err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "static copy of %s in %s (open %s)\n", root, export, filepath.Join(export, "index.html"))
				return nil
			}
			if token == "" {
				token = os.Getenv("PROCTOR_VIEW_TOKEN")
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			// Requests that name another host are refused (DNS rebinding).
			srv := &viewer.Server{Root: root, Token: token, PageSize: pageSize, Addr: ln.Addr().String(), Hosts: hosts}
			mode := "read-only (give --token to record reviews)"
			if token != "" {
				mode = "reviews need the token"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "viewer of %s on http://%s/ (%s)\n", root, ln.Addr(), mode)
			hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
			ctx := cmd.Context()
			go func() {
				<-ctx.Done()
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				hs.Shutdown(sctx)
			}()
			if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "address to listen on")
	c.Flags().StringVar(&token, "token", "", "token reviewers give to record verdicts (default $PROCTOR_VIEW_TOKEN; none: read-only)")
	c.Flags().StringSliceVar(&hosts, "host", nil, "another `NAME` (or NAME:PORT) the viewer answers as, such as a proxy's in front of it")
	c.Flags().IntVar(&pageSize, "page-size", viewer.DefaultPageSize, "episodes per page on a run page")
	c.Flags().StringVar(&export, "export", "", "write the run RESULTS_DIR as a static site in `DIR` instead of serving")
	return c
}
