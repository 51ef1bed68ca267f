import { useMutation } from '@tanstack/react-query';
import { type ReactNode, useEffect, useState } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { describeError } from '../api/errors.ts';
import { makeClient, NEXT_KEY, useSession } from '../api/session.tsx';
import { Button, Field, Form, FormError } from '../ui/form.tsx';

// Signing up, logging in, and the forgotten-password pair (the mail's link opens
// /reset-password?token=…). A new account gets a personal workspace; both lead to the agents.

function AuthFrame({ title, children, footer }: { title: string; children: ReactNode; footer: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Voice Agent Platform`;
  }, [title]);
  return (
    <main id="main" className="auth">
      <p className="brand">Voice Agent Platform</p>
      <div className="card">
        <h1>{title}</h1>
        {children}
      </div>
      <p className="auth-footer">{footer}</p>
    </main>
  );
}

/** Logs in with the SDK (which stores the tokens through onTokens) and opens the dashboard. */
function useLogin() {
  const { signIn } = useSession();
  const [, navigate] = useLocation();
  return useMutation({
    mutationFn: async (input: { email: string; password: string; name?: string; register?: boolean }) => {
      const client = makeClient();
      if (input.register) await client.auth.register({ email: input.email, password: input.password, ...(input.name ? { name: input.name } : {}) });
      await client.auth.login({ email: input.email, password: input.password });
      return client;
    },
    onSuccess: (client) => {
      signIn(client);
      const next = sessionStorage.getItem(NEXT_KEY);
      sessionStorage.removeItem(NEXT_KEY);
      navigate(next?.startsWith('/') && !next.startsWith('//') ? next : '/agents');
    },
  });
}

export function LoginPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const login = useLogin();
  const failure = login.error ? describeError(login.error) : undefined;
  return (
    <AuthFrame title="Log in" footer={<>New here? <Link href="/signup">Create an account</Link></>}>
      <Form label="Log in" onSubmit={() => login.mutate({ email, password })}>
        <Field label="Email" type="email" name="email" autoComplete="email" value={email} onChange={setEmail} required autoFocus error={failure?.fields.email} />
        <Field label="Password" type="password" name="password" autoComplete="current-password" value={password} onChange={setPassword} required error={failure?.fields.password} />
        <FormError message={failure?.message} />
        <Button type="submit" isPending={login.isPending}>
          {login.isPending ? 'Logging in…' : 'Log in'}
        </Button>
        <Link href="/forgot-password">Forgot your password?</Link>
      </Form>
    </AuthFrame>
  );
}

export function SignupPage() {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signup = useLogin();
  const failure = signup.error ? describeError(signup.error) : undefined;
  return (
    <AuthFrame title="Create your account" footer={<>Already have an account? <Link href="/login">Log in</Link></>}>
      <Form label="Create your account" onSubmit={() => signup.mutate({ name, email, password, register: true })}>
        <Field label="Name" name="name" autoComplete="name" value={name} onChange={setName} error={failure?.fields.name} autoFocus />
        <Field label="Email" type="email" name="email" autoComplete="email" value={email} onChange={setEmail} required error={failure?.fields.email} />
        <Field label="Password" type="password" name="password" autoComplete="new-password" value={password} onChange={setPassword} required description="At least 8 characters." error={failure?.fields.password} />
        <FormError message={failure?.message} />
        <Button type="submit" isPending={signup.isPending}>
          {signup.isPending ? 'Creating…' : 'Create account'}
        </Button>
      </Form>
    </AuthFrame>
  );
}

export function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const forgot = useMutation({ mutationFn: () => makeClient().auth.forgotPassword({ email }) });
  const failure = forgot.error ? describeError(forgot.error) : undefined;
  return (
    <AuthFrame title="Reset your password" footer={<Link href="/login">Back to log in</Link>}>
      {forgot.isSuccess ? (
        <p role="status">If an account uses {email}, a link to reset its password is on its way. It works for an hour.</p>
      ) : (
        <Form label="Reset your password" onSubmit={() => forgot.mutate()}>
          <Field label="Email" type="email" name="email" autoComplete="email" value={email} onChange={setEmail} required autoFocus error={failure?.fields.email} />
          <FormError message={failure?.message} />
          <Button type="submit" isPending={forgot.isPending}>
            Send the link
          </Button>
        </Form>
      )}
    </AuthFrame>
  );
}

export function ResetPasswordPage() {
  const token = new URLSearchParams(useSearch()).get('token') ?? '';
  const [password, setPassword] = useState('');
  const reset = useMutation({ mutationFn: () => makeClient().auth.resetPassword({ token, new_password: password }) });
  const failure = reset.error ? describeError(reset.error) : undefined;
  return (
    <AuthFrame title="Choose a new password" footer={<Link href="/login">Back to log in</Link>}>
      {reset.isSuccess ? (
        <p role="status">
          Your password is changed and every session was signed out. <Link href="/login">Log in</Link> with the new one.
        </p>
      ) : (
        <Form label="Choose a new password" onSubmit={() => reset.mutate()}>
          {token ? null : <p className="form-error">This page needs the link from the reset mail.</p>}
          <Field label="New password" type="password" name="new_password" autoComplete="new-password" value={password} onChange={setPassword} required autoFocus description="At least 8 characters." error={failure?.fields.new_password} />
          <FormError message={failure?.fields.token ?? failure?.message} />
          <Button type="submit" isDisabled={!token} isPending={reset.isPending}>
            Change password
          </Button>
        </Form>
      )}
    </AuthFrame>
  );
}

/** The verification mail's link: confirms the address once, whether or not this browser is signed in. */
export function VerifyEmailPage() {
  const token = new URLSearchParams(useSearch()).get('token') ?? '';
  const { client } = useSession();
  const verify = useMutation({ mutationFn: () => makeClient().auth.verifyEmail({ token }) });
  const failure = verify.error ? describeError(verify.error) : undefined;
  return (
    <AuthFrame title="Confirm your email" footer={client ? <Link href="/agents">Back to the dashboard</Link> : <Link href="/login">Log in</Link>}>
      {verify.isSuccess ? (
        <p role="status">{verify.data.email} is confirmed.</p>
      ) : (
        <Form label="Confirm your email" onSubmit={() => verify.mutate()}>
          <FormError message={token ? (failure?.fields.token ?? failure?.message) : 'This page needs the link from the verification mail.'} />
          <Button type="submit" isDisabled={!token} isPending={verify.isPending}>
            Confirm my email
          </Button>
        </Form>
      )}
    </AuthFrame>
  );
}
