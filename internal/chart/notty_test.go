package chart

import "syscall"

// noTTY starts the oracle in a new session, without a controlling
// terminal: GNU patch then takes the default answer to its questions, as
// it does in CI.
func noTTY() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
