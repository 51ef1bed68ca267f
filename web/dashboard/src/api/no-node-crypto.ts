// Stands in for node:crypto, which the SDK imports only where no Web Crypto is global (Node 18);
// every browser has one, so the dashboard bundles nothing for it.
export const webcrypto = undefined;
