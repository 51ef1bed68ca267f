import type { UpdateMeBody, User } from '../../../../sdks/typescript/src/index.ts';

// The profile page's forms: what a save sends (only what changed; a new email needs the current
// password, as the API requires), and the password change's checks before asking the API.

export interface ProfileDraft {
  name: string;
  email: string;
  current_password: string;
}

export const draftOfUser = (user: User): ProfileDraft => ({ name: user.name ?? '', email: user.email, current_password: '' });

export const emailChanges = (user: User, draft: ProfileDraft) => draft.email.trim().toLowerCase() !== user.email.toLowerCase();

/** The PATCH /auth/me body, or undefined when nothing changed. An emptied name clears it. */
export function profileUpdateOf(user: User, draft: ProfileDraft): UpdateMeBody | undefined {
  const body: UpdateMeBody = {};
  const name = draft.name.trim();
  if (name !== (user.name ?? '')) body.name = name === '' ? null : name;
  if (emailChanges(user, draft)) {
    body.email = draft.email.trim();
    body.current_password = draft.current_password;
  }
  return Object.keys(body).length > 0 ? body : undefined;
}

export interface PasswordDraft {
  current_password: string;
  new_password: string;
  confirm_password: string;
}

export const EMPTY_PASSWORD_DRAFT: PasswordDraft = { current_password: '', new_password: '', confirm_password: '' };

/** Field → problem, empty when the change may be sent. */
export function passwordProblems(draft: PasswordDraft): Partial<Record<keyof PasswordDraft, string>> {
  const problems: Partial<Record<keyof PasswordDraft, string>> = {};
  if (draft.current_password === '') problems.current_password = 'Enter your current password.';
  if (draft.new_password.length < 8) problems.new_password = 'At least 8 characters.';
  else if (draft.new_password === draft.current_password) problems.new_password = 'Choose a password other than the current one.';
  if (draft.confirm_password !== draft.new_password) problems.confirm_password = 'The two new passwords differ.';
  return problems;
}
