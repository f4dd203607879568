// The passwords shown in our documentation (API guide "Password rules"): no
// password a client chooses may contain one, in any case, reversed or with substitutions undone
// (src/security/password-policy.ts). The one list; each entry says where it is shown. When an
// example with a literal password is added to docs/*.md or README.md, add it here:
// test/security/password-policy.test.ts finds literal passwords in the docs and fails until it is.
//
// Looked through (docs/decisions/0009-mail-directory.md): docs/api-guide.md,
// docs/operator-guide.md, docs/performance.md and README.md show no literal password today, only
// placeholders, which are not listed:
//   - `$TOKEN`, `$LEGACY`, `$LEGACY_PASSWORD`, `$DB22_ADMIN_PASSWORD`, `<legacy password>`,
//     `"legacy_password":"…"`, `IDENTIFIED BY '…'`, `ADMIN[:PASSWORD]` (names, not values);
//   - `postgres://user:password@host:5432/dbname` (docs/operator-guide.md, "Selecting it"): the
//     word `password`, which the password-word rule forbids already (listing it here too would
//     answer every password containing it with a second error for the same cause).
export const DOCUMENTED_PASSWORDS: readonly string[] = [
  // For the e-mail-address examples of docs/api-guide.md (a mailbox created or PATCHed with a
  // chosen password), not written yet: use this one there. It breaks no other rule, so the example
  // request is valid as shown, and a reader who copies it is still refused.
  'Lantern7-Orbit-Fjord2',
];
