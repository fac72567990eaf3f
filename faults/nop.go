package faults

// Nop is a Plan that never fires: every exchange is forwarded unchanged
// and every event passes. It is safe for concurrent use.
var Nop Plan = nopPlan{}

type nopPlan struct{}

func (nopPlan) Exchange(*Exchange) ExchangeAction { return ExchangeAction{} }
func (nopPlan) Stream(*Exchange) StreamPlan       { return emptyStream{} }
