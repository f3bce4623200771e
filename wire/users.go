package wire

import "github.com/ticketd/ticketd/wire/mysqlconn"

// Users is ticketd's account table (see mysqlconn.Users): Config.Users
// takes one, so that ticketd's command builds it through this package.
type Users = mysqlconn.Users

// NewUsers returns an empty account table.
func NewUsers() *Users { return mysqlconn.NewUsers() }
