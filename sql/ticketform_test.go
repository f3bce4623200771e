package sql

import (
	"reflect"
	"testing"
)

// TestWritesHoldOneForm: Update, Insert and Delete hold a statement in
// one form, the general one, and nothing a table kind would choose
// between: no error beside it (the reason one form is missing) and no
// ticket-form field (Assign, Cond, ColSet). The ticket form is
// TicketForm's and TicketOnDup's, derived where a ticket table runs the
// statement.
func TestWritesHoldOneForm(t *testing.T) {
	errType := reflect.TypeFor[error]()
	for _, p := range []Plan{&Update{}, &Insert{}, &Delete{}} {
		var walk func(path string, ty reflect.Type)
		walk = func(path string, ty reflect.Type) {
			switch ty.Kind() {
			case reflect.Pointer, reflect.Slice:
				walk(path, ty.Elem())
				return
			case reflect.Struct:
				if ty == reflect.TypeFor[Expr]() || ty == reflect.TypeFor[Value]() {
					return
				}
				for i := range ty.NumField() {
					f := ty.Field(i)
					walk(path+"."+f.Name, f.Type)
				}
				return
			}
			if ty == errType {
				t.Errorf("%s is an error: a plan holding a form and why another is missing", path)
			}
		}
		ty := reflect.TypeOf(p).Elem()
		walk(ty.Name(), ty)
		for i := range ty.NumField() {
			f := ty.Field(i)
			for _, tf := range []reflect.Type{reflect.TypeFor[Assign](), reflect.TypeFor[Cond](), reflect.TypeFor[ColSet]()} {
				if f.Type == tf || f.Type.Kind() == reflect.Slice && f.Type.Elem() == tf || f.Type.Kind() == reflect.Pointer && f.Type.Elem() == tf {
					t.Errorf("%s.%s holds the ticket form (%s)", ty.Name(), f.Name, tf.Name())
				}
			}
		}
	}
}
