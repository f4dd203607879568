// Texts of the DNSSEC section of a domain's DNS page (pages/dnssec-status.tsx).
export const en = {
  'dnssec.title': 'DNSSEC',
  'dnssec.off': 'This zone is not signed. Your hosting provider turns DNSSEC on.',
  'dnssec.pending': 'Signing is turned on; the DS records appear here once the DNS server has signed the zone.',
  'dnssec.on': 'This zone is signed. Give your domain registry these DS records (its form may ask for key tag, algorithm, digest type and digest: the four fields in this order):',
  'dnssec.ds': 'DS records',
};

export const de: Record<keyof typeof en, string> = {
  'dnssec.title': 'DNSSEC',
  'dnssec.off': 'Diese Zone ist nicht signiert. DNSSEC schaltet Ihr Hosting-Anbieter ein.',
  'dnssec.pending': 'Die Signierung ist eingeschaltet; die DS-Einträge erscheinen hier, sobald der DNS-Server die Zone signiert hat.',
  'dnssec.on': 'Diese Zone ist signiert. Geben Sie Ihrer Domain-Registrierungsstelle diese DS-Einträge (ihr Formular fragt vielleicht nach Key-Tag, Algorithmus, Digest-Typ und Digest: die vier Felder in dieser Reihenfolge):',
  'dnssec.ds': 'DS-Einträge',
};
