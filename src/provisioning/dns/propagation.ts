// Whether a DNS change is answered by every live DNS server (docs/decisions/0003-dns-propagation.md,
// migration 002). Used by DNS job handlers: a job is done only when this is true.
//
// CONTRACT (implemented by the DNS server work, issue 3):
//   recordChange(trx, domain) → appends to dns_changes, bumps domains.dns_serial, returns the
//     change id; call it in the same transaction that changes a zone's served records.
//   isApplied(store, changeId) → true when every DNS server with a heartbeat newer than
//     DNS_SERVER_STALE_MS has applied_change_id >= changeId, and at least one server is live.
export {};
