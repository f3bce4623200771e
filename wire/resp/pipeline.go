package resp

import (
	"context"
	"strings"
	"time"

	"github.com/tidwall/redcon"

	"github.com/ticketd/ticketd/ticket/model"
)

// pipeline runs a connection's commands as they arrived together:
// consecutive key writes (a client pipelining INCRs) are committed as
// one ordered run (Service.ExecKeysOrdered: one Raft entry, or the keys'
// blocks), everything else one by one; replies go out in order. Answered
// one by one, 16 pipelined INCRs waited for 16 commits.
func (c *client) pipeline(rc redcon.Conn, cmds []redcon.Command) {
	type taken struct {
		name  string
		start time.Time
	}
	var run []taken
	var keys []model.KeyCommand
	flush := func() {
		if len(run) == 0 {
			return
		}
		c.execRun(rc, keys, func(i int, outcome string) {
			c.srv.obs.Command(run[i].name, outcome, time.Since(run[i].start))
		})
		run, keys = run[:0], keys[:0]
	}
	for _, cmd := range cmds {
		if len(cmd.Args) == 0 {
			continue
		}
		name := strings.ToLower(string(cmd.Args[0]))
		if spec, ok := commands[name]; ok && spec.write && len(cmds) > 1 {
			// Its checks and arguments, answered into a buffer: an error
			// must follow the replies of the writes before it.
			start := time.Now()
			buf := redcon.NewWriter(nil)
			c.collect = &keys
			before := len(keys)
			c.last, c.lastCmd = start, name
			outcome := c.dispatch(&writer{rc: buf, proto: c.proto}, name, cmd.Args)
			c.collect = nil
			if outcome == outCollected && len(keys) == before+1 {
				run = append(run, taken{name, start})
				continue
			}
			flush()
			rc.WriteRaw(buf.Buffer())
			c.srv.obs.Command(name, outcome, time.Since(start))
			continue
		}
		flush()
		c.srv.one(rc, c, cmd)
		if name == "quit" {
			// The connection is closed; nothing after QUIT is answered.
			return
		}
	}
	flush()
}

// execRun commits a run of key writes and writes their replies in order.
func (c *client) execRun(rc redcon.Conn, keys []model.KeyCommand, done func(i int, outcome string)) {
	w := &writer{rc: rc, proto: c.proto}
	if len(keys) == 1 {
		done(0, c.exec(w, keys[0]))
		return
	}
	cmds := make([]*model.Command, len(keys))
	for i := range keys {
		cmds[i] = &model.Command{Op: model.OpKeys, Key: &keys[i]}
	}
	ctx, cancel := context.WithTimeout(c.srv.ctx, c.srv.cfg.Timeout)
	defer cancel()
	res, errs := c.srv.cfg.Service.ExecKeysOrdered(ctx, cmds)
	for i := range cmds {
		switch {
		case errs[i] != nil:
			w.err(replicationError(errs[i]))
			done(i, outFailed)
		case res[i].Err != nil:
			w.err("ERR " + oneLine(res[i].Err.Message))
			done(i, outRefused)
		case res[i].Key == nil:
			w.err("ERR ticketd: no reply for the key command")
			done(i, outFailed)
		default:
			done(i, w.reply(res[i].Key))
		}
	}
}
