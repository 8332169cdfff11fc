import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isMailAddress } from '../../src/core/mail/mailer.js';
import { composeMail, MAIL_TEMPLATES, renderMail, type MailTemplate, type MailTemplates } from '../../src/core/mail/templates.js';

const SITE = { name: 'Gatehouse', url: 'https://id.example.test' };
const AT = Date.UTC(2026, 10, 28, 9, 30);
const SAMPLES: { [T in MailTemplate]: MailTemplates[T] } = {
  'verify-email': { url: 'https://id.example.test/verify?t=a&b=<c>', expiresMinutes: 30, name: 'Ada "<Lovelace>"' },
  'password-reset': { url: 'https://id.example.test/login/reset?t=x', expiresMinutes: 30 },
  invitation: { url: 'https://id.example.test/signup?invitation=i', expiresAt: AT, invitedBy: '<script>alert(1)</script>' },
  'security-notice': { notice: 'password_changed', at: AT, name: 'Ada' },
};

describe('e-mail templates: one definition, a text part and an escaped HTML part', () => {
  it('every template renders both parts, saying the same, with the action link in each', () => {
    assert.deepEqual(Object.keys(SAMPLES).sort(), [...MAIL_TEMPLATES].sort());
    for (const t of MAIL_TEMPLATES) {
      const composed = composeMail(t, SAMPLES[t] as never, SITE);
      const r = renderMail(composed, SITE);
      assert.ok(r.subject.length > 0 && !/[\r\n]/.test(r.subject), t);
      assert.match(r.html, /^<!doctype html>/);
      for (const p of composed.paragraphs) assert.ok(r.text.includes(p), `${t}: text has "${p}"`);
      if (composed.action) {
        assert.ok(r.text.includes(composed.action.url), `${t}: text has the link as it is`);
        assert.ok(r.html.includes(`href="${composed.action.url.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}"`), `${t}: html has the link escaped`);
      }
      // Nothing from the data reaches the HTML as markup.
      assert.ok(!r.html.includes('<script>') && !r.html.includes('<Lovelace>') && !r.html.includes('<c>'), t);
    }
  });

  it('names what happened and when in a security notice', () => {
    const r = renderMail(composeMail('security-notice', { notice: 'account_deleted', at: AT }, SITE), SITE);
    assert.equal(r.subject, 'Your account was deleted');
    assert.match(r.text, /^Hello,\n\nYour account was deleted, with the personal data it held on 2026-11-28 09:30 UTC\./);
    const changed = renderMail(composeMail('security-notice', { notice: 'password_changed', at: AT, name: 'Ada' }, SITE), SITE);
    assert.match(changed.text, /reset your password at https:\/\/id\.example\.test\/login\/forgot/);
  });

  it('refuses an action link that is not http(s), and an unknown template', () => {
    for (const url of ['javascript:alert(1)', 'data:text/html,x', 'not a url', '']) {
      assert.throws(() => composeMail('password-reset', { url, expiresMinutes: 30 }, SITE), /http\(s\) link/, url);
    }
    assert.throws(() => composeMail('nope' as MailTemplate, {} as never, SITE), /unknown e-mail template/);
  });

  it('takes one plain address, nothing that could add a header or a recipient', () => {
    for (const ok of ['a@example.test', 'first.last+tag@sub.example.test']) assert.ok(isMailAddress(ok), ok);
    for (const bad of ['', 'a', 'a@b', 'a@b.test\r\nBcc: c@d.test', 'A <a@b.test>', 'a@b.test, c@d.test', 'a b@c.test', `${'x'.repeat(250)}@b.test`]) {
      assert.ok(!isMailAddress(bad), JSON.stringify(bad));
    }
  });
});
