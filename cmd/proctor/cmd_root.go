package main

import (
	"github.com/spf13/cobra"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "proctor",
		Short: "Evaluate computer-use agents on real desktops",
		Long: `Proctor evaluates multimodal agents that use a computer the way a person
does: they see screenshots (and an accessibility tree where offered) and act
with the mouse, the keyboard, shell commands and answers.

Tasks are YAML files with setup steps, checks and a gold solution; agents'
replies in many output formats (pyautogui, ScreenAgent JSON, UI-TARS,
OS-Atlas, Anthropic and OpenAI computer use, browser-use, ProBench) parse
into one action space.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newTasksCommand(), newParseCommand(), newGuestCommand(), newRunCommand(), newReportCommand(), newExportCommand(), newValidateCommand(), newViewCommand(), newRescoreCommand(), newJudgeCommand(), newProbeCommand(), newSetupCommand(), newVerifyCommand(), newImportCommand(), newServeCommand(), newKubeCommand())
	return root
}
