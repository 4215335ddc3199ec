package segment

import (
	"context"
	"errors"
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
