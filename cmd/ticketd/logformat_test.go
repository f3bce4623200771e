package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestLogFormat(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger("info", "json", &buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("admin action", "action", "join", "remote", "10.0.0.9:5555")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("json log line %q: %v", buf.String(), err)
	}
	if rec["msg"] != "admin action" || rec["remote"] != "10.0.0.9:5555" {
		t.Errorf("json record: %v", rec)
	}

	buf.Reset()
	if log, err = newLogger("info", "text", &buf); err != nil {
		t.Fatal(err)
	}
	log.Info("hello", "k", "v")
	if !strings.Contains(buf.String(), `msg=hello k=v`) {
		t.Errorf("text log line: %q", buf.String())
	}

	if _, err := newLogger("info", "xml", &buf); err == nil || !strings.Contains(err.Error(), "--log-format") {
		t.Errorf("--log-format xml: %v, want a refusal naming the flag", err)
	}
	o, err := parseOptions(nil, func(k string) string {
		return map[string]string{"TICKETD_LOG_FORMAT": "json"}[k]
	}, &buf)
	if err != nil || o.logFormat != "json" {
		t.Errorf("TICKETD_LOG_FORMAT=json: %q, %v", o.logFormat, err)
	}
}
