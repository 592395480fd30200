package judge

import "fmt"

// Error is a sentinel error of the package; the errors returned wrap one
// of them with details, so test them with errors.Is.
type Error string

// Error returns the sentinel's text.
func (e Error) Error() string { return string(e) }

const (
	// ErrMalformed: the model's replies could not be parsed as a verdict,
	// after the re-asks (Reasks).
	ErrMalformed Error = "judge reply malformed"
	// ErrRefused: the model declined to judge (Anthropic stop_reason
	// "refusal", an OpenAI message.refusal or content_filter, or a reply
	// that plainly declines, such as "I'm sorry, I can't help with that").
	// A refusal is not re-asked: at temperature 0 it would come again.
	ErrRefused Error = "judge refused"
	// ErrUnavailable: no answer from the API - 429 or 5xx after the SDK's
	// retries, a timeout, a network failure, a cancelled context.
	ErrUnavailable Error = "judge unavailable"
	// ErrRejected: the API refused the request itself with a 4xx other
	// than 408 and 429 (a bad key, an unknown model, an image too large);
	// asking again will not help.
	ErrRejected Error = "judge request rejected"
	// ErrInvalid: the Request (or the Config given to New) is not valid;
	// no model was asked.
	ErrInvalid Error = "judge request invalid"
	// ErrNotRecorded: an offline client (Config.Offline) found no verdict
	// for the request in its cache, and may not ask the model.
	ErrNotRecorded Error = "no recorded verdict"
)

// Unavailable wraps an API's error (for an API's Ask): statuses that
// asking later may cure (408, 429, 5xx) and failures without a status
// (timeouts, the network; status 0) are ErrUnavailable, other statuses
// ErrRejected.
func Unavailable(provider string, status int, err error) error {
	if status == 0 || status == 408 || status == 429 || status >= 500 {
		return fmt.Errorf("%w (%s): %w", ErrUnavailable, provider, err)
	}
	return fmt.Errorf("%w (%s, status %d): %w", ErrRejected, provider, status, err)
}
