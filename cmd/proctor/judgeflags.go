package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/judge"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/usage"
	"github.com/spf13/pflag"
)

// JudgeCacheDir is the folder of a run where the judges' verdicts are
// kept by request, so that judging the same evidence again with the same
// judge asks no model.
const JudgeCacheDir = "judge-cache"

// judgeOptions configure the judge of judge checks; a run records them
// (never a key) so that --resume, rescore and judge find the same judge.
type judgeOptions struct {
	// Models are the judges, each [PROVIDER:]MODEL; several vote.
	Models    []string      `json:"models,omitempty"`
	Provider  string        `json:"provider,omitempty"`  // of the models without one
	BaseURLs  []string      `json:"base_urls,omitempty"` // one for all, or one per model
	APIKeyEnv string        `json:"api_key_env,omitempty"`
	Timeout   time.Duration `json:"timeout,omitempty"`
	Prices    string        `json:"prices,omitempty"`
}

func (o *judgeOptions) flags(f *pflag.FlagSet) {
	f.StringArrayVar(&o.Models, "judge-model", nil, "`[PROVIDER:]MODEL` deciding the tasks' judge checks, temperature 0; repeat it for a panel that votes\n(majority; a tie fails), e.g. --judge-model gpt-5 --judge-model anthropic:claude-sonnet-4-5.\nThe model is sent a system prompt and the check's expectation (and criteria), each text evidence between the lines\n\"BEGIN EVIDENCE CODE\" and \"END EVIDENCE CODE\" (CODE given before it) and the screenshots; it must answer one JSON object\n{\"verdict\": \"pass\" or \"fail\", \"reason\": \"...\"} (with criteria also \"criteria\": [{\"id\", \"pass\": true or false, \"reason\"}]),\nthe reply's last one not quoted from the evidence being read (examples/judge-server/judge.py is a local judge)")
	f.StringVar(&o.Provider, "judge-provider", judge.OpenAI, "API of the judge models without a PROVIDER: openai (OpenAI-compatible chat completions) or anthropic")
	f.StringArrayVar(&o.BaseURLs, "judge-base-url", nil, "judge API base `URL`: one for every judge, or one per --judge-model in order (default: the provider's);\na loopback one (127.0.0.1, ::1, localhost: a judge served here) needs no key")
	f.StringVar(&o.APIKeyEnv, "judge-api-key-env", "", "environment variable holding the judges' API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY);\nit may be empty or unset where --judge-base-url is a loopback address")
	f.DurationVar(&o.Timeout, "judge-timeout", judge.DefaultTimeout, "longest wait for one judge's answer (429 and 5xx are retried within the episode's judging)")
}

// set reports whether a judge is configured.
func (o judgeOptions) set() bool { return len(o.Models) > 0 }

// model makes the judge: one client, or a panel of several. Verdicts are
// cached under cacheDir (none when empty); offline judges answer from
// that cache only.
func (o judgeOptions) model(cacheDir string, offline bool) (judgment.Model, error) {
	if !o.set() {
		return nil, nil
	}
	if len(o.BaseURLs) > 1 && len(o.BaseURLs) != len(o.Models) {
		return nil, fmt.Errorf("--judge-base-url: %d given for %d --judge-model: give one for all, or one per model", len(o.BaseURLs), len(o.Models))
	}
	var prices usage.Prices
	if o.Prices != "" {
		var err error
		if prices, err = usage.LoadPrices(o.Prices); err != nil {
			return nil, fmt.Errorf("--prices: %w", err)
		}
	}
	var cache judge.Cache
	if cacheDir != "" {
		cache = judge.DirCache(cacheDir)
	}
	var clients []*judge.Client
	for i, m := range o.Models {
		provider, name := o.Provider, m
		if p, rest, ok := strings.Cut(m, ":"); ok && (p == judge.OpenAI || p == judge.Anthropic) {
			provider, name = p, rest
		}
		cfg := judge.Config{Provider: provider, Model: name, APIKeyEnv: o.APIKeyEnv, Timeout: o.Timeout,
			Prices: prices, Cache: cache, Offline: offline}
		switch len(o.BaseURLs) {
		case 1:
			cfg.BaseURL = o.BaseURLs[0]
		case len(o.Models):
			cfg.BaseURL = o.BaseURLs[i]
		}
		c, err := judge.New(cfg)
		if err != nil {
			return nil, fmt.Errorf("--judge-model %s: %w", m, err)
		}
		clients = append(clients, c)
	}
	if len(clients) == 1 {
		return clients[0], nil
	}
	return judge.Panel{Judges: clients}, nil
}

// runJudgeCache is the judge cache of the run folder dir.
func runJudgeCache(dir string) string { return filepath.Join(dir, JudgeCacheDir) }
