// PHP versions (API guide "Subdomains"): what a plan may offer and a subdomain may run; used by
// plans (operator CLI) today and by subdomains next.

/** The PHP versions a plan may offer, oldest first. */
export const PHP_VERSIONS = ['5.6', '7.1', '7.2', '7.3', '7.4', '8.0', '8.1', '8.2', '8.3', '8.4', '8.5'] as const;

export type PhpVersion = (typeof PHP_VERSIONS)[number];

/** What a plan offers when its creator names no versions: the supported ones. */
export const DEFAULT_PHP_VERSIONS: readonly PhpVersion[] = ['8.3', '8.4', '8.5'];
