import type { MailRequest } from '@yumina/mail';

/**
 * The platform's account mails, each as plain text and HTML. English only: the platform keeps no
 * language per account yet. Links are the platform's own pages; a token rides in the fragment
 * (`#token=`), which browsers never send to a server or in a Referer.
 */
type Mail = Pick<MailRequest, 'subject' | 'text' | 'html'>;

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function compose(subject: string, paragraphs: string[], action?: { label: string; url: string }, after: string[] = []): Mail {
  const text = [
    ...paragraphs,
    ...(action ? [`${action.label}:\n${action.url}`] : []),
    ...after,
    '— Yumina',
  ].join('\n\n');
  const p = (t: string) => `<p style="margin:0 0 16px">${escape(t)}</p>`;
  const button = action
    ? `<p style="margin:24px 0"><a href="${escape(action.url)}" style="background:#3b5bdb;color:#ffffff;padding:12px 20px;border-radius:6px;text-decoration:none;display:inline-block">${escape(action.label)}</a></p>` +
      `<p style="margin:0 0 16px;font-size:13px;color:#555555">If the button does not work, copy this address into your browser:<br><span style="word-break:break-all">${escape(action.url)}</span></p>`
    : '';
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(subject)}</title></head>` +
    `<body style="margin:0;padding:24px;background:#f5f5f7;font-family:system-ui,-apple-system,Segoe UI,sans-serif;color:#1a1a1a;line-height:1.5">` +
    `<div style="max-width:520px;margin:0 auto;background:#ffffff;border-radius:8px;padding:24px">` +
    paragraphs.map(p).join('') +
    button +
    after.map(p).join('') +
    `<p style="margin:0;color:#555555">— Yumina</p></div></body></html>`;
  return { subject, text, html };
}

const hello = (name: string) => `Hello ${name},`;

export const accountMail = {
  verifyEmail: (name: string, url: string) =>
    compose(
      'Verify your e-mail address for Yumina',
      [hello(name), 'Please confirm that this is your e-mail address. The link works once, for 24 hours.'],
      { label: 'Verify my address', url },
      ['If you did not create a Yumina account, ignore this mail: nothing happens without the link.'],
    ),
  confirmSignup: (name: string, url: string) =>
    compose(
      'Finish creating your Yumina account',
      [hello(name), 'Someone (we hope you) asked to create a Yumina account with this address. Follow the link to finish: it creates the account and signs you in. It works once, for 24 hours.'],
      { label: 'Create my account', url },
      ['If you did not ask for this, ignore this mail: no account is created without the link.'],
    ),
  signupAddressInUse: (email: string, loginUrl: string, forgotUrl: string) =>
    compose(
      'Someone tried to create a Yumina account with your address',
      [
        'Hello,',
        `Someone tried to create a new Yumina account with ${email}. Your address already has an account, so nothing was created and nothing changed.`,
        `If it was you, sign in instead: ${loginUrl}`,
        'If you have forgotten your password, you can set a new one:',
      ],
      { label: 'Reset my password', url: forgotUrl },
      ['If this was not you, you do not need to do anything: your account stays as it is.'],
    ),
  confirmNewEmail: (name: string, email: string, url: string) =>
    compose(
      'Confirm your new e-mail address for Yumina',
      [hello(name), `You asked to use ${email} for your Yumina account. The change takes effect when you follow this link (it works once, for 24 hours).`],
      { label: 'Use this address', url },
      ['If you did not ask for this, ignore this mail: your account keeps its address.'],
    ),
  addressInUse: (email: string, forgotUrl: string) =>
    compose(
      'Someone tried to use your address on Yumina',
      [
        'Hello,',
        `Someone signed in to another Yumina account asked to use ${email} for it. That account was not given your address: it stays with your account.`,
        'If you have forgotten your password, you can set a new one:',
      ],
      { label: 'Reset my password', url: forgotUrl },
      ['If this was not you, you do not need to do anything.'],
    ),
  emailChanged: (name: string, newEmail: string, forgotUrl: string) =>
    compose(
      'Your Yumina e-mail address was changed',
      [hello(name), `Your Yumina account now uses ${newEmail}. This address (the old one) no longer signs in to it and receives no more mail about it.`],
      undefined,
      [`If you did not make this change, write to the platform's operators at once, and reset your password from the new address if you still can: ${forgotUrl}`],
    ),
  resetPassword: (url: string) =>
    compose(
      'Reset your Yumina password',
      ['Hello,', 'Someone (we hope you) asked to reset the password of the Yumina account with this address. The link works once, for 30 minutes. Setting a new password signs out every other device.'],
      { label: 'Choose a new password', url },
      ['If you did not ask for this, ignore this mail: your password stays as it is.'],
    ),
  exportReady: (name: string, url: string, keepDays: number) =>
    compose(
      'Your Yumina data is ready to download',
      [hello(name), `The archive of your Yumina data you asked for is ready. Download it from Settings while you are signed in; it is kept for ${keepDays} days.`],
      { label: 'Open Settings', url },
    ),
  passwordChanged: (name: string, forgotUrl: string) =>
    compose(
      'Your Yumina password was changed',
      [hello(name), 'The password of your Yumina account was just changed, and every other device was signed out.'],
      undefined,
      [`If this was not you, reset your password at once: ${forgotUrl}`],
    ),
};
