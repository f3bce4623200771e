package mysqlconn

import (
	"crypto/sha256"
	"crypto/subtle"
)

// CheckPassword checks a clear-text password, as protocols without a
// scramble send it (the Redis listener's AUTH), against the account's
// SHA256(SHA256(password)). A client at a non-loopback address never
// logs in as the default root. ok is false for an unknown user, as for a
// wrong password.
func (u *Users) CheckPassword(name, password string, loopback bool) (role Role, ok bool) {
	a := u.accounts[name]
	if a == nil || (a.localOnly && !loopback) {
		return 0, false
	}
	if a.empty {
		return a.role, password == ""
	}
	s := sha256.Sum256([]byte(password))
	d := sha256.Sum256(s[:])
	return a.role, subtle.ConstantTimeCompare(d[:], a.sha2[:]) == 1
}

// NoPassword reports the account a client is logged in as before any
// AUTH: "default" when that account has no password (Redis's default
// user without requirepass), or the default root (no password, loopback
// clients only) when the accounts are a fresh MySQL's.
func (u *Users) NoPassword(loopback bool) (name string, role Role, ok bool) {
	if a := u.accounts["default"]; a != nil && a.empty {
		return "default", a.role, true
	}
	if a := u.accounts["root"]; a != nil && a.empty && len(u.accounts) == 1 && (!a.localOnly || loopback) {
		return "root", a.role, true
	}
	return "", 0, false
}

// HasUser reports whether an account exists.
func (u *Users) HasUser(name string) bool { return u.accounts[name] != nil }
