// The passwords shown in our documentation (API guide "Password rules"): no password a client
// chooses may contain one. When a docs example with a literal password is added, add it here:
// test/security/password-policy.test.ts finds literal passwords in the docs and fails until it is.
// Placeholders (`$TOKEN`, `IDENTIFIED BY '…'`, `user:password@host`) are names, not listed.
export const DOCUMENTED_PASSWORDS: readonly string[] = [
  // For the e-mail-address examples of docs/api-guide.md (a mailbox created or PATCHed with a
  // chosen password), not written yet: use this one there. It breaks no other rule, so the example
  // request is valid as shown, and a reader who copies it is still refused. Also the portal
  // password of the panel's login example (API guide "Panel sessions (extension)").
  'Lantern7-Orbit-Fjord2',
];
