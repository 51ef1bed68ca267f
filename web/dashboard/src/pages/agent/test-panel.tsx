import { ChatTest } from './chat-test.tsx';
import { SandboxCall } from './sandbox-call.tsx';

// The agent editor's test panel: a text chat and a sandbox call, both with the saved agent.

export function TestPanel({ agentId }: { agentId: string }) {
  return (
    <section className="panel test-panel" aria-labelledby="test-heading">
      <h2 id="test-heading">Test the agent</h2>
      <p className="hint">Both use the saved settings: save your changes first.</p>
      <ChatTest agentId={agentId} />
      <SandboxCall agentId={agentId} />
    </section>
  );
}
