package main

import (
	"log/slog"
	"net/http"
)

// logAdminAction records an operator's change made through the admin API
// (join, remove, restore, ...): what was asked, by whom (the client's
// address, whether it showed the admin token, and the subject of its TLS
// client certificate if it presented one; the admin API has no accounts),
// and how it ended. Changes are logged at Info, refusals at Warn.
func logAdminAction(log *slog.Logger, r *http.Request, action string, err error, args ...any) {
	attrs := append([]any{"action", action}, caller(r)...)
	attrs = append(attrs, args...)
	if err != nil {
		log.Warn("admin action failed", append(attrs, "err", err)...)
		return
	}
	log.Info("admin action", attrs...)
}

// caller describes who sent an admin request, for the audit log.
func caller(r *http.Request) []any {
	auth := "none"
	if r.Context().Value(authedKey{}) != nil {
		auth = "token"
	}
	attrs := []any{"remote", r.RemoteAddr, "auth", auth}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		attrs = append(attrs, "client_cert", r.TLS.PeerCertificates[0].Subject.String())
	}
	return attrs
}
