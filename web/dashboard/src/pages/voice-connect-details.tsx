import type { VoiceSessionCreated } from '@voice-agent-platform/sdk';
import { Link } from 'wouter';
import { Button } from '../ui/form.tsx';
import { dateTime } from '../ui/format.ts';
import { CopyButton } from '../ui/secret.tsx';
import { connectSnippet, expiresIn, mediaSocketUrl } from './voice-connect.ts';

// A session just made and what a developer needs to connect to it: the token (shown once), the
// address, the room, the expiry, and a few lines of code, each with a copy button.

export function ConnectDetails({ session, onDismiss }: { session: VoiceSessionCreated; onDismiss(): void }) {
  const builtin = session.transport === 'builtin';
  const snippet = connectSnippet(session);
  return (
    <section className="secret connect" aria-labelledby="connect-heading">
      <h2 id="connect-heading">Connect to session {session.id}</h2>
      <p>
        The token is shown only this once. It expires {expiresIn(session.expires_at, new Date())} ({dateTime(session.expires_at)}), or when the session ends.
      </p>
      <dl className="facts">
        <div>
          <dt>Transport</dt>
          <dd>{builtin ? 'Built-in media WebSocket (PCM16 mono 16 kHz)' : 'LiveKit'}</dd>
        </div>
        <div>
          <dt>Room</dt>
          <dd>{session.room_name}</dd>
        </div>
        <div>
          <dt>Its call</dt>
          <dd>
            <Link href={`/calls/${session.call_id}`}>{session.call_id}</Link>
          </dd>
        </div>
      </dl>
      <h3>Token</h3>
      <div className="secret-row">
        <code data-testid="session-token">{session.token}</code>
        <CopyButton text={session.token} label="Copy token" />
      </div>
      <h3>{builtin ? 'WebSocket address' : 'LiveKit server'}</h3>
      <div className="secret-row">
        <code data-testid="session-url">{builtin ? mediaSocketUrl(session) : session.url}</code>
        <CopyButton text={builtin ? mediaSocketUrl(session) : session.url} label="Copy address" />
      </div>
      <h3>In the browser</h3>
      <pre className="snippet">
        <code>{snippet}</code>
      </pre>
      <div className="actions">
        <CopyButton text={snippet} label="Copy code" />
        <Button variant="link" onPress={onDismiss}>
          I have what I need
        </Button>
      </div>
    </section>
  );
}
