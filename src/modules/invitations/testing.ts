import assert from 'node:assert/strict';
import type { Role } from '../../platform/auth/access.ts';
import type { TestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { type SentMail, sentMails } from '../../../test/support/mail.ts';

// Test helpers of the member flow, through the real API: invite, read the mailed token, accept.

type InvitationMeta = { purpose: string; token: string; link: string; invitation_id: string; workspace_id: string };
export type InvitationMail = SentMail<InvitationMeta> & { meta: InvitationMeta };

/** The mail of one invitation, as the file mailer wrote it to DATA_DIR/mail. */
export function invitationMail(t: TestApp, invitationId: string): InvitationMail {
  const mails = sentMails<InvitationMeta>(t).filter(
    (mail): mail is InvitationMail => mail.meta?.purpose === 'invitation' && mail.meta.invitation_id === invitationId,
  );
  assert.equal(mails.length, 1, `one mail for invitation ${invitationId}`);
  return mails[0];
}

/** POST /v1/workspaces/{id}/members as `inviter`. */
export function invite(t: TestApp, inviter: TestUser, workspaceId: string, payload: { email: string; role: Role }) {
  return t.request({ method: 'POST', url: `/v1/workspaces/${workspaceId}/members`, token: inviter.accessToken, payload });
}

/** A new user who joined `workspaceId` (default: the owner's personal workspace) with `role`. */
export async function addMember(t: TestApp, owner: TestUser, role: Role, workspaceId = owner.workspaceId): Promise<TestUser> {
  const user = await signUp(t);
  const invited = await invite(t, owner, workspaceId, { email: user.email, role });
  assert.equal(invited.statusCode, 201, invited.body);
  const { meta } = invitationMail(t, invited.json().id);
  const accepted = await t.request({ method: 'POST', url: `/v1/invitations/${meta.token}/accept`, token: user.accessToken });
  assert.equal(accepted.statusCode, 200, accepted.body);
  return user;
}
