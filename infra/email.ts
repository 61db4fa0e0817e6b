/**
 * Mail (packages/mail): Amazon SES through SST's Email component, linked to the container, which
 * sends every message (packages/config reads the link's `sender` and `configSet`). The sending
 * identity is MAIL_SENDER (an address, or a domain) or else the platform's domain
 * (PLATFORM_DOMAIN), set for the deploy. SES verifies it: a domain through DNS records, which SST
 * adds when the domain's zone is in Route 53 (MAIL_DNS=manual: you add them, docs/DEPLOY.md); an
 * address through a mail AWS sends to it.
 */
const sender = process.env.MAIL_SENDER || process.env.PLATFORM_DOMAIN;
if (!sender) {
  throw new Error('Set MAIL_SENDER (the address or domain the platform’s mail comes from) or PLATFORM_DOMAIN for the deploy: docs/DEPLOY.md, “Mail”.');
}
const manualDns = process.env.MAIL_DNS === 'manual' && !sender.includes('@');

export const email = new sst.aws.Email('Email', { sender, ...(manualDns ? { dns: false as const } : {}) });
