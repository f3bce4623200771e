package resp

import (
	"strconv"

	"github.com/ticketd/ticketd/ticket/model"
)

// respOut is where replies go: the connection (redcon.Conn), or a
// buffer (*redcon.Writer) for a pipelined command's error that must wait
// for the replies before it.
type respOut interface {
	WriteString(string)
	WriteError(string)
	WriteInt64(int64)
	WriteBulkString(string)
	WriteArray(int)
	WriteNull()
	WriteRaw([]byte)
}

// writer writes replies in the connection's protocol: RESP2, or RESP3
// after HELLO 3 (its null, map and verbatim string; redcon writes
// RESP2's types only).
type writer struct {
	rc    respOut
	proto int
}

func (w *writer) status(s string) { w.rc.WriteString(s) }
func (w *writer) err(s string)    { w.rc.WriteError(s) }
func (w *writer) int(n int64)     { w.rc.WriteInt64(n) }
func (w *writer) bulk(s string)   { w.rc.WriteBulkString(s) }
func (w *writer) array(n int)     { w.rc.WriteArray(n) }

func (w *writer) null() {
	if w.proto >= 3 {
		w.rc.WriteRaw([]byte("_\r\n"))
		return
	}
	w.rc.WriteNull()
}

// mapHeader starts a map of n pairs (RESP2: a flat array of 2n).
func (w *writer) mapHeader(n int) {
	if w.proto >= 3 {
		w.rc.WriteRaw([]byte("%" + strconv.Itoa(n) + "\r\n"))
		return
	}
	w.rc.WriteArray(2 * n)
}

// verbatim writes text as RESP3's verbatim string (RESP2: a bulk string),
// as Redis answers INFO and CLIENT INFO.
func (w *writer) verbatim(s string) {
	if w.proto >= 3 {
		w.rc.WriteRaw([]byte("=" + strconv.Itoa(len(s)+4) + "\r\ntxt:" + s + "\r\n"))
		return
	}
	w.rc.WriteBulkString(s)
}

// reply writes a key command's reply and returns its outcome.
func (w *writer) reply(r *model.KeyReply) string {
	switch r.Kind {
	case model.ReplyOK:
		w.status("OK")
	case model.ReplyInt:
		w.int(r.Int)
	case model.ReplyBulk:
		w.bulk(r.Str)
	case model.ReplyNil:
		w.null()
	case model.ReplyErr:
		w.err(r.Str)
		return outError
	default:
		w.err("ERR ticketd: unknown reply kind")
		return outFailed
	}
	return outOK
}
