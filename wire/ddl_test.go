package wire

import (
	"testing"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/ticket/model"
)

// TestValueKindsAgree keeps sql's and ticket's value kinds numbered alike,
// so that a kind is one number wherever it is logged or compared.
func TestValueKindsAgree(t *testing.T) {
	for _, k := range []struct {
		s sql.ValueKind
		t model.ValueKind
	}{
		{sql.ValNull, model.ValNull}, {sql.ValDefault, model.ValDefault}, {sql.ValInt, model.ValInt},
		{sql.ValUint, model.ValUint}, {sql.ValString, model.ValString}, {sql.ValDecimal, model.ValDecimal},
	} {
		if uint8(k.s) != uint8(k.t) {
			t.Errorf("sql kind %d is ticket kind %d", k.s, k.t)
		}
		v, err := bind(sql.Value{Kind: k.s}, nil)
		if err != nil || v.Kind != k.t {
			t.Errorf("bind(kind %d) = %v, %v", k.s, v.Kind, err)
		}
	}
}
