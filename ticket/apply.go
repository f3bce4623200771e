package ticket

// Apply executes one command against the store. It is deterministic: the
// same command on the same state gives the same result and state on every
// replica. A returned error is a storage failure, not a statement error
// (those are in Result.Err).
func Apply(s Store, c *Command) (Result, error) {
	return Result{Err: Errorf(ErrNotSupported, "42000", "not implemented yet")}, nil
}
