package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
// retrying while the cluster has no leader.
// It speaks HTTPS when this node serves HTTPS (members are configured
// alike) and sends the admin token, if any.
func joinCluster(ctx context.Context, f *adminFlags, token, adminAddr, id, raftAddr string) error {
	client, base, err := f.client(adminAddr, f.cert != "")
	if err != nil {
		return err
	}
	form := url.Values{"id": {id}, "addr": {raftAddr}}.Encode()
	var last error
	for attempt := 0; attempt < 30; attempt++ {
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
				return nil
			}
			err = fmt.Errorf("%s: %s", resp.Status, body)
			if resp.StatusCode >= 400 && resp.StatusCode < 500 {
				// Refused (e.g. the id is a member at another address):
				// asking again will not change the answer.
				return err
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return last
}
