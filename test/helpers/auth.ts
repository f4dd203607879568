// Credentials as clients send them (API guide "Authentication").

/** An HTTP Basic Authorization header value: `basic('token', token)`, `basic(customerId, legacyPassword)`. */
export const basic = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');

/** The challenge every 401 carries. */
export const WWW_AUTHENTICATE = 'Basic realm="API"';
