package viewer

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/store"
)

// review records a reviewer's verdict on an episode. A review refused for
// a wrong token or a missing field answers with the episode's page, the
// reason and the form as it was typed, so that the note is not lost.
func (s *Server) review(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		s.fail(w, fmt.Errorf("%w: %v", errBadRequest, err))
		return
	}
	if s.Token == "" {
		s.fail(w, errReadOnly)
		return
	}
	run, err := s.find(r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	task, repeatText := r.PostFormValue("task"), r.PostFormValue("repeat")
	if task == "" || repeatText == "" {
		s.fail(w, fmt.Errorf("%w: a review needs task, repeat, verdict (pass or fail) and reviewer", errBadRequest))
		return
	}
	res, err := findEpisode(run, task, repeatText)
	if err != nil {
		s.fail(w, err)
		return
	}
	verdict := r.PostFormValue("verdict")
	reviewer := strings.TrimSpace(r.PostFormValue("reviewer"))
	note := strings.TrimSpace(r.PostFormValue("note"))
	category := r.PostFormValue("category")
	err = s.authorized(r)
	switch {
	case err != nil:
	case (verdict != "pass" && verdict != "fail") || reviewer == "":
		err = fmt.Errorf("%w: a review needs a verdict (pass or fail) and a reviewer", errBadRequest)
	case !store.ValidCategory(category):
		err = fmt.Errorf("%w: unknown failure category %q", errBadRequest, category)
	}
	if err != nil {
		steps, reviews, err2 := s.episodeSteps(run, res, true)
		if err2 != nil {
			s.fail(w, err2)
			return
		}
		code := statusOf(err)
		form := reviewForm{Error: fmt.Sprintf("%d %s: %v. The review was not recorded; it is kept in the form below.", code, http.StatusText(code), err),
			Verdict: verdict, Reviewer: reviewer, Note: note, Category: category, BadToken: errors.Is(err, errBadToken)}
		s.renderEpisode(w, code, run, res, steps, reviews, form)
		return
	}
	db, err := store.Open(run.Dir)
	if err != nil {
		s.fail(w, err)
		return
	}
	defer db.Close()
	rv := store.Review{Task: res.Task, Repeat: res.Repeat, Pass: verdict == "pass", Category: category, Note: note, Reviewer: reviewer, At: time.Now().UTC()}
	if err := db.SaveReview(rv); err != nil {
		s.fail(w, err)
		return
	}
	http.Redirect(w, r, episodeURL(run.ID, res.Task, res.Repeat)+"#review", http.StatusSeeOther)
}
