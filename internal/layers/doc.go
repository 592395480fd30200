// Package layers guards the architecture of the module: its test parses
// the import clauses of every non-test Go file and fails when a package
// imports one it must not, so that a shortcut across layers is refused in
// review rather than found later as an import cycle or a data model that
// cannot be used without a desktop.
//
// The layers, from top to bottom (an import goes down or stays in its
// layer, never up; the test places every package in one):
//
//   - commands: cmd/proctor, which imports the agents and judges that call
//     a model API (agent/openai, agent/anthropic, judge/judgeapi) so that
//     they register themselves;
//   - runners and readers of results: run, validate, rollout, rescore,
//     report, receipt, viewer, and the importers of other benchmarks'
//     tasks (imports, imports/osworld, imports/osuniverse,
//     imports/scienceboard);
//   - the episode: episode (one task on one environment);
//   - environment backends: env/xdesktop, env/browser, env/vnc,
//     env/android, env/kube, env/input, env/envtest, env/provider, the
//     guest daemon (guest), the command services (service) and the state
//     snapshots taken through the environment contract (snapshot);
//   - the environment contract: env;
//   - results: store, score;
//   - tasks: task;
//   - checks: check;
//   - agents and judges: agent and its subpackages, judge and
//     judge/judgeapi;
//   - adapters: internal/...;
//   - the data model: action, observe;
//   - leaves, which import nothing of the module above them: query (the
//     service queries), duration (task files' durations), usage (what a
//     model call costs, prices), judgment (what a judge is asked and
//     decides), apicall, agreement, suites, stats (pass@k, pass^k,
//     bootstrap intervals, McNemar's test), statediff (state snapshots
//     compared).
//
// Besides the layers, rules name what a package may not import. Most
// constrain direct imports: what a package reaches through others is
// logged by the test, not enforced, because the intermediate package is
// where such an edge is judged.
//
//   - The data model (task, action, observe) imports no environment (env,
//     env/..., guest) and no runner (run): tasks are parsed, linted and
//     shown without a desktop.
//   - Checks (check) import neither the runner (run) nor the store: they
//     judge a desktop's state, whoever drives it and wherever results go.
//   - Agents (agent) import no environment and no store: an agent sees
//     observations and proposes actions, nothing more.
//   - The viewer (viewer) imports no environment and no agent, and the
//     reports (report) no agent: they show recorded runs (usage figures
//     come from package usage).
//   - Environments (env, env/..., guest) import no runner (run): the
//     runner drives them, not the other way.
//   - Nothing under env/ imports guest: the guest's client and wire
//     protocol belong to the environments, the daemon imports them.
//   - The episode (episode) imports no runner (run): the runner schedules
//     episodes.
//
// Two rules are transitive, computed over the whole import graph (the
// module's packages and the libraries they import):
//
//   - Environments, tasks and checks (env/..., task/..., check/...) reach
//     no model SDK (github.com/openai/openai-go, github.com/anthropics/
//     anthropic-sdk-go): the environment contract and the data model build
//     without a model's client.
//   - Environments (env/...) reach no agent and no judge: checks ask a
//     judge through judgment.Model, which the runner gives them.
//
// A violation is reported with the rule it breaks, for instance
// "env/provider imports guest (rule: nothing under env/ imports guest)",
// or with the chain of imports of a transitive one. Violations that
// existed when a rule was written are listed in the test's known map with
// the way out; they are logged, and an entry that stops being a violation
// fails the test so that the list only shrinks.
//
// The package has no code of its own; it exists for its test.
package layers
