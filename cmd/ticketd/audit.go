package main

import (
	"log/slog"
	"net/http"
)

// logAdminAction records an operator's change made through the admin API
// (join, remove, restore, ...): what was asked, by whom (the client's
// address; the admin API has no accounts), and how it ended. Changes are
// logged at Info, refusals at Warn.
func logAdminAction(log *slog.Logger, r *http.Request, action string, err error, args ...any) {
	attrs := append([]any{"action", action, "remote", r.RemoteAddr}, args...)
	if err != nil {
		log.Warn("admin action failed", append(attrs, "err", err)...)
		return
	}
	log.Info("admin action", attrs...)
}
