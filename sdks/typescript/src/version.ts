/** The SDK's version: package.json, the User-Agent and the CHANGELOG say the same. */
export const VERSION = '1.4.0';
