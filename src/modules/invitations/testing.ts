import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Role } from '../../platform/auth/access.ts';
import type { TestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';

// Test helpers of the member flow, through the real API: invite, read the mailed token, accept.

export interface InvitationMail {
  to: string;
  subject: string;
  text: string;
  meta: { purpose: string; token: string; link: string; invitation_id: string; workspace_id: string };
}

/** The mail of one invitation, as the file mailer wrote it to DATA_DIR/mail. */
export function invitationMail(t: TestApp, invitationId: string): InvitationMail {
  const dir = path.join(t.dataDir, 'mail');
  const mails = fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as InvitationMail)
    .filter((mail) => mail.meta?.purpose === 'invitation' && mail.meta.invitation_id === invitationId);
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
