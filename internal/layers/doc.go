// Package layers guards the architecture of the module: its test parses
// the import clauses of every non-test Go file and fails when a package
// imports one it must not, so that a shortcut across layers is refused in
// review rather than found later as an import cycle or a data model that
// cannot be used without a desktop.
//
// The rules (see layers_test.go) constrain direct imports only: each
// rule names what a package may not import itself. What a package reaches
// through others is logged by the test, not enforced, because the
// intermediate package is where such an edge is judged.
//
//   - The data model (task, action, observe) imports no environment (env,
//     env/..., guest) and no runner (run): tasks are parsed, linted and
//     shown without a desktop.
//   - Checks (check) import neither the runner (run) nor the store: they
//     judge a desktop's state, whoever drives it and wherever results go.
//   - Agents (agent) import no environment and no store: an agent sees
//     observations and proposes actions, nothing more.
//   - The viewer (viewer) imports no environment and no agent: it shows
//     recorded runs.
//   - Environments (env, env/..., guest) import no runner (run): the
//     runner drives them, not the other way.
//
// Violations that existed when a rule was written are listed in the
// test's known map with the way out; they are logged, and an entry that
// stops being a violation fails the test so that the list only shrinks.
//
// The package has no code of its own; it exists for its test.
package layers
