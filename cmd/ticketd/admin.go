package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"strings"
	"time"

	"github.com/ticketd/ticketd/raftstore"
)

// adminHandler serves the admin HTTP API: /status, /healthz, /readyz,
// membership changes (/join, /remove) and leadership transfers
// (/leader/transfer) that the node forwards to the leader. notReady, if
// set, overrides /readyz (a stopping node).
func adminHandler(node *raftstore.Node, notReady func() error, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if !r.URL.Query().Has("members") {
			w.Write(append(node.Describe(), '\n'))
			return
		}
		// Every member's own document, asked over the Raft port: what
		// `ticketd status` prints. A member that does not answer within
		// the deadline is reported with the error.
		ctx, cancel := context.WithTimeout(r.Context(), memberStatusTimeout)
		defer cancel()
		_ = json.NewEncoder(w).Encode(clusterStatus{Members: node.ClusterStatus(ctx)})
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		err := error(nil)
		if notReady != nil {
			err = notReady()
		}
		if err == nil {
			err = node.Ready()
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("POST /join", func(w http.ResponseWriter, r *http.Request) {
		id, addr := r.FormValue("id"), r.FormValue("addr")
		if id == "" || addr == "" {
			http.Error(w, "id and addr are required", http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		err := node.Join(ctx, id, addr)
		logAdminAction(log, r, "join", err, "id", id, "addr", addr)
		if err != nil {
			http.Error(w, err.Error(), membershipStatus(err))
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("POST /remove", func(w http.ResponseWriter, r *http.Request) {
		id := r.FormValue("id")
		if id == "" {
			http.Error(w, "id is required", http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		err := node.Remove(ctx, id)
		logAdminAction(log, r, "remove", err, "id", id)
		if err != nil {
			http.Error(w, err.Error(), membershipStatus(err))
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("POST /leader/transfer", func(w http.ResponseWriter, r *http.Request) {
		to := r.URL.Query().Get("to")
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		leader, err := node.TransferLeadership(ctx, to)
		logAdminAction(log, r, "leader-transfer", err, "to", to, "leader", leader)
		if err != nil {
			http.Error(w, err.Error(), transferStatus(err))
			return
		}
		fmt.Fprintln(w, leader)
	})
	// Profiles of a running node, for the performance work (go tool pprof
	// http://ADMIN/debug/pprof/profile). The admin address is loopback by
	// default.
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// membershipStatus is the HTTP status of a failed /join or /remove: the
// refusals are the caller's mistake and nothing changed; anything else
// is the cluster's state (no leader, no quorum) and worth a retry.
func membershipStatus(err error) int {
	switch {
	case errors.Is(err, raftstore.ErrUnknownMember):
		return http.StatusNotFound
	case errors.Is(err, raftstore.ErrMemberConflict):
		return http.StatusConflict
	case errors.Is(err, raftstore.ErrMemberVersion):
		// Its build will not change between attempts.
		return http.StatusConflict
	case errors.Is(err, raftstore.ErrPeerUnverified):
		// Its certificate will not change between attempts.
		return http.StatusForbidden
	default:
		return http.StatusServiceUnavailable
	}
}

// joinCluster asks a member (by its admin address) to add this node,
// retrying while the cluster has no leader, and logging each failed
// attempt. It speaks HTTPS when this node serves HTTPS (members are
// configured alike) and sends the admin token, if any. A refusal (4xx),
// or a TLS handshake that cannot succeed (an unknown CA, a name the
// certificate does not hold, a certificate the member refuses, HTTP
// against HTTPS), ends it at once: asking again would not change the
// answer.
func joinCluster(ctx context.Context, f *adminFlags, token, adminAddr, id, raftAddr string, log *slog.Logger) error {
	client, base, err := f.client(adminAddr, f.cert != "")
	if err != nil {
		return err
	}
	client.Timeout = joinAttemptTimeout
	form := url.Values{"id": {id}, "addr": {raftAddr}}.Encode()
	var last error
	for attempt := 1; attempt <= joinAttempts; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/join", strings.NewReader(form))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		setToken(req, token)
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				log.Info("joined the cluster", "through", base, "attempts", attempt)
				return nil
			}
			err = fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
			if resp.StatusCode == http.StatusUnauthorized {
				err = fmt.Errorf("%s: give this node the cluster's admin token: --admin-token-file or $%s", resp.Status, adminTokenEnv)
			}
			if resp.StatusCode >= 400 && resp.StatusCode < 500 {
				// Refused (e.g. the id is a member at another address):
				// asking again will not change the answer.
				return err
			}
		} else if hint := tlsFailure(err); hint != "" {
			return fmt.Errorf("%w (%s)", err, hint)
		}
		last = err
		log.Warn("join: no answer yet; retrying", "through", base, "attempt", attempt, "of", joinAttempts, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return last
}

// How long --join keeps asking a member that has no leader or cannot be
// reached, and how long one attempt may take (the member's /join waits
// 10 s for the change).
const (
	joinAttempts       = 30
	joinAttemptTimeout = 15 * time.Second
)

// tlsFailure says why a call's TLS handshake cannot succeed, with what
// to change, or "" for a failure worth retrying.
func tlsFailure(err error) string {
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		remote    *net.OpError
		record    tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &unknownCA):
		return "the member's admin certificate is not signed by a CA this node trusts: give --node-ca the cluster's CA (it verifies the member's admin certificate too), or --http-ca"
	case errors.As(err, &hostname):
		return "the member's admin certificate does not name the address --join gives: use an address in its subjectAltName"
	case errors.As(err, &invalid), errors.As(err, &verify):
		return "the member's admin certificate is not valid"
	case errors.As(err, &remote) && remote.Op == "remote error":
		// The member's TLS alert (its bad certificate, certificate
		// required, unknown CA).
		return "the member refused the TLS handshake: it asks for a client certificate (its --http-ca) this node did not present or it did not accept; give this node --http-cert/--http-key signed by that CA"
	case errors.As(err, &record), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "this node speaks HTTPS (its --http-cert) and the member plain HTTP, or the other way round: members are configured alike"
	}
	return ""
}
