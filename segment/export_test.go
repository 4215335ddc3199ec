package segment

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"
)

// StaleTickets is a DialTickets client stopped after it read the servers'
// states and before it set up those without a class, so that a test can
// run another client in between.
type StaleTickets struct {
	bs  []ticketBackend
	sts []ticketState
}

// ReadTicketStates connects to every server in dsns and reads its state,
// as DialTickets does first; every server must answer.
func ReadTicketStates(ctx context.Context, dsns []string, name string) (*StaleTickets, error) {
	_, _, bs, sts, errs, err := connectTickets(ctx, dsns, name)
	if err == nil {
		err = errors.Join(errs...)
	}
	if err != nil {
		closeBackends(bs)
		return nil, err
	}
	return &StaleTickets{bs: bs, sts: sts}, nil
}

// SetUp gives the servers that had no class when their states were read
// the free classes, in list order, as DialTickets does next.
func (s *StaleTickets) SetUp(ctx context.Context) error {
	_, err := assignFree(ctx, s.bs, s.sts, false)
	return err
}

// Ticket takes a ticket from server i.
func (s *StaleTickets) Ticket(ctx context.Context, i int) (int64, error) { return s.bs[i].Ticket(ctx) }

// High reads server i's high-water mark now.
func (s *StaleTickets) High(ctx context.Context, i int) (int64, error) {
	st, err := s.bs[i].state(ctx, int64(len(s.bs)))
	return st.High, err
}

// Close closes the servers.
func (s *StaleTickets) Close() { closeBackends(s.bs) }

// KillTicketSessions ends, from the server's side, the sessions that
// generators hold on the ticket server at dsn, as a network failure or a
// DBA would: PostgreSQL backends terminated, MySQL connections killed,
// Redis sessions dropped. It returns how many it ended.
func KillTicketSessions(ctx context.Context, dsn, name string) (int, error) {
	b, err := openTicketBackend(ctx, dsn, name)
	if err != nil {
		return 0, err
	}
	defer b.Close()
	switch b := b.(type) {
	case *pgTicket:
		var n int
		err := b.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
			WHERE locktype = 'advisory' AND objsubid = 2 AND granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND classid::bigint = ($1::int::bigint & 4294967295)
			AND objid::bigint = (hashtext(coalesce(current_schema(), '') || '.' || $2)::bigint & 4294967295)`,
			pgTicketLock, name).Scan(&n)
		if err != nil {
			return n, err
		}
		// pg_terminate_backend signals: wait until the backends have
		// ended and their locks are gone.
		return n, waitGone(ctx, func() (bool, error) {
			var live int
			err := b.pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks
				WHERE locktype = 'advisory' AND objsubid = 2 AND granted
				AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
				AND classid::bigint = ($1::int::bigint & 4294967295)
				AND objid::bigint = (hashtext(coalesce(current_schema(), '') || '.' || $2)::bigint & 4294967295)`,
				pgTicketLock, name).Scan(&live)
			return live == 0, err
		})
	case *mysqlTicket:
		n := 0
		for s := range mysqlSessionSlots {
			var id sql.NullInt64
			if err := b.db.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", b.lockName(strconv.Itoa(s))).Scan(&id); err != nil {
				return n, err
			}
			if id.Valid {
				if _, err := b.db.ExecContext(ctx, "KILL "+strconv.FormatInt(id.Int64, 10)); err != nil {
					return n, err
				}
				n++
			}
		}
		// KILL marks the connection: wait until each killed one has ended
		// and released its lock, as a server does some time later on a
		// busy machine.
		return n, waitGone(ctx, func() (bool, error) {
			for s := range mysqlSessionSlots {
				var id sql.NullInt64
				if err := b.db.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", b.lockName(strconv.Itoa(s))).Scan(&id); err != nil || id.Valid {
					return false, err
				}
			}
			return true, nil
		})
	case *redisTicket:
		n, err := b.c.ZCard(ctx, b.sessions).Result()
		if err == nil {
			err = b.c.Del(ctx, b.sessions).Err()
		}
		return int(n), err
	}
	return 0, errors.New("unknown ticket backend")
}

// waitGone polls gone every 5 ms until it says the sessions have ended,
// for up to a minute.
func waitGone(ctx context.Context, gone func() (bool, error)) error {
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		ok, err := gone()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return errors.New("killed ticket sessions still hold their locks after a minute")
		}
	}
}

// KicksPending returns how many wake-ups the fetcher has been sent and has
// not finished serving: a simulated clock moves only when it is 0 or the
// fetcher is inside the store.
func KicksPending(a *Allocator) int64 { return a.kicks.Load() }

// CurrentLeft returns how many IDs of a's current segment are not handed
// out: a call for no more than that does not switch segments.
func CurrentLeft(a *Allocator) int64 { return a.cur.Load().left() }

// StaleKick kicks a's background fetcher as a segment's trigger or switch
// does, and returns once the fetcher has handled the kick (false when that
// took over a minute).
func (a *Allocator) StaleKick() bool {
	a.prefetch()
	for deadline := time.Now().Add(time.Minute); a.kicks.Load() > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}
