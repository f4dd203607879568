// Texts of the DNSSEC section of a domain's DNS page (pages/dnssec-status.tsx).
export const en = {
  'dnssec.title': 'DNSSEC',
  'dnssec.off': 'This zone is not signed.',
  'dnssec.pending': 'Signing is turned on; the DS records appear here once the DNS server has signed the zone.',
  'dnssec.on': 'This zone is signed. Give your domain registry these DS records (its form may ask for key tag, algorithm, digest type and digest: the four fields in this order):',
  'dnssec.rolling': 'The zone is signed and a new key is on its way in. Once the DS record below changes, give your registry the new one in place of the old:',
  'dnssec.disabling': 'DNSSEC is being turned off. The zone stays signed until your registry has removed its DS record: remove it there now; then the zone is served unsigned.',
  'dnssec.ds': 'DS records',
  'domains.dnssec.on': 'Sign this zone',
  'domains.dnssec.off': 'Turn DNSSEC off',
};

export const de: Record<keyof typeof en, string> = {
  'dnssec.title': 'DNSSEC',
  'dnssec.off': 'Diese Zone ist nicht signiert.',
  'dnssec.pending': 'Die Signierung ist eingeschaltet; die DS-Einträge erscheinen hier, sobald der DNS-Server die Zone signiert hat.',
  'dnssec.on': 'Diese Zone ist signiert. Geben Sie Ihrer Domain-Registrierungsstelle diese DS-Einträge (ihr Formular fragt vielleicht nach Key-Tag, Algorithmus, Digest-Typ und Digest: die vier Felder in dieser Reihenfolge):',
  'dnssec.rolling': 'Die Zone ist signiert, ein neuer Schlüssel wird eingeführt. Sobald sich der DS-Eintrag unten ändert, geben Sie Ihrer Registrierungsstelle den neuen anstelle des alten:',
  'dnssec.disabling': 'DNSSEC wird ausgeschaltet. Die Zone bleibt signiert, bis Ihre Registrierungsstelle ihren DS-Eintrag entfernt hat: Entfernen Sie ihn jetzt dort; danach wird die Zone unsigniert ausgeliefert.',
  'dnssec.ds': 'DS-Einträge',
  'domains.dnssec.on': 'Diese Zone signieren',
  'domains.dnssec.off': 'DNSSEC ausschalten',
};
