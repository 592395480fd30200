package cdpcbor

// ErrMalformed is wrapped by the errors of items that are not CBOR the way
// the browser writes it.
const ErrMalformed Error = "cdpcbor: malformed CBOR"

// Error is the type of the package's sentinel errors.
type Error string

func (e Error) Error() string { return string(e) }
